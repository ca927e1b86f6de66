#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter with filters in C: FILE.c compiled with the
# offsets perf finds in DWARF (the event's arguments, the members the source
# names), FILE.o translated; the RFC's examples in C on
# net:netif_receive_skb (6 prints for ping -c3, a count of 5 in table 0),
# a kprobe filter keeping matching calls, --check/--disasm/--output on C,
# errors with their source line; BPF64_CHAIN(): skb->dev->name in one
# expression, the same name as the RFC's two BPF64_READ() hops, and chains
# that do not resolve refused with the member
# requires: perf bpf-filter with C filters, clang, BPF64 event filters
cd "$(dirname "$0")" || exit 1
. ../perf/lib.sh
bf_require
if ! "$PERF" bpf-filter -h 2>&1 | grep -q -- --clang-opt || ! command -v clang > /dev/null; then
	ktap_plan 1
	ktap_skip "perf bpf-filter without filters in C ($PERF), or no clang"
	ktap_finished
fi
ktap_plan 18
EXC=$TOP/build/linux/tools/bpf64/examples/c
CT=$TOP/build/linux/tools/bpf64/ctest
ping="ping -c 3 -i 0.2 127.0.0.1"
before=$(state)

# --- filter_ex1.c: ARG_skb, sk_buff.dev and net_device.name from DWARF ------
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb "$EXC/filter_ex1.c" -- $ping \
	> "$WORK/out" 2> "$WORK/err"
ktap_expect "filter_ex1.c with ping: exit 0" 0 $?
ktap_expect "it printed each of the 6 packets on lo" 6 \
	"$(grep -c '__netif_receive_skb_core[.a-z0-9]*: skb [0-9a-f]* dev [0-9a-f]*' "$WORK/out")"
ktap_check "... and dropped the events (a void filter)" bash -c "! grep -q 'netif_receive_skb: dev=' '$WORK/out'"
ktap_expect "the top-level event, instances and kprobes are as before" "$before" "$(state)"

# --- filter_ex2.c: packets per device --------------------------------------
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb "$EXC/filter_ex2.c" \
	--table 0:key=ptr,value=u64 --json -- sh -c "$ping > /dev/null" \
	> "$WORK/out.json" 2> "$WORK/err"
ktap_expect "filter_ex2.c --json with ping: exit 0" 0 $?
grep '"tables"' "$WORK/out.json" > "$WORK/tables.json"
ktap_expect "one device counted: 6 packets, the first inserting 0" "1 5" \
	"$(json 'len(j["tables"][0]["entries"]), j["tables"][0]["entries"][0]["value"]' "$WORK/tables.json")"

# --- --check, --disasm, --output on C and on clang's object ----------------
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb --check "$EXC/filter_ex2.c" \
	-o "$WORK/ex2.bpf" > "$WORK/out" 2>&1
ktap_check "--check filter_ex2.c: accepted, and --output wrote the image" \
	bash -c "grep -q 'filter_ex2.c: accepted: ' '$WORK/out' &&
		 '$TOP/build/bin/trace_filter_check' '$WORK/ex2.bpf' > /dev/null"
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb --disasm "$EXC/filter_ex1.c" > "$WORK/out" 2>&1
ktap_check "--disasm filter_ex1.c lists the helpers it calls" \
	bash -c "grep -q 'call bpf_memcmp' '$WORK/out' && grep -q 'call bpf_trace_printk' '$WORK/out'"
echo '#define ARG_count 96' > "$WORK/count.h"
clang -O2 -g -target bpf -mcpu=v1 -I "$TOP/build/linux/tools/lib/bpf64" -include "$WORK/count.h" \
	-c "$EXC/kprobe_arg_match.c" -o "$WORK/match.o"
bf --check "$WORK/match.o" > "$WORK/out" 2>&1
ktap_check "--check on clang's object: accepted" grep -q "match.o: accepted: " "$WORK/out"

# --- a kprobe filter from C: ARG_count of vfs_write from DWARF --------------
writes='import os
fd = os.open("/dev/null", os.O_WRONLY)
for n in (4321, 100, 4321, 7, 4321):
    os.write(fd, b"x" * n)'
bf --vmlinux "$VMLINUX" --kprobe 'vfs_write count' "$EXC/kprobe_arg_match.c" \
	-- python3 -c "$writes" > "$WORK/out" 2> "$WORK/err"
ktap_expect "--kprobe 'vfs_write count' kprobe_arg_match.c: exit 0" 0 $?
ktap_expect "only the three writes of 4321 bytes are recorded" "3 0" \
	"$(grep -cE 'count=(0x10e1|4321)$' "$WORK/out") $(grep -cE 'count=(0x64|100|0x7|7)$' "$WORK/out")"
bf --vmlinux "$VMLINUX" --kprobe vfs_write --clang-opt -DMATCH_ARG=count \
	--clang-opt -DMATCH_VALUE=4321 --table 0:key=hex,value=u64 --json "$EXC/task_calls.c" \
	-- python3 -c "$writes" > "$WORK/out.json" 2> "$WORK/err"
grep '"tables"' "$WORK/out.json" > "$WORK/tables.json"
ktap_expect "task_calls.c with --clang-opt: one task, 3 matching calls" "1 3" \
	"$(json 'len(j["tables"][0]["entries"]), j["tables"][0]["entries"][0]["value"]' "$WORK/tables.json" 2>&1)"
ktap_expect "the tracing state is as before" "$before" "$(state)"

# --- errors point at the C source ----------------------------------------
bf --check "$CT/errors/loop.c" > "$WORK/out" 2>&1
rc=$?
ktap_check "--check of a loop: exit 2, the error at loop.c:10" \
	bash -c "[ $rc -eq 2 ] && grep -q 'loop.c:10:.*error: loop: this jumps back to line' '$WORK/out'"
bf --check "$CT/errors/deref.c" > "$WORK/out" 2>&1
rc=$?
ktap_check "--check of a dereference: rejected (exit 1) at deref.c:14, with the hint" \
	bash -c "[ $rc -eq 1 ] && grep -q 'deref.c:14:.*error: the checker rejects insn' '$WORK/out' &&
		 grep -q 'note: kernel memory is read with bpf_load_pointer()' '$WORK/out'"

# --- BPF64_CHAIN(): a member chain in one expression -------------------------
cat > "$WORK/chain.c" <<'C'
#include <bpf64_helpers.h>

/* skb->dev->name of each packet: by the chain and by two BPF64_READ() hops */
void filter(struct pt_regs *ctx)
{
	const void *skb = (const void *)BPF64_ARG(ctx, skb);
	const void *dev = (const void *)BPF64_READ(skb, sk_buff, dev);
	char by_chain[16] = {}, by_hops[16] = {};

	bpf_probe_read_str(by_chain, sizeof(by_chain),
			   (const void *)BPF64_CHAIN(skb, sk_buff, dev, name));
	bpf_probe_read_str(by_hops, sizeof(by_hops), BPF64_MEMBER_ADDR(dev, net_device, name));
	/* the first 8 bytes of each, in hex: "lo" is 6f6c */
	bpf64_printk("chain %lx hops %lx\n", *(unsigned long *)by_chain,
		     *(unsigned long *)by_hops);
}
C
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb "$WORK/chain.c" -- $ping > "$WORK/out" 2> "$WORK/err"
rc=$?
n=$(grep -c 'chain 6f6c hops 6f6c$' "$WORK/out")
ktap_check "BPF64_CHAIN(skb, sk_buff, dev, name) reads 'lo', as the two hops do, for each packet ($n)" \
	bash -c "[ $rc -eq 0 ] && [ '$n' -ge 6 ]"
sed 's/dev, name))/dev, nosuch))/' "$WORK/chain.c" > "$WORK/nochain.c"
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb "$WORK/nochain.c" -- true > "$WORK/out" 2>&1
rc=$?
ktap_check "a chain with a member that does not exist: exit 1, which chain and which member" \
	bash -c "[ $rc -eq 1 ] && grep -q 'BPF64_CHAIN sk_buff.dev.nosuch: no member net_device.nosuch' '$WORK/out'"
sed 's/dev, name))/len, name))/' "$WORK/chain.c" > "$WORK/scalar.c"
bf --vmlinux "$VMLINUX" --event net:netif_receive_skb "$WORK/scalar.c" -- true > "$WORK/out" 2>&1
rc=$?
ktap_check "a chain through a member that is not a structure: exit 1, its type" \
	bash -c "[ $rc -eq 1 ] && grep -q 'BPF64_CHAIN sk_buff.len.name: sk_buff.len is unsigned int, not a structure or a pointer to one' '$WORK/out'"
ktap_finished
