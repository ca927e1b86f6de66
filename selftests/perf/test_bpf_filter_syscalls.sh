#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter on system call events: the fields of
# syscalls:sys_enter_openat and sys_exit_read listed from their format
# (names, types, ctx offsets, --gen-header), a filter in C reading
# BPF64_ARG(ctx, filename) and one keeping the reads that returned 4321
# bytes; a file of filters on both events reading arguments by name, and
# one whose events disagree on a name; a system call event that does not
# exist; the top level untouched
# requires: perf bpf-filter, BPF64 event filters, clang, FTRACE_SYSCALLS
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 16
before=$(state syscalls/sys_enter_openat)
# the examples' count(ctx, table, key) for the filters below
COUNT_H=(--clang-opt "-I$TOP/build/linux/tools/bpf64/examples/c")

# open3 ARGS...: perf bpf-filter ARGS while cat opens a file twice and a
# missing one once, in /tmp/bf-syscalls.XXXXXX ($dir, removed after)
open3() {
	local rc

	dir=$(mktemp -d /tmp/bf-syscalls.XXXXXX)
	echo data > "$dir/a"
	bf "$@" -- sh -c "cat $dir/a $dir/a > /dev/null; cat $dir/none 2> /dev/null; true" \
		> "$WORK/out" 2> "$WORK/err"
	rc=$?
	rm -rf "$dir"
	return $rc
}

# --- the fields, from the format -------------------------------------------
bf --event syscalls:sys_enter_openat --json > "$WORK/openat.json" 2> "$WORK/err"
ktap_expect_ok "listing syscalls:sys_enter_openat: exit 0" $? "$WORK/err"
ktap_expect "its fields in the format's order, a system call event" \
	"syscall __syscall_nr dfd filename flags mode" \
	"$(json '" ".join([j["probe"]["kind"]] + [a["name"] for a in j["probe"]["args"]])' "$WORK/openat.json")"
ktap_expect "filename is argument 3: const char * in cx, ctx+88" "const char * arg3 %cx 88" \
	"$(json '" ".join(str(j["probe"]["args"][2][k]) for k in ("type", "location", "ctx_offset"))' "$WORK/openat.json")"
bf --event syscalls:sys_exit_read --json > "$WORK/read.json" 2> "$WORK/err"
ktap_expect "sys_exit_read: ret, a long, is argument 2 (dx, ctx+96)" "__syscall_nr ret long 96" \
	"$(json '" ".join([a["name"] for a in j["probe"]["args"]] + [j["probe"]["args"][1]["type"], str(j["probe"]["args"][1]["ctx_offset"])])' "$WORK/read.json")"
bf --event syscalls:sys_enter_openat --gen-header "$WORK/openat.h" > /dev/null 2> "$WORK/err"
ktap_check "--gen-header: ARG_filename at 88" grep -q '^#define ARG_filename	88	' "$WORK/openat.h"

# --- a filter in C reading the user string filename ------------------------
cat > "$WORK/paths.c" <<'EOF'
#include "comm.h"

struct path_key {
	char name[64];
};

BPF64_TABLE(paths, BPF64_TABLE_HASH, struct path_key, unsigned long, 64);

int filter(struct pt_regs *ctx)
{
	struct path_key key;

	bpf_probe_read_user_str(key.name, sizeof(key.name),
				(const void *)BPF64_ARG(ctx, filename));
	/* mktemp -d /tmp/bf-syscalls.XXXXXX */
	if (key.name[0] != '/' || key.name[1] != 't' || key.name[4] != '/' ||
	    key.name[5] != 'b' || key.name[6] != 'f')
		return 0;
	count(ctx, &paths, &key);
	return 1;
}
EOF
open3 --event syscalls:sys_enter_openat "$WORK/paths.c" "${COUNT_H[@]}"
ktap_expect_ok "paths.c on sys_enter_openat, cat opening 3 paths: exit 0" $? "$WORK/err"
ktap_expect "... its table by name: the paths cat opened, from user memory" \
	"@paths[$dir/a]: 2 @paths[$dir/none]: 1" \
	"$(grep '^@paths\[' "$WORK/out" | sort | tr '\n' ' ' | sed 's/ $//')"
kept=$(grep -c "sys_openat(dfd: [0-9a-f]*, filename: " "$WORK/out")
[ "$kept" = 3 ] || sed 's/^/# out: /' "$WORK/out"
ktap_expect "... the 3 events it kept, streamed" 3 "$kept"

# --- keep the reads that returned 4321 bytes -------------------------------
cat > "$WORK/reads.c" <<'EOF'
#include <bpf64_helpers.h>

int filter(struct pt_regs *ctx)
{
	return BPF64_ARG(ctx, ret) == 4321;
}
EOF
head -c 10000 /dev/zero > "$WORK/data"
bf --event syscalls:sys_exit_read "$WORK/reads.c" -- \
	dd if="$WORK/data" of=/dev/null bs=4321 count=2 > "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "reads.c on sys_exit_read with dd bs=4321 count=2: exit 0" $? "$WORK/err"
ktap_expect "... kept the 2 reads that returned 4321 (ret, field 2), no other" "2 2" \
	"$(grep -c 'sys_read -> 0x10e1$' "$WORK/out") $(grep -c 'sys_read -> ' "$WORK/out")"

# --- a file of two filters reading arguments by name -----------------------
cat > "$WORK/results.c" <<'EOF'
#include "comm.h"

BPF64_TABLE(pending, BPF64_TABLE_HASH, unsigned long, unsigned long, 64);
BPF64_TABLE(results, BPF64_TABLE_HASH, long, unsigned long, 16);

BPF64_EVENT("tracepoint:syscalls:sys_enter_openat")
int enter(struct pt_regs *ctx)
{
	unsigned long tid = bpf_get_current_pid_tgid(), one = 1;
	char name[8];

	/* mktemp -d /tmp/bf-syscalls.XXXXXX */
	bpf_probe_read_user_str(name, sizeof(name), (const void *)BPF64_ARG(ctx, filename));
	if (name[0] == '/' && name[5] == 'b' && name[6] == 'f')
		bpf_table_update(ctx, &pending, &tid, &one);
	return 0;
}

BPF64_EVENT("tracepoint:syscalls:sys_exit_openat")
int leave(struct pt_regs *ctx)
{
	unsigned long tid = bpf_get_current_pid_tgid();
	long ret = BPF64_ARG(ctx, ret);

	if (!bpf_table_lookup(ctx, &pending, &tid))
		return 0;
	bpf_table_delete(ctx, &pending, &tid);
	if (ret > 0)
		ret = 0;
	count(ctx, &results, &ret);
	return 0;
}
EOF
open3 "$WORK/results.c" "${COUNT_H[@]}"
ktap_expect_ok "results.c, sys_enter_openat and sys_exit_openat filters reading filename and ret by name: exit 0" \
	$? "$WORK/err"
ktap_expect "... each open followed from entry to exit: 2 opened (@results[0]), 1 ENOENT (@results[-2])" \
	"@results[-2]: 1 @results[0]: 2" \
	"$(grep '^@results\[' "$WORK/out" | sort | tr '\n' ' ' | sed 's/ $//')"
# sys_enter_openat and do_sys_openat2 both have dfd (dx, di) and filename
# (cx, si): apart.c reads filename by position, no argument by name
sed -e 's/tracepoint:syscalls:sys_exit_openat/kprobe:do_sys_openat2/' \
	-e 's/BPF64_ARG(ctx, filename)/BPF64_TP_ARG(ctx, 3)/' \
	-e 's/BPF64_ARG(ctx, ret)/ctx->ax/' "$WORK/results.c" > "$WORK/apart.c"
bf "$WORK/apart.c" "${COUNT_H[@]}" -- true > /dev/null 2> "$WORK/err"
ktap_expect_ok "a file whose events have arguments in two places that it does not read by name: runs" \
	$? "$WORK/err"
sed -e 's/^\tchar name\[8\];$/\tchar name[8];\n\tlong dfd = BPF64_ARG(ctx, dfd);/' \
	-e 's/^\tif (name\[0\] == .\/. \&\&/\tif (dfd \&\& name[0] == '"'"'\/'"'"' \&\&/' "$WORK/apart.c" > "$WORK/clash.c"
grep -q 'BPF64_ARG(ctx, dfd)' "$WORK/clash.c" || echo "# clash.c reads no dfd"
bf "$WORK/clash.c" "${COUNT_H[@]}" -- true > /dev/null 2> "$WORK/err"
status=$?
ktap_check "... one that reads dfd by name: refused, saying where (exit $status)" \
	bash -c "[ $status -ne 0 ] &&
		 grep -q 'the argument dfd of syscalls:sys_enter_openat and of do_sys_openat2 is not in the same place (arg2 %dx, %di)' '$WORK/err'"

# --- an event that does not exist --------------------------------------------
bf --event syscalls:sys_enter_bf_none "$WORK/reads.c" -- true > /dev/null 2> "$WORK/err"
status=$?
ktap_check "syscalls:sys_enter_bf_none: a failure that names the event (exit $status)" \
	bash -c "[ $status -ne 0 ] && grep -q 'sys_enter_bf_none' '$WORK/err'"
ktap_expect "the top-level event, instances and kprobes are as before" "$before" \
	"$(state syscalls/sys_enter_openat)"
ktap_finished
