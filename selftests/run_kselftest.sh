#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_kselftest.sh TARGET...: run every test of the TARGET directories (their
# Makefile's TEST_PROGS), each under the timeout of the directory's
# 'settings' file, and print KTAP.  A test exits 0 (pass), 4 (skip) or
# anything else (fail); its own KTAP lines are nested under '# '.
# KSFT_TIMEOUT_SCALE=N multiplies every timeout (the debug kernel is slower).
cd "$(dirname "$0")" || exit 1
KSFT_SKIP=4

tests=()
for target in "$@"; do
	while IFS= read -r t; do
		name=${t#*:}
		if [ -n "${TESTS:-}" ] && ! grep -qw -- "$name" <<<"$TESTS"; then
			continue
		fi
		tests+=("$t")
	done < <(make -s --no-print-directory -C "$target" emit_tests)
done

echo "TAP version 13"
echo "1..${#tests[@]}"
pass=0 fail=0 skip=0 n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	dir=${t%%:*} prog=${t#*:}
	timeout=45
	[ -f "$dir/settings" ] && . <(grep '^timeout=' "$dir/settings")
	timeout=$((timeout * ${KSFT_TIMEOUT_SCALE:-1}))
	echo "# selftests: $dir: $prog"
	(cd "$dir" && timeout --foreground -k 10 "$timeout" "./$prog" 2>&1) | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then
		echo "ok $n selftests: $dir: $prog"
		pass=$((pass + 1))
	elif [ "$rc" -eq $KSFT_SKIP ]; then
		echo "ok $n selftests: $dir: $prog # SKIP"
		skip=$((skip + 1))
	elif [ "$rc" -eq 124 ]; then
		echo "not ok $n selftests: $dir: $prog # TIMEOUT ${timeout} seconds"
		fail=$((fail + 1))
	else
		echo "not ok $n selftests: $dir: $prog # exit=$rc"
		fail=$((fail + 1))
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail -eq 0 ]
