#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: records a filter writes (bpf64_output() of a BPF64_OUTPUT()
# type) as perf bpf-filter prints them: a line of columns under the
# members' names, an object with --json, an array of strings joined; the
# same records of an image, which has no types, as their id and bytes; a
# type perf cannot describe as bytes, said once; %s in a printed line
# requires: perf bpf-filter, BPF64 event filters, clang
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 9
EXC=$TOP/build/linux/tools/bpf64/examples/c

cat > "$WORK/recs.c" <<'EOF'
#include "comm.h"

struct open_rec {
	unsigned int pid;
	char comm[16];
	int dfd;
	char path[32];
	char words[2][8];
};

struct odd {
	unsigned int pid;
	unsigned long vals[2];	/* an array of numbers: no column for it */
};

BPF64_OUTPUT(opens, struct open_rec);
BPF64_OUTPUT(odds, struct odd);

void filter(struct pt_regs *ctx)
{
	struct open_rec rec;
	struct odd odd;

	if (!current_comm_is_COMM())
		return;
	__builtin_memset(&rec, 0, sizeof(rec));
	rec.pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(rec.comm, sizeof(rec.comm));
	rec.dfd = BPF64_ARG(ctx, dfd);
	bpf_probe_read_user_str(rec.path, sizeof(rec.path), (const void *)BPF64_ARG(ctx, filename));
	rec.words[0][0] = 'a';
	rec.words[1][0] = 'b';
	rec.words[1][1] = 'c';
	bpf64_output(opens, &rec);
	__builtin_memset(&odd, 0, sizeof(odd));
	odd.pid = rec.pid;
	odd.vals[1] = 7;
	bpf64_output(odds, &odd);
	bpf64_printk("%s opens %s", rec.comm, rec.path);
}
EOF
opts=(--event syscalls:sys_enter_openat --clang-opt "-I$EXC" --clang-opt '-DCOMM="cat"')
bf "${opts[@]}" "$WORK/recs.c" -- cat /etc/hostname > "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "a filter writing two record types for cat's openat()s: exit 0" $? "$WORK/err"
ktap_check "a line of the members' names, in capitals" \
	grep -qE '^ +PID COMM +DFD PATH +WORDS$' "$WORK/out"
ktap_check "a record: numbers right, strings left, the array of strings joined" \
	grep -qE '^ +[0-9]+ cat +-100 /etc/hostname +a bc$' "$WORK/out"
ktap_check "a type perf cannot describe: said once, its records as their id and bytes" bash -c "
	[ \$(grep -c 'record type odds: its members are not all' '$WORK/err') = 1 ] &&
	grep -qE ' cat-[0-9]+ +\[[0-9]+\] .* record 1: ([0-9a-f]{2} ){16}07' '$WORK/out'"
ktap_check "%s prints the strings of the stack" \
	grep -qE 'syscall_trace_enter[.a-z0-9]*: cat opens /etc/hostname$' "$WORK/out"

bf "${opts[@]}" "$WORK/recs.c" --json -- cat /etc/hostname > "$WORK/out.json" 2> "$WORK/err"
ktap_expect_ok "the same with --json: exit 0" $? "$WORK/err"
ktap_check "a record as an object: its type, its entry's task, its fields by type" python3 -c "
import json, sys
# cat's own output (the host name) goes to the same stdout
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
recs = [j for j in objs if j.get('record') == 'opens']
f = [r for r in recs if r['fields']['path'] == '/etc/hostname'][0]
assert f['comm'] == 'cat' and f['pid'] == f['fields']['pid'], f
assert f['fields']['dfd'] == -100 and f['fields']['words'] == ['a', 'bc'], f
assert isinstance(f['time'], float) and f['cpu'] >= 0, f" "$WORK/out.json"

# the image of the same filter: no types, its records as bytes
bf "${opts[@]}" --check "$WORK/recs.c" -o "$WORK/recs.bpf" > /dev/null 2> "$WORK/err"
ktap_expect_ok "the filter as an image" $? "$WORK/err"
bf --event syscalls:sys_enter_openat "$WORK/recs.bpf" -- cat /etc/hostname > "$WORK/out" 2> "$WORK/err"
ktap_check "an image's records: id 0 and the bytes, 'cat' among them" \
	grep -qE ' cat-[0-9]+ +\[[0-9]+\] .* record 0: ([0-9a-f]{2} ){4}63 61 74 00' "$WORK/out"
ktap_finished
