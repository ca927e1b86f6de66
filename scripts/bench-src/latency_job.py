#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The read latency job, measured in the guest (scripts/bench): the
per-event cost of bpftrace's
    kprobe:vfs_read /comm == "reader"/ { @start[tid] = nsecs; }
    kretprobe:vfs_read /@start[tid]/ { @ns[comm] = hist(nsecs - @start[tid]);
                                       delete(@start[tid]); }
and of the same job as BPF64 filters, tools/bpf64/examples/c/read_latency.c
run by perf bpf-filter, on a program that does N read()s of /dev/zero.
The BPF64 job runs twice: with read_latency.c's `start` table as shipped
(4096 entries) and with 8 entries, where every insert after the eighth
thread reuses a deleted slot (kernel 39: no grace period to wait).

Under -icount a guest ns is a guest instruction: the reader's time is the
instructions the whole guest ran meanwhile (the probes, the filters or
programs, and the tools' own work).  Each read is two events (entry,
return): the cost per event is (T - T_off) / 2N.  Both tools must have
timed every read (a histogram of at least N samples), or the run fails.
Variants alternate order from one repetition to the next."""
import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ONE_LINER = ('kprobe:vfs_read /comm == "reader"/ { @start[tid] = nsecs; } '
             'kretprobe:vfs_read /@start[tid]/ { @ns[comm] = hist(nsecs - @start[tid]); '
             'delete(@start[tid]); }')
ATTACH_TIMEOUT = 900    # bpftrace compiles with LLVM: minutes under -icount


def run_reader(args):
    out = subprocess.run([args.reader, str(args.reads)], capture_output=True, text=True,
                         check=True).stdout
    m = re.match(r"ns (\d+) reads (\d+)", out)
    if not m or int(m.group(2)) != args.reads:
        raise RuntimeError("reader: %r" % out)
    return int(m.group(1))


def wait_for(proc, stream, pattern, count, what):
    """Lines of @stream until @count of them start with @pattern."""
    lines, seen, deadline = [], 0, time.time() + ATTACH_TIMEOUT
    while seen < count and time.time() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        seen += line.startswith(pattern)
    if seen < count:
        proc.kill()
        raise RuntimeError("%s did not attach: %s" % (what, "".join(lines)[-3000:]))


def filtered_events():
    """The kinds ("k", "r") of the enabled kprobe events on vfs_read in perf
    bpf-filter's instances that run from ftrace: their kprobes stay disarmed
    (kernel 38), so kprobes/list does not show them."""
    kinds = set()
    for enable in glob.glob("/sys/kernel/tracing/instances/perf-bpf-filter-*/events/*/*/enable"):
        d = os.path.dirname(enable)
        try:
            with open(enable) as f:
                if f.read().strip() != "1":
                    continue
            with open(os.path.join(d, "filter")) as f:
                if " path ftrace" not in f.read():
                    continue
            with open(os.path.join(d, "format")) as f:
                fmt = f.read()
        except OSError:
            continue
        if "vfs_read" in os.path.basename(d):
            kinds.add("r" if "__probe_ret_ip" in fmt else "k")
    return kinds


def wait_kprobes(proc, what):
    """Until the kprobe and the kretprobe on vfs_read are registered and
    enabled, or their events run from ftrace (bpftrace says "Attaching"
    before it attaches; perf bpf-filter enables its events after attaching
    its filters)."""
    deadline = time.time() + ATTACH_TIMEOUT
    while time.time() < deadline:
        with open("/sys/kernel/debug/kprobes/list") as f:
            kinds = {m.group(1) for m in re.finditer(r"^\S+\s+([kr])\s+vfs_read\+\S+(.*)$",
                                                     f.read(), re.M)
                     if "DISABLED" not in m.group(2)}
        if kinds | filtered_events() == {"k", "r"}:
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("%s: no enabled kprobe and kretprobe on vfs_read" % what)


def stop(proc):
    for _ in range(3):
        proc.send_signal(signal.SIGINT)
        try:
            return proc.communicate(timeout=ATTACH_TIMEOUT // 3)
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    return proc.communicate()


def with_bpf64(args, clang_opts=()):
    """T with perf bpf-filter read_latency.c attached; the samples it timed."""
    opts = [o for c in clang_opts for o in ("--clang-opt", c)]
    proc = subprocess.Popen([args.perf, "bpf-filter", "--vmlinux", args.vmlinux, "--json",
                             args.example, "--clang-opt", '-DCOMM="reader"'] + opts,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(proc, proc.stderr, "attached ", 2, "perf bpf-filter")
    wait_kprobes(proc, "perf bpf-filter")
    t = run_reader(args)
    out, _ = stop(proc)
    tables = [json.loads(line) for line in out.splitlines() if '"tables"' in line]
    ns = [tb for tb in tables[-1]["tables"] if tb.get("name") == "ns"] if tables else []
    samples = sum(b["count"] for g in ns[0].get("hists", []) for b in g["hist"]["buckets"]) \
        if ns else 0
    return t, samples


def with_bpftrace(args):
    """T with the bpftrace one-liner attached; the samples it timed."""
    proc = subprocess.Popen(["bpftrace", "-e", ONE_LINER], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    wait_for(proc, proc.stdout, "Attaching ", 1, "bpftrace")
    wait_kprobes(proc, "bpftrace")
    t = run_reader(args)
    out, _ = stop(proc)
    samples = sum(int(m.group(1)) for m in
                  re.finditer(r"^[\[(][^\n]*?[\])]\s+(\d+) \|", out, re.M))
    if samples < args.reads:
        sys.stdout.write("bench: bpftrace's output:\n%s\n" % out[-3000:])
    return t, samples


def measure(variants, args, n, job, ops, done):
    """T of each variant (a function of args: T and how many of the n
    operations it saw), args.repetitions times in alternating order; a
    variant that saw fewer than n fails the run."""
    names = list(variants)
    runs = {v: [] for v in names}
    for rep in range(args.repetitions):
        for v in (names if rep % 2 == 0 else names[::-1]):
            t, seen = variants[v](args)
            if seen < n:
                raise RuntimeError("%s %s %d of %d %s" % (v, done, seen, n, ops))
            runs[v].append(t)
            print("bench: %s rep %d %-11s %12d ns for %d %s (%d %s)"
                  % (job, rep, v, t, n, ops, seen, done), flush=True)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", required=True)
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--reader", required=True)
    ap.add_argument("--reads", type=int, default=20000)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.environ.setdefault("HOME", "/tmp")

    variants = {"off": lambda a: (run_reader(a), a.reads),
                "bpf64": with_bpf64, "bpftrace": with_bpftrace,
                "bpf64_start8": lambda a: with_bpf64(a, ["-DSTART_ENTRIES=8"])}
    runs = measure(variants, args, args.reads, "latency job", "reads", "timed")
    off = statistics.median(runs["off"])
    res = dict(reads=args.reads, repetitions=args.repetitions, runs=runs,
               per_event={v: (statistics.median(runs[v]) - off) / (2 * args.reads)
                          for v in ("bpf64", "bpf64_start8", "bpftrace")})
    with open(args.out, "w") as f:
        json.dump(res, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
