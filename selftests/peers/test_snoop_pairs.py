#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: bpftrace's snoop tools (/usr/sbin/opensnoop.bt, execsnoop.bt,
# killsnoop.bt) and their BPF64 versions (tools/bpf64/examples/c, records
# printed by perf bpf-filter), both attached while the same workload runs:
# the same lines, in the same order, for the workload's processes
# requires: bpftrace, perf bpf-filter with filters in C, clang
import os
import re

from peers import EXC, Bpftrace, perf_lines, start

k, VMLINUX = start(7)
BT_TOOLS = "/usr/sbin"


def snoop(tool, workload):
    """(bpftrace's lines after its header, perf's records) of one run."""
    bt = Bpftrace(os.path.join(BT_TOOLS, tool + ".bt"), script=True)
    try:
        objs = perf_lines(VMLINUX, [os.path.join(EXC, tool + ".c")], workload, quiet=False)
    finally:
        out = bt.stop()
    records = [o["fields"] for o in objs if "record" in o]
    return out.splitlines(), records


def show(label, ours, theirs):
    for name, lines in (("BPF64", ours), ("bpftrace", theirs)):
        print("# %s, %s:" % (label, name))
        for line in lines:
            print("#   %s" % (line,))


# ---- opensnoop: pid, comm, fd, errno and path of each open --------------
CAT = "cat /etc/hostname /nonexistent-bpf64 /etc/passwd > /dev/null 2>&1; true"
out, records = snoop("opensnoop", CAT)
ours = [(r["pid"], r["comm"], r["fd"], r["err"], r["path"]) for r in records
        if r["comm"] == "cat"]
# "%-6d %-16s %4d %3d %s\n": the path may hold spaces, the rest not
theirs = [(int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), m.group(5))
          for m in (re.match(r"^(\d+)\s+(\S+)\s+(-?\d+)\s+(\d+) (.*)$", line) for line in out)
          if m and m.group(2) == "cat"]
k.check(("/etc/hostname", 0) in [(o[4], o[3]) for o in ours] and
        ("/nonexistent-bpf64", 2) in [(o[4], o[3]) for o in ours],
        "opensnoop.c: cat's opens as records, /etc/hostname opened, /nonexistent-bpf64 ENOENT",
        ours)
k.expect("... the same lines in the same order as bpftrace's opensnoop.bt (%d)" % len(theirs),
         theirs, ours)
show("opensnoop, cat", ours, theirs)

# ---- execsnoop: pid and argv of each exec ---------------------------------
EXEC = "/bin/true bpf64 a; /bin/echo bpf64 b c"     # 38 bytes: an argument of execsnoop.c
out, records = snoop("execsnoop", EXEC)
ours = [(r["pid"], " ".join(r["argv"])) for r in records if "bpf64" in " ".join(r["argv"])]
# "%-10u %-5d " then join(args->argv)
theirs = [(int(m.group(1)), m.group(2))
          for m in (re.match(r"^\d+\s+(\d+)\s+(.*)$", line) for line in out)
          if m and "bpf64" in m.group(2)]
shell = [r for r in records if r["argv"][:2] == ["sh", "-c"] and "bpf64" in " ".join(r["argv"])]
children = [r for r in records if r["argv"] and r["argv"][0] in ("/bin/true", "/bin/echo")]
k.check(shell and [r["argv"] for r in children] ==
        [["/bin/true", "bpf64", "a"], ["/bin/echo", "bpf64", "b", "c"]] and
        all(r["ppid"] == shell[-1]["pid"] for r in children),
        "execsnoop.c: the shell and its two commands, their argv in full, "
        "the commands' parent the shell", records)
k.expect("... the same pids and arguments in the same order as bpftrace's execsnoop.bt (%d)"
         % len(theirs), theirs, ours)
show("execsnoop", ours, theirs)

# ---- killsnoop: pid, comm, signal, target and result of each kill ---------
KILL = "kill -0 1; kill -9 999999; true"
out, records = snoop("killsnoop", KILL)
ours = [(r["pid"], r["comm"], r["sig"], r["tpid"], r["result"]) for r in records
        if r["tpid"] in (1, 999999)]
# time("%H:%M:%S  ") then "%-6d %-16s %-4d %-6d %d\n"
theirs = [tuple([int(m.group(1)), m.group(2)] + [int(x) for x in m.group(3, 4, 5)])
          for m in (re.match(r"^\S+\s+(\d+)\s+(\S+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)$", line)
                    for line in out)
          if m and int(m.group(4)) in (1, 999999)]
k.expect("killsnoop.c: sh's kill(1, 0) succeeds, kill(999999, 9) fails with -ESRCH",
         [("sh", 0, 1, 0), ("sh", 9, 999999, -3)], [o[1:] for o in ours])
k.expect("... the same lines in the same order as bpftrace's killsnoop.bt (%d)" % len(theirs),
         theirs, ours)
show("killsnoop", ours, theirs)
k.finish()
