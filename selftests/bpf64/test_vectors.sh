#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the test_bpf64 module's vectors pass on the interpreter
# (kernel.bpf64_jit_enable=0) and on the JIT (=1)
# requires: CONFIG_TEST_BPF64=m, kernel.bpf64_jit_enable
. ../lib/ktap.sh
ktap_require_root

ko=/lib/modules/$(uname -r)/kernel/lib/test_bpf64.ko
jit_sysctl=/proc/sys/kernel/bpf64_jit_enable
summary_re='test_bpf64: Summary: ([0-9]+) PASSED, ([0-9]+) FAILED, \[([0-9]+)/([0-9]+) JIT.ed\]'

if modprobe -n test_bpf64 2>/dev/null; then
	load() { modprobe test_bpf64 "$@"; }
elif [ -f "$ko" ]; then
	load() { insmod "$ko" "$@"; }
else
	# vm-config/base.config builds it: a BPF64 kernel without it is a bug.
	ktap_plan 1
	if [ -e "$jit_sysctl" ]; then
		ktap_fail "the BPF64 kernel has no test_bpf64 module (CONFIG_TEST_BPF64=m)"
	else
		ktap_skip "no BPF64 in this kernel"
	fi
	ktap_finished
fi
if [ ! -w "$jit_sysctl" ]; then
	ktap_plan 1
	ktap_skip "no $jit_sysctl"
	ktap_finished
fi
ktap_plan 9
saved_jit=$(cat "$jit_sysctl")
trap 'echo "$saved_jit" > "$jit_sysctl"; rmmod test_bpf64 2>/dev/null' EXIT
rmmod test_bpf64 2>/dev/null

# run_module ARGS...: load the module once; $rc is the load's status and
# $log what the kernel logged meanwhile.  A module that loaded stays
# loaded (as test_bpf does), so unload it.
run_module() {
	local mark="test_vectors.sh: run $$ $RANDOM"

	echo "$mark" > /dev/kmsg
	load "$@" 2>/dev/null
	rc=$?
	[ $rc -eq 0 ] && rmmod test_bpf64
	log=$(dmesg | awk -v m="$mark" 'index($0, m) { found = 1; next } found')
}

# "PASSED FAILED JITED RUN" of the Summary in $log, or nothing
summary() {
	sed -nE "s#.*$summary_re.*#\\1 \\2 \\3 \\4#p" <<<"$log"
}

for jit in 0 1; do
	echo "$jit" > "$jit_sysctl"
	run_module
	read -r passed failed jited run <<<"$(summary)"
	grep -E ': FAIL: |test_bpf64: coverage: ' <<<"$log" | head -n 20 | sed 's/^/# /'
	ktap_expect "jit=$jit: the module loads, all vectors pass" 0 "$rc"
	ktap_check "jit=$jit: Summary with 0 FAILED, at least 150 PASSED" \
		test "${failed:-1}" -eq 0 -a "${passed:-0}" -ge 150
	ktap_print_msg "jit=$jit: $(grep -oE "$summary_re" <<<"$log")"
	if [ "$jit" = 0 ]; then
		ktap_expect "jit=0: nothing JIT-compiled" 0 "${jited:-none}"
	elif [ "${jited:-0}" -gt 0 ]; then
		ktap_pass "jit=1: the JIT compiled $jited of $run programs"
	else
		ktap_skip "jit=1: nothing JIT-compiled: no CONFIG_BPF64_JIT?"
	fi
done
echo "$saved_jit" > "$jit_sysctl"

run_module test_range=0,9
ktap_expect "test_range=0,9 runs 10 vectors" "10 0" "$(summary | cut -d' ' -f1,2)"
run_module test_name=no-such-vector
ktap_check "test_name= of no vector: loading fails" test "$rc" -ne 0
ktap_check "... saying so in the log" grep -q "test_bpf64: no vector named 'no-such-vector'" <<<"$log"
ktap_finished
