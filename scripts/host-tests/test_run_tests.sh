#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the test driver (scripts/run-tests) on a stand-in set of host
# tests and selftests: host tests beside a guest from the start, guests on
# both workers, one KTAP stream in the targets' order with each test's time,
# the ten slowest and 'N passed, N failed, N skipped' (a skip is no pass);
# a guest that panics in a test fails that test with the console tail and
# the tests it never started run in another guest; the durations are
# recorded for the next run; --plan balances the workers
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 26
if [ ! -f "${VM_KERNEL:-$TOP/build/kbuild/arch/x86/boot/bzImage}" ]; then
	for i in $(seq 26); do ktap_skip "no test kernel (make kernel)"; done
	ktap_finished
fi
# The guest sees the repository, not the host's /tmp: work under build/.
mkdir -p "$TOP/build"
work=$(mktemp -d "$TOP/build/test-run-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT
st=$work/selftests host=$work/host
mkdir -p "$st/a" "$st/b" "$host" "$work/logs"
cp "$TOP/selftests/run_kselftest.sh" "$TOP/selftests/lib.mk" "$st/"
cp -rL "$TOP/selftests/lib" "$st/"
echo "TARGETS ?= a b" > "$st/Makefile"
printf 'TEST_PROGS := test_pass.sh test_skip.sh test_crash.sh test_after.sh\ninclude ../lib.mk\n' > "$st/a/Makefile"
printf 'TEST_PROGS := test_b1.sh test_b2.sh\ninclude ../lib.mk\n' > "$st/b/Makefile"
echo "timeout=60" > "$st/a/settings"
t() { # FILE BODY: a selftest in KTAP
	printf '#!/bin/bash\n. ../lib/ktap.sh\nktap_plan 1\n%s\nktap_finished\n' "$2" > "$1"
	chmod +x "$1"
}
t "$st/a/test_pass.sh" 'ktap_pass "passes"'
t "$st/a/test_skip.sh" 'ktap_skip "cannot run here"'
t "$st/a/test_after.sh" 'ktap_pass "runs after a crash"'
# (the sleep lets its line through the serial console before the panic)
t "$st/a/test_crash.sh" 'echo "# about to crash"; sleep 2; echo c > /proc/sysrq-trigger; sleep 30'
t "$st/b/test_b1.sh" 'sleep 3; ktap_pass "b1"'
t "$st/b/test_b2.sh" 'sleep 3; echo "# why b2 failed"; ktap_fail "b2 fails"'
h() { # FILE BODY: a host test in KTAP
	printf '#!/bin/bash\n. %q\nktap_plan 1\n%s\nktap_finished\n' "$TOP/selftests/lib/ktap.sh" "$2" > "$1"
	chmod +x "$1"
}
h "$host/test_slow.sh" 'sleep 15; ktap_pass "slow host test"'
h "$host/test_bad.sh" 'echo "# the reason"; ktap_fail "bad host test"'
cat > "$work/times.json" <<'EOF'
{"boot": 5, "guest:a:test_crash.sh": 50, "guest:a:test_after.sh": 40,
 "guest:a:test_pass.sh": 30, "guest:a:test_skip.sh": 20,
 "guest:b:test_b1.sh": 30, "guest:b:test_b2.sh": 30,
 "host:test_slow": 15, "host:test_bad": 1}
EOF
cp "$work/times.json" "$work/times0.json"
rt() { SELFTESTS=$st HOST_TESTS_DIR=$host TEST_LOGS=$work/logs TEST_TIMES=$work/times.json \
	timeout -k 10 "${RT_TIMEOUT:-600}" "$TOP/scripts/run-tests" "$@"; }
out=$work/out

# 1: one worker, target a: the crash, the tests after it in a new guest.
JOBS=1 QUANTUM=1000 GUEST_TARGETS=a rt --guest-only > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
ktap_expect "a failed test fails the run" 1 "$rc"
ktap_check "the summary: a skip is no pass, the crash one failure" \
	grep -qx "2 passed, 1 failed, 1 skipped" "$out"
ktap_check "the crash is blamed on its test, with the console tail" bash -c "
	grep -q 'guest 1: not ok selftests: a: test_crash.sh: the guest ended in it' '$out' &&
	grep -q 'kernel splat in the guest' '$out' && grep -q '  | .*sysrq' '$out'"
ktap_check "the tests it never started run in another guest" bash -c "
	grep -q 'guest 1: 3 tests it did not start go to another guest' '$out' &&
	grep -q 'guest 2 .*a:test_after.sh a:test_pass.sh a:test_skip.sh' '$out'"
stream=$work/logs/guest.log
ktap_check "one KTAP stream in the targets' order, numbered" bash -c "
	grep -E '^(1\.\.|ok|not ok)' '$stream' | sed 's/ #.*//' | tr '\n' '|' |
	grep -qx '1..4|ok 1 selftests: a: test_pass.sh|ok 2 selftests: a: test_skip.sh|not ok 3 selftests: a: test_crash.sh|ok 4 selftests: a: test_after.sh|'"
ktap_check "... the skip marked SKIP, each finished test's time after it" bash -c "
	grep -q '^ok 2 selftests: a: test_skip.sh # SKIP' '$stream' &&
	[ \$(grep -c '^# time: [0-9.]* selftests: a: ' '$stream') = 3 ]"
ktap_check "... and the crashed test's own output" grep -q "^# # about to crash" "$stream"
ktap_check "the slowest tests are listed above the summary" bash -c "
	sed -n '/slowest tests:/,\$p' '$out' | grep -Eq '^ +[0-9]+:[0-9]{2}  selftests: a: test_(pass|skip|after).sh'"
ktap_check "the durations are recorded, a crashed test's not" python3 -c "
import json; t = json.load(open('$work/times.json')); o = json.load(open('$work/times0.json'))
assert t['guest:a:test_pass.sh'] != o['guest:a:test_pass.sh'] and t['guest:a:test_pass.sh'] < 20, t
assert t['guest:a:test_crash.sh'] == 50, t"

# 2: two workers, both parts: the host tests beside a guest from the start.
cp "$work/times0.json" "$work/times.json"
JOBS=2 GUEST_TARGETS=b rt > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
ktap_expect "a failed host test fails the run" 1 "$rc"
ktap_check "the summary counts host and guest tests" grep -qx "2 passed, 2 failed" "$out"
ktap_check "... and under each FAILED line, its failing checks and their diagnostics" bash -c "
	grep -A2 '^FAILED: test_bad: exit 1' '$out' | tr '\\n' '|' |
		grep -q '|    # the reason|    not ok 1 bad host test|' &&
	grep -A2 '^FAILED: guest: not ok [0-9] selftests: b: test_b2.sh' '$out' |
		tr '\\n' '|' | grep -q '|    # why b2 failed|    not ok 1 b2 fails|'"
ktap_check "the host tests and a guest start at once" bash -c "
	grep -q '^\[ 0:00\] host: test_bad' '$out' && grep -q '^\[ 0:00\] guest 1 (worker' '$out'"
ktap_check "the host tests run one at a time, on one worker" bash -c "
	awk '/host: test_bad: FAILED/ { bad = NR } /\] host: test_slow \(/ { slow = NR } END { exit !(bad && slow > bad) }' '$out'"
ktap_check "the guest tests go to two guests" bash -c "
	grep -q 'guest 1 (worker .*b:test_b1.sh' '$out' && grep -q 'guest 2 (worker .*b:test_b2.sh' '$out'"
ktap_check "a failing host test's output is shown" grep -q "  | # the reason" "$out"
ktap_check "host logs and guest stream are kept" bash -c "
	grep -q '^exit=1' '$work/logs/host-test_bad.log' && grep -q '^time=' '$work/logs/host-test_slow.log' &&
	grep -q '^not ok 2 selftests: b: test_b2.sh' '$work/logs/guest.log'"

# 2b: estimates far off: a free worker takes over the tests another guest
# has not begun (that guest stops after its current test).
mkdir -p "$st/c"
printf 'TEST_PROGS := test_long.sh test_c1.sh test_c2.sh test_c3.sh test_c4.sh\ninclude ../lib.mk\n' > "$st/c/Makefile"
t "$st/c/test_long.sh" 'sleep 3; ktap_pass "long"'
t "$st/c/test_c1.sh" 'sleep 8; ktap_pass c1'	# still running when guest 1 is done
for i in 2 3 4; do t "$st/c/test_c$i.sh" "ktap_pass c$i"; done
t "$st/c/test_each.sh" 'ktap_pass "each guest"'	# like test-debug's kmemleak scan
cat > "$work/times.json" <<'EOF2'
{"boot": 5, "guest:c:test_long.sh": 200, "guest:c:test_c1.sh": 30, "guest:c:test_c2.sh": 30,
 "guest:c:test_c3.sh": 30, "guest:c:test_c4.sh": 30}
EOF2
JOBS=2 GUEST_TARGETS=c GUEST_EACH_BOOT=c:test_each.sh rt --guest-only > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
ktap_expect "a guest hands back what it has not begun: exit 0" 0 "$rc"
ktap_check "... told to stop after its current test, it leaves 3 tests to the free workers" bash -c "
	grep -q 'guest 2: stops after its current test: 3 tests' '$out' &&
	grep -q '^# stopped: 3 tests left to another guest' '$work/logs/boots/guest-2.log'"
ktap_check "... and still runs what every guest runs (GUEST_EACH_BOOT)" bash -c "
	sed -n '/^# stopped: /,\$p' '$work/logs/boots/guest-2.log' |
	grep -q '^ok [0-9]* selftests: c: test_each.sh'"
ktap_check "... they run in other guests, all five pass once, in the targets' order" bash -c "
	grep -qE '^[0-9]+ passed, 0 failed\$' '$out' && grep -q '^\[.*\] guest [34] (worker' '$out' &&
	grep -E '^(ok|not ok)' '$work/logs/guest.log' | grep -v test_each | sed 's/ #.*//' | tr '\n' '|' |
	grep -qx 'ok 1 selftests: c: test_long.sh|ok 2 selftests: c: test_c1.sh|ok 3 selftests: c: test_c2.sh|ok 4 selftests: c: test_c3.sh|ok 5 selftests: c: test_c4.sh|'"

# 2c: one long test and two workers: the free worker has nothing to take
# over (a guest always runs its first test), so the test runs once.
cat > "$work/times.json" <<'EOF2'
{"boot": 5, "guest:c:test_long.sh": 300}
EOF2
RT_TIMEOUT=120 JOBS=2 GUEST_TARGETS=c GUEST_TESTS=test_long.sh rt --guest-only > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
ktap_expect "one long test on two workers: exit 0" 0 "$rc"
ktap_check "... one guest runs it; none is told to stop and none boots again" bash -c "
	grep -qx '1 passed, 0 failed' '$out' && ! grep -q 'stops after' '$out' &&
	! grep -q '^\[.*\] guest 2 (worker' '$out'"

# 3: --plan: the host tests on one worker, the guests on both, balanced.
plan=$(TEST_TIMES=$work/plan.json JOBS=2 HOSTILE_PARTS=4 "$TOP/scripts/run-tests" --plan 2>&1)
echo "$plan" | sed 's/^/# /'
ktap_check "--plan: every host test on one worker" bash -c "
	[ \$(grep -c 'worker [0-9]  host ' <<<'$plan') = $(ls "$TOP"/scripts/host-tests/test_*.sh | wc -l) ] &&
	[ \$(grep 'worker [0-9]  host ' <<<'$plan' | awk '{ print \$3 }' | sort -u | wc -l) = 1 ]"
ktap_check "--plan: the hostile images in 4 parts of 25000" bash -c "
	[ \$(grep -o 'hostile:test_hostile_images.py#[1-4]/4' <<<'$plan' | sort -u | wc -l) = 4 ]"
ktap_check "--plan: a guest from the start, both workers end within 3 min of each other" python3 -c "
import re, sys
plan = '''$plan'''
ends = {}
def secs(s):
    m = re.match(r'(?:(\d+)m)?(\d+)s', s)
    return int(m.group(1) or 0) * 60 + int(m.group(2))
for l in plan.splitlines():
    m = re.match(r'\s*(\S+)\s+worker (\d)\s+(host|guest) .*\((\S+)\)$', l)
    if m:
        ends[m.group(2)] = secs(m.group(1)) + secs(m.group(4))
assert re.search(r'^\s*0s\s+worker \d\s+guest', plan, re.M), 'no guest at 0s'
assert len(ends) == 2 and abs(ends['1'] - ends['2']) <= 180, ends"
ktap_finished
