#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: peer-test's comparison: identical results are no difference, a
# changed result, a missing suite and a splat on our side are, and a test on
# one side only is listed apart
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 8
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmp_() { "$TOP/scripts/peer-test" --compare "$work" ftrace perf; }

mkdir -p "$work/base" "$work/bpf64"
printf '[1] Basic trace file check\t[PASS]\n[2] event filter\t[PASS]\n[3] (instance)  event filter\t[UNSUPPORTED]\n' \
	> "$work/base/ftrace.txt"
cp "$work/base/ftrace.txt" "$work/bpf64/ftrace.txt"
printf '  1: vmlinux symtab matches kallsyms   : Ok\n  2: Parse event   :\n  2.1: sub one   : Skip (not compiled in)\n  3: daemon   : FAILED!\n' \
	> "$work/base/perf.txt"
{ cat "$work/base/perf.txt"; echo '  4: perf bpf-filter: check   : Ok'; } > "$work/bpf64/perf.txt"
echo 'boot ok' > "$work/base.log"
echo 'boot ok' > "$work/bpf64.log"

out=$(cmp_)
ktap_expect "the same results: exit 0" 0 $?
ktap_check "... 0 differences, the suites' tests counted" bash -c "grep -qx 'peer-test: 0 differences' <<<'$out' &&
	grep -q 'ftrace: 3 tests on both' <<<'$out' && grep -q 'perf: 3 tests on both' <<<'$out'"
ktap_check "a test on our side only is listed apart" \
	grep -q "perf: only on bpf64: perf bpf-filter: check (Ok)" <<<"$out"

sed -i 's/event filter\t\[PASS\]/event filter\t[FAIL]/' "$work/bpf64/ftrace.txt"
out=$(cmp_)
ktap_expect "a changed result: exit 1" 1 $?
ktap_check "... in the table, both results" \
	grep -qx "| event filter | PASS | FAIL |" <<<"$out"
cp "$work/base/ftrace.txt" "$work/bpf64/ftrace.txt"

echo '[   12.3] WARNING: CPU: 1 PID: 5 at kernel/trace/x.c:1' >> "$work/bpf64.log"
out=$(cmp_)
ktap_expect "a splat on our side only: exit 1" 1 $?
ktap_check "... and it is shown" grep -q "bpf64 console: 1 splat lines" <<<"$out"
echo 'boot ok' > "$work/bpf64.log"

rm "$work/bpf64/perf.txt"
out=$(cmp_)
ktap_expect "a suite without results: exit 1" 1 $?
ktap_finished
