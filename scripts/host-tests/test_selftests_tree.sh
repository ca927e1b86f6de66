#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the series' selftests stand on their own in the kernel tree
#
# tools/testing/selftests/bpf64 (kernel patch 54) installs with the
# kernel's kselftest Makefile, its 34 tests listed; what the installed
# copies import resolves there; they name nothing of this repository; and
# this repository's selftests/ lists the same tests through its links.
# Nothing is run: the tests need a BPF64 kernel, which only a guest has.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
tree=$TOP/build/linux
kst=$tree/tools/testing/selftests
targets="bpf64 bpf64/jit bpf64/filters bpf64/hostile"

if [ ! -f "$kst/bpf64/Makefile" ]; then
	ktap_plan 1
	ktap_skip "needs build/linux with the series applied (make tree)"
	exit 0
fi
ktap_plan 7

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make -s -C "$kst" TARGETS="$targets" install INSTALL_PATH="$work/inst" > "$work/install.log" 2>&1
ktap_expect "make install of the four targets succeeds" 0 $?
list=$work/inst/kselftest-list.txt
ktap_expect "kselftest-list.txt lists 34 tests" 34 "$(wc -l < "$list" 2> /dev/null)"
ktap_check "... and the installed runner lists them too" \
	bash -c "[ \"\$('$work/inst/run_kselftest.sh' --list | sort)\" = \"\$(sort '$list')\" ]"

missing=
while IFS=: read -r dir prog; do
	[ -x "$work/inst/$dir/$prog" ] || missing+=" $dir/$prog"
done < "$list"
ktap_expect "every listed test is installed and executable" "" "$missing"

# Import what each installed Python test imports, from its directory (as
# the runner starts it), with the paths the tests put first: lib/ and
# filters/ (common.py) are found beside them.
imports=$(cd "$work/inst/bpf64" && for f in */test_*.py; do
	(cd "$(dirname "$f")" && python3 - "$(basename "$f")" <<'PY'
import ast, importlib, os, sys
sys.path[:0] = [os.path.join(os.getcwd(), d) for d in (".", "../lib", "../filters")]
for node in ast.walk(ast.parse(open(sys.argv[1]).read())):
    for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module] if isinstance(node, ast.ImportFrom) else []):
        try:
            importlib.import_module(name)
        except Exception as e:
            print("%s: import %s: %s" % (sys.argv[1], name, e))
PY
	) 2>&1
done)
ktap_expect "the installed Python tests import what they need from the install" "" "$imports"

refs=$(grep -rlE '"build"|build/(bin|perf|tools)|selftests/lib' "$kst"/bpf64)
ktap_expect "the tree's tests name no path of this repository" "" "$refs"

ours=$(for t in bpf64 jit filters hostile; do
	make -s --no-print-directory -C "$TOP/selftests/$t" emit_tests COLLECTION="$t"
done | sed 's/^[^:]*://' | sort)
theirs=$(sed 's/^[^:]*://' "$list" | sort)
ktap_expect "selftests/ lists the tree's tests through its links" "$theirs" "$ours"
ktap_finished
