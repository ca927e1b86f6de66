#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: filters on kprobe and kretprobe events see the probe's
# registers: arguments at entry, the return value in ax at return
# requires: kprobe_events
import re
from common import *

k = need_root_and_bpf64(10)
kp = path("kprobe_events")

# do_sys_openat2(int dfd, const char __user *filename, struct open_how *how)
append(kp, "p:ksft/open do_sys_openat2 dfd=%di:s32 name=%si:x64\n")
append(kp, "r:ksft/openret do_sys_openat2 ret=$retval:s64\n")
ev, evr = event_dir("ksft:open"), event_dir("ksft:openret")
k.check(os.path.exists(ev + "/filter_image") and os.path.exists(evr + "/filter_image"),
        "kprobe and kretprobe events have filter_image and filter_tables")

# Entry: print di and si, keep the event; compare with the fetch-args.
p = Prog()
p.mov(R6, R1)
p.ctx(R7, "di")
p.ctx(R8, "si")
p.printk("di=%d si=%lx", r(R7), r(R8))   # dfd is an int
p.ret(1)
k.expect("a filter attaches to a kprobe event", 0, write(ev + "/filter", p.image()))
write(ev + "/enable", "1")
open("/etc/hostname").read()
write(ev + "/enable", "0")
lines = trace_lines()
pairs = 0
for a, b in zip(lines, lines[1:]):
    pa = re.search(r"do_sys_openat2: di=(-?\d+) si=([0-9a-f]+)$", a)
    pb = re.search(r"open: \(do_sys_openat2\+0x0/0x[0-9a-f]+\) dfd=(-?\d+) name=0x([0-9a-f]+)$", b)
    if pa and pb:
        pairs += 1
        ok = int(pa.group(1)) == int(pb.group(1)) and int(pa.group(2), 16) == int(pb.group(2), 16)
        if not ok:
            break
k.check(pairs > 0 and ok, "the filter reads the arguments the kprobe event fetches (di, si)", lines[:6])
k.check(any(re.search(r"do_sys_openat2: di=-100 ", l) for l in lines),
        "open() of a relative path passes AT_FDCWD (-100) in di", lines[:6])

# Return: keep only failed opens, print the return value from ax.
p = Prog()
p.ctx(R6, "ax")
p.printk("ax=%ld", r(R6))
p.mov(R0, 0)
p.jmp("jsge", R6, 0, "out")
p.mov(R0, 1)
p.label("out")
p.ret_r0()
k.expect("a filter attaches to a kretprobe event", 0, write(evr + "/filter", p.image()))
clear_trace()
write(evr + "/enable", "1")
try:
    open("/nonexistent-ksft")
except OSError:
    pass
open("/etc/hostname").read()
write(evr + "/enable", "0")
lines = trace_lines()
rets = [int(m.group(1)) for l in lines for m in [re.search(r"openret: .* ret=(-?\d+)$", l)] if m]
axs = [int(m.group(1)) for l in lines for m in [re.search(r"do_sys_openat2: ax=(-?\d+)$", l)] if m]
k.check(-2 in rets, "the failed open is recorded with ret=-ENOENT", lines[:8])
k.check(rets and all(r < 0 for r in rets), "only failed opens are recorded", rets)
k.check(-2 in axs and any(a >= 0 for a in axs), "the filter saw both return values in ax", axs)

# bpf_dump_stack() at a kprobe: the stack from the probe's registers.
p = Prog()
p.call("bpf_dump_stack")
p.ret(0)
write(ev + "/filter", p.image())
clear_trace()
write(ev + "/enable", "1")
open("/etc/hostname").read()
write(ev + "/enable", "0")
text = read(path("trace"))
k.check(re.search(r"<stack trace>\n => do_sys_openat2\n( => .*\n)* => (__x64_sys_openat|do_syscall_64)", text),
        "bpf_dump_stack() records the stack of the probed call", text[-1500:])
k.expect("the kprobe events delete with filters attached", 0, write(kp, ""))
k.finish()
