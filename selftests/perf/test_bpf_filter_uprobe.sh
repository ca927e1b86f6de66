#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter on functions of programs: -x PROG with
# --uprobe/--uretprobe lists the arguments from the program's DWARF (text,
# --json, --gen-header), BPF64_EVENT("uprobe:PROG:FUNC") filters read
# them by name and count the calls a workload makes, exactly; a stripped
# program takes filters that read registers; errors say what is wrong and
# leave no uprobe behind
# requires: perf bpf-filter, BPF64 event filters, clang, cc
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 14

uprobes() { grep bpf_filter "$TRACEFS/uprobe_events" | tr '\n' ' '; }

# A program with DWARF: area() called with scale 0..4, twice each.
cat > "$WORK/prog.c" <<'EOF'
#include <stdlib.h>

struct point {
	long x;
	long y;
};

__attribute__((noinline)) long area(struct point *p, int scale)
{
	__asm__ volatile("" : : "r"(p) : "memory");
	return p->x * p->y * scale;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 0;
	long sum = 0;

	for (i = 0; i < n; i++) {
		struct point p = { .x = i, .y = 7 };

		sum += area(&p, i % 5);
	}
	return sum == 0;
}
EOF
cc -g -O1 -o "$WORK/prog" "$WORK/prog.c" || ktap_print_msg "cc failed"
PROG=$WORK/prog
before=$(uprobes)

# --- listings from the program's DWARF -------------------------------------
bf -x "$PROG" --uprobe area > "$WORK/list" 2> "$WORK/list.err"
ktap_check "-x PROG --uprobe area: a uprobe at area+0, from PROG's DWARF" \
	grep -q "^area: uprobe at area+0 (.*prog.c:[0-9]*), from $PROG\$" "$WORK/list"
ktap_check "... its arguments p and scale in di and si" bash -c "
	grep -qE '^  p +struct point \* +%di +ctx\+112$' '$WORK/list' &&
	grep -qE '^  scale +int +%si +ctx\+104$' '$WORK/list'"
bf -x "$PROG" --uretprobe area --json > "$WORK/ret.json"
ktap_expect "--uretprobe --json: the binary, kind uretprobe, \$retval in ax" \
	"$PROG uretprobe \$retval long int 80" \
	"$(json '" ".join(map(str, [j["binary"], j["probe"]["kind"], j["probe"]["args"][0]["name"], j["probe"]["args"][0]["type"], j["probe"]["args"][0]["ctx_offset"]]))' "$WORK/ret.json")"
bf -x "$PROG" --uprobe area --member point.y --gen-header "$WORK/area.h" > /dev/null
ktap_check "--gen-header: ARG_p, ARG_scale and point.y's offset from PROG's DWARF" bash -c "
	grep -qP '^#define ARG_p\t112\t' '$WORK/area.h' &&
	grep -qP '^#define ARG_scale\t104\t' '$WORK/area.h' &&
	grep -qP '^#define OFF_point__y\t8$' '$WORK/area.h'"

# --- a file of filters on the program's functions --------------------------
cat > "$WORK/area.c" <<EOF
#include <bpf64_helpers.h>

BPF64_TABLE(scales, BPF64_TABLE_HASH, unsigned int, unsigned long, 16);
BPF64_TABLE(big, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);

static inline __always_inline void count(void *ctx, void *table, unsigned int key)
{
	unsigned long *n = bpf_table_lookup(ctx, table, &key), zero = 0;

	if (!n) {
		bpf_table_update(ctx, table, &key, &zero);
		n = bpf_table_lookup(ctx, table, &key);
	}
	if (n)
		__sync_fetch_and_add(n, 1);
}

BPF64_EVENT("uprobe:$PROG:area")
int entry(struct pt_regs *ctx)
{
	count(ctx, &scales, BPF64_ARG(ctx, scale));
	return 0;
}

BPF64_EVENT("uretprobe:$PROG:area")
int leave(struct pt_regs *ctx)
{
	if (BPF64_ARG(ctx, retval) > 100)
		count(ctx, &big, 1);
	return 0;
}
EOF
bf -k "$VMLINUX" --json "$WORK/area.c" -- "$PROG" 20 > "$WORK/area.json" 2> "$WORK/area.err"
ktap_expect_ok "BPF64_EVENT(\"uprobe:PROG:area\") and uretprobe: the program's 20 calls, exit 0" \
	$? "$WORK/area.err"
ktap_expect "the entry filter reads scale by name: 4 calls with each scale 0..4" \
	"[(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]" \
	"$(python3 -c "
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if '\"tables\"' in l][-1]['tables']
print(sorted((e['key'], e['value']) for e in [x for x in t if x['name'] == 'scales'][0]['entries']))" \
	"$WORK/area.json")"
big=$(python3 -c "print(sum(1 for i in range(20) if i * 7 * (i % 5) > 100))")
ktap_expect "the return filter reads retval: the $big results above 100" "$big" \
	"$(python3 -c "
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if '\"tables\"' in l][-1]['tables']
print(sum(e['value'] for e in [x for x in t if x['name'] == 'big'][0]['entries']))" \
	"$WORK/area.json")"
ktap_check "the uprobe events were made in the run's group" \
	grep -q "created the uprobe event bpf_filter_[0-9]*:area on area at 0x[0-9a-f]* in $PROG" \
	"$WORK/area.err"

# --- a stripped program: registers, no names --------------------------------
strip -o "$WORK/stripped" "$PROG"
bf -x "$WORK/stripped" --uprobe area > "$WORK/out" 2> "$WORK/err"
ktap_check "a listing of a stripped program: exit 1, no DWARF, what to do" bash -c "
	[ $? -eq 1 ] && grep -q 'no DWARF for $WORK/stripped: build it with -g' '$WORK/err'"
cat > "$WORK/regs.c" <<'EOF'
#include <bpf64_helpers.h>

BPF64_TABLE(calls, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);

int filter(struct pt_regs *ctx)
{
	unsigned int k = ctx->si == 3;	/* scale */
	unsigned long *n = bpf_table_lookup(ctx, &calls, &k), zero = 0;

	if (!n) {
		bpf_table_update(ctx, &calls, &k, &zero);
		n = bpf_table_lookup(ctx, &calls, &k);
	}
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}
EOF
bf -k "$VMLINUX" --json -q -x "$WORK/stripped" --uprobe area "$WORK/regs.c" -- \
	"$WORK/stripped" 10 > "$WORK/regs.json" 2> "$WORK/regs.err"
ktap_expect "-x STRIPPED --uprobe area with a filter reading si: 2 of 10 calls with scale 3" \
	"[(0, 8), (1, 2)]" \
	"$(python3 -c "
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if '\"tables\"' in l][-1]['tables']
print(sorted((e['key'], e['value']) for e in t[0]['entries']))" "$WORK/regs.json")"

# --- errors ---------------------------------------------------------------
bf -x "$PROG" "$WORK/regs.c" > /dev/null 2> "$WORK/err"
ktap_check "-x without --uprobe: usage error (129), it says what -x goes with" bash -c "
	[ $? -eq 129 ] && grep -q -- '-x PATH goes with --uprobe or --uretprobe' '$WORK/err'"
bf -x "$WORK/nosuch" --uprobe area "$WORK/regs.c" > /dev/null 2> "$WORK/err"
ktap_check "-x of a missing file: exit 1, the path and why" bash -c "
	[ $? -eq 1 ] && grep -q '$WORK/nosuch: No such file or directory' '$WORK/err'"
bf -x "$WORK/stripped" --uprobe nosuchfn "$WORK/regs.c" -- true > /dev/null 2> "$WORK/err"
ktap_check "--uprobe of a function the program lacks: exit 1, what is missing where" bash -c "
	[ $? -eq 1 ] && grep -q 'cannot find nosuchfn in $WORK/stripped' '$WORK/err'"
ktap_expect "no uprobe of perf bpf-filter left" "$before" "$(uprobes)"
ktap_finished
