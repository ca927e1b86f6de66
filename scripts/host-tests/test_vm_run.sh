#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the VM runner reports the command's status, and fails loudly
# on a guest panic, a hung guest (saying where each vCPU is) and a killed
# QEMU; TCG runs single-threaded unless asked otherwise; two runs at once
# keep to their own state (status, output, failed console); VM_KERNEL picks
# the kernel
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 17
vmrun="$TOP/scripts/vm-run"
out=$(mktemp)
out2=$(mktemp)
trap 'rm -f "$out" "$out2"' EXIT

# One boot for what a plain run must do: status, output, two CPUs.
"$vmrun" --timeout 120 -- 'echo guest says $((6 * 7)); echo "cpus: $(grep -c ^processor /proc/cpuinfo)"
	seq -f "line %g of a long output that fills the console buffer" 3000; exit 3' > "$out" 2>&1
rc=$?
ktap_expect "the command's exit status comes back" 3 "$rc"
ktap_check "the command's output is streamed" grep -q "guest says 42" "$out"
ktap_check "the last line of a long output is not lost at power-off" \
	grep -q "^line 3000 of a long output" "$out"
ktap_check "single-threaded TCG still gives the guest two CPUs" grep -qx "cpus: 2" "$out"

"$vmrun" --timeout 20 -- 'sleep 600' > "$out" 2>&1
rc=$?
ktap_expect "a hung guest fails the run" 124 "$rc"
ktap_check "... with a timeout message" grep -q "guest timed out after 20s" "$out"
# An idle guest's vCPUs wait in the idle loop: both named, with symbols.
vcpus_named() {
	grep -Eq "CPU 1: .*RIP=" "$1" &&
		grep -Eq '^  \|   ffffffff[0-9a-f]+ (native_safe_halt|default_idle|amd_e400_idle)$' "$1"
}
ktap_check "... and where each vCPU was, symbolized" vcpus_named "$out"

# Multi-threaded TCG hangs or panics on this within a minute (see vm-run).
"$vmrun" --timeout 400 -- "$TOP/scripts/tcg-text-patching-repro" > "$out" 2>&1
ktap_check "the default TCG mode survives hot kernel text being patched under load" \
	grep -q "60 cycles, filters on: the guest survived" "$out"

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

# Two runs at once (run-tests boots one guest per core).
"$vmrun" --timeout 120 -- 'echo first guest; exit 5' > "$out" 2>&1 &
first=$!
"$vmrun" --timeout 120 -- 'echo second guest; exit 6' > "$out2" 2>&1
rc2=$?
wait $first
rc1=$?
ktap_expect "two runs at once: each gets its own command's status" "5 6" "$rc1 $rc2"
ktap_check "... and its own output" bash -c "grep -q 'first guest' '$out' && ! grep -q 'second guest' '$out' &&
	grep -q 'second guest' '$out2' && ! grep -q 'first guest' '$out2'"
# Two guests that panic at once, each after its own mark on the console.
"$vmrun" --timeout 120 -- 'echo mark-one; echo c > /proc/sysrq-trigger; sleep 30' > "$out" 2>&1 &
first=$!
"$vmrun" --timeout 120 -- 'echo mark-two; echo c > /proc/sysrq-trigger; sleep 30' > "$out2" 2>&1
rc2=$?
wait $first
rc1=$?
ktap_expect "a guest panic fails the run" "125 125" "$rc1 $rc2"
ktap_check "... with the console tail" bash -c "
	grep -q 'kernel splat in the guest: .*Kernel panic\|sysrq' '$out' &&
	grep -q 'kernel splat in the guest: .*Kernel panic\|sysrq' '$out2'"
own_console() { # OUTPUT MARK OTHER: the failed console named in OUTPUT has MARK, not OTHER
	local f
	f=$(sed -n 's/.*whole console in \([^;]*\);.*/\1/p' "$1")
	[ -f "$f" ] && grep -q "$2" "$f" && ! grep -q "$3" "$f" && rm -f "$f"
}
ktap_check "two failed runs at once keep their own whole console" bash -c "
	$(declare -f own_console); own_console '$out' mark-one mark-two && own_console '$out2' mark-two mark-one"
VM_KERNEL=/nonexistent/bzImage "$vmrun" -- true > "$out" 2>&1
rc=$?
ktap_expect "VM_KERNEL picks the kernel" 2 "$rc"
ktap_check "... and a missing one is named" grep -q "no kernel at /nonexistent/bzImage" "$out"
ktap_finished
