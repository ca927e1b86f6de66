#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: a JIT'ed tracepoint filter becomes the tracepoint's probe:
# its kept events are recorded once, its dropped ones never; the event's
# pid filter and the event enabled or disabled around it work as with the
# interpreter; predicates and "0" hand the tracepoint back to the recorder
import os
import re
import socket
import subprocess
from common import *

k = need_root_and_bpf64(16)
ev = event_dir(NETIF_RX)
JIT = "/proc/sys/kernel/bpf64_jit_enable"
KALLSYMS = "/proc/sys/net/core/bpf_jit_kallsyms"


def counting(verdict):
    """Counts its runs in table 0 under key 1; returns @verdict."""
    p = Prog()
    t = p.table(8, 8, 4)
    p.mov(R6, R1)
    p.st(8, R10, -8, 1)
    p.mov(R1, R6).mov(R2, t).mov(R3, R10).add(R3, -8)
    p.call("bpf_table_lookup")
    p.jmp("jne", R0, 0, "found")
    p.st(8, R10, -16, 1)
    p.mov(R1, R6).mov(R2, t).mov(R3, R10).add(R3, -8).mov(R4, R10).add(R4, -16)
    p.call("bpf_table_update")
    p.ja("out")
    p.label("found")
    p.mov(R1, 1)
    p.xadd(8, R0, 0, R1)
    p.label("out")
    p.ret(verdict)
    return p.image()


def runs():
    """How many times the attached counting filter ran."""
    m = re.search(r"key 0100000000000000 value ([0-9a-f]{16})",
                  read(ev + "/filter_tables"))
    return int.from_bytes(bytes.fromhex(m.group(1)), "little") if m else 0


def recorded():
    return len([l for l in trace_lines() if "netif_receive_skb: dev=lo" in l])


def udp_to_self(n):
    """@n loopback packets sent and received by this process."""
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.bind(("127.0.0.1", 0))
    for _ in range(n):
        a.sendto(b"x", a.getsockname())
        a.recv(16)
    a.close()


def pings(n, verdict, jit):
    """Attach counting(verdict) with the JIT on or off, ping n times:
    (filter line, times the filter ran, events recorded)."""
    write(JIT, "1\n" if jit else "0\n")
    write(ev + "/filter", counting(verdict))
    clear_trace()
    write(ev + "/enable", "1")
    ping(n)
    write(ev + "/enable", "0")
    return read(ev + "/filter").splitlines()[0], runs(), recorded()


orig_jit = read(JIT).strip()
write(KALLSYMS, "1\n")

line, ran, rec = pings(3, 1, jit=True)
k.check(line.endswith(" probe"), "a JIT'ed tracepoint filter is compiled as the tracepoint's probe", line)
k.check(ran == 6 and rec == 6, "keep: the probe ran 6 times for 3 pings, 6 events recorded once each",
        (ran, rec))
tag = line.split()[2]
syms = [l.split()[2] for l in read("/proc/kallsyms").splitlines() if tag in l]
k.check("bpf64_%s_net_netif_receive_skb_probe" % tag in syms,
        "kallsyms names the probe's code", syms)

line, ran, rec = pings(3, 0, jit=True)
k.check(ran == 6 and rec == 0, "drop: the probe ran 6 times, nothing recorded", (ran, rec))

line, iran, irec = pings(3, 1, jit=False)
k.check(not line.endswith(" probe") and iran == 6 and irec == 6,
        "the interpreter ran as often and recorded as much", (line, iran, irec))

# The event's own pid filter: the probe hands such events to the recorder,
# which filters them by pid before it runs the filter.
write(JIT, "1\n")
write(ev + "/filter", counting(1))
clear_trace()
write(path("set_event_pid"), "%d\n" % os.getpid())
write(ev + "/enable", "1")
udp_to_self(4)
ping(2)
write(ev + "/enable", "0")
write(path("set_event_pid"), "\n")
k.check(1 <= runs() <= 4 and runs() == recorded(),
        "with set_event_pid, only this process's packets ran the filter, each recorded once "
        "(not ping's)", (runs(), recorded()))

# Attached while the event is enabled, replaced, removed: each event is
# filtered once by what is attached when it fires.
write(ev + "/filter", "0")
clear_trace()
write(ev + "/enable", "1")
ping(1)
k.expect("no filter: 2 events recorded", 2, recorded())
k.expect("a filter attached to the enabled event", 0, write(ev + "/filter", counting(0)))
clear_trace()
ping(2)
k.check(recorded() == 0 and runs() == 4, "... takes over its tracepoint: 4 runs, nothing recorded",
        (recorded(), runs()))
k.expect("replaced by a keeping one", 0, write(ev + "/filter", counting(1)))
clear_trace()
ping(1)
k.check(recorded() == 2 and runs() == 2, "... which records each event once", (recorded(), runs()))
k.expect("replaced by a predicate", 0, write(ev + "/filter", "len > 10000"))
clear_trace()
ping(1)
k.expect("... which the recorder applies: nothing recorded", 0, recorded())
write(ev + "/filter", "0")
clear_trace()
ping(1)
k.expect("... and \"0\": every event recorded again", 2, recorded())
write(ev + "/enable", "0")

# Enabled after the filter came, disabled, enabled again.
write(ev + "/filter", counting(1))
for i in range(2):
    clear_trace()
    write(ev + "/enable", "1")
    ping(1)
    write(ev + "/enable", "0")
k.check(runs() == 4 and recorded() == 2,
        "enabled twice after the filter came: 4 runs, 2 events recorded the second time",
        (runs(), recorded()))

# The instance's copy of the event has a probe of its own.
inst = path("instances", "ksft_probe")
os.mkdir(inst)
iev = event_dir(NETIF_RX, "ksft_probe")
write(iev + "/filter", counting(0))
write(iev + "/enable", "1")
write(ev + "/enable", "1")
clear_trace()
ping(1)
write(ev + "/enable", "0")
write(iev + "/enable", "0")
k.check(recorded() == 2 and "probe" in read(iev + "/filter"),
        "an instance's probe drops its events, the top level's probe keeps its own",
        (recorded(), read(iev + "/filter")))
write(iev + "/filter", "0")
os.rmdir(inst)
write(ev + "/filter", "0")
write(JIT, orig_jit + "\n")
ktap.reset()
k.finish()
