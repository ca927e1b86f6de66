#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: trace_filter_check accepts the RFC's example images and
# rejects broken ones with the checker's message and exit status 1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 14
tfc=$TOP/build/bin/trace_filter_check
ex=$TOP/build/tools/bpf64/examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for f in filter_ex1 filter_ex2; do
	out=$("$tfc" "$ex/$f.bpf")
	rc=$?
	ktap_expect "$f.bpf is accepted (exit 0)" 0 "$rc"
	ktap_check "$f.bpf: OK, stats line and tag" bash -c "grep -qx OK <<<'$out' &&
		grep -q '^processed [0-9]* insns (limit 32768)' <<<'$out' &&
		grep -qx 'tag $(sha256sum "$ex/$f.bpf" | cut -c1-16)' <<<'$out'"
done

# A one-byte-short image, and one whose first load reads ctx misaligned.
head -c -1 "$ex/filter_ex1.bpf" > "$work/short.bpf"
out=$("$tfc" "$work/short.bpf")
ktap_expect "a truncated image is rejected (exit 1)" 1 $?
ktap_check "... saying why" grep -q "header sections add up to 254 bytes, the image has 253" <<<"$out"
python3 - "$ex/filter_ex1.bpf" "$work/misaligned.bpf" <<'PY'
import sys
img = bytearray(open(sys.argv[1], 'rb').read())
img[16 + 8 + 2] = 105          # insn 1: r6 = *(u64 *)(r1 +105)
open(sys.argv[2], 'wb').write(img)
PY
out=$("$tfc" "$work/misaligned.bpf")
ktap_expect "a misaligned ctx read is rejected (exit 1)" 1 $?
ktap_check "... naming the insn, its disassembly and the reason" \
	grep -q "insn 1: (d9) r6 = \*(u64 \*)(r1 +105): invalid ctx access off=105 size=8" <<<"$out"
ktap_check "... and the errno" grep -q "rejected, EACCES: unsafe program" <<<"$out"
"$tfc" "$work/nonexistent.bpf" > /dev/null 2>&1
ktap_expect "a missing file exits 2" 2 $?
"$tfc" > /dev/null 2>&1
ktap_expect "no argument exits 2" 2 $?
head -c $((1024 * 1024 + 1)) /dev/zero > "$work/big.bpf"
out=$("$tfc" "$work/big.bpf" 2>&1)
ktap_expect "a file larger than any image exits 2" 2 $?
ktap_check "... saying so" grep -q "big.bpf: larger than 1 MiB, not an image" <<<"$out"
ktap_check "-d disassembles with helper names" bash -c "$tfc -d $ex/filter_ex1.bpf | grep -q '^22: (85) call bpf_trace_printk$'"
ktap_finished
