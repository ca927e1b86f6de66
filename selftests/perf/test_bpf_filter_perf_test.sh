#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf test's own shell test of perf bpf-filter
# (tools/perf/tests/shell/bpf_filter.sh), which attaches in this kernel
# requires: perf bpf-filter, BPF64 event filters
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 2
cd "$TOP/build/linux/tools/perf" || exit 1
out=$("$PERF" test -v 'perf bpf-filter' 2>&1)
ktap_check "perf test 'perf bpf-filter' passes" grep -q "perf bpf-filter: check, disassemble, attach and restore: Ok" <<<"$out"
ktap_check "... and it attached (not skipped)" bash -c "! grep -q 'Attaching skipped' <<<'$out'"
[ $KTAP_FAIL -eq 0 ] || echo "$out" | sed 's/^/# /'
ktap_finished
