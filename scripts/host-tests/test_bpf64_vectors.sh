#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: lib/test_bpf64.c's vectors pass on the host build of the
# engine (build/bin/test_bpf64), test_name=/test_id=/test_range= select
# vectors, and an engine with a broken BSWAP32 fails them
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 18
tb=$TOP/build/bin/test_bpf64
TREE=${TREE:-$TOP/build/linux}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
summary_re='^test_bpf64: Summary: ([0-9]+) PASSED, ([0-9]+) FAILED, \[([0-9]+)/([0-9]+) JIT.ed\]$'

# "PASSED FAILED JITED RUN" of the Summary line in $1, or nothing
summary() {
	sed -nE "s#$summary_re#\\1 \\2 \\3 \\4#p" <<<"$1"
}

# grep -qE in $output, what the last run printed
out_has() {
	grep -qE -- "$1" <<<"$output"
}

out_lacks() {
	! out_has "$1"
}

# All vectors; the host JIT, where built, runs them too.
start=$(date +%s%N)
output=$("$tb" 2>&1)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
read -r passed failed jited run <<<"$(summary "$output")"
ktap_expect "all vectors pass (exit 0)" 0 "$rc"
ktap_expect "one Summary line" 1 "$(grep -cE "$summary_re" <<<"$output")"
ktap_expect "0 FAILED" 0 "${failed:-none}"
ktap_check "at least 150 PASSED (${passed:-none})" test "${passed:-0}" -ge 150
ktap_check "no failure lines" out_lacks ': FAIL: |^test_bpf64: coverage: '
ktap_check "the run takes seconds (${ms} ms)" test "$ms" -lt 10000
ktap_print_msg "$(grep -E "$summary_re" <<<"$output")"

# Selecting vectors.
output=$("$tb" "test_name=DIV_X: by a zero register gives 0" 2>&1)
ktap_expect "test_name= runs that vector alone" "1 0" "$(summary "$output" | cut -d' ' -f1,2)"
output=$("$tb" test_range=10,19 2>&1)
ktap_expect "test_range=10,19 runs 10 vectors" "10 0" "$(summary "$output" | cut -d' ' -f1,2)"
output=$("$tb" "test_id=$((passed - 1))" 2>&1)
ktap_expect "test_id= of the last vector runs it alone" "1 0" "$(summary "$output" | cut -d' ' -f1,2)"
output=$("$tb" test_name=no-such-vector 2>&1)
rc=$?
ktap_expect "test_name= of no vector fails init (exit 1)" 1 "$rc"
ktap_check "... saying so" out_has "no vector named 'no-such-vector'"
"$tb" "test_id=$passed" > /dev/null 2>&1
ktap_expect "test_id= past the last vector fails init (exit 1)" 1 $?
"$tb" no_such_param=1 > /dev/null 2>&1
ktap_expect "an unknown parameter exits 2" 2 $?

# The same vectors against an engine whose BSWAP32 flips a bit: the shim's
# swab.h is replaced for the whole build (the reference in test_bpf64.c
# does not use it).
cat > "$work/mutant.h" <<'EOF'
#define _BPF64_SHIM_SWAB_H
#define swab16(x)	__builtin_bswap16(x)
#define swab32(x)	((unsigned int)__builtin_bswap32(x) ^ 0x100)
#define swab64(x)	__builtin_bswap64(x)
EOF
make -s -j2 -C "$TREE/tools/bpf64" O="$work" EXTRA_CFLAGS="-include $work/mutant.h" \
	"$work/test_bpf64" > "$work/build.log" 2>&1
ktap_check "a mutant engine builds" test -x "$work/test_bpf64"
output=$("$work/test_bpf64" 2>&1)
rc=$?
read -r passed failed jited run <<<"$(summary "$output")"
ktap_check "the mutant fails the run (exit 1, ${failed:-no} FAILED)" \
	test "$rc" -eq 1 -a "${failed:-0}" -gt 0
ktap_check "... in a hand-written BSWAP32 vector" \
	out_has 'BSWAP32: swaps the low half and zero-extends: FAIL: interpreter returned 0xefcdaa89, expected 0xefcdab89'
ktap_check "... in the generated one, naming the case" \
	out_has 'generated: ALU_BSWAP32_X: FAIL: .*; case [0-9]+: dst='
ktap_check "... and in the coverage" \
	out_has 'coverage: ALU_BSWAP32_X \(dc\) is run by no passing vector'

ktap_finished
