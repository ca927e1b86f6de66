# SPDX-License-Identifier: GPL-2.0
#
# Tracing helpers for the selftests, after ftracetest's test.d/functions:
# every test starts from and leaves a reset tracing state.

TRACEFS=${TRACEFS:-/sys/kernel/tracing}

# Disable all events, clear filters, remove the kprobe events and the
# instances the tests created, empty the buffer.
reset_tracing() {
	local f line
	echo 0 > "$TRACEFS/tracing_on"
	echo 0 > "$TRACEFS/events/enable"
	for f in "$TRACEFS"/events/*/*/filter; do
		read -r line < "$f"
		[ "$line" = none ] || echo 0 > "$f"
	done
	echo > "$TRACEFS/kprobe_events"
	for f in "$TRACEFS"/instances/ksft_*; do
		[ -d "$f" ] && rmdir "$f"
	done
	echo > "$TRACEFS/error_log" 2>/dev/null
	echo > "$TRACEFS/trace"
	echo 1 > "$TRACEFS/tracing_on"
}

# Wait until FILE contains a line matching REGEX (up to SECONDS, default 10).
wait_for_line() {
	local file=$1 regex=$2 secs=${3:-10} i
	for i in $(seq $((secs * 10))); do
		grep -qE "$regex" "$file" && return 0
		sleep 0.1
	done
	return 1
}
