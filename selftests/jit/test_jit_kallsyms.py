#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: JIT'ed filters are kernel citizens: named in kallsyms while
# attached (so unwinders walk through them and perf names them), stacks
# from bpf_dump_stack() start at the event's code whichever engine runs,
# bpf64_jit_enable=2 needs CAP_SYS_ADMIN and what kallsyms needs
import hashlib
import os
import re
import subprocess
from common import *

k = need_jit(13, "/proc/sys/net/core/bpf_jit_kallsyms")
ev = event_dir(NETIF_RX)
KALLSYMS_SYSCTL = "/proc/sys/net/core/bpf_jit_kallsyms"


def bpf_symbols():
    """(address, name) of the bpf64 symbols in /proc/kallsyms."""
    syms = []
    for line in read("/proc/kallsyms").splitlines():
        f = line.split()
        if len(f) >= 3 and f[2].startswith("bpf64_"):
            syms.append((int(f[0], 16), f[2]))
    return syms


def stack_prog():
    """Drop every event, after recording the stack."""
    p = Prog()
    p.call("bpf_dump_stack")
    p.ret(0)
    return p.image()


def stack_of_one_event(image):
    """The frames bpf_dump_stack() recorded for one netif_receive_skb."""
    write(ev + "/filter", image)
    clear_trace()
    write(ev + "/enable", "1")
    ping(1)
    write(ev + "/enable", "0")
    frames, stacks = [], 0
    for line in trace_lines():
        if "<stack trace>" in line:
            stacks += 1
            if stacks > 1:
                break
            continue
        m = re.match(r"\s*=> (\S+)", line)
        if m and stacks == 1:
            frames.append(m.group(1))
    return frames


orig = get_jit()
orig_kallsyms = read(KALLSYMS_SYSCTL).strip()
write(KALLSYMS_SYSCTL, "1")

# ---- kallsyms ----
image = alu_prog(64, seed=11)
tag = hashlib.sha256(image).hexdigest()[:16]
name = "bpf64_%s_net_netif_receive_skb" % tag
set_jit(1)
k.expect("a JIT'ed filter loads", 0, write(ev + "/filter", image))
syms = [s for s in bpf_symbols() if s[1] == name]
k.check(len(syms) == 1, "kallsyms names its code %s" % name, bpf_symbols())
k.check(syms and re.search(r"\s\[bpf\]$", [l for l in read("/proc/kallsyms").splitlines()
                                            if name in l][0]),
        "... as BPF code", syms)
write(ev + "/filter", "0")
k.check(not [s for s in bpf_symbols() if s[1] == name],
        "the symbol goes when the filter is removed", bpf_symbols())
set_jit(0)
write(ev + "/filter", image)
k.check(not [s for s in bpf_symbols() if s[1] == name],
        "an interpreted filter has no symbol", bpf_symbols())
write(ev + "/filter", "0")

# ---- bpf_dump_stack() from a tracepoint, both engines ----
set_jit(1)
jit_frames = stack_of_one_event(stack_prog())
set_jit(0)
interp_frames = stack_of_one_event(stack_prog())
write(ev + "/filter", "0")
helpers = [f for f in jit_frames + interp_frames
           if f.startswith(("bpf64_", "trace_event_", "__ftrace_trace_stack",
                            "__trace_stack", "bpf64_helper"))]
k.check(jit_frames and not helpers,
        "the stacks start at the event's code, not in the helper or the probe",
        {"jit": jit_frames[:4], "interpreter": interp_frames[:4]})
k.expect("the JIT'ed and the interpreted stacks are the same frames",
         interp_frames, jit_frames)
k.check(len(jit_frames) >= 8 and
        any(f.startswith("entry_SYSCALL_64") or f.startswith("do_syscall_64")
            for f in jit_frames),
        "... down to the system call that sent the packet", jit_frames)

# ---- perf attributes samples to the JIT'ed code by name ----
# perf learns of JIT'ed code from the PERF_RECORD_KSYMBOL the kernel sends
# when it is compiled: the filter is attached while perf records.
perf = os.path.join(HERE, "..", "..", "build", "perf", "perf")
busy = alu_prog(3000, seed=5)
btag = hashlib.sha256(busy).hexdigest()[:16]
data = os.path.join(HERE, "..", "..", "build", "selftests-jit.data")
with open(data + ".bpf", "wb") as f:
    f.write(busy)
set_jit(1)
script = ("cat %s.bpf > %s/filter && echo 1 > %s/enable && "
          "ping -q -f -c 2000 127.0.0.1 >/dev/null; echo 0 > %s/enable"
          % (data, ev, ev, ev))
env = dict(os.environ, HOME="/tmp")
out = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-a", "-o", data,
                      "--", "sh", "-c", script],
                     capture_output=True, text=True, env=env)
rep = subprocess.run([perf, "report", "-i", data, "--stdio", "--sort", "sym"],
                     capture_output=True, text=True, env=env).stdout
write(ev + "/filter", "0")
k.check(out.returncode == 0 and
        re.search(r"\d+\.\d+%%\s+\[k\] bpf64_%s_net_netif_receive_skb" % btag, rep),
        "perf report names the JIT'ed code's samples", out.stderr[-500:] + rep[:1500])
os.unlink(data + ".bpf")

# ---- bpf64_jit_enable=2 is gated ----
kptr = read("/proc/sys/kernel/kptr_restrict").strip()
write("/proc/sys/kernel/kptr_restrict", "2")
k.expect("=2 is refused (EPERM) when kallsyms would hide addresses "
         "(kptr_restrict=2)", ERRNO.EPERM, set_jit(2))
write("/proc/sys/kernel/kptr_restrict", "0")
write("/dev/kmsg", "ksft_jit: gate\n")
k.expect("=2 is accepted when they are shown", 0, set_jit(2))
log = dmesg()
k.check("bpf64_jit_enable = 2" in log[log.rfind("ksft_jit: gate"):],
        "... with a warning in the kernel log", log[-400:])
write("/proc/sys/kernel/kptr_restrict", kptr)
set_jit(1)
drop = subprocess.run(
    ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
     "--inh-caps=-all", "--bounding-set=-all", "sh", "-c",
     "echo 0 > %s" % SYSCTL], capture_output=True, text=True)
k.check(drop.returncode != 0 and get_jit() == 1,
        "a user without CAP_SYS_ADMIN cannot change it", drop.stderr)

set_jit(orig)
write(KALLSYMS_SYSCTL, orig_kallsyms)
ktap.reset()
k.finish()
