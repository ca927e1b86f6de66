#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the series' selftests run where the tree has them, with the
# kernel's own runner: make -C tools/testing/selftests TARGETS=bpf64
# run_tests in build/linux reports the bpf64 target's test as passed
# requires: the BPF64 kernel with test_bpf64.ko (vm-config/base.config)
. ../lib/ktap.sh
ktap_require_root
top=$(cd ../.. && pwd)
kst=$top/build/linux/tools/testing/selftests
if [ ! -f "$kst/bpf64/Makefile" ]; then
	ktap_plan 1
	ktap_skip "no $kst/bpf64 (make tree)"
	ktap_finished
fi
ktap_plan 3
out=$(make -s -C "$kst" TARGETS=bpf64 run_tests 2>&1)
ktap_expect "make run_tests exits 0" 0 $?
ktap_check "the kernel's runner reports 'ok 1 selftests: bpf64: test_vectors.sh'" \
	grep -qx "ok 1 selftests: bpf64: test_vectors.sh" <<<"$out"
ktap_check "... from the test's own 9 checks, all passed" \
	grep -qx "# # 9 passed, 0 failed, 0 skipped" <<<"$out"
[ "$KTAP_FAIL" -eq 0 ] || sed 's/^/# /' <<<"$out" | tail -n 30
ktap_finished
