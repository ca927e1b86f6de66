#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: the jobs of bpftrace's one-liner tutorial, each done by a
# BPF64 filter in C (tools/bpf64/examples/c, run by perf bpf-filter) and by
# the bpftrace one-liner, both attached while the same deterministic
# workload runs: the same counts, keys and histogram buckets, exactly
# requires: bpftrace, perf bpf-filter with filters in C, clang
import os
import re
import subprocess
import sys

from peers import EXC, TOP, WORK, Bpftrace, bt_hist, bt_map, bucket_low, perf_lines, start

PAIRS = 8
k, VMLINUX = start(2 * PAIRS + 2)


def perf_run(args, workload):
    """Run perf bpf-filter ARGS -- WORKLOAD: its --json table objects, one
    per event when it shows events apart."""
    return [o for o in perf_lines(VMLINUX, args, workload) if "tables" in o]


def perf_tables(args, workload):
    """The tables of perf bpf-filter ARGS -- WORKLOAD, or None."""
    objs = perf_run(args, workload)
    return objs[0]["tables"] if objs else None


def pair(one_liner, args, workload, run=perf_tables, env=None):
    """(bpftrace's output, perf's tables) of one workload run."""
    bt = Bpftrace(one_liner, env)
    try:
        tables = run(args, workload)
    finally:
        out = bt.stop()
    return out, tables


def nonzero(d):
    return {key: v for key, v in d.items() if v}


def agree(desc, label, theirs, ours):
    """Both tools' results: equal, and shown."""
    k.expect(desc, theirs, ours)
    print("# %s: BPF64 %s, bpftrace %s" % (label, ours, theirs))


def cflags(comm):
    return ["--clang-opt", "-DCOMM=\"%s\"" % comm]


# A file of 5000 bytes read 1 KiB at a time: 4 full reads, 904, then 0.
DATA = os.path.join(WORK, "data")
with open(DATA, "wb") as f:
    f.write(bytes(range(256)) * 19 + bytes(136))
DD = "dd if=%s of=/dev/null bs=1024 2> /dev/null; dd if=/dev/zero of=/dev/null bs=512 count=300 2> /dev/null" % DATA

# ---- 1. syscalls by process name ----
out, tables = pair("tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }",
                   ["--event", "raw_syscalls:sys_enter", os.path.join(EXC, "syscall_count.c")],
                   DD)
ours = {e["key"]: e["value"] for e in tables[0]["entries"]} if tables else {}
theirs = bt_map(out)
k.check(ours.get("dd", 0) > 600, "syscall_count.c counts dd's system calls (>600)", ours)
k.expect("... as many as bpftrace's @[comm] = count() (%d)" % theirs.get("dd", -1),
         theirs.get("dd"), ours.get("dd"))
print("# syscalls of dd: BPF64 %s, bpftrace %s" % (ours.get("dd"), theirs.get("dd")))

# ---- 2. read() sizes of one process, log2 histogram ----
# A process that reads DATA 1 KiB at a time when told to on its stdin: its
# pid is known before either tool attaches, as bpftrace's /pid == N/ wants.
DONE = os.path.join(WORK, "reader.done")
reader = subprocess.Popen([sys.executable, "-c", "import os, sys\n"
                           "sys.stdin.readline()\n"
                           "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
                           "while os.read(fd, 1024):\n"
                           "    pass\n"
                           "open(sys.argv[2], 'w').close()\n", DATA, DONE],
                          stdin=subprocess.PIPE)
GO = "echo go > /proc/%d/fd/0; while [ ! -e %s ]; do sleep 0.05; done" % (reader.pid, DONE)
out, tables = pair('tracepoint:syscalls:sys_exit_read /pid == %d/ { @ = hist(args->ret); }'
                   % reader.pid,
                   ["--event", "syscalls:sys_exit_read", os.path.join(EXC, "read_sizes.c"),
                    "--hist", "0", "--clang-opt", "-DPID=%d" % reader.pid], GO)
reader.stdin.close()
reader.wait()
ours = {bucket_low(b["label"]): b["count"] for b in tables[0]["hist"]["buckets"]} \
    if tables and "hist" in tables[0] else {}
theirs = bt_hist(out)
# "go\n" on stdin, 4 x 1 KiB of the 5000-byte file, 904, the 0 at its end
k.expect("read_sizes.c -DPID on syscalls:sys_exit_read: the reads of one process in log2 buckets",
         {0: 1, 2: 1, 512: 1, 1024: 4}, nonzero(ours))
agree("... the same buckets and counts as bpftrace's /pid == %d/ hist(args->ret)" % reader.pid,
      "read() sizes (log2)", nonzero(theirs), nonzero(ours))

# ---- 3. vfs_read() return values, linear histogram ----
out, tables = pair('kretprobe:vfs_read /comm == "dd"/ { @ = lhist(retval, 0, 2000, 200); }',
                   ["--kretprobe", "vfs_read", os.path.join(EXC, "vfs_read_lhist.c")] +
                   cflags("dd"), DD)
ours = {}
for e in (tables[0]["entries"] if tables else []):
    ours[None if e["key"] < 0 else 200 * e["key"]] = e["value"]
theirs = bt_hist(out)
k.check(ours.get(1000, 0) >= 4 and ours.get(400, 0) >= 300,
        "vfs_read_lhist.c: dd's vfs_read() returns in 200-byte buckets (>= 4 of [1000, 1200))",
        ours)
agree("... the same buckets and counts as bpftrace's lhist(retval, 0, 2000, 200)",
      "vfs_read() returns (linear)", nonzero(theirs), nonzero(ours))

# ---- 4. files opened, by process name and file name ----
CAT = "cat /etc/hostname /etc/passwd /nonexistent-bpf64 /etc/hostname > /dev/null 2>&1; true"
out, tables = pair('tracepoint:syscalls:sys_enter_openat { @[comm, str(args->filename)] = count(); }',
                   ["--event", "syscalls:sys_enter_openat", os.path.join(EXC, "opens.c")], CAT)
ours = {", ".join(e["key"]): e["value"] for e in tables[0]["entries"]} if tables else {}
# Both tools count every process; cat's opens happen while both are attached.
ours = {key: v for key, v in ours.items() if key.startswith("cat, ")}
theirs = {key: v for key, v in bt_map(out).items() if key.startswith("cat, ")}
k.check(tables and tables[0]["key_type"] == "str:16+str:64" and
        ours.get("cat, /etc/hostname") == 2 and ours.get("cat, /nonexistent-bpf64") == 1,
        "opens.c on syscalls:sys_enter_openat: (comm, path) keys, a tuple of two strings, "
        "the path from user memory (cat opened /etc/hostname twice)",
        (tables[0]["key_type"] if tables else None, ours))
agree("... cat's keys and counts the same as bpftrace's @[comm, str(args->filename)] = count()",
      "opens", theirs, ours)

# ---- 5. events by probe, over a wildcard ----
out, objs = pair('tracepoint:sched:sched_* /comm == "dd"/ { @[probe] = count(); }',
                 ["--event", "sched:sched_*", os.path.join(EXC, "event_count.c")] +
                 cflags("dd"), DD, run=perf_run)
ours = {o["event"]: o["tables"][0]["entries"][0]["value"]
        for o in objs if o["tables"] and o["tables"][0]["entries"]}
theirs = {key.replace("tracepoint:", "", 1): v for key, v in bt_map(out).items()}
k.check(len(objs) > 5 and ours.get("sched:sched_process_exec") == 2,
        "event_count.c on sched:sched_*: a filter and a table on each of %d events (dd exec'ed twice)"
        % len(objs), (len(objs), ours))
# Events from interrupts (the tick's sched_stat_runtime, wakeups from
# timers) may hit either tool's program running on the CPU, and both skip
# an event then: their counts may differ by a little.
close = set(ours) == set(theirs) and all(
    abs(ours[e] - theirs[e]) <= max(2, theirs[e] // 50) for e in theirs)
k.check(close and all(ours.get(e) == theirs.get(e) for e in
                      ("sched:sched_process_exec", "sched:sched_process_exit")),
        "... the same events as bpftrace's @[probe] = count(), exec and exit counted exactly, "
        "the others within 2% (or 2)", (ours, theirs))
print("# sched events of dd: BPF64 %s, bpftrace %s" % (ours, theirs))

# ---- 6. a kernel structure followed by name ----
# bpftrace knows struct path from the kernel's headers (the guest kernel
# has no BTF): those of the tree and of the build of the running kernel.
headers = dict(os.environ, BPFTRACE_KERNEL_SOURCE=os.path.join(TOP, "build/linux"),
               BPFTRACE_KERNEL_BUILD=os.path.dirname(VMLINUX or "/"))
out, tables = pair('#include <linux/path.h>\n#include <linux/dcache.h>\n'
                   'kprobe:vfs_open /comm == "cat"/ '
                   '{ @[str(((struct path *)arg0)->dentry->d_name.name)] = count(); }',
                   ["--kprobe", "vfs_open", os.path.join(EXC, "vfs_open_names.c")] +
                   cflags("cat"), CAT, env=headers)
ours = {e["key"]: e["value"] for e in tables[0]["entries"]} if tables else {}
theirs = bt_map(out)
k.check(ours.get("hostname") == 2 and ours.get("passwd") == 1,
        "vfs_open_names.c: path->dentry->d_name.name of the files cat opens (hostname twice)",
        ours)
agree("... the same names and counts as bpftrace's "
      "str(((struct path *)arg0)->dentry->d_name.name)", "vfs_open names", theirs, ours)

# ---- 7. kernel stacks as keys ----
def frames(text):
    """'sym+off' words or lines: [(sym, offset)], without empty slots."""
    out = []
    for w in text.split():
        m = re.match(r"(.+)\+(0x[0-9a-f]+|\d+)$", w)
        if m:
            out.append((m.group(1), int(m.group(2), 0)))
    return tuple(out)


out, tables = pair('kprobe:vfs_read /comm == "dd"/ { @[kstack] = count(); }',
                   ["--kprobe", "vfs_read", os.path.join(EXC, "kstack_count.c")] +
                   cflags("dd"), DD)     # no --table: the stacks are void *[] in C
stacks = {e["key_hex"]: frames(e["value"]) for e in tables[0]["entries"]} if tables else {}
ours = {}
for e in (tables[1]["entries"] if tables else []):
    ours[stacks.get(e["key_hex"])] = ours.get(stacks.get(e["key_hex"]), 0) + e["value"]
theirs = {frames(m.group(1)): int(m.group(2))
          for m in re.finditer(r"^@\[\n(.*?)\]: (\d+)$", out, re.M | re.S)}
k.check(sum(ours.values()) >= 306 and all(st and st[0][0] == "vfs_read" for st in ours),
        "kstack_count.c: dd's vfs_read() calls by kernel stack, each from vfs_read (%d stacks)"
        % len(ours), ours)
agree("... the same stacks (symbolized) and counts as bpftrace's @[kstack] = count()",
      "stacks of dd's vfs_read()", theirs, ours)

# ---- 8. read latency: two filters of one file, sharing its tables ----
def median(hist):
    """The low bound of the bucket that holds the middle sample."""
    total, seen = sum(hist.values()), 0
    for low in sorted(hist, key=lambda b: -1 if b is None else b):
        seen += hist[low]
        if 2 * seen >= total:
            return low


bt = Bpftrace('kprobe:vfs_read /comm == "dd"/ { @start[tid] = nsecs; } '
              'kretprobe:vfs_read /@start[tid]/ { @ns[comm] = hist(nsecs - @start[tid]); '
              'delete(@start[tid]); }')
try:
    tables = perf_tables([os.path.join(EXC, "read_latency.c")] + cflags("dd"), DD)
finally:
    out = bt.stop()
lat = [t for t in tables or [] if t.get("name") == "ns"]
start = [t for t in tables or [] if t.get("name") == "start"]
groups = {" ".join(g["group"]): g["hist"]["buckets"] for g in lat[0].get("hists", [])} \
    if lat else {}
ours = {bucket_low(b["label"]): b["count"] for b in groups.get("dd", [])}
theirs = bt_hist(out)
theirs_groups = re.findall(r"^@ns\[(.*?)\]:\s*$", out, re.M)
print("# read latency (ns, log2): BPF64 %s, bpftrace %s" % (nonzero(ours), nonzero(theirs)))
# Each read of dd is timed once by each tool: the counts are exact; the
# times are not (each tool's probes run inside the other's interval).
k.check(sum(ours.values()) >= 306 and sum(ours.values()) == sum(theirs.values()),
        "read_latency.c (kprobe and kretprobe filters, one perf run): every vfs_read() "
        "of dd timed, as many as bpftrace's (%d)" % sum(theirs.values()), (ours, theirs))
k.check(start and start[0]["count"] == 0 and lat[0]["key_type"] == "str:16+log2" and
        list(groups) == ["dd"] and theirs_groups == ["dd"],
        "... @start emptied by the deletes; @ns[dd] drawn as a histogram per process name "
        "by its (comm, bpf64_log2_t) key, with no --table or --hist, as bpftrace's @ns[dd]",
        (groups, theirs_groups, tables))
k.check(ours and theirs and median(ours) and median(theirs) and
        max(median(ours), median(theirs)) <= 4 * min(median(ours), median(theirs)),
        "... the median latency within two log2 buckets of bpftrace's (BPF64 %s, bpftrace %s)"
        % (median(ours) if ours else None, median(theirs) if theirs else None))
k.finish()
