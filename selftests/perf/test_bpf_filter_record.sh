#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf record -e SYS:EVENT --filter @FILE with BPF64 filters:
# an image and a C filter keep exactly the sched_process_exec samples of
# "true" among the workload's execs (perf script shows those, perf
# report counts them); a kprobe event of perf probe with a C filter
# reading an argument by name; a flood into a small ring buffer: samples
# written + perf's LOST records = what the filter kept (counted in a
# table shared with a filter file); a rejected image says why
# requires: perf bpf-filter, BPF64 event filters, clang, kprobe events
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 14
export PAGER=cat
EXC=$TOP/build/linux/tools/bpf64/examples/c
rec() { "$PERF" record -o "$WORK/perf.data" "$@"; }
script_lines() { "$PERF" script -i "$WORK/perf.data" 2> /dev/null; }
samples() {
	"$PERF" report -i "$WORK/perf.data" --stdio 2> /dev/null |
		sed -n "s/^# Samples: \([0-9]*\) *of event '$1'\$/\1/p"
}
# sh, then 4 x true and echo: 6 execs, 4 of them of "true"
EXECS="/bin/true; /bin/true; /bin/echo x > /dev/null; /bin/true; /bin/true"

cat > "$WORK/true_execs.c" <<'EOF'
#include "comm.h"

/* sched_process_exec of COMM only: the new program's name */
int filter(struct pt_regs *ctx)
{
	return current_comm_is_COMM();
}
EOF
bf --event sched:sched_process_exec --check "$WORK/true_execs.c" --clang-opt "-I$EXC" \
	--clang-opt '-DCOMM="true"' -o "$WORK/true_execs.bpf" > /dev/null 2> "$WORK/err"
ktap_expect_ok "the C filter built into an image for sched:sched_process_exec" $? "$WORK/err"

# --- an image: perf script and perf report see what it keeps --------------
rec -e sched:sched_process_exec --filter "@$WORK/true_execs.bpf" -- sh -c "$EXECS" 2> "$WORK/err"
ktap_expect_ok "perf record --filter @IMAGE of 6 execs: exit 0" $? "$WORK/err"
ktap_expect "perf script: the 4 execs of true, no other" "4 4" \
	"$(script_lines | grep -c 'sched:sched_process_exec:') $(script_lines | grep -c 'filename=/bin/true ')"
ktap_expect "perf report counts 4 samples" 4 "$(samples sched:sched_process_exec)"

# --- a filter in C, built for the event by perf bpf-filter -----------------
rec -e sched:sched_process_exec --filter "@$WORK/true_execs.c" \
	--clang-opt "-I$EXC -DCOMM=\"true\"" -- sh -c "$EXECS" 2> "$WORK/err"
ktap_expect_ok "perf record --filter @FILE.c, its --clang-opt passed on: exit 0" $? "$WORK/err"
ktap_expect "... the same 4 samples" 4 "$(samples sched:sched_process_exec)"

# --- a kprobe event of perf probe, an argument by name ---------------------
"$PERF" probe -q -a 'do_sys_openat2 dfd' 2> "$WORK/err"
ktap_expect_ok "perf probe do_sys_openat2" $? "$WORK/err"
cat > "$WORK/dfd.c" <<'EOF'
#include <bpf64_helpers.h>

/* opens relative to a directory's fd, not to the cwd (AT_FDCWD, -100) */
int filter(struct pt_regs *ctx)
{
	return (int)BPF64_ARG(ctx, dfd) != -100;
}
EOF
dir=$(mktemp -d)
touch "$dir/f"
cat > "$WORK/opener.py" <<'EOF'
import os, sys
d = os.open(sys.argv[1], os.O_RDONLY)
for i in range(3):
    os.close(os.open("f", os.O_RDONLY, dir_fd=d))
EOF
rec -e probe:do_sys_openat2 --filter "@$WORK/dfd.c" -a -- python3 "$WORK/opener.py" "$dir" \
	2> "$WORK/err"
ktap_expect_ok "perf record -a a kprobe event with a C filter reading dfd by name: exit 0" $? \
	"$WORK/err"
rm -rf "$dir"
dfds=$(script_lines | sed -n 's/.*probe:do_sys_openat2: (.*) dfd=\(-\{0,1\}[0-9a-fx]*\).*/\1/p' | sort -u)
ktap_expect "... its samples are the 3 opens at a directory's fd, none at AT_FDCWD" "3 yes" \
	"$(samples probe:do_sys_openat2) $([ -n "$dfds" ] && ! grep -qx -- '-100\|0xffffff9c' <<<"$dfds" && echo yes)"
"$PERF" probe -q -d probe:do_sys_openat2 2> /dev/null

# --- a flood into a small ring buffer: written + lost = kept ---------------
# The perf filter counts what it keeps in a shared table, which a filter
# file on an event that does not fire shows.
cat > "$WORK/flood.c" <<'EOF'
#include "comm.h"

BPF64_SHARED_TABLE(perf_kept, BPF64_TABLE_HASH, unsigned int, unsigned long, 4);

int filter(struct pt_regs *ctx)
{
	unsigned int k = 0;

	if (!current_comm_is_COMM())
		return 0;
	count(ctx, &perf_kept, &k);
	return 1;
}
EOF
bf --event raw_syscalls:sys_enter --check "$WORK/flood.c" --clang-opt "-I$EXC" \
	--clang-opt '-DCOMM="dd"' -o "$WORK/flood.bpf" > /dev/null 2> "$WORK/err"
ktap_expect_ok "a counting filter, its table shared" $? "$WORK/err"
idle=$TRACEFS/events/raw_syscalls/sys_exit	# never enabled: its filter never runs
cat "$WORK/flood.bpf" > "$idle/filter"
rec -e raw_syscalls:sys_enter --filter "@$WORK/flood.bpf" -m 1 -- \
	dd if=/dev/zero of=/dev/null bs=1 count=20000 2> "$WORK/err"
ktap_expect_ok "perf record -m 1 of dd's 40000 system calls: exit 0" $? "$WORK/err"
kept=$(sed -n 's/^key 00000000 value \([0-9a-f]*\)$/\1/p' "$idle/filter_tables")
kept=$(python3 -c "print(int.from_bytes(bytes.fromhex('${kept:-00}'), 'little'))")
written=$(script_lines | grep -c 'raw_syscalls:sys_enter:')
lost=$("$PERF" report -i "$WORK/perf.data" --stdio 2> /dev/null |
	sed -n 's/^# Total Lost Samples: \([0-9]*\)$/\1/p')
echo 0 > "$idle/filter"
ktap_print_msg "kept $kept, written ${written:-0}, lost (perf's LOST records) ${lost:-0}"
ktap_check "the filter kept dd's 40000 system calls and a few more" [ "${kept:-0}" -ge 40000 ]
ktap_expect "samples written + samples lost = samples kept" "$kept" \
	"$((${written:-0} + ${lost:-0}))"

# --- a rejected image --------------------------------------------------------
python3 -c "
import sys; sys.path.insert(0, '$TOP/selftests/lib')
from bpf64 import *
p = Prog(); p.ldx(8, R0, R1, 1000); p.ret_r0()
open(sys.argv[1], 'wb').write(p.image())" "$WORK/bad.bpf"
rec -e sched:sched_process_exec --filter "@$WORK/bad.bpf" -- true 2> "$WORK/err"
rc=$?
ktap_check "a rejected image fails the record, with the checker's reason (exit $rc)" bash -c "
	[ $rc != 0 ] && grep -q 'unsafe program (EACCES): insn 0: (d9) r0 = \*(u64 \*)(r1 +1000): invalid ctx access' '$WORK/err'"
ktap_finished
