#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: the RFC's examples written in C (tools/bpf64/examples/c),
# compiled by clang and translated by bpf64_cc, behave on
# net:netif_receive_skb exactly like their instruction versions (same prints
# for ping -c3 127.0.0.1, same table counts); a kprobe filter keeps the calls
# whose argument matches; a per-task counter counts each task's calls
# requires: clang, kprobe_events
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "filters"))
from common import *     # noqa: E402,F401,F403

BPF64_CC = os.path.join(TOP, "build", "bin", "bpf64_cc")
EXAMPLES_C = os.path.join(TOP, "build", "linux", "tools", "bpf64", "examples", "c")
PLAN = 17

if not shutil.which("clang") or not os.access(BPF64_CC, os.X_OK):
    k = Ktap(1)
    k.skip("needs clang and build/bin/bpf64_cc")
    k.finish()
k = need_root_and_bpf64(PLAN)
work = tempfile.mkdtemp()
ev = event_dir(NETIF_RX)


def gen_header(name, defines):
    """What perf bpf-filter --gen-header writes for the filter."""
    hdr = os.path.join(work, name + ".h")
    with open(hdr, "w") as f:
        for k_, v in defines.items():
            f.write("#define %s %d\n" % (k_, v))
    return hdr


def compile_c(src, hdr, *cflags):
    """A C filter to an image with bpf64_cc; (image bytes or None, output)."""
    out = os.path.join(work, os.path.basename(src) + ".bpf")
    p = subprocess.run([BPF64_CC, "--include", hdr, "-o", out] + list(cflags) +
                       [os.path.join(EXAMPLES_C, src)], capture_output=True, text=True)
    if p.returncode:
        return None, p.stdout + p.stderr
    return read_bytes(out), p.stderr


def insn_example(name, skb_dev):
    """The RFC's instruction version with skb->dev at this kernel's offset
    (as filters/common.py's corrected_example(), without another gdb run)."""
    insns, tables, strtab = bpf64.parse_image(example(name))
    assert insns[3][0] == 0x04 and insns[3][3] == 32, insns[3]
    insns[3][3] = skb_dev
    return bpf64.build_image(insns, tables, strtab)


skb_dev, dev_name = member_offsets("sk_buff.dev", "net_device.name")
netif_hdr = gen_header("netif_receive_skb", {
    "ARG_skb": PT_REGS[TP_ARG_REGS[0]],         # tracepoint argument 1
    "OFF_sk_buff__dev": skb_dev,
    "SIZE_sk_buff__dev": 8,
    "OFF_net_device__name": dev_name,
    "SIZE_net_device__name": 16,
})


def run_ex1(image):
    """Attach, ping, detach: (write's errno, prints, recorded events, devices)."""
    err = write(ev + "/filter", image)
    clear_trace()
    write(ev + "/enable", "1")
    ping(3)
    write(ev + "/enable", "0")
    write(ev + "/filter", "0")
    lines = trace_lines()
    prints = [l for l in lines if re.search(r"__netif_receive_skb_core[.\w]*: skb \S+ dev \S+", l)]
    events = [l for l in lines if "netif_receive_skb: dev=" in l]
    devs = {re.search(r"dev (\S+)", l).group(1) for l in prints}
    return err, len(prints), len(events), devs


ex1_c, log = compile_c("filter_ex1.c", netif_hdr)
k.check(ex1_c, "filter_ex1.c compiles and translates with this kernel's offsets", log)
ex1_insn = run_ex1(insn_example("filter_ex1", skb_dev))
ex1 = run_ex1(ex1_c or b"")
k.expect("the RFC's filter_ex1 (instructions) and filter_ex1.c attach", (0, 0), (ex1_insn[0], ex1[0]))
k.expect("both print once per packet on lo: 6 for ping -c3 (3 requests, 3 replies)",
         (6, 6), (ex1_insn[1], ex1[1]))
k.expect("both drop the events themselves (void filter: verdict 0)", (0, 0),
         (ex1_insn[2], ex1[2]))
k.check(len(ex1[3]) == 1 and ex1[3] == ex1_insn[3], "both print the same device, lo",
        (ex1_insn[3], ex1[3]))


def run_ex2(image):
    """Attach, ping, read filter_tables, detach: (errno, table lines)."""
    err = write(ev + "/filter", image)
    write(ev + "/enable", "1")
    ping(3)
    write(ev + "/enable", "0")
    tables = read(ev + "/filter_tables").splitlines()
    write(ev + "/filter", "0")
    return err, tables


ex2_c, log = compile_c("filter_ex2.c", netif_hdr)
k.check(ex2_c, "filter_ex2.c compiles and translates", log)
err_i, tab_i = run_ex2(insn_example("filter_ex2", skb_dev))
err_c, tab_c = run_ex2(ex2_c or b"")
k.expect("the RFC's filter_ex2 (instructions) and filter_ex2.c attach", (0, 0), (err_i, err_c))
want = "table 0 type hash key_size 8 elem_size 8 max_entries 4096 entries 1"
k.expect("both have one hash table (8-byte keys and values, 4096 entries) with one device",
         (want, want), (tab_i[0] if tab_i else None, tab_c[0] if tab_c else None))
ent = re.compile(r"key ([0-9a-f]{16}) value ([0-9a-f]{16})$")
mi, mc = (ent.match(t[1]) if len(t) > 1 else None for t in (tab_i, tab_c))
count = (lambda m: int.from_bytes(bytes.fromhex(m.group(2)), "little") if m else None)
k.expect("both count 5: the 6 packets on lo less the first, which inserts 0",
         (5, 5), (count(mi), count(mc)))
k.check(mi and mc and mi.group(1) == mc.group(1) and
        int.from_bytes(bytes.fromhex(mc.group(1)), "little") >> 56 == 0xff,
        "both key the count by the same net_device pointer", (tab_i, tab_c))

# ---- kprobes: vfs_write(struct file *file, const char *buf, size_t count, loff_t *pos)
append(path("kprobe_events"), "p:ksft/vfswrite vfs_write count=%dx:u64\n")
kev = event_dir("ksft:vfswrite")
# At the function's entry the third argument is in dx (x86-64 calling
# convention); perf bpf-filter --kprobe 'vfs_write count' finds it in DWARF.
write_hdr = gen_header("vfs_write", {"ARG_count": PT_REGS["dx"]})


def writes(n, size):
    """A process that makes n writes of size bytes to /dev/null."""
    subprocess.run([sys.executable, "-c",
                    "import os\nfd = os.open('/dev/null', os.O_WRONLY)\n"
                    "for _ in range(%d):\n    os.write(fd, b'x' * %d)\n" % (n, size)],
                   check=True)


match, log = compile_c("kprobe_arg_match.c", write_hdr)
k.expect("kprobe_arg_match.c translates and attaches to a kprobe on vfs_write", 0,
         write(kev + "/filter", match) if match else log)
clear_trace()
write(kev + "/enable", "1")
writes(3, 4321)
writes(4, 100)
write(kev + "/enable", "0")
lines = trace_lines()
counts = [int(m.group(1)) for l in lines
          for m in [re.search(r"vfswrite: \(vfs_write\+0x[0-9a-f]+/0x[0-9a-f]+\) count=(\d+)$", l)] if m]
k.check(counts == [4321] * 3, "only the calls with count == 4321 are recorded, all 3 of them",
        lines[:8])
write(kev + "/filter", "0")

tasks, log = compile_c("task_calls.c", write_hdr, "-DMATCH_ARG=count", "-DMATCH_VALUE=4321")
k.expect("task_calls.c (counting writes of 4321 bytes) translates and attaches", 0,
         write(kev + "/filter", tasks) if tasks else log)
clear_trace()
write(kev + "/enable", "1")
writes(7, 4321)
writes(11, 4321)
writes(5, 100)
write(kev + "/enable", "0")
tables = read(kev + "/filter_tables").splitlines()
entries = [ent.match(t) for t in tables[1:]]
values = sorted(int.from_bytes(bytes.fromhex(m.group(2)), "little") for m in entries if m)
k.expect("one entry per task, counting its calls: 7 and 11", [7, 11], values)
keys = [int.from_bytes(bytes.fromhex(m.group(1)), "little") for m in entries if m]
k.check(len(keys) == 2 and all(x >> 56 == 0xff and x % 16384 == 0 for x in keys),
        "the keys are the tasks' 16 KiB-aligned kernel stacks", tables)
k.expect("the filter dropped every event (void)", [], [l for l in trace_lines() if "vfswrite:" in l])
write(kev + "/filter", "0")
append(path("kprobe_events"), "-:ksft/vfswrite\n")
k.check(not os.path.exists(kev), "the kprobe event is gone")
shutil.rmtree(work)
k.finish()
