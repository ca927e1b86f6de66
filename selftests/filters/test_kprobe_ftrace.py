#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: a kprobe event at a function's entry whose BPF64 filter is
# its instance's only judge runs from ftrace, not from its kprobe: the same
# records, fewer steps; the kprobe stays for everything else
# requires: kprobe_events
import errno
import os
import re
from common import *

k = need_root_and_bpf64(27)
kp = path("kprobe_events")

# do_sys_openat2(int dfd, const char __user *filename, struct open_how *how)
FETCH = ("dfd=%di:s32 name=+0(%si):ustring flags=+0(%dx):x64 a3=$arg3:x64 "
         "comm=$comm at=%ip:x64 sp=%sp:x64 caller=$stack0:x64 ax=%ax:x64")
append(kp, "p:ksft/fopen do_sys_openat2 " + FETCH + "\n")
ev = event_dir("ksft:fopen")





def records(tag, instance=None):
    marker = "name=\"/ksft-ftrace-%s-" % tag
    return [l.split("fopen: ", 1)[1] for l in trace_lines(instance) if marker in l]




# 1. The path: ftrace when the filter is there before the event is enabled.
write(ev + "/filter", keep_all())
k.check(filter_line(ev).endswith(" path ftrace"),
        "a kprobe event with a BPF64 filter will run from ftrace", filter_line(ev))
hits0 = kprobe_profile("fopen")
write(ev + "/enable", "1")
check_on_ftrace(k, ev, "do_sys_openat2", "kprobe", direct=True)
open_missing("ksft-ftrace", "fast")
write(ev + "/enable", "0")
fast = records("fast")
hits1 = kprobe_profile("fopen")
k.check(len(fast) == 3 and hits1[0] - hits0[0] >= 3,
        "the events are recorded and counted in kprobe_profile",
        (fast, hits0, hits1))

# 2. The same records on the kprobe: enabled first, then the filter.
write(ev + "/filter", "0")
clear_trace()
write(ev + "/enable", "1")
write(ev + "/filter", keep_all())
k.check("path kprobe (enabled before its filter)" in filter_line(ev),
        "enabled before its filter, it stays on the kprobe", filter_line(ev))
open_missing("ksft-ftrace", "fast")
write(ev + "/enable", "0")
slow = records("fast")
k.check(len(slow) == 3 and slow == fast,
        "ftrace and the kprobe record the same fields, fetch args included",
        list(zip(fast, slow)))

# 3. A filter that drops: nothing recorded, every hit counted.
clear_trace()
p = Prog()
p.ret(0)
write(ev + "/filter", p.image())
write(ev + "/enable", "1")
before = kprobe_profile("fopen")
open_missing("ksft-ftrace", "drop", 5)
after = kprobe_profile("fopen")
write(ev + "/enable", "0")
k.check(records("drop") == [] and after[0] - before[0] >= 5,
        "a dropping filter on ftrace records nothing and sees every call",
        (before, after))

# 4. A filter that needs a register ftrace does not save keeps the kprobe.
p = Prog()
p.ctx(R6, "bx")
p.ret(1)
write(ev + "/filter", p.image())
k.check("path kprobe (the filter reads a register ftrace does not save)"
        in filter_line(ev), "a filter reading bx runs on the kprobe", filter_line(ev))
clear_trace()
write(ev + "/enable", "1")
open_missing("ksft-ftrace", "bx")
k.check(len(records("bx")) == 3, "and records through it", trace_lines()[-3:])

# ... and cannot replace the filter of an instance running from ftrace.
write(ev + "/enable", "0")
write(ev + "/filter", keep_all())
write(ev + "/enable", "1")
line = filter_line(ev)
write(path("error_log"), "")
err = write(ev + "/filter", p.image())
k.check(err == errno.EBUSY and filter_line(ev) == line and
        "The event runs from ftrace: disable it to attach this filter" in
        read(path("error_log")),
        "a filter reading bx is refused on ftrace with EBUSY, the old stays",
        (err, filter_line(ev), read(path("error_log"))))
q = Prog()
q.ctx(R6, "si")
q.ret(1)
k.expect("a filter reading si replaces it", 0, write(ev + "/filter", q.image()))

# ... and filters come and go while the event runs: each verdict is the
# filter's of the moment (a new trampoline, or the slow path for none).
p = Prog()
p.ret(0)
clear_trace()
write(ev + "/filter", p.image())
open_missing("ksft-ftrace", "swapdrop")
k.check(records("swapdrop") == [], "a dropping filter written while enabled drops",
        records("swapdrop"))
write(ev + "/filter", keep_all())
open_missing("ksft-ftrace", "swapkeep")
k.check(len(records("swapkeep")) == 3 and on_ftrace(filter_line(ev), direct=True),
        "a keeping one after it keeps, on the same path", (records("swapkeep"), filter_line(ev)))
syms = [l for l in read("/proc/kallsyms").splitlines()
        if re.search(r" bpf64_[0-9a-f]{16}\w*_entry\b", l)]
k.check(bool(syms), "the trampoline is in kallsyms", syms)
write(ev + "/filter", "0")
open_missing("ksft-ftrace", "swapnone")
k.check(len(records("swapnone")) == 3, "with the filter cleared, every event is recorded",
        records("swapnone"))
write(ev + "/filter", keep_all())
open_missing("ksft-ftrace", "swapagain")
k.check(len(records("swapagain")) == 3, "and with a filter again, too", records("swapagain"))
write(ev + "/enable", "0")

# 5. Where ftrace cannot stand in, the read-back says why.
append(kp, "p:ksft/fbx do_sys_openat2 b=%bx:x64\n")
# the first instruction after the fentry call, after endbr64 or not
k.check(any(append(kp, "p:ksft/foff do_sys_openat2+%d\n" % off) == 0
            for off in (9, 5)), "a kprobe past the function's entry", read(kp))
for name, why in (("fbx", "fetches a register ftrace does not save"),
                  ("foff", "not at an ftrace site")):
    d = event_dir("ksft:" + name)
    write(d + "/filter", keep_all())
    k.check(("path kprobe (%s)" % why) in filter_line(d),
            "%s: %s" % (name, why), filter_line(d))
fbx = event_dir("ksft:fbx")
clear_trace()
write(fbx + "/enable", "1")
open_missing("ksft-ftrace", "fbx")
write(fbx + "/enable", "0")
k.check(len([l for l in trace_lines() if "fbx:" in l]) >= 3,
        "the %bx event records through its kprobe", trace_lines()[-3:])

# 6. Another consumer coming and going while events flow: the filtered
# instance stays on ftrace and gets every event exactly once.
write(ev + "/filter", keep_all())
clear_trace()
ev2 = second_instance("ksft:fopen", "ksft_ftrace2")
write(ev + "/enable", "1")
N = 400
child = missing_opener("ksft-ftrace-flow", N)
toggles, paths = toggle_while(child, ev2, ev)
child.wait()
write(ev + "/enable", "0")
flow = records("flow")
names = [re.search(r'name="([^"]*)"', l).group(1) for l in flow]
k.check(names == ["/ksft-ftrace-flow-%d" % i for i in range(N)],
        "%d opens while another instance was enabled %d times: each recorded "
        "once, in order" % (N, toggles),
        (len(names), names[:3], toggles))
k.check(all(on_ftrace(p, direct=True) for p in paths),
        "the filtered instance stayed on ftrace", paths)
second = len(records("flow", "ksft_ftrace2"))
k.check(0 < second <= N, "the other instance got its events from the kprobe",
        second)
os.rmdir(path("instances", "ksft_ftrace2"))

# 7. One instance at a time runs from ftrace.
inst = path("instances", "ksft_ftrace3")
os.mkdir(inst)
ev3 = event_dir("ksft:fopen", "ksft_ftrace3")
write(ev + "/enable", "1")
write(ev3 + "/filter", keep_all())
write(ev3 + "/enable", "1")
k.check("path kprobe (another instance runs on ftrace)" in filter_line(ev3),
        "a second filtered instance runs on the kprobe", filter_line(ev3))
clear_trace()
clear_trace("ksft_ftrace3")
open_missing("ksft-ftrace", "two")
write(ev3 + "/enable", "0")
write(ev + "/enable", "0")
k.check(records("two") == records("two", "ksft_ftrace3") and
        len(records("two")) == 3,
        "both instances record the same events", (records("two"),
                                                  records("two", "ksft_ftrace3")))
write(ev3 + "/filter", "0")
os.rmdir(inst)
k.expect("the event can be removed once disabled", 0,
         append(kp, "-:ksft/fopen\n"))
k.check("ksft/fopen" not in read(kp), "and it is gone", read(kp))
k.finish()
