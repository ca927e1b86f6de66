# SPDX-License-Identifier: GPL-2.0
#
# KTAP output for shell selftests, in the spirit of kselftest's
# ktap_helpers.sh.  Source it, call ktap_plan N, then one of ktap_pass,
# ktap_fail, ktap_skip or ktap_check per case, and end with ktap_finished.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

KTAP_PLAN=0
KTAP_CNT=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0

ktap_plan() {
	KTAP_PLAN=$1
	echo "TAP version 13"
	echo "1..$1"
}

ktap_print_msg() { echo "# $*"; }

ktap_pass() {
	KTAP_CNT=$((KTAP_CNT + 1)) KTAP_PASS=$((KTAP_PASS + 1))
	echo "ok $KTAP_CNT $*"
}

ktap_fail() {
	KTAP_CNT=$((KTAP_CNT + 1)) KTAP_FAIL=$((KTAP_FAIL + 1))
	echo "not ok $KTAP_CNT $*"
}

ktap_skip() {
	KTAP_CNT=$((KTAP_CNT + 1)) KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_CNT $* # SKIP"
}

# ktap_check DESCRIPTION COMMAND...: pass when COMMAND succeeds; on failure
# show its output.
ktap_check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ktap_pass "$desc"
	else
		[ -n "$out" ] && echo "$out" | tail -n 20 | sed 's/^/# /'
		ktap_fail "$desc"
	fi
}

# ktap_expect DESCRIPTION EXPECTED ACTUAL: pass when the strings are equal.
ktap_expect() {
	if [ "$2" = "$3" ]; then
		ktap_pass "$1"
	else
		echo "# expected: $2"
		echo "# got:      $3"
		ktap_fail "$1"
	fi
}

ktap_finished() {
	echo "# $KTAP_PASS passed, $KTAP_FAIL failed, $KTAP_SKIP skipped"
	if [ "$KTAP_CNT" -ne "$KTAP_PLAN" ]; then
		echo "Bail out! planned $KTAP_PLAN tests, ran $KTAP_CNT"
		exit $KSFT_FAIL
	fi
	[ $KTAP_FAIL -eq 0 ] || exit $KSFT_FAIL
	[ $KTAP_SKIP -eq 0 ] || [ $KTAP_PASS -gt 0 ] || exit $KSFT_SKIP
	exit $KSFT_PASS
}

ktap_require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		ktap_plan 1
		ktap_skip "needs root"
		ktap_finished
	fi
}
