#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_kselftest.sh ENTRY...: run selftests, each under the timeout of its
# directory's 'settings' file, and print KTAP.  An ENTRY is a TARGET
# directory (every test of its Makefile's TEST_PROGS, narrowed by $TESTS
# when set) or one test, TARGET:PROG, optionally one part of a test that
# splits its work, TARGET:PROG#K/N (the test gets KSFT_PART=K/N; e.g.
# hostile/test_hostile_images.py writes its K-th share of the images).
# A test exits 0 (pass), 4 (skip) or anything else (fail); its own KTAP
# lines are nested under '# '.  After each result a line
# '# time: SECONDS selftests: TARGET: PROG' says how long it took.
# KSFT_TIMEOUT_SCALE=N multiplies every timeout (the debug kernel is slower).
# When the file KSFT_STOP_FILE names appears, no further test starts but
# those of KSFT_STOP_KEEP (the first test always runs).
cd "$(dirname "$0")" || exit 1
# bpf64, jit, filters and hostile are the series' selftests, linked here
# from tools/testing/selftests/bpf64 of build/linux; they run what this
# repository builds.
top=$(cd .. && pwd)
export BPF64_TOOLS=${BPF64_TOOLS:-$top/build/tools/bpf64}
export PERF=${PERF:-$top/build/perf/perf}
export BPF64_OFFSETS_CACHE=${BPF64_OFFSETS_CACHE:-$top/build/member-offsets.json}
KSFT_SKIP=4

tests=()
for entry in "$@"; do
	case "$entry" in
	*:*) tests+=("$entry"); continue ;;
	esac
	while IFS= read -r t; do
		name=${t#*:}
		if [ -n "${TESTS:-}" ] && ! grep -qw -- "$name" <<<"$TESTS"; then
			continue
		fi
		tests+=("$t")
	done < <(make -s --no-print-directory -C "$entry" emit_tests COLLECTION="$entry")
done

now() { date +%s%N; }

echo "TAP version 13"
echo "1..${#tests[@]}"
pass=0 fail=0 skip=0 n=0
# Run after a stop too: the entries of KSFT_STOP_KEEP (a guest's own checks).
kept() { case " ${KSFT_STOP_KEEP:-} " in *" $1 "*) return 0 ;; esac; return 1; }
stopped=
for ((i = 0; i < ${#tests[@]}; i++)); do
	t=${tests[i]}
	# The host's scheduler hands the rest to a guest of its own; the
	# first test runs whatever happens, so that every guest gets on.
	if [ -z "$stopped" ] && [ "$i" -gt 0 ] && [ -n "${KSFT_STOP_FILE:-}" ] &&
	   [ -e "$KSFT_STOP_FILE" ]; then
		stopped=0
		for u in "${tests[@]:i}"; do kept "$u" || stopped=$((stopped + 1)); done
		echo "# stopped: $stopped tests left to another guest"
	fi
	[ -n "$stopped" ] && ! kept "$t" && continue
	n=$((n + 1))
	dir=${t%%:*} prog=${t#*:} part=
	case "$prog" in
	*'#'*) part=${prog#*#} prog=${prog%%#*} ;;
	esac
	name="selftests: $dir: $prog${part:+ [part $part]}"
	timeout=45
	[ -f "$dir/settings" ] && . <(grep '^timeout=' "$dir/settings")
	timeout=$((timeout * ${KSFT_TIMEOUT_SCALE:-1}))
	echo "# $name"
	start=$(now)
	(cd "$dir" && KSFT_PART=$part timeout --foreground -k 10 "$timeout" "./$prog" 2>&1) |
		sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	ms=$((($(now) - start) / 1000000))
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $name"
		pass=$((pass + 1))
	elif [ "$rc" -eq $KSFT_SKIP ]; then
		echo "ok $n $name # SKIP"
		skip=$((skip + 1))
	elif [ "$rc" -eq 124 ]; then
		echo "not ok $n $name # TIMEOUT ${timeout} seconds"
		fail=$((fail + 1))
	else
		echo "not ok $n $name # exit=$rc"
		fail=$((fail + 1))
	fi
	printf '# time: %d.%03d %s\n' $((ms / 1000)) $((ms % 1000)) "$name"
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail -eq 0 ]
