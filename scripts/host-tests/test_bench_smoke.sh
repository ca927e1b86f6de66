#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: make bench in smoke mode: every variant of the benchmark runs
# in the guest (filters attached, JIT and interpreter as asked, events
# dropped) and the report parses (table, ratios, results.json, overhead.png)
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 7
out=$TOP/build/bench/smoke
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ ! -f "$TOP/build/kbuild/arch/x86/boot/bzImage" ]; then
	for i in $(seq 7); do ktap_skip "no test kernel (make kernel)"; done
	ktap_finished
fi

start=$(date +%s)
timeout 170 "$TOP/scripts/bench" --smoke > "$log" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -n 30 "$log" | sed 's/^/# /'
ktap_expect "scripts/bench --smoke succeeds" 0 "$rc"
ktap_print_msg "smoke run took $(($(date +%s) - start)) s"

ktap_check "the accelerator and the TCG warning are printed" bash -c "
	grep -q 'accelerator: TCG.*icount' '$log' && grep -q 'only ratios' '$log'"
ktap_check "the table has runs 1 to 10" bash -c "
	for n in 1 2 3 4 5 6 7 8 9 10; do
		grep -qE \"^\$n +[a-zA-Z]\" '$log' || { echo \"no run \$n\"; exit 1; }
	done"
ktap_check "the four ratios are printed" bash -c "
	for r in bpf64_jit/predicate bpf64_jit/ebpf_raw_tp bpf64_jit/ebpf_tracepoint interpreter/jit; do
		grep -qE \"^  \$r +[0-9]\" '$log' || { echo \"no ratio \$r\"; exit 1; }
	done"
ktap_check "results.json has every variant with all its runs and the ratios" \
	/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
want = ["off", "tp_enabled", "tp_predicate", "tp_bpf64_jit", "tp_bpf64_interp", "tp_ebpf_raw",
        "tp_ebpf_perf", "kp_predicate", "kp_bpf64_jit", "kp_ebpf"]
for v in want:
    s = r["variants"][v]
    assert s["n"] == r["repetitions"] and s["min"] > 0, (v, s)
for k in ("bpf64_jit/predicate", "bpf64_jit/ebpf_raw_tp", "bpf64_jit/ebpf_tracepoint",
          "interpreter/jit"):
    assert r["ratios"][k]["min_based"] > 0, k
assert any("jited" in i for i in r["variants"]["tp_bpf64_jit"]["info"])
assert any("interpreted" in i for i in r["variants"]["tp_bpf64_interp"]["info"])
' "$out/results.json"
ktap_check "overhead.png is a PNG image" bash -c "head -c 8 '$out/overhead.png' | od -An -c | grep -q 'P   N   G'"
ktap_check "the run took less than 3 minutes" test $(($(date +%s) - start)) -lt 180
ktap_finished
