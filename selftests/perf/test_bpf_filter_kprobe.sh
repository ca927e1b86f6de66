#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter --kprobe/--kretprobe on do_sys_openat2 and
# --event raw_syscalls:sys_enter: the argument offsets found in DWARF read
# in the filter the same values the kernel fetches for the event; tables
# of a counting filter; the kprobe is gone afterwards
# requires: perf bpf-filter, BPF64 event filters, kprobe events, python3
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 25
mk() { python3 "$HERE/mkfilter.py" "$@"; }

# --- what a filter on do_sys_openat2 can read -------------------------------
bf --kprobe do_sys_openat2 --json --vmlinux "$VMLINUX" > "$WORK/open.json" 2> "$WORK/err"
ktap_expect "--kprobe do_sys_openat2 lists its arguments" \
	"dfd filename how" "$(json '" ".join(a["name"] for a in j["probe"]["args"])' "$WORK/open.json")"
# where perf looks first: a -dbg package's, then the build's
default=
for f in "/usr/lib/debug/boot/vmlinux-$(uname -r)" "/lib/modules/$(uname -r)/build/vmlinux"; do
	[ -f "$f" ] && default=$f && break
done
if [ -n "$default" ] && [ "$VMLINUX" = "$default" ]; then
	bf --kprobe do_sys_openat2 --json > "$WORK/default.json" 2> "$WORK/err"
	ktap_check "without --vmlinux: the running kernel's, $default" \
		grep -q "\"vmlinux\":\"$default\"" "$WORK/default.json"
else
	ktap_skip "without --vmlinux: $default is not the running kernel's vmlinux here"
fi
off() { json "{a['name']: a['ctx_offset'] for a in j['probe']['args']}['$1']" "$WORK/open.json"; }
DFD=$(off dfd) FILENAME=$(off filename) HOW=$(off how)
ktap_expect "dfd, filename, how in di, si, dx" "112 104 96" "$DFD $FILENAME $HOW"

# A filter printing the three arguments from those offsets; the kprobe
# event records them as perf probe fetches them (NAME=VAR:TYPE).
mk "$WORK/args.bpf" print 'A %d %llx %llx\n' "$DFD" "$FILENAME" "$HOW"
before=$(state)
bf --vmlinux "$VMLINUX" --kprobe 'do_sys_openat2 dfd filename=filename:x64 how=how:x64' "$WORK/args.bpf" -- cat /etc/hostname \
	> "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "--kprobe with arguments and a filter, running cat: exit 0" $? "$WORK/err"
ktap_check "it created the kprobe in its group, bpf_filter_<pid>" \
	grep -q "created the kprobe event bpf_filter_[0-9]*:do_sys_openat2 on do_sys_openat2" "$WORK/err"
ktap_check "the filter's values are the event's, for every open" \
	python3 "$HERE/pairs.py" "$WORK/out" \
	' do_sys_openat2: \(.*\) dfd=(-?[0-9]+) filename=(0x[0-9a-f]+) how=(0x[0-9a-f]+)' \
	': A (-?[0-9]+) (?P<h1>[0-9a-f]+) (?P<h2>[0-9a-f]+)\s*$' 3
ktap_check "... AT_FDCWD (-100) among them" grep -q ": A -100 " "$WORK/out"
ktap_expect "the kprobe, the instance and the top-level event are as before" "$before" "$(state)"

# --- kretprobe: the return value in ax --------------------------------------
bf --kretprobe do_sys_openat2 --json --vmlinux "$VMLINUX" > "$WORK/ret.json"
RET=$(json 'j["probe"]["args"][0]["ctx_offset"]' "$WORK/ret.json")
ktap_expect "--kretprobe lists \$retval in ax (ctx+80)" "\$retval 80" \
	"$(json 'j["probe"]["args"][0]["name"]' "$WORK/ret.json") $RET"
mk "$WORK/ret.bpf" print 'R %lld\n' "$RET"
bf --vmlinux "$VMLINUX" --kprobe 'do_sys_openat2%return $retval' "$WORK/ret.bpf" -- cat /etc/hostname /nonexistent \
	> "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "--kprobe FUNC%return with a filter: exit 0" $? "$WORK/err"
ktap_check "the filter's return values are the event's" \
	python3 "$HERE/pairs.py" "$WORK/out" '__return: \(.*\) arg1=(0x[0-9a-f]+)' ': R (-?[0-9]+)\s*$' 3
ktap_check "... an fd and -ENOENT among them" bash -c "grep -qE ': R [0-9]+\\s*\$' '$WORK/out' && grep -qE ': R -2\\s*\$' '$WORK/out'"
bf --kretprobe do_sys_openat2 "$WORK/ret.bpf" -q -- true > /dev/null 2> "$WORK/err"
ktap_expect "--kretprobe FUNC IMAGE: exit 0, nothing left" "0 $before" "$? $(state)"

# --- a tracepoint's arguments: raw_syscalls:sys_enter(regs, id) -------------
bf --event raw_syscalls:sys_enter --json --vmlinux "$VMLINUX" > "$WORK/tp.json"
ID=$(json '{a["name"]: a["ctx_offset"] for a in j["probe"]["args"]}["id"]' "$WORK/tp.json")
ktap_expect "sys_enter: id is arg2, in dx (ctx+96)" 96 "$ID"
# getpid is system call 39 on x86-64: print and keep only those
mk "$WORK/nr.bpf" print 'NR %lld\n' "$ID" --if "$ID" 39
bf --event raw_syscalls:sys_enter "$WORK/nr.bpf" -- python3 -c 'import os; [os.getpid() for i in range(5)]' \
	> "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "--event raw_syscalls:sys_enter with a filter: exit 0" $? "$WORK/err"
ktap_check "the filter reads the id the event records" \
	python3 "$HERE/pairs.py" "$WORK/out" ' sys_enter: NR ([0-9]+) ' 'syscall_trace_enter[.a-z0-9]*: NR ([0-9]+)\s*$' 5
ktap_check "... and keeps only getpid" bash -c "! grep ' sys_enter: NR ' '$WORK/out' | grep -v ' NR 39 '"

# --- a counting filter: system calls per id ---------------------------------
mk "$WORK/count.bpf" count "$ID"
bf --event raw_syscalls:sys_enter "$WORK/count.bpf" -q --json --table 0:key=u64,value=u64 \
	--sort value --hist 0 -- python3 -c 'import os; [os.getpid() for i in range(200)]' \
	> "$WORK/count.json" 2> "$WORK/err"
ktap_expect_ok "a counting filter on every system call: exit 0" $? "$WORK/err"
ktap_check "getpid counted at least 200 times" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['tables'][0]
counts = {e['key']: e['value'] for e in t['entries']}
assert counts.get(39, 0) >= 200, counts" "$WORK/count.json"
ktap_check "--sort value: the largest count first" python3 -c "
import json, sys
v = [e['value'] for e in json.load(open(sys.argv[1]))['tables'][0]['entries']]
assert v == sorted(v, reverse=True), v" "$WORK/count.json"
ktap_check "--hist 0: every count lands in the bucket of its system call" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['tables'][0]
assert sum(b['count'] for b in t['hist']['buckets']) == sum(e['value'] for e in t['entries'])
b39 = [b for b in t['hist']['buckets'] if b['label'] == '[32, 64)'][0]
assert b39['count'] >= 200, b39" "$WORK/count.json"

# --- kernel addresses as symbols (--table ID:key=ptr) -----------------------
bf --arg ip --json > "$WORK/ip-off.json"
IP=$(json 'j["registers"][0]["ctx_offset"]' "$WORK/ip-off.json")
ktap_expect "--arg ip: the instruction pointer at ctx+128" 128 "$IP"
mk "$WORK/ip.bpf" count "$IP"
bf --kprobe do_sys_openat2 "$WORK/ip.bpf" -q --json --table 0:key=ptr,value=u64 \
	-- sh -c 'cat /etc/hostname > /dev/null' > "$WORK/ip.json" 2> "$WORK/err"
ktap_check "a table keyed by the probe's ip shows do_sys_openat2+OFF (kallsyms)" python3 -c "
import json, sys
e = json.load(open(sys.argv[1]))['tables'][0]['entries']
assert len(e) == 1 and e[0]['key'].startswith('do_sys_openat2+0x') and e[0]['value'] >= 1, e" "$WORK/ip.json"

# --- the DWARF header, used from C in the guest -----------------------------
bf --kprobe do_sys_openat2 --vmlinux "$VMLINUX" --gen-header "$WORK/open.h" > /dev/null
ktap_check "--gen-header: ARG_dfd, ARG_filename, ARG_how as listed" bash -c "
	grep -qP '^#define ARG_dfd\t$DFD\t' '$WORK/open.h' &&
	grep -qP '^#define ARG_filename\t$FILENAME\t' '$WORK/open.h' &&
	grep -qP '^#define ARG_how\t$HOW\t' '$WORK/open.h'"
ktap_expect "no kprobe, no instance left, the top-level event untouched" "$before" "$(state)"
ktap_finished
