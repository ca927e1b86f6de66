#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter without a vmlinux with DWARF: the types from
# the kernel's BTF (/sys/kernel/btf/vmlinux) are those of DWARF (members,
# tracepoint and function arguments); with the DWARF vmlinux hidden (a
# mount namespace with an empty /lib/modules/$(uname -r) and
# /usr/lib/debug, run from a directory without vmlinux), --gen-header
# writes DWARF's offsets and the demo's filters run: the RFC's images
# with offsets from BTF, filter_ex1.c, filter_ex2.c, kprobe_arg_match.c on
# 'vfs_write count', task_calls.c
# requires: perf bpf-filter built with libbpf, BPF64 event filters, BTF
# (CONFIG_DEBUG_INFO_BTF), unshare, ping, python3
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
BTF=/sys/kernel/btf/vmlinux
skip() { ktap_plan 1; ktap_skip "$1"; ktap_finished; }
[ -r "$BTF" ] || skip "no $BTF (CONFIG_DEBUG_INFO_BTF)"
bf -h 2>&1 | grep -q -- --btf || skip "perf bpf-filter without BTF (perf built without libbpf)"
command -v unshare > /dev/null || skip "no unshare"
ktap_plan 18
EXC=$TOP/build/linux/tools/bpf64/examples/c
ping3="ping -c 3 -i 0.2 127.0.0.1"
before=$(state)

# --- BTF and DWARF agree --------------------------------------------------
members=(--member sk_buff.dev --member sk_buff.len --member sk_buff.headers.protocol
	--member sk_buff.pkt_type --member net_device.name --member task_struct.pid
	--member file.f_pos)
same() {
	bf -k "$VMLINUX" "$@" --json > "$WORK/dwarf.json" &&
	bf --btf "$BTF" "$@" --json > "$WORK/btf.json" &&
	python3 - "$WORK/dwarf.json" "$WORK/btf.json" <<'PY'
import json, sys
def strip(j):
    j.pop('vmlinux', None); j.pop('btf', None)
    p = j.get('probe')
    if p:
        # BTF has no declarations, points in kallsyms; DWARF drops const
        for k in ('decl', 'points', 'point'):
            p.pop(k, None)
        for a in p['args']:
            a['type'] = a['type'].replace('const ', '')
            if not p.get('tracepoint'):
                a.pop('location')
    return j
d, b = (strip(json.load(open(f))) for f in sys.argv[1:3])
assert d == b, (d, b)
PY
}
ktap_check "7 members: the same offsets, sizes, bitfields, types in BTF and DWARF" same "${members[@]}"
ktap_check "net:netif_receive_skb: the same arguments" same --event net:netif_receive_skb
ktap_check "raw_syscalls:sys_enter: the same arguments" same --event raw_syscalls:sys_enter
ktap_check "do_sys_openat2: the same arguments, in the calling convention's registers" same --kprobe do_sys_openat2
ktap_check "vfs_write: the same" same --kprobe vfs_write

# --- the DWARF vmlinux hidden ----------------------------------------------
mkdir -p "$WORK/nodwarf"
cd "$WORK/nodwarf" || exit 1
# nodwarf CMD...: CMD where perf finds no vmlinux (the build's is
# /lib/modules/$(uname -r)/build/vmlinux, a -dbg package's in /usr/lib/debug)
nodwarf() {
	unshare -m bash -c 'mount -t tmpfs none "/lib/modules/$(uname -r)" &&
		mount -t tmpfs none /usr/lib/debug && exec "$@"' nodwarf "$@"
}
pf() { nodwarf "$PERF" bpf-filter "$@"; }
pf --event net:netif_receive_skb --member sk_buff.dev > "$WORK/list" 2> "$WORK/err"
ktap_expect_ok "the listing without DWARF: exit 0" $? "$WORK/err"
ktap_check "... from BTF, $BTF" grep -q "^net:netif_receive_skb: tracepoint, prototype of btf_trace_netif_receive_skb, from BTF $BTF\$" "$WORK/list"
ktap_check "... skb in si, and skb->dev" bash -c "
	grep -qE '^  skb +struct sk_buff \* +arg1 %si +ctx\+104\$' '$WORK/list' &&
	grep -qE '^  sk_buff.dev +struct net_device \* +[0-9]+ +8\$' '$WORK/list'"

# A header of offsets for hand-written images: from BTF, what DWARF gives.
hdr=(--event net:netif_receive_skb --member sk_buff.len --member net_device.name)
bf -k "$VMLINUX" "${hdr[@]}" --gen-header "$WORK/dwarf.h" > /dev/null 2>&1
pf "${hdr[@]}" --gen-header "$WORK/btf.h" > /dev/null 2> "$WORK/err"
ktap_expect_ok "--gen-header without DWARF: exit 0" $? "$WORK/err"
ktap_expect "... its #defines are those of DWARF's header" \
	"$(grep '^#define [A-Z]' "$WORK/dwarf.h")" "$(grep '^#define [A-Z]' "$WORK/btf.h" 2> /dev/null)"

# The RFC's images, their offsets from BTF
pf --event net:netif_receive_skb --member sk_buff.dev --json > "$WORK/offsets.json"
arg=$(json 'j["probe"]["args"][0]["ctx_offset"]' "$WORK/offsets.json")
dev=$(json 'j["members"][0]["offset"]' "$WORK/offsets.json")
python3 "$HERE/fix_image.py" "$EX/filter_ex1.bpf" "$WORK/ex1.bpf" "ctx=104:$arg" "add=32:$dev" > /dev/null
pf --event net:netif_receive_skb "$WORK/ex1.bpf" -- $ping3 > "$WORK/out" 2> "$WORK/err"
ktap_expect "filter_ex1.bpf with offsets from BTF prints the 6 packets of ping" "0 6" \
	"$? $(grep -c '__netif_receive_skb_core[.a-z0-9]*: skb [0-9a-f]* dev [0-9a-f]*' "$WORK/out")"

if command -v clang > /dev/null; then
	pf --event net:netif_receive_skb "$EXC/filter_ex1.c" -- $ping3 > "$WORK/out" 2> "$WORK/err"
	ktap_expect "filter_ex1.c compiled with BTF's offsets: the 6 packets" "0 6" \
		"$? $(grep -c '__netif_receive_skb_core[.a-z0-9]*: skb [0-9a-f]* dev [0-9a-f]*' "$WORK/out")"
	pf --event net:netif_receive_skb "$EXC/filter_ex2.c" --table 0:key=ptr,value=u64 --json \
		-- sh -c "$ping3 > /dev/null" > "$WORK/out.json" 2> "$WORK/err"
	grep '"tables"' "$WORK/out.json" > "$WORK/tables.json"
	ktap_expect "filter_ex2.c: one device, 6 packets (the first counts 0)" "1 5" \
		"$(json 'len(j["tables"][0]["entries"]), j["tables"][0]["entries"][0]["value"]' "$WORK/tables.json")"
	writes='import os
fd = os.open("/dev/null", os.O_WRONLY)
for n in (4321, 100, 4321, 7, 4321):
    os.write(fd, b"x" * n)'
	pf --kprobe 'vfs_write count' "$EXC/kprobe_arg_match.c" -- python3 -c "$writes" \
		> "$WORK/out" 2> "$WORK/err"
	ktap_expect_ok "kprobe_arg_match.c on 'vfs_write count' (count=%dx for perf probe): exit 0" $? "$WORK/err"
	ktap_expect "... only the three writes of 4321 bytes" "3 0" \
		"$(grep -cE 'count=(0x10e1|4321)$' "$WORK/out") $(grep -cE 'count=(0x64|100|0x7|7)$' "$WORK/out")"
	pf --kprobe vfs_write --clang-opt -DMATCH_ARG=count --clang-opt -DMATCH_VALUE=4321 \
		--table 0:key=hex,value=u64 --json "$EXC/task_calls.c" -- python3 -c "$writes" \
		> "$WORK/out.json" 2> "$WORK/err"
	grep '"tables"' "$WORK/out.json" > "$WORK/tables.json"
	ktap_expect "task_calls.c: one task, 3 matching calls" "1 3" \
		"$(json 'len(j["tables"][0]["entries"]), j["tables"][0]["entries"][0]["value"]' "$WORK/tables.json")"
else
	for t in filter_ex1.c filter_ex2.c kprobe_arg_match.c "... 4321" task_calls.c; do
		ktap_skip "$t (no clang)"
	done
fi
ktap_check "no run looked for DWARF in vain" bash -c "! grep -q 'no vmlinux' '$WORK/err'"
ktap_expect "the tracing state is as before" "$before" "$(state)"
ktap_finished
