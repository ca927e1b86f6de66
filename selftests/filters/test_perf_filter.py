#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: BPF64 filters on the samples of perf events
# (PERF_EVENT_IOC_SET_BPF64): a kprobe, a kretprobe and a tracepoint perf
# event count only what the filter keeps; prints go to the top-level
# buffer; the same image shared by two perf events, another one refused
# while held (EBUSY) and accepted once they are closed; a rejected image's
# reason; events that take no filter (EOPNOTSUPP)
# requires: kprobe_events, perf events
import subprocess
import sys
from common import *
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import perfev   # noqa: E402

k = need_root_and_bpf64(10)
append(path("kprobe_events"), "p:ksft/sync ksys_sync\n")
append(path("kprobe_events"), "r:ksft/syncret ksys_sync\n")
SYNC = ["taskset", "-c", "0", "sync"]


def event_id(event):
    return int(read(event_dir(event) + "/id"))


def counting(event, image, runs, cmd=SYNC):
    """A perf event of EVENT on CPU 0 with IMAGE: (errno, its count after
    RUNS x CMD, or the reason of a rejection)."""
    fd = perfev.event_open(event_id(event), cpu=0)
    try:
        err, why = perfev.set_bpf64(fd, image)
        if err:
            return err, why
        perfev.enable(fd)
        for i in range(runs):
            subprocess.run(cmd, check=True)
        return 0, perfev.count(fd)
    finally:
        os.close(fd)


def verdict(v):
    p = Prog()
    p.ret(v)
    return p.image()


k.expect("a kprobe's perf event, a filter that keeps: each sync counted",
         (0, 3), counting("ksft:sync", verdict(1), 3))
k.expect("... one that drops: none counted", (0, 0), counting("ksft:sync", verdict(0), 3))

def keep_if_equal(reg, value):
    """Keep the events whose ctx field REG is VALUE."""
    p = Prog()
    p.ctx(R6, reg)
    p.mov(R0, 1)
    p.jmp("jeq", R6, value, "out")
    p.mov(R0, 0)
    p.label("out")
    p.ret_r0()
    return p


p = keep_if_equal("ax", 0)
k.expect("a kretprobe's filter reads the return value (ksys_sync() returns 0)",
         (0, 2), counting("ksft:syncret", p.image(), 2))

# sched_process_exec(p, old_pid, bprm): keep one of two processes' execs.
kids = [subprocess.Popen(["taskset", "-c", "0", "sh", "-c", "read x; exec true"],
                         stdin=subprocess.PIPE) for i in range(2)]
# each is the shell once taskset has exec'ed it: then only "exec true" is left
for kid in kids:
    wait_for(lambda: read("/proc/%d/comm" % kid.pid).strip() == "sh")
p = keep_if_equal(TP_ARG_REGS[1], kids[0].pid)
fd = perfev.event_open(event_id("sched:sched_process_exec"), cpu=0)
err, _ = perfev.set_bpf64(fd, p.image())
perfev.enable(fd)
for kid in kids:
    kid.communicate(b"go\n")
n = perfev.count(fd)
os.close(fd)
k.expect("a tracepoint's perf event (sched_process_exec) counts the exec its filter keeps "
         "(old_pid, argument 2), not the other", (0, 1), (err, n))

p = Prog()
p.printk("perf sync")
p.ret(0)
clear_trace()
counting("ksft:sync", p.image(), 1)
k.check(any(l.endswith("ksys_sync: perf sync") for l in trace_lines()),
        "a filter of perf samples prints into the top-level buffer", trace_lines())

# One filter for the samples of all perf events of the event.
fds = [perfev.event_open(event_id("ksft:sync"), cpu=cpu) for cpu in (0, 1)]
k.expect("the same image on a second perf event of the event: shared",
         [0, 0], [perfev.set_bpf64(fd, verdict(1))[0] for fd in fds])
k.expect("... another image is refused while they hold it (EBUSY)",
         errno.EBUSY, perfev.set_bpf64(fds[1], verdict(0))[0])
for fd in fds:
    os.close(fd)
k.expect("... and accepted once both are closed", (0, 0), counting("ksft:sync", verdict(0), 1))

p = Prog()
p.ldx(8, R0, R1, 1000)
p.ret_r0()
k.expect("a rejected image: its errno and the checker's reason",
         (errno.EACCES, "insn 0: (d9) r0 = *(u64 *)(r1 +1000): invalid ctx access off=1000 size=8"),
         counting("ksft:sync", p.image(), 0))

fd = perfev.event_open(0, type_=perfev.PERF_TYPE_SOFTWARE, cpu=0)      # cpu-clock
err = perfev.set_bpf64(fd, verdict(1))[0]
os.close(fd)
fd = perfev.event_open(event_id("syscalls:sys_enter_openat"), cpu=0) \
    if os.path.exists(event_dir("syscalls:sys_enter_openat")) else None
err2 = perfev.set_bpf64(fd, verdict(1))[0] if fd is not None else errno.EOPNOTSUPP
if fd is not None:
    os.close(fd)
k.expect("a software event and a system call event take no BPF64 filter (EOPNOTSUPP)",
         [errno.EOPNOTSUPP] * 2, [err, err2])
write(path("kprobe_events"), "")
k.finish()
