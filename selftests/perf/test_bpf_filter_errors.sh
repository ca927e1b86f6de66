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
ktap_plan 39
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
	ktap_check "... needs CAP_PERFMON or CAP_SYS_ADMIN, says what does not" bash -c "
		grep -q \"^attaching a filter needs the CAP_PERFMON or CAP_SYS_ADMIN capability: it writes the event's filter in tracefs.\\\$\" '$WORK/err' &&
		grep -q -- '--check, --disasm, --tables-file and the listings do not' '$WORK/err'"
	ktap_check "--check works without root" nobody --check "$WORK/filter_ex1.bpf"
	ktap_check "--disasm works without root" nobody --disasm "$WORK/filter_ex2.bpf"
	# CAP_PERFMON is enough, as for perf ftrace and the kernel (tracefs
	# files are root's: CAP_DAC_OVERRIDE to write them)
	perfmon() {
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon,+dac_override \
			--ambient-caps=+perfmon,+dac_override -- env HOME=/ "$PERF" bpf-filter "$@"
	}
	# packets on lo without privileges: UDP to the discard port
	udp3="python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); [s.sendto(b'x', ('127.0.0.1', 9)) for i in range(3)]\""
	perfmon --event net:netif_receive_skb "$WORK/filter_ex1.bpf" -- sh -c "$udp3" \
		> "$WORK/out" 2> "$WORK/err"
	ktap_expect_ok "not root but CAP_PERFMON (and CAP_DAC_OVERRIDE for tracefs): attaches, exit 0" $? "$WORK/err"
	# kallsyms shows addresses only with CAP_SYSLOG: lines name the
	# tracepoint, or give its address as perf gives unknown symbols
	ktap_check "... and the filter ran" \
		grep -qE "(__netif_receive_skb_core[.a-z0-9]*|0xffffffff[0-9a-f]+): skb " "$WORK/out"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override \
		--ambient-caps=+dac_override -- env HOME=/ "$PERF" bpf-filter \
		--event net:netif_receive_skb "$WORK/filter_ex1.bpf" > /dev/null 2> "$WORK/err"
	ktap_check "CAP_DAC_OVERRIDE alone is not enough" grep -q "needs the CAP_PERFMON or CAP_SYS_ADMIN capability" "$WORK/err"
else
	for t in "not root: exit 1" "... needs CAP_PERFMON" "--check without root" "--disasm without root" \
		"CAP_PERFMON: attaches" "... the filter ran" "CAP_DAC_OVERRIDE alone"; do
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
	ktap_check "... says so with perf's hints (tracing_path__strerror_open_tp())" bash -c "
		grep -q 'Unable to find debugfs/tracefs' '$WORK/err' &&
		grep -q 'Is the debugfs/tracefs filesystem mounted?' '$WORK/err'"
else
	ktap_skip "tracefs not mounted (no unshare)"
	ktap_skip "... with the mount command (no unshare)"
fi

# --- events -------------------------------------------------------------------
err --event net:no_such_event "$WORK/filter_ex1.bpf"
ktap_expect "an unknown event: exit 1" 1 $?
ktap_check "... says the event does not exist, once" bash -c "
	grep -q '^event net:no_such_event does not exist (perf list tracepoint lists them)\$' '$WORK/err' &&
	[ \$(wc -l < '$WORK/err') -eq 1 ]"
err --event ftrace:print "$WORK/filter_ex1.bpf"
ktap_expect "an event that takes no filters (ftrace:print): exit 1" 1 $?
ktap_check "... says which do" has "ftrace:print does not take BPF64 filters: only tracepoint, kprobe and uprobe events do"
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
ktap_check "... with the reason for the errno of the write" has "the kernel rejected .*bad.bpf for net:netif_receive_skb: unsafe program (EACCES)"
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
err -k "$VMLINUX" --kprobe ip_local_deliver_finish "$WORK/filter_ex1.bpf" --timeout 1000
ktap_expect "a function inlined everywhere: probed where it is inlined, as perf probe does (exit 0)" 0 $?
ktap_check "... and said so" \
	has "created the kprobe event bpf_filter_[0-9]*:ip_local_deliver_finish on ip_local_deliver_finish (inlined in ip_local_deliver at 0x[0-9a-f]* in net/ipv4/ip_input.c)"
err -k "$VMLINUX" --kretprobe ip_local_deliver_finish "$WORK/filter_ex1.bpf"
ktap_check "... but it has no kretprobe" grep -qE "ip_local_deliver_finish is inlined everywhere: it does not return|Return probe must be on the head of a real function" "$WORK/err"
err --kprobe no_such_function_at_all "$WORK/filter_ex1.bpf"
ktap_check "a function that does not exist: said once" bash -c "
	grep -q '^cannot find no_such_function_at_all in the kernel' '$WORK/err' &&
	[ \$(wc -l < '$WORK/err') -eq 1 ]"
err --kprobe no_such_function_at_all --vmlinux "$VMLINUX"
ktap_check "... and its listing: no such function" has "no_such_function_at_all: no such function in the DWARF of $VMLINUX"
ktap_expect "... no kprobe, no instance left" "$before" "$(state)"

# --- the command ------------------------------------------------------------------
err --event net:netif_receive_skb "$WORK/filter_ex1.bpf" -- /no/such/command
ktap_expect "a command that cannot run: exit 1" 1 $?
ktap_check "... says why" has "workload failed: No such file or directory"
err --event net:netif_receive_skb --kprobe do_sys_openat2 "$WORK/filter_ex1.bpf"
ktap_expect "--event and --kprobe together: usage (exit 129)" 129 $?
ktap_expect "in the end, nothing changed" "$before" "$(state)"
ktap_finished
