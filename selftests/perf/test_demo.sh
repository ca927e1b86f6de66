#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: make demo's guest part: every step runs and works, step 8
# (types from BTF, no vmlinux with DWARF) included; it says "every step
# worked" only then
. ./lib.sh
bf_require
ktap_plan 4

"$TOP/scripts/demo-guest.sh" > "$WORK/demo.out" 2>&1
rc=$?
tail -n 30 "$WORK/demo.out" | sed 's/^/# /'
ktap_expect "the demo exits 0" 0 $rc
ktap_expect "its last line says every step worked" "demo: every step worked" \
	"$(tail -n 1 "$WORK/demo.out")"
ktap_check "step 8 ran with the types from BTF, vmlinux's DWARF hidden" \
	grep -q "^(/lib/modules/.* hidden: no vmlinux with DWARF)" "$WORK/demo.out"
ktap_expect "no step was skipped or failed" "" \
	"$(grep -E '^SKIPPED|^\(exit status' "$WORK/demo.out")"
ktap_finished
