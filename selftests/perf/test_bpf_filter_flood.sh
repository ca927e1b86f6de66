#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: nothing a filter keeps is lost silently: a filter on
# raw_syscalls:sys_enter counts dd's system calls in a table and prints a
# line for each (or keeps the event, or both) while dd makes 200000 of
# them; what perf bpf-filter shows plus what it reports lost ("LOST N
# events", and "lost" in --json, per CPU) is what the filter kept, with
# the default buffer and with one too small to hold the flood (-m); and
# the events a filter misses while another runs on the CPU ("missed"); and
# a table that deletes as it inserts: read_latency.c with 8 slots in
# @start times every one of dd's 20000 reads, nothing refused
# requires: perf bpf-filter, BPF64 event filters, clang
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 23
EXC=$TOP/build/linux/tools/bpf64/examples/c

cat > "$WORK/flood.c" <<'EOF'
#include "comm.h"

BPF64_TABLE(kept, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);

int filter(struct pt_regs *ctx)
{
	unsigned int k = 0;

	if (!current_comm_is_COMM())
		return 0;
	count(ctx, &kept, &k);
#ifdef PRINT
	bpf64_printk("sys %d\n", 1);
#endif
	return KEEP;
}
EOF

# flood NAME COUNT CLANG-OPTS [PERF-OPTS...]: dd makes 2 * COUNT system
# calls under the filter; stdout in $WORK/NAME.out, stderr in NAME.err
flood() {
	local name=$1 count=$2 opts=$3

	shift 3
	bf --event raw_syscalls:sys_enter "$WORK/flood.c" --clang-opt "-I$EXC" \
		--clang-opt '-DCOMM="dd"' $opts "$@" -- \
		dd if=/dev/zero of=/dev/null bs=1 count="$count" \
		> "$WORK/$name.out" 2> "$WORK/$name.err"
}

# tally NAME: "kept prints events lost" from the --json output, after
# checking that its own counts agree: the lines and events streamed are
# those "trace" counts, the {"lost"} objects add up to its "lost", and
# its CPUs add up to it.
tally() {
	python3 - "$WORK/$1.out" <<'EOF'
import json, sys
prints = events = lost_seen = 0
end = None
for line in open(sys.argv[1]):
    j = json.loads(line)
    if 'trace' in j and isinstance(j['trace'], str):
        prints += ': sys 1' in j['trace']
        events += ' sys_enter: NR ' in j['trace']
    elif 'lost' in j:
        lost_seen += j['lost']
    elif j.get('why') == 'end':
        end = j
t = end['trace']
kept = end['tables'][0]['entries'][0]['value'] if end['tables'][0]['entries'] else 0
assert (t['prints'], t['events']) == (prints, events), (t, prints, events)
assert t['lost'] == lost_seen, (t, lost_seen)
assert sum(c['lost'] for c in t['cpus']) == t['lost'], t
assert sum(c['delivered'] for c in t['cpus']) == t['delivered'], t
print(kept, prints, events, t['lost'])
EOF
}

# text_tally NAME: the table's count, the lines shown and the sum of the
# LOST lines of a text run
text_tally() {
	local out=$WORK/$1.out kept

	kept=$(sed -n 's/^@kept\[0\]: //p' "$out")
	echo "${kept:-0}" "$(grep -c ' syscall_trace_enter[.a-z0-9]*: sys 1$' "$out")" \
		"$(sed -n 's/^LOST \([0-9]*\) events on CPU [0-9]*$/\1/p' "$out" |
			awk '{ n += $1 } END { print n + 0 }')"
}

# --- the issue's flood with the default buffer: lines, dropped events ---
flood print 100000 "--clang-opt -DPRINT --clang-opt -DKEEP=0"
ktap_expect_ok "100000 bytes one by one, a line per system call: exit 0" $? "$WORK/print.err"
read -r kept prints lost < <(text_tally print)
ktap_print_msg "default buffer: kept $kept, delivered $prints lines, lost $lost" \
	"($(python3 -c "print(f'{100 * $prints / max(${kept:-0}, 1):.2f}')") % delivered)"
ktap_check "dd's 200000 system calls and a few more are kept" [ "${kept:-0}" -ge 200000 ]
ktap_expect "lines shown + lines lost = system calls kept" "$kept" "$((prints + lost))"
ktap_expect "no event is recorded: the filter drops them" 0 \
	"$(grep -c ' sys_enter: NR ' "$WORK/print.out")"

# --- a buffer too small: losses, counted and said -----------------------
flood small 30000 "--clang-opt -DPRINT --clang-opt -DKEEP=0" --json -m 8K
ktap_expect_ok "the same with -m 8K: exit 0" $? "$WORK/small.err"
read -r kept prints events lost < <(tally small)
ktap_print_msg "8K buffer: kept $kept, delivered $prints lines, lost $lost"
ktap_check "an 8K buffer loses lines" [ "${lost:-0}" -gt 0 ]
ktap_expect "lines shown + lines lost = system calls kept" "$kept" "$((prints + lost))"
ktap_check "the end says how many were lost, of how many" \
	grep -q "LOST $lost events of $kept (CPU [0-9]*: [0-9]*.*): the trace buffer overflowed" \
	"$WORK/small.err"

# --- events the filter keeps, without lines ------------------------------
flood keep 30000 "--clang-opt -DKEEP=1" --json -m 8K
ktap_expect_ok "a filter keeping the events, -m 8K: exit 0" $? "$WORK/keep.err"
read -r kept prints events lost < <(tally keep)
ktap_expect "events shown + events lost = events kept" "$kept" "$((events + lost))"
ktap_expect "no line: the filter prints none" 0 "$prints"

# --- both: a line and its event ------------------------------------------
flood both 30000 "--clang-opt -DPRINT --clang-opt -DKEEP=1" --json -m 8K
ktap_expect_ok "a line and the event for each, -m 8K: exit 0" $? "$WORK/both.err"
read -r kept prints events lost < <(tally both)
ktap_expect "lines + events shown + lost = twice the kept" "$((2 * kept))" \
	"$((prints + events + lost))"

# --- the text output: LOST where it happened, and at the end -------------
flood text 30000 "--clang-opt -DPRINT --clang-opt -DKEEP=0" -m 8K
ktap_expect_ok "text output, -m 8K: exit 0" $? "$WORK/text.err"
read -r kept prints lost < <(text_tally text)
ktap_expect "the LOST lines in the stream add up with the lines to the kept" \
	"$kept" "$((prints + lost))"
ktap_check "... and to the count at the end" grep -q "^LOST $lost events of $kept " "$WORK/text.err"
# --- a table that deletes: slots reused, no insert refused -------------
bf "$EXC/read_latency.c" --clang-opt '-DCOMM="dd"' --clang-opt -DSTART_ENTRIES=8 --json -- \
	dd if=/dev/zero of=/dev/null bs=1 count=20000 > "$WORK/lat.out" 2> "$WORK/lat.err"
ktap_expect_ok "read_latency.c, 8 slots in @start, dd's 20000 reads: exit 0" $? "$WORK/lat.err"
grep '"why":"end"' "$WORK/lat.out" > "$WORK/lat.json"
read -r timed start_left refused < <(json '" ".join(str(x) for x in (
	sum(b["count"] for t in j["tables"] if t["name"] == "ns"
	    for g in t.get("hists", []) for b in g["hist"]["buckets"]),
	[t["count"] for t in j["tables"] if t["name"] == "start"][0],
	[t["refused_full"] for t in j["tables"] if t["name"] == "start"][0]))' \
	"$WORK/lat.json")
ktap_print_msg "read latency, 8 slots: $timed reads timed, $start_left left in @start," \
	"$refused inserts refused"
ktap_check "every one of dd's 20000 reads and a few more is timed" [ "${timed:-0}" -ge 20000 ]
ktap_expect "... with no insert refused (a deleted slot is reused at once) and @start emptied" \
	"0 0" "${refused:-x} ${start_left:-x}"

# --- events missed: a filter's event raised while a filter runs ----------
# reader() copies a string on each system call of dd; the copy fires the
# kprobe of nested(), whose filter cannot run while reader's does (both
# print, so both take the CPU's run context): every such event is missed.
cat > "$WORK/nest.c" <<'EOF'
#include "comm.h"

BPF64_TABLE(reads, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);
BPF64_TABLE(runs, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);

BPF64_EVENT("tracepoint:raw_syscalls:sys_enter")
int reader(struct pt_regs *ctx)
{
	unsigned int k = 0;
	char src[8] = "nested", dst[8];

	if (!current_comm_is_COMM())
		return 0;
	count(ctx, &reads, &k);
	bpf64_printk("read %d\n", 1);
	bpf_probe_read_str(dst, sizeof(dst), src);
	return 0;
}

BPF64_EVENT("kprobe:strncpy_from_kernel_nofault")
int nested(struct pt_regs *ctx)
{
	unsigned int k = 0;

	count(ctx, &runs, &k);
	bpf64_printk("nested %d\n", 1);
	return 0;
}
EOF
bf "$WORK/nest.c" --clang-opt "-I$EXC" --clang-opt '-DCOMM="dd"' --json -- \
	dd if=/dev/zero of=/dev/null bs=1 count=1000 > "$WORK/nest.out" 2> "$WORK/nest.err"
ktap_expect_ok "a copy in a filter fires another filter's kprobe: exit 0" $? "$WORK/nest.err"
grep '"why":"end"' "$WORK/nest.out" > "$WORK/nest.json"
reads=$(json '[e["value"] for t in j["tables"] if t["name"] == "reads" for e in t["entries"]][0]' \
	"$WORK/nest.json")
missed=$(json 'list(j["missed"].values())[0]' "$WORK/nest.json")
ktap_check "dd's 2000 system calls and a few more copied a string" [ "${reads:-0}" -ge 2000 ]
ktap_expect "each copy's kprobe event is counted missed (--json \"missed\")" "$reads" "$missed"
ktap_check "... and said at the end" \
	grep -q "^bpf_filter_[0-9]*:strncpy_from_kernel_nofault: $reads events missed: they fired while a filter ran on their CPU" \
	"$WORK/nest.err"
ktap_finished
