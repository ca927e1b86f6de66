#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: filters on uprobe and uretprobe events see the task's user
# registers: arguments at entry, the return value in ax at return; they
# read user strings with bpf_probe_read_user_str() and keep or drop the
# event the uprobe records; a perf event of a uprobe takes one too
# requires: uprobe_events, cc
import errno
import re
import shutil
import subprocess
import tempfile
from common import *
import perfev

k = need_root_and_bpf64(12)
N = 10
TARGET_C = r'''
#include <stdio.h>
#include <stdlib.h>

/* kept out of line, arguments in di and si, the result in ax */
__attribute__((noinline)) long bpf64_target(long n, const char *word)
{
	__asm__ volatile("" : : "r"(word) : "memory");
	return n * 3;
}

int main(int argc, char **argv)
{
	static const char *words[] = { "even", "odd" };
	long i, sum = 0, n = argc > 1 ? atol(argv[1]) : 0;

	for (i = 0; i < n; i++)
		sum += bpf64_target(i, words[i % 2]);
	printf("%ld\n", sum);
	return 0;
}
'''

tmp = tempfile.mkdtemp(prefix="bpf64-uprobe-")
atexit.register(shutil.rmtree, tmp, True)
exe = os.path.join(tmp, "target")
with open(exe + ".c", "w") as f:
    f.write(TARGET_C)
subprocess.run(["cc", "-O1", "-o", exe, exe + ".c"], check=True)


def run_target(n=N):
    out = subprocess.run([exe, str(n)], capture_output=True, text=True, check=True)
    return int(out.stdout)


off = file_offset(exe, "bpf64_target")
up = path("uprobe_events")
append(up, "p:ksftu/target %s:%#x n=%%di:s64 word=+0(%%si):string\n" % (exe, off))
append(up, "r:ksftu/targetret %s:%#x ret=$retval:s64\n" % (exe, off))
atexit.register(lambda: write(up, ""))
ev, evr = event_dir("ksftu:target"), event_dir("ksftu:targetret")
k.check(os.path.exists(ev + "/filter_image") and os.path.exists(evr + "/filter_image"),
        "uprobe and uretprobe events have filter_image and filter_tables")


def traced(event, prog, n=N):
    """Attach prog to event, run the target, return (write's result, lines)."""
    err = write(event + "/filter", prog.image())
    clear_trace()
    write(event + "/enable", "1")
    run_target(n)
    write(event + "/enable", "0")
    return err, trace_lines()


def recorded(lines, name):
    return [l for l in lines if re.search(r" %s: \(0x[0-9a-f]+" % name, l)]


# Entry: keep odd n; print n and the string si points to.
p = Prog()
p.mov(R6, R1)
p.ctx(R7, "di")
p.mov(R1, R10)
p.add(R1, -32)
p.mov(R2, 16)
p.ldx(8, R3, R6, PT_REGS["si"])
p.call("bpf_probe_read_user_str")
p.mov(R8, R10)
p.add(R8, -32)
p.printk("n=%d s=%s", r(R7), r(R8), off=-64)
p.mov(R0, R7)
p.and_(R0, 1)
p.ret_r0()
err, lines = traced(ev, p)
k.expect("a filter attaches to a uprobe event", 0, err)
engine = "interpreted" if os.environ.get("BPF64_JIT") == "0" else "jited"
k.check(re.match(r"bpf64 tag [0-9a-f]{16} insns \d+ tables 0 %s" % engine, read(ev + "/filter")),
        "its filter file reads back the image, %s" % engine, read(ev + "/filter"))
prints = [m.groups() for l in lines for m in [re.search(r": n=(\d+) s=(\w+)$", l)] if m]
k.expect("the filter runs on every call, reading n in di and the word from user memory",
         [(str(i), ["even", "odd"][i % 2]) for i in range(N)], prints)
rec = recorded(lines, "target")
k.expect("the event records the calls the filter keeps, with their fetch args",
         ['n=%d word="odd"' % i for i in range(1, N, 2)],
         [re.sub(r".*\) ", "", l) for l in rec])
k.check(all(re.search(r": 0x[0-9a-f]+: n=", l) for l in lines if " n=" in l and " s=" in l),
        "printed lines are attributed to the probed address", lines[:3])

# Return: keep the results above 12, the return value in ax.
p = Prog()
p.ctx(R6, "ax")
p.mov(R0, 1)
p.jmp("jsgt", R6, 12, "out")
p.mov(R0, 0)
p.label("out")
p.ret_r0()
err, lines = traced(evr, p)
k.expect("a filter attaches to a uretprobe event", 0, err)
rets = [int(m.group(1)) for l in lines for m in [re.search(r"targetret: .* ret=(-?\d+)$", l)] if m]
k.expect("only the returns the filter keeps are recorded",
         [3 * i for i in range(N) if 3 * i > 12], rets)

# A process that exits with the filter attached, the program replaced on
# disk while it is probed: nothing lingers, the old copy's events still run.
p = Prog()
p.ret(1)
write(ev + "/filter", p.image())
write(ev + "/enable", "1")
clear_trace()
for _ in range(3):
    run_target(2)
new = exe + ".new"
shutil.copy(exe, new)
os.rename(new, exe)          # the probe stays on the old inode
run_target(2)
write(ev + "/enable", "0")
k.expect("three runs that exit under the filter record all their calls; the replaced binary none",
         6, len(recorded(trace_lines(), "target")))

# Removing the events with a filter attached.
write(ev + "/filter", "0")
write(evr + "/filter", "0")

# A perf event of the uprobe event: the filter decides its samples.
append(up, "p:ksftu/perf %s:%#x\n" % (exe, file_offset(exe, "bpf64_target")))
p = Prog()
p.ctx(R0, "di")
p.and_(R0, 1)
p.ret_r0()
eid = int(read(event_dir("ksftu:perf") + "/id"))
fds = [perfev.event_open(eid, cpu=c) for c in sorted(os.sched_getaffinity(0))]
k.expect("PERF_EVENT_IOC_SET_BPF64 takes a filter on a uprobe's perf events", {0},
         {perfev.set_bpf64(fd, p.image())[0] for fd in fds})
for fd in fds:
    perfev.enable(fd)
run_target()
k.expect("the perf events count the calls the filter keeps", N // 2,
         sum(perfev.count(fd) for fd in fds))
for fd in fds:
    os.close(fd)

# Errors: the uprobe event still refuses what it refuses elsewhere.
p = Prog()
p.ldx(8, R0, R1, 4)          # a misaligned read of the context
p.ret_r0()
err = write(ev + "/filter", p.image())
k.check(err == errno.EACCES and re.match(r"none\n# rejected: insn 0: .*invalid ctx access",
                                         read(ev + "/filter")),
        "a rejected image on a uprobe event: EACCES, no filter, the reason", (err, read(ev + "/filter")))
k.finish()
