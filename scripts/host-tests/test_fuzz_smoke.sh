#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the BPF64 checker fuzzer (tools/bpf64/fuzz: libFuzzer, ASan,
# UBSan, a bounds-checking oracle) builds, passes its seeds and regression
# inputs, fuzzes for a while without a finding, and its oracles do fire:
# on checkers built with a planted bug and on a time limit of 0 ms
# requires: clang with libFuzzer (libclang-rt-14-dev)
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
TREE=${TREE:-$TOP/build/linux}
FUZZ=$TREE/tools/bpf64/fuzz
OUT=$TOP/build/fuzz
EX=$TOP/build/tools/bpf64/examples
SECONDS_CLEAN=${FUZZ_SMOKE_SECONDS:-20}
# A planted bug is looked for with a fixed seed and a number of inputs, not
# a time: found after 2 848 and 449 inputs (seed 1); at ~500-900 inputs/s
# beside a guest, a time limit made it flaky.
RUNS_PLANT=300000
OPTS=(-max_len=35088 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1)
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=8:quarantine_size_mb=64}

if [ ! -f "$FUZZ/Makefile" ]; then
	ktap_plan 1
	ktap_skip "the tree has no tools/bpf64/fuzz"
	ktap_finished
fi
if ! make -s -C "$FUZZ" O="$OUT" check-clang > /dev/null 2>&1; then
	ktap_plan 1
	ktap_skip "clang cannot link libFuzzer programs (apt-get install clang libclang-rt-14-dev)"
	ktap_finished
fi

ktap_plan 10
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ktap_check "fuzz_check, its planted-bug variants and the seed corpus build" \
	make -s -C "$FUZZ" O="$OUT" EXAMPLES="$EX" -j"$(nproc)" all seeds
ktap_check "the seeds are lib/test_bpf64.c's vectors and the RFC's examples" \
	bash -c "[ \$(ls $OUT/seeds | grep -c '^vec-') -ge 300 ] && [ -f $OUT/seeds/filter_ex1.bpf ]"

out=$("$OUT/fuzz_check" "${OPTS[@]}" -runs=0 "$OUT/seeds" "$OUT/regress" 2>&1)
ktap_expect "every seed and regression input passes the oracles" 0 $?
[ $? -eq 0 ] || tail -n 30 <<<"$out" | sed 's/^/# /'

mkdir -p "$work/corpus"
out=$("$OUT/fuzz_check" "${OPTS[@]}" -max_total_time="$SECONDS_CLEAN" \
	-artifact_prefix="$work/" "$work/corpus" "$OUT/seeds" "$OUT/regress" 2>&1)
rc=$?
ktap_expect "fuzzing for ${SECONDS_CLEAN}s finds nothing" 0 $rc
[ $rc -eq 0 ] || grep -A 30 -m1 "BPF64 \|ERROR\|runtime error" <<<"$out" | sed 's/^/# /'
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' <<<"$out")
ktap_print_msg "$execs inputs run, $(ls "$work/corpus" | wc -l) new in the corpus"
ktap_check "... running at least 1000 inputs" test "${execs:-0}" -ge 1000

# The planted bugs, found from the RFC's two examples alone.
mkdir -p "$work/examples"
cp "$EX"/*.bpf "$work/examples/"
plant() {
	local n=$1 text=$2 desc=$3 out artifact rc
	out=$(timeout 600 "$OUT/fuzz_check_plant$n" "${OPTS[@]}" -seed=1 -runs="$RUNS_PLANT" \
		-artifact_prefix="$work/plant$n-" "$work/examples" 2>&1)
	grep -q "^insn [0-9]*: .*$text" <<<"$out"
	rc=$?
	[ $rc -eq 0 ] || grep -A 3 -m1 "BPF64 \|ERROR\|^stat::number_of_executed" <<<"$out" | sed 's/^/# /'
	ktap_expect "planted bug $n ($desc): the oracle fires (seed 1, at most $RUNS_PLANT inputs)" 0 $rc
	artifact=$(ls "$work"/plant"$n"-crash-* 2>/dev/null | head -n1)
	ktap_check "... on an input that the real checker rejects" \
		bash -c "[ -n '$artifact' ] && ! $OUT/fuzz_check_plant$n $artifact > /dev/null 2>&1 &&
			 $OUT/fuzz_check $artifact > /dev/null 2>&1"
}
plant 1 "outside \[R10-480, R10)" "a 488-byte stack"
plant 2 "not marked as taking a table in r2" "table calls not marked"

# The time oracle: the slowest rejection of the vectors, against 0 ms.
slow=$(awk -F'\t' '/40 diamonds of constants used as sizes/ { print $1 }' "$OUT/seeds.index")
out=$(BPF64_FUZZ_CHECK_MS=0 "$OUT/fuzz_check" "$OUT/seeds/${slow:-none}" 2>&1)
ktap_check "the time oracle fires on a checker slower than the limit" \
	grep -q "the checker took [0-9]* ms of CPU, the limit is 0 ms" <<<"$out"
ktap_finished
