#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter FILE.c with several filters, each naming its
# event with BPF64_EVENT(): a kprobe, a kretprobe and a tracepoint attached
# in one run, their tables shared (one set, shown once, by their C names,
# typed from BTF: @name[key]: value, a bpf64_log2_t key drawn as a
# histogram); a bad event, --event on such a file, an event that does not
# exist: an error, and no kprobe or instance left behind
# requires: perf bpf-filter, BPF64 event filters, kprobe events, clang
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 10
command -v clang > /dev/null || { for i in $(seq 10); do ktap_skip "no clang"; done; ktap_finished; }
pf() { bf --vmlinux "$VMLINUX" "$@"; }

# Three filters of one file: each dd read is counted at entry and return,
# each of its syscalls by comm, and the time between entry and return
# goes through a table both read.
cat > "$WORK/three.c" <<'C'
#include <bpf64_helpers.h>

struct comm_key { char comm[16]; };

BPF64_TABLE(calls, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);
BPF64_TABLE(syscalls, BPF64_TABLE_HASH, struct comm_key, unsigned long, 256);
BPF64_TABLE(start, BPF64_TABLE_HASH, unsigned long, unsigned long, 1024);
BPF64_TABLE(ns, BPF64_TABLE_HASH, bpf64_log2_t, unsigned long, 64);

static inline __always_inline void add(void *ctx, void *table, const void *key)
{
	unsigned long *n = bpf_table_lookup(ctx, table, key), zero = 0;

	if (!n) {
		bpf_table_update(ctx, table, key, &zero);
		n = bpf_table_lookup(ctx, table, key);
	}
	if (n)
		__sync_fetch_and_add(n, 1);
}

static inline __always_inline int is_dd(void)
{
	struct comm_key c = {};

	bpf_get_current_comm(c.comm, sizeof(c.comm));
	return c.comm[0] == 'd' && c.comm[1] == 'd' && !c.comm[2];
}

BPF64_EVENT("kprobe:vfs_read")
void entry(struct pt_regs *ctx)
{
	unsigned long tid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	unsigned int k = 1;

	if (!is_dd())
		return;
	add(ctx, &calls, &k);
	bpf_table_update(ctx, &start, &tid, &now);
}

BPF64_EVENT("kretprobe:vfs_read")
void ret(struct pt_regs *ctx)
{
	unsigned long tid = bpf_get_current_pid_tgid(), *t;
	unsigned int k = 2;
	bpf64_log2_t b;

	t = bpf_table_lookup(ctx, &start, &tid);
	if (!t)
		return;
	b = bpf64_log2(bpf_ktime_get_ns() - *t);
	bpf_table_delete(ctx, &start, &tid);
	add(ctx, &calls, &k);
	add(ctx, &ns, &b);
}

BPF64_EVENT("tracepoint:raw_syscalls:sys_enter")
void sys(struct pt_regs *ctx)
{
	struct comm_key c = {};

	bpf_get_current_comm(c.comm, sizeof(c.comm));
	if (is_dd())
		add(ctx, &syscalls, &c);
}
C
dd_reads='dd if=/dev/zero of=/dev/null bs=512 count=40'
before=$(state)
pf "$WORK/three.c" -- $dd_reads > "$WORK/out" 2> "$WORK/err"
rc=$?
sed 's/^/# /' "$WORK/err" | grep -v "records\|copied" | head -12
ktap_check "three filters of one file: exit 0, two kprobe events created, each filter attached to its event" \
	bash -c "[ $rc -eq 0 ] &&
		 grep -q 'created the kprobe event bpf_filter_[0-9]*:vfs_read on vfs_read ' '$WORK/err' &&
		 grep -q 'created the kretprobe event bpf_filter_[0-9]*:vfs_read__return on vfs_read%return ' '$WORK/err' &&
		 grep -q 'three.c: entry() to bpf_filter_[0-9]*:vfs_read in' '$WORK/err' &&
		 grep -q 'three.c: ret() to bpf_filter_[0-9]*:vfs_read__return in' '$WORK/err' &&
		 grep -q 'three.c: sys() to raw_syscalls:sys_enter in' '$WORK/err'"
ktap_check "one set of tables, shown once for the three events" \
	bash -c "[ \$(grep -c '^# tables of the filters of .*three.c on 3 events (end)\$' '$WORK/out') = 1 ]"
# dd reads count + 1 times (the last read returns 0) and may read its
# locale files: at least count + 1, the same number at entry and return.
n1=$(sed -n 's/^@calls\[1\]: //p' "$WORK/out")
n2=$(sed -n 's/^@calls\[2\]: //p' "$WORK/out")
ktap_check "@calls[1] (kprobe) and @calls[2] (kretprobe) count the same reads, at least 41 ($n1, $n2)" \
	bash -c "[ -n '$n1' ] && [ '$n1' = '$n2' ] && [ '$n1' -ge 41 ]"
ktap_check "@start is empty: the kretprobe's filter deleted what the kprobe's stored" \
	grep -q '^@start: no entries$' "$WORK/out"
nsys=$(sed -n 's/^@syscalls\[dd\]: //p' "$WORK/out")
ktap_check "@syscalls[dd]: the comm key as text, more syscalls than reads ($nsys)" \
	bash -c "[ -n '$nsys' ] && [ '$nsys' -gt '$n1' ]"
total=$(awk -F'|' '/^@ns:$/ { h = 1; next } /^$/ { h = 0 } h && !/^#/ && NF > 2 { s += $2 }
	END { print s + 0 }' "$WORK/out")
ktap_check "@ns, keyed by bpf64_log2_t, is drawn as a histogram of every read ($total)" \
	bash -c "[ '$total' = '$n2' ]"
ktap_expect "no kprobe or instance left" "$before" "$(state)"

# --- errors --------------------------------------------------------------------
sed 's/"tracepoint:raw_syscalls:sys_enter"/"usdt:\/bin\/sh:main"/' "$WORK/three.c" > "$WORK/bad.c"
pf "$WORK/bad.c" -- true > "$WORK/out" 2> "$WORK/err"
rc=$?
ktap_check "BPF64_EVENT(\"usdt:...\"): exit 1, which function and what is expected; nothing created" \
	bash -c "[ $rc -eq 1 ] &&
		 grep -q 'bad.c: sys(): BPF64_EVENT(\"usdt:/bin/sh:main\"): expected \"kprobe:\[MODULE:\]FUNC\[+OFF\]\", \"kretprobe:\[MODULE:\]FUNC\", \"uprobe:BINARY:FUNC\[+OFF\]\", \"uretprobe:BINARY:FUNC\" or \"tracepoint:SYS:EVENT\"' '$WORK/err' &&
		 ! grep -q created '$WORK/err'"
pf --event raw_syscalls:sys_enter "$WORK/three.c" -- true > "$WORK/out" 2> "$WORK/err"
rc=$?
ktap_check "--event on a file whose filters name their events: exit 1, 'run it without --event'" \
	bash -c "[ $rc -eq 1 ] && grep -q 'names the events of its filters (BPF64_EVENT() on entry() ...): run it without --event' '$WORK/err'"
sed 's/"tracepoint:raw_syscalls:sys_enter"/"tracepoint:nosys:noevent"/' "$WORK/three.c" > "$WORK/noev.c"
pf "$WORK/noev.c" -- true > "$WORK/out" 2> "$WORK/err"
rc=$?
after=$(state)
ktap_check "a tracepoint that does not exist after two kprobes: exit 1, the error, the kprobes deleted" \
	bash -c "[ $rc -eq 1 ] && grep -q 'event nosys:noevent does not exist' '$WORK/err' &&
		 grep -q 'created the kretprobe event' '$WORK/err' && [ '$before' = '$after' ]"
ktap_finished
