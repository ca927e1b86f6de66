#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: a kprobe on a function of a module (dummy_xmit() of the
# dummy network driver, CONFIG_DUMMY=m) named with perf bpf-filter
# --module: its arguments from the module's DWARF or BTF, and a filter that
# counts the packets a process sends by their length, next to bpftrace's
# kprobe:dummy_xmit on the same packets: the same counts, exactly
# requires: bpftrace, perf bpf-filter with filters in C, clang, ip, dummy.ko
import json
import os
import subprocess

from peers import EXC, PERF, WORK, Bpftrace, bt_map, perf_lines, start

k, VMLINUX = start(8)
DEV, NET = "bpf64d0", "10.199.0"
COMM = "bpf64-udp"
SIZES = [10, 100, 1000, 100, 10]    # UDP payloads: skb->len has 42 more (Ethernet, IP, UDP)


def ip(*args):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True)


# A dummy device (its module loads on demand) with a /24 on it: what is
# sent there goes through dummy_xmit() and is dropped.
ip("link", "del", DEV)
made = ip("link", "add", DEV, "type", "dummy")
ip("addr", "add", NET + ".1/24", "dev", DEV)
ip("link", "set", DEV, "up")
k.check(made.returncode == 0 and os.path.exists("/sys/module/dummy"),
        "the dummy module is loaded and %s made" % DEV, made.stderr)

sender = os.path.join(WORK, "send.py")
with open(sender, "w") as f:
    f.write("""import socket
with open('/proc/self/comm', 'w') as f:
    f.write('%s')
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in %r:
    s.sendto(b'x' * n, ('%s.2', 9))
""" % (COMM, SIZES, NET))

# The listing: the function of the module, from the module's DWARF.
listing = subprocess.run([PERF, "bpf-filter", "--module", "dummy", "--kprobe", "dummy_xmit",
                          "--json"], capture_output=True, text=True)
try:
    lj = json.loads(listing.stdout)
except ValueError:
    lj = {}
args = {a["name"]: a["location"] for a in lj.get("probe", {}).get("args", [])}
k.check(lj.get("vmlinux", "").endswith("/dummy.ko") and args.get("skb") == "%di" and
        args.get("dev") == "%si",
        "--module dummy --kprobe dummy_xmit: skb in di, dev in si, from dummy.ko's DWARF",
        (lj, listing.stderr[-500:]))

# The same from the module's BTF (a distribution's .ko has no DWARF).
listing = subprocess.run([PERF, "bpf-filter", "--module", "dummy", "--kprobe", "dummy_xmit",
                          "--btf", "/sys/kernel/btf/dummy", "--member", "sk_buff.len", "--json"],
                         capture_output=True, text=True)
try:
    bj = json.loads(listing.stdout)
except ValueError:
    bj = {}
k.check({a["name"]: a["location"] for a in bj.get("probe", {}).get("args", [])} == args and
        [m["type"] for m in bj.get("members", [])] == ["unsigned int"],
        "... and from its BTF, /sys/kernel/btf/dummy (split on the kernel's): the same "
        "arguments, sk_buff.len", (bj, listing.stderr[-500:]))

src = os.path.join(WORK, "lens.c")
with open(src, "w") as f:
    f.write("""#include "comm.h"

BPF64_TABLE(lens, BPF64_TABLE_HASH, unsigned int, unsigned long, 64);

int filter(struct pt_regs *ctx)
{
	void *skb = (void *)BPF64_ARG(ctx, skb);
	unsigned int len;

	if (!current_comm_is_COMM())
		return 0;
	len = BPF64_READ(skb, sk_buff, len);
	count(ctx, &lens, &len);
	return 0;
}
""")
bt = Bpftrace('kprobe:dummy_xmit /comm == "%s"/ { @[((struct sk_buff *)arg0)->len] = count(); }'
              % COMM)
try:
    objs = perf_lines(VMLINUX, ["--module", "dummy", "--kprobe", "dummy_xmit", src,
                                "--clang-opt", "-I" + EXC,
                                "--clang-opt", '-DCOMM="%s"' % COMM],
                      "python3 " + sender)
finally:
    out = bt.stop()
ip("link", "del", DEV)
tables = next((o["tables"] for o in objs if "tables" in o), [])
ours = {str(e["key"]): e["value"] for t in tables for e in t.get("entries", [])}
theirs = bt_map(out)
want = {}
for n in SIZES:
    want[str(n + 42)] = want.get(str(n + 42), 0) + 1
k.expect("lens.c on the module's kprobe (skb by name, sk_buff.len from DWARF): "
         "the process's packets by length", want, ours)
k.expect("... the same counts as bpftrace's kprobe:dummy_xmit "
         "@[((struct sk_buff *)arg0)->len] = count()", theirs, ours)
print("# packets by length through dummy_xmit: BPF64 %s, bpftrace %s" %
      (sorted(ours.items()), sorted(theirs.items())))

# The same filter in a file that names its event: BPF64_EVENT("kprobe:dummy:dummy_xmit").
with open(src) as f:
    text = f.read().replace("int filter(", 'BPF64_EVENT("kprobe:dummy:dummy_xmit")\nint filter(')
with open(os.path.join(WORK, "lens_event.c"), "w") as f:
    f.write(text)
ip("link", "add", DEV, "type", "dummy")
ip("addr", "add", NET + ".1/24", "dev", DEV)
ip("link", "set", DEV, "up")
objs = perf_lines(VMLINUX, [os.path.join(WORK, "lens_event.c"), "--clang-opt", "-I" + EXC,
                            "--clang-opt", '-DCOMM="%s"' % COMM], "python3 " + sender)
ip("link", "del", DEV)
tables = next((o["tables"] for o in objs if "tables" in o), [])
k.expect('BPF64_EVENT("kprobe:dummy:dummy_xmit") in a file of filters: the same counts',
         want, {str(e["key"]): e["value"] for t in tables for e in t.get("entries", [])})

# From BTF alone, as on a distribution's kernel without its -dbg package:
# in a mount namespace, no vmlinux (/lib/modules/R/build and /usr/lib/debug
# hidden) and dummy.ko without its DWARF (a copy stripped as packages strip
# modules), the types from /sys/kernel/btf/vmlinux and /sys/kernel/btf/dummy.
hide = ('r=$(uname -r); ko=$(modinfo -n dummy) && '
        'objcopy --strip-debug "$ko" %s/dummy.ko && mount --bind %s/dummy.ko "$ko" && '
        '{ [ ! -d /lib/modules/$r/build ] || mount -t tmpfs none /lib/modules/$r/build; } && '
        'mount -t tmpfs none /usr/lib/debug && exec "$@"' % (WORK, WORK))
ip("link", "add", DEV, "type", "dummy")
ip("addr", "add", NET + ".1/24", "dev", DEV)
ip("link", "set", DEV, "up")
r = subprocess.run(["unshare", "-m", "sh", "-c", hide, "nodwarf", PERF, "bpf-filter", "--json",
                    "-q", "--module", "dummy", "--kprobe", "dummy_xmit", src,
                    "--clang-opt", "-I" + EXC, "--clang-opt", '-DCOMM="%s"' % COMM,
                    "--", "sh", "-c", "python3 " + sender],
                   capture_output=True, text=True, cwd=WORK, timeout=600)
ip("link", "del", DEV)
objs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
tables = next((o["tables"] for o in objs if "tables" in o), [])
k.expect("lens.c on the module's kprobe without any DWARF (the module's BTF): the same counts",
         want, {str(e["key"]): e["value"] for t in tables for e in t.get("entries", [])})
if r.returncode:
    print("# perf exit %d: %s" % (r.returncode, r.stderr[-1500:].replace("\n", "\n# ")))
k.finish()
