#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The malloc sizes job, measured in the guest (scripts/bench): the
per-event cost of bpftrace's
    uprobe:LIBC:malloc { @[comm] = hist(arg0); }
and of the same job as a BPF64 filter, tools/bpf64/examples/c/malloc_sizes.c
run by perf bpf-filter, on a program that does N malloc()s (mallocer.c).
As in latency_job.py: under -icount a guest ns is a guest instruction,
the cost per event is (T - T_off) / N, and both tools must have counted
every malloc() of the program (its histogram holds at least N), or the
run fails.  An empty BPF64 filter on the same uprobe gives the floor: what
the uprobe (breakpoint, handler, single step) costs before any filter
work.  Variants alternate order from one repetition to the next."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

from latency_job import measure, stop, wait_for

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
ONE_LINER = "uprobe:%s:malloc { @[comm] = hist(arg0); }" % LIBC
# uprobes have no list to wait on: bpftrace attaches right after saying so
SETTLE = 2


def run_mallocer(args):
    out = subprocess.run([args.mallocer, str(args.mallocs)], capture_output=True, text=True,
                         check=True).stdout
    m = re.match(r"ns (\d+) mallocs (\d+)", out)
    if not m or int(m.group(2)) != args.mallocs:
        raise RuntimeError("mallocer: %r" % out)
    return int(m.group(1))


def with_bpf64(args):
    """T with perf bpf-filter malloc_sizes.c attached; the program's mallocs counted."""
    proc = subprocess.Popen([args.perf, "bpf-filter", "--vmlinux", args.vmlinux, "--json",
                             args.example], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_for(proc, proc.stderr, "attached ", 1, "perf bpf-filter")
    time.sleep(SETTLE)
    t = run_mallocer(args)
    out, _ = stop(proc)
    tables = [json.loads(line) for line in out.splitlines() if '"tables"' in line]
    sizes = [tb for tb in tables[-1]["tables"] if tb.get("name") == "sizes"] if tables else []
    counted = sum(b["count"] for g in sizes[0].get("hists", []) if g["group"] == ["mallocer"]
                  for b in g["hist"]["buckets"]) if sizes else 0
    return t, counted


def with_empty(args):
    """T with an empty BPF64 filter (0: drop) on the same uprobe: the floor
    of the uprobe, its event and perf bpf-filter; nothing to count."""
    src = os.path.join(os.path.dirname(args.out), "empty.c")
    with open(src, "w") as f:
        f.write("int filter(void *ctx) { return 0; }\n")
    proc = subprocess.Popen([args.perf, "bpf-filter", "--vmlinux", args.vmlinux, "--json",
                             "-x", LIBC, "--uprobe", "malloc", src],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(proc, proc.stderr, "attached ", 1, "perf bpf-filter")
    time.sleep(SETTLE)
    t = run_mallocer(args)
    stop(proc)
    return t, args.mallocs


def with_bpftrace(args):
    """T with the bpftrace one-liner attached; the program's mallocs counted."""
    proc = subprocess.Popen(["bpftrace", "-e", ONE_LINER], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    wait_for(proc, proc.stdout, "Attaching ", 1, "bpftrace")
    time.sleep(SETTLE)
    t = run_mallocer(args)
    out, _ = stop(proc)
    part = re.split(r"^@\[mallocer\]:\s*$", out, flags=re.M)
    body = re.split(r"^@", part[1], flags=re.M)[0] if len(part) > 1 else ""
    counted = sum(int(m.group(1)) for m in
                  re.finditer(r"^[\[(][^\n]*?[\])]\s+(\d+) \|", body, re.M))
    if counted < args.mallocs:
        sys.stdout.write("bench: bpftrace's output:\n%s\n" % out[-3000:])
    return t, counted


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", required=True)
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--mallocer", required=True)
    ap.add_argument("--mallocs", type=int, default=20000)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.environ.setdefault("HOME", "/tmp")

    variants = {"off": lambda a: (run_mallocer(a), a.mallocs),
                "bpf64": with_bpf64, "bpf64_empty": with_empty, "bpftrace": with_bpftrace}
    runs = measure(variants, args, args.mallocs, "malloc job", "mallocs", "counted")
    off = statistics.median(runs["off"])
    res = dict(mallocs=args.mallocs, repetitions=args.repetitions, runs=runs,
               per_event={v: (statistics.median(runs[v]) - off) / args.mallocs
                          for v in ("bpf64", "bpf64_empty", "bpftrace")})
    with open(args.out, "w") as f:
        json.dump(res, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
