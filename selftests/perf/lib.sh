# SPDX-License-Identifier: GPL-2.0
#
# Common setup of the perf bpf-filter selftests: the perf of the build, the
# RFC's images, a scratch directory, and checks of the tracing state that
# perf bpf-filter must leave as it found it.
. ../lib/ktap.sh
. ../lib/tracefs.sh
. ../lib/malloc_check.sh

TOP=$(cd ../.. && pwd)
PERF=${PERF:-$TOP/build/perf/perf}
EX=$TOP/build/tools/bpf64/examples
HERE=$(pwd)
export HOME=${HOME:-/root}

# The vmlinux with the running kernel's build id: the default one perf
# finds (/lib/modules/$(uname -r)/build/vmlinux) or one of the builds.
find_vmlinux() {
	local want f

	want=$("$PERF" buildid-list -k 2> /dev/null)
	for f in "/lib/modules/$(uname -r)/build/vmlinux" "/usr/lib/debug/boot/vmlinux-$(uname -r)" \
		 "$TOP"/build/kbuild*/vmlinux; do
		[ -f "$f" ] || continue
		if [ "$("$PERF" buildid-list -i "$f" 2> /dev/null | cut -d' ' -f1)" = "$want" ]; then
			echo "$f"
			return 0
		fi
	done
	return 1
}

# Skip (exit 4) unless we can run: root, perf with bpf-filter, the images,
# and a kernel whose events take BPF64 filters.
bf_require() {
	ktap_require_root
	local why=
	"$PERF" bpf-filter -h > /dev/null 2>&1
	[ $? -eq 129 ] || why="no perf bpf-filter in $PERF (make perf)"
	[ -f "$EX/filter_ex1.bpf" ] || why="no $EX/filter_ex1.bpf (make tools)"
	[ -e "$TRACEFS/events/net/netif_receive_skb/filter_image" ] ||
		why="the kernel has no BPF64 event filters"
	VMLINUX=$(find_vmlinux) || why="no vmlinux with the running kernel's build id"
	if [ -n "$why" ]; then
		ktap_plan 1
		ktap_skip "$why"
		ktap_finished
	fi
	WORK=$(mktemp -d)
	trap 'kill -INT $(jobs -p) 2> /dev/null; wait; rm -rf "$WORK"; bf_reset' EXIT
	bf_reset
}

# reset_tracing, and the instances a failed perf bpf-filter left
bf_reset() {
	local d

	for d in "$TRACEFS"/instances/perf-bpf-filter-*; do
		[ -d "$d" ] || continue
		echo 0 > "$d/events/enable"
		rmdir "$d"
	done
	reset_tracing
}

# The trace instance of the perf bpf-filter with pid $1
instance_of() { echo "$TRACEFS/instances/perf-bpf-filter-$1"; }

# Is event $2 (sys/name) enabled in the instance of pid $1?
enabled_in() { [ "$(cat "$(instance_of "$1")/events/$2/enable" 2>/dev/null)" = 1 ]; }

bf() { "$PERF" bpf-filter "$@"; }

# ktap_expect_ok DESCRIPTION STATUS ERRFILE: pass when STATUS is 0; when it
# is not, show the end of what the command wrote to ERRFILE.
ktap_expect_ok() {
	[ "$2" = 0 ] || tail -n 6 "$3" 2> /dev/null | sed 's/^/# /'
	ktap_expect "$1" 0 "$2"
}

# json EXPR FILE: the Python expression EXPR of the JSON value j in FILE
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$2"; }

# The tracing state perf bpf-filter must not leave changed: no instance
# or kprobe of its own, the top-level event's filter and enable state.
state() {
	local ev=${1:-net/netif_receive_skb}

	echo "instances: $(ls "$TRACEFS/instances" | grep perf-bpf-filter | tr '\n' ' ')"
	echo "kprobes: $(grep bpf_filter "$TRACEFS/kprobe_events" | tr '\n' ' ')"
	echo "filter: $(cat "$TRACEFS/events/$ev/filter" | tr '\n' ' ')"
	echo "enable: $(cat "$TRACEFS/events/$ev/enable")"
}

# The RFC's examples with this kernel's offsets from DWARF: skb is the
# tracepoint's first argument (ctx offset from the argument listing),
# skb->dev from --member sk_buff.dev (the examples have 2013's 32).
make_seed_images() {
	bf --event net:netif_receive_skb --member sk_buff.dev --json -k "$VMLINUX" \
		> "$WORK/offsets.json" || return 1
	ARG_SKB=$(json 'j["probe"]["args"][0]["ctx_offset"]' "$WORK/offsets.json")
	OFF_DEV=$(json 'j["members"][0]["offset"]' "$WORK/offsets.json")
	for f in filter_ex1 filter_ex2; do
		python3 "$HERE/fix_image.py" "$EX/$f.bpf" "$WORK/$f.bpf" \
			"ctx=104:$ARG_SKB" "add=32:$OFF_DEV" > /dev/null || return 1
	done
}

# wait_until SECONDS COMMAND...: until COMMAND succeeds
wait_until() {
	local secs=$1 i
	shift
	for i in $(seq $((secs * 10))); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
