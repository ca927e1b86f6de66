#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter's errors say what is wrong and change
# nothing: not root, tracefs not mounted, unknown event, an event without
# filters, a rejected image (errno, checker message, error_log), an
# unreadable image, kprobes the kernel refuses, a command that cannot run
# requires: perf bpf-filter, BPF64 event filters, kprobe events
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 34
make_seed_images
before=$(state)
# err CMD...: run perf bpf-filter, keep stderr in $WORK/err, return its status
err() { bf "$@" > "$WORK/out" 2> "$WORK/err"; }
has() { grep -q -- "$1" "$WORK/err"; }

# --- not root ---------------------------------------------------------------
if command -v setpriv > /dev/null; then
	chmod 755 "$WORK"
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$PERF" bpf-filter "$@"; }
	nobody --event net:netif_receive_skb "$WORK/filter_ex1.bpf" > /dev/null 2> "$WORK/err"
	ktap_expect "not root: exit 1" 1 $?
	ktap_check "... needs root, says what does not" bash -c "
		grep -q 'needs root (CAP_SYS_ADMIN)' '$WORK/err' &&
		grep -q -- '--check, --disasm and the DWARF listings do not need it' '$WORK/err'"
	ktap_check "--check works without root" nobody --check "$WORK/filter_ex1.bpf"
	ktap_check "--disasm works without root" nobody --disasm "$WORK/filter_ex2.bpf"
else
	for t in "not root: exit 1" "... needs root" "--check without root" "--disasm without root"; do
		ktap_skip "$t (no setpriv)"
	done
fi

# --- tracefs not mounted ------------------------------------------------------
if command -v unshare > /dev/null; then
	unshare -m bash -c "umount -l $TRACEFS; umount -l /sys/kernel/debug; \
		PERF_TRACEFS_ENVIRONMENT=/nonexistent PERF_DEBUGFS_ENVIRONMENT=/nonexistent \
		'$PERF' bpf-filter --event net:netif_receive_skb '$WORK/filter_ex1.bpf'" \
		> /dev/null 2> "$WORK/err"
	ktap_expect "tracefs not mounted: exit 1" 1 $?
	ktap_check "... with the mount command" bash -c "
		grep -q 'tracefs is not mounted' '$WORK/err' &&
		grep -q 'mount -t tracefs nodev /sys/kernel/tracing' '$WORK/err'"
else
	ktap_skip "tracefs not mounted (no unshare)"
	ktap_skip "... with the mount command (no unshare)"
fi

# --- events -------------------------------------------------------------------
err --event net:no_such_event "$WORK/filter_ex1.bpf"
ktap_expect "an unknown event: exit 1" 1 $?
ktap_check "... says so" has "unknown event net:no_such_event"
err --event ftrace:print "$WORK/filter_ex1.bpf"
ktap_expect "an event that takes no filters (ftrace:print): exit 1" 1 $?
ktap_check "... says which do" has "ftrace:print does not take BPF64 filters: only tracepoint, kprobe and kretprobe events do"
err --event netif_receive_skb "$WORK/filter_ex1.bpf"
ktap_check "SYS:EVENT is required" has "netif_receive_skb: expected SYS:EVENT"

# --- a rejected image ----------------------------------------------------------
python3 - "$WORK/filter_ex1.bpf" "$WORK/bad.bpf" <<'PY'
import sys
img = bytearray(open(sys.argv[1], 'rb').read())
img[16 + 8 + 2] = 105          # insn 1 reads the context at +105
open(sys.argv[2], 'wb').write(img)
PY
err --event net:netif_receive_skb "$WORK/bad.bpf"
ktap_expect "a rejected image: exit 1" 1 $?
ktap_check "... with the errno of the write" has "the kernel rejected .*bad.bpf for net:netif_receive_skb: Permission denied (errno 13)"
ktap_check "... the checker's message (# rejected: in the filter file)" \
	has "checker: insn 1: (d9) r6 = \*(u64 \*)(r1 +105): invalid ctx access off=105 size=8"
ktap_check "... and the instance's error_log" bash -c "
	grep -A2 '^error_log:' '$WORK/err' | grep -q 'bpf64 filter net:netif_receive_skb: error: BPF64 image rejected'"
ktap_expect "... and nothing changed" "$before" "$(state)"

# --- images that cannot be used -----------------------------------------------
err --event net:netif_receive_skb "$WORK/nonexistent.bpf"
ktap_check "a missing image" has "cannot use image .*nonexistent.bpf: No such file or directory"
err --event net:netif_receive_skb /etc/hostname
ktap_check "a file that is not an image" has 'not a BPF64 image (no "bpf" magic)'
: > "$WORK/empty.bpf"
err --event net:netif_receive_skb "$WORK/empty.bpf"
ktap_check "an empty file" has "empty file, not a BPF64 image"
{ cat "$WORK/filter_ex1.bpf"; head -c 40000 /dev/zero; } > "$WORK/big.bpf"
err --event net:netif_receive_skb "$WORK/big.bpf"
ktap_check "a file larger than any image" has "larger than a BPF64 image can be (35088 bytes)"
err --event net:netif_receive_skb "$WORK"
ktap_check "a directory" has "cannot use image $WORK: Is a directory"
ktap_expect "... nothing changed" "$before" "$(state)"

# --- kprobes the kernel refuses ---------------------------------------------------
err --kprobe notify_die "$WORK/filter_ex1.bpf"
ktap_expect "a blacklisted function: exit 1" 1 $?
ktap_check "... kprobe refused: on the kprobe blacklist" has "kprobe refused: notify_die is on the kernel's kprobe blacklist"
err --kprobe do_sys_openat2+1 "$WORK/filter_ex1.bpf"
ktap_expect "inside an instruction: exit 1" 1 $?
ktap_check "... kprobe refused, with the kernel's error_log" bash -c "
	grep -q 'kprobe refused: the kernel would not create the kprobe on do_sys_openat2+1' '$WORK/err' &&
	grep -q 'trace_kprobe: error: Probe point is not an instruction boundary' '$WORK/err'"
err --vmlinux "$VMLINUX" --kprobe ip_local_deliver_finish "$WORK/filter_ex1.bpf"
ktap_check "a function inlined everywhere" has "ip_local_deliver_finish is inlined everywhere"
err --kprobe no_such_function_at_all "$WORK/filter_ex1.bpf"
ktap_check "a function that does not exist" has "cannot find no_such_function_at_all in the kernel"
err --kprobe no_such_function_at_all --vmlinux "$VMLINUX"
ktap_check "... and its listing: no DWARF for it" has "no DWARF for no_such_function_at_all in $VMLINUX; use --vmlinux"
ktap_expect "... no kprobe, no instance left" "$before" "$(state)"

# --- the command ------------------------------------------------------------------
err --event net:netif_receive_skb "$WORK/filter_ex1.bpf" -- /no/such/command
ktap_expect "a command that cannot run: exit 1" 1 $?
ktap_check "... says why" has "workload failed: No such file or directory"
err --event net:netif_receive_skb --kprobe do_sys_openat2 "$WORK/filter_ex1.bpf"
ktap_expect "--event and --kprobe together: usage (exit 129)" 129 $?
ktap_expect "in the end, nothing changed" "$before" "$(state)"
ktap_finished
