#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: bpftrace's jobs on programs and libraries (uprobes and
# uretprobes) and their BPF64 versions (tools/bpf64/examples/c), both
# attached while the same workload runs: bash's readline() lines
# (/usr/sbin/bashreadline.bt), libc's malloc() sizes per process name,
# getaddrinfo() per host name (/usr/sbin/gethostlatency.bt)
# requires: bpftrace, perf bpf-filter with filters in C, clang, cc, script
import os
import re
import subprocess

from peers import EXC, WORK, Bpftrace, bt_hists, bucket_low, perf_lines, start

k, VMLINUX = start(8)
BT_TOOLS = "/usr/sbin"
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
# the workloads run without the malloc checks perf runs under
CLEAN = "env -u LD_PRELOAD -u GLIBC_TUNABLES "


def both(bt_prog, example, workload, script=False):
    """(bpftrace's output, perf's --json objects) of one workload run."""
    bt = Bpftrace(bt_prog, script=script)
    try:
        objs = perf_lines(VMLINUX, [os.path.join(EXC, example)], workload, quiet=False)
    finally:
        out = bt.stop()
    return out, objs


def show(label, ours, theirs):
    for name, lines in (("BPF64", ours), ("bpftrace", theirs)):
        print("# %s, %s:" % (label, name))
        for line in lines:
            print("#   %s" % (line,))


# ---- bashreadline: the lines an interactive bash reads ---------------------
LINES = ["echo bpf64-one", "true bpf64 two", "exit"]
with open(os.path.join(WORK, "lines"), "w") as f:
    f.write("\n".join(LINES) + "\n")
BASH = CLEAN + "script -qec 'bash --norc --noprofile -i' /dev/null < %s/lines > /dev/null" % WORK
out, objs = both(os.path.join(BT_TOOLS, "bashreadline.bt"), "bashreadline.c", BASH, script=True)
ours = [(o["fields"]["pid"], o["fields"]["line"]) for o in objs if o.get("record") == "lines"]
# time("%H:%M:%S  ") then "%-6d %s\n"
theirs = [(int(m.group(1)), m.group(2))
          for m in (re.match(r"^\d\d:\d\d:\d\d\s+(\d+)\s+(.*)$", line) for line in out.splitlines())
          if m]
k.check([line for _, line in ours] == LINES and len({pid for pid, _ in ours}) == 1,
        "bashreadline.c (a uretprobe on bash's readline(), the line read from ax): "
        "bash's three lines, from one pid", ours)
k.expect("... the same pid and lines in the same order as bpftrace's bashreadline.bt",
         theirs, ours)
show("bashreadline", ours, theirs)

# ---- malloc() sizes per process name ---------------------------------------
SIZES = [1, 24, 100, 1000, 5000, 70000]
src = os.path.join(WORK, "bpf64-malloc.c")
with open(src, "w") as f:
    f.write("""#include <stdlib.h>
int main(void)
{
	static const unsigned long sizes[] = { %s };
	unsigned int i, r;

	for (r = 0; r < 3; r++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			free(malloc(sizes[i]));
	return 0;
}
""" % ", ".join(map(str, SIZES)))
subprocess.run(["cc", "-O0", "-o", src[:-2], src], check=True)
out, objs = both("uprobe:%s:malloc { @[comm] = hist(arg0); }" % LIBC, "malloc_sizes.c",
                 CLEAN + src[:-2])
tables = next((o["tables"] for o in objs if "tables" in o), [])
groups = {" ".join(g["group"]): g["hist"]["buckets"]
          for t in tables if t.get("name") == "sizes" for g in t.get("hists", [])}
ours = {bucket_low(b["label"]): b["count"] for b in groups.get("bpf64-malloc", []) if b["count"]}
theirs = {low: n for low, n in bt_hists(out).get("bpf64-malloc", {}).items() if n}
want = {}
for size in SIZES:
    low = 1 << (size.bit_length() - 1)
    want[low] = want.get(low, 0) + 3
k.check(all(ours.get(low, 0) >= n for low, n in want.items()),
        "malloc_sizes.c (a uprobe on libc's malloc(), the size in di): @sizes[bpf64-malloc] "
        "has the program's 18 calls in their log2 buckets %s" % sorted(want.items()), ours)
k.expect("... the same buckets and counts as bpftrace's uprobe:libc:malloc "
         "{ @[comm] = hist(arg0); } for bpf64-malloc", theirs, ours)
print("# malloc sizes of bpf64-malloc (log2): BPF64 %s, bpftrace %s" %
      (sorted(ours.items()), sorted(theirs.items())))

# ---- gethostlatency: getaddrinfo() from entry to return, per host ----------
LOOKUPS = CLEAN + "getent ahosts localhost > /dev/null; getent ahosts bpf64.invalid; true"
out, objs = both(os.path.join(BT_TOOLS, "gethostlatency.bt"), "gethostlatency.c", LOOKUPS,
                 script=True)
records = [o["fields"] for o in objs if o.get("record") == "lookups"]
ours = [(r["pid"], r["comm"], r["host"]) for r in records if r["comm"] == "getent"]
# time("%H:%M:%S  ") then "%-6d %-16s %6d %s\n"
matches = [m for m in (re.match(r"^\d\d:\d\d:\d\d\s+(\d+)\s+(\S+)\s+(\d+) (.*)$", line)
                       for line in out.splitlines()) if m and m.group(2) == "getent"]
theirs = [(int(m.group(1)), m.group(2), m.group(4)) for m in matches]
k.check([host for _, _, host in ours] == ["localhost", "bpf64.invalid"],
        "gethostlatency.c (uprobes and uretprobes on libc's lookups): getent's two "
        "getaddrinfo() calls, localhost and a name that does not resolve", ours)
k.expect("... the same pids, commands and hosts in the same order as bpftrace's "
         "gethostlatency.bt", theirs, ours)
lat_ours = [r["latms"] for r in records if r["comm"] == "getent"]
lat_theirs = [int(m.group(3)) for m in matches]
k.check(len(lat_ours) == len(lat_theirs) == 2,
        "... a latency for each lookup from both (ms: BPF64 %s, bpftrace %s; each tool's "
        "probes run inside the other's interval)" % (lat_ours, lat_theirs))
show("gethostlatency, getent", [(o + (l,)) for o, l in zip(ours, lat_ours)],
     [(t + (l,)) for t, l in zip(theirs, lat_theirs)])
k.finish()
