#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter with BTF as its type source (--btf, what it
# uses without a vmlinux with DWARF): the same tracepoint arguments,
# function arguments (x86-64 calling convention), structure members,
# offsets, sizes and types as from the DWARF of the same vmlinux; what BTF
# cannot say is said.  Offline, on the test kernel's vmlinux (its .BTF).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
. "$TOP/selftests/lib/malloc_check.sh"
perf=${PERF:-$TOP/build/perf/perf}
vmlinux=${VMLINUX:-$TOP/build/kbuild/vmlinux}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! "$perf" bpf-filter -h 2>&1 | grep -q -- --btf; then
	ktap_plan 1
	ktap_skip "perf bpf-filter without BTF (perf built without libbpf, or before BTF)"
	ktap_finished
fi
if [ ! -f "$vmlinux" ] || ! readelf -S "$vmlinux" 2> /dev/null | grep -q '\.BTF '; then
	ktap_plan 1
	ktap_skip "no $vmlinux with BTF (CONFIG_DEBUG_INFO_BTF)"
	ktap_finished
fi
ktap_plan 16

bf() { "$perf" bpf-filter "$@"; }
members=(sk_buff.dev sk_buff.len sk_buff.data_len sk_buff.protocol sk_buff.headers.protocol
	sk_buff.pkt_type sk_buff.sk sk_buff.data sk_buff.head sk_buff.mark sk_buff.priority
	sk_buff.hash sk_buff.cb net_device.name net_device.ifindex net_device.mtu net_device.flags
	task_struct.pid task_struct.tgid task_struct.comm task_struct.flags task_struct.mm
	file.f_pos file.f_flags file.f_inode inode.i_ino sock.__sk_common.skc_family
	pt_regs.di pt_regs.ip iphdr.saddr iphdr.protocol "struct open_how.flags" ipv6hdr.nexthdr)
margs=(); for m in "${members[@]}"; do margs+=(--member "$m"); done
bf -k "$vmlinux" "${margs[@]}" --json > "$work/m.dwarf"
ktap_expect "${#members[@]} members from DWARF: exit 0" 0 $?
bf --btf "$vmlinux" "${margs[@]}" --json > "$work/m.btf"
ktap_expect "... from BTF: exit 0" 0 $?
ktap_check "... the same offsets, sizes, bits and types" python3 - "$work/m.dwarf" "$work/m.btf" <<'PY'
import json, sys
d, b = (json.load(open(f))['members'] for f in sys.argv[1:3])
assert len(d) == len(b) == 33, (len(d), len(b))
bad = [(x, y) for x, y in zip(d, b) if x != y]
assert not bad, bad
PY

# One parser of member specs for both readers: the same errors.
for src in "-k $vmlinux" "--btf $vmlinux"; do
	name=${src%% *}
	bf $src --member sk_buff > /dev/null 2> "$work/spec.err"
	ktap_check "$name: --member without a member is refused, saying the form" \
		bash -c "[ $? = 1 ] && grep -qx -- '--member sk_buff: expected STRUCT.MEMBER\[.MEMBER...\]' '$work/spec.err'"
	bf $src --member "union sk_buff.len" > /dev/null 2> "$work/spec.err"
	ktap_check "$name: 'union sk_buff.len' is looked up as a union, and not found" \
		bash -c "[ $? = 1 ] && grep -q -- '--member union sk_buff.len: no definition of union sk_buff in the' '$work/spec.err'"
done

tps="net:netif_receive_skb raw_syscalls:sys_enter raw_syscalls:sys_exit sched:sched_switch
	sched:sched_process_exec skb:kfree_skb skb:consume_skb sched:sched_wakeup"
funcs="do_sys_openat2 vfs_write vfs_read dst_discard_out kfree_skb_reason consume_skb
	netif_receive_skb ip_rcv ipv6_rcv ksys_write"
for kind in event kprobe; do
	list=$tps opt=--event
	[ $kind = kprobe ] && list=$funcs opt=--kprobe
	for src in dwarf btf; do
		for x in $list; do
			if [ $src = dwarf ]; then
				bf -k "$vmlinux" $opt "$x" --json
			else
				bf --btf "$vmlinux" $opt "$x" --json
			fi || echo "{\"failed\": \"$x\"}"
		done > "$work/$kind.$src" 2> "$work/$kind.$src.err"
	done
done
compare() {
	python3 - "$work/$1.dwarf" "$work/$1.btf" <<'PY'
import json, sys
def protos(f):
    out = []
    for line in open(f):
        j = json.loads(line)
        assert 'failed' not in j, j
        p = j['probe']
        # perf's die_get_typename() leaves out const and volatile
        out.append((p['name'], [(a['name'], a['type'].replace('const ', '').replace('volatile ', ''),
                                 a['ctx_offset']) for a in p['args']]))
    return out
d, b = protos(sys.argv[1]), protos(sys.argv[2])
bad = [(x, y) for x, y in zip(d, b) if x != y]
assert len(d) == len(b) and not bad, bad
PY
}
ktap_check "$(wc -w <<<"$tps") tracepoints: the same arguments, types and ctx offsets" compare event
ktap_check "$(wc -w <<<"$funcs") functions: the same, in the registers of the calling convention" compare kprobe

# --- what BTF cannot say -------------------------------------------------
out=$(bf --btf "$vmlinux" --kprobe 'vfs_write count' --json)
ktap_check "FUNC ARG: the argument in its register, and the probe perf creates with it" \
	grep -q '"args":\[{"name":"count","type":"size_t","location":"%dx","ctx_offset":96' <<<"$out"
bf --btf "$vmlinux" --kprobe do_sys_openat2+20 > /dev/null 2> "$work/err"
ktap_check "FUNC+OFF: BTF knows the arguments only at the entry" \
	grep -q "with BTF, arguments are known only at a function's entry, by the x86-64 calling convention" "$work/err"
bf --btf "$vmlinux" --kprobe ip_local_deliver_finish > /dev/null 2> "$work/err"
ktap_check "a function inlined everywhere is not in BTF: said, with what finds it" bash -c "
	grep -q 'ip_local_deliver_finish is not a function in the BTF of $vmlinux: it is inlined everywhere' '$work/err' &&
	grep -q 'a vmlinux with DWARF (-k) finds where it is inlined' '$work/err'"
bf --btf "$vmlinux" --event net:nosuch > /dev/null 2> "$work/err"
ktap_check "a tracepoint that does not exist" \
	grep -q "tracepoint net:nosuch does not exist in the BTF of $vmlinux: it has no btf_trace_nosuch" "$work/err"
bf --btf "$vmlinux" --member sk_buff.dev.name > /dev/null 2> "$work/err"
ktap_check "a member through a pointer, as with DWARF" \
	grep -q "sk_buff.dev is a pointer (struct net_device \*)" "$work/err"
bf --btf "$vmlinux" --kprobe 'vfs_write nosuch' > /dev/null 2> "$work/err"
ktap_check "an argument that is not a parameter" \
	grep -q "with BTF, an argument is one of vfs_write's parameters: it has no nosuch" "$work/err"
bf --btf "$vmlinux" --event net:netif_receive_skb --member sk_buff.dev --gen-header - > "$work/h"
ktap_check "--gen-header from BTF: ARG_skb and OFF_sk_buff__dev, said to be from BTF" bash -c "
	grep -qP '^#define ARG_skb\t104\t' '$work/h' && grep -qP '^#define OFF_sk_buff__dev\t16$' '$work/h' &&
	grep -q 'from the BTF of' '$work/h'"
ktap_finished
