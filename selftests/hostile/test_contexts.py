#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: filters update their tables from hardirq, softirq, process
# and NMI context at once, on both CPUs, for CONTEXT_SECONDS (default 15),
# while the filters are replaced now and then; the tables fill, the kernel
# stays quiet
# requires: kprobe_events
#
# What fires where under QEMU (checked with the trace's context flags):
#   update_process_times   the timer tick: hardirq
#   net:netif_receive_skb  loopback receive: softirq
#   do_sys_openat2         open(): process context
#   try_to_wake_up         all three: its filter's one table is updated
#                          from hardirq, softirq and process context
#   __show_regs            sysrq-l's backtraces: NMI on the other CPU,
#                          process context on the CPU that writes 'l'
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "filters"))
from common import *    # noqa: E402,F403  selftests/filters/common.py

SECONDS = int(os.environ.get("CONTEXT_SECONDS", "15"))
k = need_root_and_bpf64(9)
kp = path("kprobe_events")
PROBES = {"tick": "update_process_times", "open": "do_sys_openat2",
          "wakeup": "try_to_wake_up", "nmi": "__show_regs"}
missing = [f for f in PROBES.values() if append(kp, "p:ksft_ctx/%s %s\n" % (f, f))]
events = {name: event_dir("ksft_ctx:" + f) for name, f in PROBES.items()}
events["softirq"] = event_dir(NETIF_RX)
k.expect("kprobes on the hardirq, process, mixed and NMI functions", [], missing)


images = [stack_region_counter(n) for n in (4096, 64, 2)]    # 2: the table fills up
for ev in events.values():
    assert write(ev + "/filter", images[0]) == 0, ev
    write(ev + "/enable", "1")


def nmis():
    line = [l for l in read("/proc/interrupts").splitlines() if l.strip().startswith("NMI:")]
    return sum(int(x) for x in line[0].split()[1:3]) if line else 0


nmi_before = nmis()
QUIET = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
load = [subprocess.Popen(["taskset", "-c", str(cpu), "ping", "-f", "-q", "127.0.0.1"], **QUIET)
        for cpu in (0, 1)]
load += [subprocess.Popen(["taskset", "-c", str(cpu), "bash", "-c",
                           "while :; do read -r x < /etc/hostname; done"], **QUIET) for cpu in (0, 1)]
replaced = 0
end = time.time() + SECONDS
try:
    while time.time() < end:
        # NMIs: the other CPU prints its backtrace from the NMI handler.
        write("/proc/sysrq-trigger", "l")
        # Now and then a filter is replaced while its table is being updated.
        name = list(events)[replaced % len(events)]
        if write(events[name] + "/filter", images[replaced % len(images)]) == 0:
            replaced += 1
        time.sleep(0.2)
    # The last filters stay: their tables are what the checks below read.
    for ev in events.values():
        write(ev + "/filter", images[0])
    for _ in range(10):
        write("/proc/sysrq-trigger", "l")
        time.sleep(0.2)
finally:
    for p in load:
        p.kill()
        p.wait()
for ev in events.values():
    write(ev + "/enable", "0")


def entries(ev):
    m = re.search(r"\bentries (\d+)", read(ev + "/filter_tables"))
    return int(m.group(1)) if m else 0


def counts(ev):
    return sum(int.from_bytes(bytes.fromhex(v), "little") for v in
               re.findall(r"value ([0-9a-f]{16})", read(ev + "/filter_tables")))


print("# %d s, %d filters replaced, %d NMIs" % (SECONDS, replaced, nmis() - nmi_before))
for name, ev in events.items():
    print("# %-8s %s: %d stack regions, %d events counted; %s" % (
        name, os.path.basename(ev), entries(ev), counts(ev), read(ev + "/filter").splitlines()[0]))
k.check(entries(events["tick"]) > 0, "the hardirq filter (timer tick) updated its table")
k.check(entries(events["softirq"]) > 0, "the softirq filter (netif_receive_skb) updated its table")
k.check(entries(events["open"]) > 0, "the process-context filter (open) updated its table")
k.check(entries(events["wakeup"]) >= 2,
        "try_to_wake_up's filter updated its one table from several stacks (hardirq, softirq, tasks)")
k.check(nmis() > nmi_before, "sysrq-l raised NMIs", (nmi_before, nmis()))
k.check(entries(events["nmi"]) > 0, "__show_regs's filter updated its table (NMI and process context)")
k.check(replaced > 0, "filters were replaced while they ran", replaced)

for ev in events.values():
    write(ev + "/filter", "0")
write(kp, "")
k.check(not os.path.exists(events["tick"]), "the kprobe events are removed")
k.finish()
