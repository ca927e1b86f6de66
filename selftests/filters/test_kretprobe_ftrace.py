#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: a kretprobe event whose BPF64 filter is its instance's only
# judge runs from ftrace and a rethook of its own, not from its kretprobe:
# the same records from the whole struct pt_regs of the return; returns
# pending when it stops go on without it
# requires: kprobe_events
import os
import re
import subprocess
import sys
import time
from common import *

k = need_root_and_bpf64(17)
kp = path("kprobe_events")

# do_sys_openat2() returns -ENOENT for each open below; bx is callee-saved,
# which a kprobe at the entry running from ftrace could not fetch.  (Not
# $stack0: at a return it is the caller's scratch, which differs from call
# to call on a debug kernel.)
FETCH = "ret=$retval:s64 at=%ip:x64 sp=%sp:x64 bx=%bx:x64"
append(kp, "r:ksft/fret do_sys_openat2 " + FETCH + "\n")
ev = event_dir("ksft:fret")





def records(instance=None, event="fret"):
    return [l.split(event + ": ", 1)[1] for l in trace_lines(instance)
            if " %s: " % event in l]




# 1. The path: ftrace when the filter is there before the event is enabled,
# even for a filter reading a register the entry's ftrace does not save.
write(ev + "/filter", keep_all("bx"))
k.check(filter_line(ev).endswith(" path ftrace"),
        "a kretprobe event with a BPF64 filter will run from ftrace",
        filter_line(ev))
clear_trace()
hits0 = kprobe_profile("fret")
write(ev + "/enable", "1")
check_on_ftrace(k, ev, "do_sys_openat2", "kretprobe")
open_missing("ksft-fret", "a")
write(ev + "/enable", "0")
fast = records()
hits1 = kprobe_profile("fret")
k.check(len(fast) >= 3 and hits1[0] - hits0[0] >= 3 and hits1[1] == hits0[1],
        "the returns are recorded and counted in kprobe_profile, none missed",
        (fast, hits0, hits1))
# the test's own opens of tracefs files succeed
fast = [l for l in fast if " ret=-2 " in l]
k.check(len(fast) == 3, "three records have the return value -ENOENT", fast)

# 2. The same records from the kretprobe: enabled first, then the filter.
write(ev + "/filter", "0")
clear_trace()
write(ev + "/enable", "1")
write(ev + "/filter", keep_all("bx"))
k.check("path kprobe (enabled before its filter)" in filter_line(ev),
        "enabled before its filter, it stays on the kretprobe", filter_line(ev))
open_missing("ksft-fret", "a")
write(ev + "/enable", "0")
slow = [l for l in records() if " ret=-2 " in l]
k.check(len(slow) == 3 and slow == fast,
        "ftrace and the kretprobe record the same fields: return value, ip, "
        "sp, bx", list(zip(fast, slow)))

# 3. A filter that drops on the return value: nothing recorded, every
# return counted.
p = Prog()
p.ctx(R6, "ax")
p.mov(R0, 0)
p.jmp("jeq", R6, -2, "out")       # keep only returns other than -ENOENT
p.mov(R0, 1)
p.label("out")
p.ret_r0()
write(ev + "/filter", p.image())
clear_trace()
write(ev + "/enable", "1")
before = kprobe_profile("fret")
open_missing("ksft-fret", "drop", 5)
after = kprobe_profile("fret")
write(ev + "/enable", "0")
k.check(filter_line(ev).endswith(" path ftrace") and
        not any("ret=-2 " in l for l in records()) and
        after[0] - before[0] >= 5,
        "a filter dropping -ENOENT on ftrace records none and sees every "
        "return", (records()[-3:], before, after))

# 4. Another consumer coming and going while returns flow: the filtered
# instance stays on ftrace and gets every return exactly once.
write(ev + "/filter", keep_all("ax"))
clear_trace()
ev2 = second_instance("ksft:fret", "ksft_fret2")
write(ev + "/enable", "1")
N = 300
# the child's own start-up fails opens too: count from its "ready" on
child = missing_opener("ksft-fret-flow", N, wait=True)
pid = child.pid


def enoents():
    return len([l for l in trace_lines() if re.search(r"-%d\s+\[" % pid, l) and
                " fret: " in l and " ret=-2 " in l])


start = enoents()
child.stdin.write("go\n")
child.stdin.flush()
toggles, paths = toggle_while(child, ev2, ev)
child.communicate()
write(ev + "/enable", "0")
mine = enoents() - start
k.check(mine == N,
        "%d failed opens while another instance was enabled %d times: each "
        "return recorded once" % (N, toggles), (mine, start, toggles))
k.check(all(p.endswith(" path ftrace") for p in paths),
        "the filtered instance stayed on ftrace", paths)
second = [l for l in trace_lines("ksft_fret2") if re.search(r"-%d\s+\[" % pid, l)]
k.check(0 < len(second) <= mine + start,
        "the other instance got its returns from the kretprobe", len(second))
os.rmdir(path("instances", "ksft_fret2"))

# 5. Returns pending when the event stops: a reader blocked in pipe_read()
# returns after the event is disabled and removed, through the rethook,
# without its handler; nothing is recorded then, and nothing breaks.
append(kp, "r:ksft/fpipe pipe_read ret=$retval:s64\n")
evp = event_dir("ksft:fpipe")
write(evp + "/filter", keep_all("ax"))
clear_trace()
write(evp + "/enable", "1")
k.check(filter_line(evp).endswith(" path ftrace"), "pipe_read's return runs "
        "from ftrace", filter_line(evp))
r, w = os.pipe()
readers = [subprocess.Popen([sys.executable, "-c",
                             "import os, sys\n"
                             "print('ready', flush=True)\n"
                             "sys.stdout.write(repr(os.read(%d, 1)))\n" % r],
                            pass_fds=(r,), stdout=subprocess.PIPE, text=True)
           for _ in range(4)]
for p in readers:
    p.stdout.readline()
time.sleep(1)   # in pipe_read(), waiting
os.write(w, b"x")   # one returns while the event runs
deadline = time.time() + 60
while all(p.poll() is None for p in readers) and time.time() < deadline:
    time.sleep(0.05)
write(evp + "/enable", "0")
theirs = [l for l in trace_lines() if " fpipe: " in l and
          any(re.search(r"-%d\s+\[" % p.pid, l) for p in readers)]
k.expect("the event is removed with three returns pending", 0,
         append(kp, "-:ksft/fpipe\n"))
os.write(w, b"yzw")
outs = [p.communicate(timeout=60)[0] for p in readers]
k.check(sorted(outs) == ["b'w'", "b'x'", "b'y'", "b'z'"],
        "the readers returned with their bytes", outs)
k.check(len(theirs) == 1 and "ret=1" in theirs[0],
        "the one return before the stop is recorded", theirs)
os.close(r)
os.close(w)

# 6. The event comes back on ftrace after all that.
write(ev + "/filter", keep_all("ax"))
clear_trace()
write(ev + "/enable", "1")
open_missing("ksft-fret", "again")
write(ev + "/enable", "0")
k.check(filter_line(ev).endswith(" path ftrace") and len(records()) >= 3,
        "enabled again, it runs from ftrace and records", records()[-3:])
write(ev + "/filter", "0")
k.expect("the event can be removed once disabled", 0,
         append(kp, "-:ksft/fret\n"))
k.finish()
