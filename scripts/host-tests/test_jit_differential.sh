#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the x86-64 JIT computes what the interpreter computes on
# 100000 random programs, and the test catches a JIT miscompiling on purpose
#
# JIT_DIFF_SEED=N fixes the seed (default: a new one each run, printed).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 12
diff=$TOP/build/tools/bpf64/jit/jit_diff
out=$(mktemp)
trap 'rm -f "$out"' EXIT

if [ ! -x "$diff" ]; then
	for i in $(seq 11); do ktap_skip "jit_diff not built (not an x86-64 host?)"; done
	ktap_finished
fi

seed=${JIT_DIFF_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
start=$SECONDS
"$diff" -s "$seed" -n 100000 > "$out" 2>&1
rc=$?
secs=$((SECONDS - start))
ktap_print_msg "$(grep '^jit_diff: seed' "$out") ($secs s)"
ktap_expect "100000 programs: interpreter and JIT agree (exit 0)" 0 "$rc"
ktap_check "... every program loaded was JIT-compiled, none differs" \
	grep -Eq '^jit_diff: 100000 programs, ([0-9]+) loaded(, [0-9]+ rejected with -[0-9]+)*, \1 JIT-compiled, 0 mismatches, 0 other failures$' "$out"
ktap_check "... at most 1% rejected by the checker" \
	awk '/^jit_diff: 100000 programs/ { split($0, f, ", "); sub(/ loaded/, "", f[2]); exit !(f[2] + 0 >= 99000) }' "$out"
ktap_check "... every opcode of BPF64_INSN_MAP generated" \
	grep -Eq '^jit_diff: [0-9]+ insns, .* ([0-9]+) of \1 opcodes covered' "$out"
ktap_check "... every helper kind called, table delete and a stack-filling helper among them" \
	grep -Eq '^jit_diff: ([0-9]+) of \1 helpers called \(.*delete [1-9][0-9]*, fill [1-9][0-9]*\)$' "$out"
ktap_check "... in under a minute" test "$secs" -lt 60
ktap_check "the JIT's code is mapped read-only and executable, nothing W+X" \
	grep -q '^jit_diff: JIT code mapped r-xp, no writable and executable mapping$' "$out"
ktap_check "a helper out of rel32 reach leaves the program on the interpreter, with a warning" \
	bash -c "grep -q 'out of rel32 reach leaves the program on the interpreter' '$out' &&
		 grep -q 'JIT failed (-34), the program runs on the interpreter' '$out'"
[ "$rc" -ne 0 ] && grep -E 'MISMATCH|FAIL' "$out" | head -5 | sed 's/^/# /'

# Miscompile on purpose: signed compares as unsigned, arithmetic shifts as
# logical ones, atomic adds as stores.  Each must be caught.
for inject in JMP_JSGT_X=JMP_JGT_X ALU_ARSH_X=ALU_RSH_X STX_XADD_W=STX_REL_W; do
	"$diff" -s "$seed" -n 20000 -i "$inject" > "$out" 2>&1
	rc=$?
	ktap_check "-i $inject: a mismatch is reported (exit 1)" \
		bash -c "[ $rc -eq 1 ] && grep -q '^MISMATCH: seed 0x' '$out'"
done

# The report's rerun command shows the one program and both results.
rerun=$(sed -n 's/^MISMATCH: .*; rerun: jit_diff //p' "$out" | head -1)
# shellcheck disable=SC2086
"$diff" $rerun -i STX_XADD_W=STX_REL_W > "$out" 2>&1
rc=$?
ktap_check "the rerun command reproduces the mismatch alone, with the program" \
	bash -c "[ $rc -eq 1 ] && grep -q '^interpreter: r0 ' '$out' &&
		 grep -q '^JIT: ' '$out' && grep -q '^  0: ' '$out'"
ktap_finished
