#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: every function the tests put a return probe on returns a value
#
# A filter on a kretprobe reads the return value in ax; at the return of a
# void function ax holds whatever the compiler left there, so a test that
# reads it asserts undefined behaviour (it passed on the tiny kernel and
# failed on the debug kernel: issue 45).  The rule (Documentation/
# testing.md): return probes in the tests go on functions that return a
# value.  The functions are found in the tests' kprobe_events lines
# ("r:GROUP/NAME FUNC"), FUNC%return, --kretprobe FUNC and kretprobe:FUNC,
# and their types are read from vmlinux's DWARF with gdb.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
VMLINUX=${VMLINUX:-$TOP/build/kbuild/vmlinux}
tests="$TOP/selftests $TOP/build/linux/tools/testing/selftests/bpf64 $TOP/build/linux/tools/bpf64/examples"

if [ ! -f "$VMLINUX" ] || ! command -v gdb > /dev/null; then
	ktap_plan 1
	ktap_skip "needs build/kbuild/vmlinux (make kernel) and gdb"
	exit 0
fi
ktap_plan 3

# -r: the repository's selftests/ links into the tree; -R would read them twice
funcs=$(grep -rhoP '"r\d*:[\w/]+\s+\K\w+|\b\w+(?=%return)|--kretprobe[ =]['"'"'"]?\K\w+|kretprobe:\K\w+' \
	$tests 2> /dev/null | sort -u)
args=()
for f in $funcs; do
	args+=(-ex "echo @@ $f\\n" -ex "whatis $f")
done
types=$(gdb -batch -nx "${args[@]}" "$VMLINUX" 2>&1 |
	awk '/^@@ / { f = $2; next } f && /^type = / { sub(/^type = /, ""); print f ": " $0; f = "" }')
known=$(echo "$types" | grep -c .)
ktap_check "the tests' return probes name at least 5 kernel functions ($known: $(echo "$types" | cut -d: -f1 | xargs))" \
	[ "$known" -ge 5 ]
void=$(echo "$types" | grep -E '^[^:]+: void \(' | cut -d: -f1 | xargs)
ktap_expect "none of them is a void function" "" "$void"

# The check can fail: ksys_sync() is void, and is found as a void function.
probe=$(gdb -batch -nx -ex "whatis ksys_sync" "$VMLINUX" 2>&1)
ktap_expect "the check tells a void function (ksys_sync)" "type = void (void)" "$probe"
ktap_finished
