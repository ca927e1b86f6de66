#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the VM runner reports the command's status, and fails loudly
# on a guest panic, a hung guest and a killed QEMU
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 9
vmrun="$TOP/scripts/vm-run"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$vmrun" --timeout 120 -- 'echo guest says $((6 * 7)); exit 3' > "$out" 2>&1
rc=$?
ktap_expect "the command's exit status comes back" 3 "$rc"
ktap_check "the command's output is streamed" grep -q "guest says 42" "$out"

"$vmrun" --timeout 120 -- 'seq -f "line %g of a long output that fills the console buffer" 3000' > "$out" 2>&1
ktap_check "the last line of a long output is not lost at power-off" \
	grep -q "^line 3000 of a long output" "$out"

"$vmrun" --timeout 120 -- 'echo c > /proc/sysrq-trigger; sleep 30' > "$out" 2>&1
rc=$?
ktap_expect "a guest panic fails the run" 125 "$rc"
ktap_check "... with the console tail" grep -q "kernel splat in the guest: .*Kernel panic\|sysrq" "$out"

"$vmrun" --timeout 20 -- 'sleep 600' > "$out" 2>&1
rc=$?
ktap_expect "a hung guest fails the run" 124 "$rc"
ktap_check "... with a timeout message" grep -q "guest timed out after 20s" "$out"

# Kill QEMU once the guest runs the command.
pidfile=$(mktemp -u)
VM_PIDFILE=$pidfile "$vmrun" --timeout 120 -- 'echo started; sleep 600' > "$out" 2>&1 &
runner=$!
for i in $(seq 600); do
	grep -q started "$out" && break
	sleep 0.1
done
kill -KILL "$(cat "$pidfile")"
wait $runner
rc=$?
ktap_expect "a killed QEMU fails the run" 125 "$rc"
ktap_check "... saying the guest died" grep -q "guest died before reporting a status" "$out"
ktap_finished
