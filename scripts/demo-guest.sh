#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make demo': the RFC's filters, as images and in C,
# attached with perf bpf-filter to a tracepoint and to kprobes, what they
# print and count, and the kernel interface underneath.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=/sys/kernel/tracing
PERF=${PERF:-$TOP/build/perf/perf}
EX=$TOP/build/tools/bpf64/examples
EXC=$TOP/build/linux/tools/bpf64/examples/c
TFC=$TOP/build/bin/trace_filter_check
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0
skipped=0

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# show and run a command; a failure is reported and counted, the demo goes on
run() {
	local w line=
	for w in "$@"; do
		[[ "$w" =~ [[:space:]\;\>] ]] && w="'$w'"
		line+="${line:+ }$w"
	done
	printf '\033[36m# %s\033[0m\n' "$line"
	"$@"
	local rc=$?
	[ $rc -eq 0 ] || { echo "(exit status $rc)"; failed=$((failed + 1)); }
	return 0
}

# The vmlinux whose DWARF matches the running kernel (perf checks build ids).
want=$("$PERF" buildid-list -k 2> /dev/null)
VMLINUX=
for f in "/lib/modules/$(uname -r)/build/vmlinux" "/usr/lib/debug/boot/vmlinux-$(uname -r)" \
	 "$TOP"/build/kbuild*/vmlinux; do
	[ -f "$f" ] || continue
	[ "$("$PERF" buildid-list -i "$f" 2> /dev/null | cut -d' ' -f1)" = "$want" ] && VMLINUX=$f && break
done
[ -n "$VMLINUX" ] || { echo "demo: no vmlinux with the running kernel's build id"; exit 1; }
cd "$WORK" || exit 1
cp "$EX"/filter_ex1.bpf "$EX"/filter_ex2.bpf "$EXC"/*.c "$EXC"/comm.h .
pf() { "$PERF" bpf-filter --vmlinux "$VMLINUX" "$@"; }
ping3() { ping -c 3 -i 0.2 127.0.0.1 > /dev/null; }

step "guest: Linux $(uname -r), $(nproc) vCPUs, BPF64 JIT: $(cat /proc/sys/kernel/bpf64_jit_enable 2>/dev/null || echo n/a)"

step "1. The RFC's example images, byte for byte, pass the kernel's checker"
run "$PERF" bpf-filter --check filter_ex1.bpf
run "$PERF" bpf-filter --check filter_ex2.bpf
run "$PERF" bpf-filter --disasm filter_ex1.bpf

step "2. What a filter on net:netif_receive_skb can read, from this kernel's DWARF"
run pf --event net:netif_receive_skb --member sk_buff.dev --member net_device.name
echo "# a static inline of include/net/dst.h: its out-of-line copies, each a kprobe event"
run pf --kprobe dst_discard

step "3. The RFC's images, run: its offsets (skb in ctx+104, skb->dev at +32) rewritten for this kernel"
pf --event net:netif_receive_skb --member sk_buff.dev --json > offsets.json
arg=$(python3 -c 'import json; print(json.load(open("offsets.json"))["probe"]["args"][0]["ctx_offset"])')
dev=$(python3 -c 'import json; print(json.load(open("offsets.json"))["members"][0]["offset"])')
for f in filter_ex1 filter_ex2; do
	python3 "$TOP/selftests/perf/fix_image.py" $f.bpf ${f}_now.bpf "ctx=104:$arg" "add=32:$dev"
done
run pf --event net:netif_receive_skb filter_ex1_now.bpf -- ping -c 2 -i 0.2 127.0.0.1
run pf --event net:netif_receive_skb filter_ex2_now.bpf --table 0:key=ptr,value=u64 -- ping -c 3 -i 0.2 -q 127.0.0.1

step "4. filter_ex1 in C: print the packets received on 'lo' (the RFC's example 1)"
sed -n '/^void filter\|^int filter/,/^}/p' filter_ex1.c
run pf --event net:netif_receive_skb filter_ex1.c -- ping -c 3 -i 0.2 127.0.0.1

step "5. filter_ex2 in C: count packets per device in a hash table (the RFC's example 2)"
run pf --event net:netif_receive_skb filter_ex2.c --table 0:key=ptr,value=u64 -- ping -c 3 -i 0.2 127.0.0.1

step "6. A kprobe filter in C: keep only vfs_write() calls of 4321 bytes"
cat > writes.py <<'EOF'
import os
fd = os.open("/dev/null", os.O_WRONLY)
for n in (4321, 100, 4321, 7, 4321):
    os.write(fd, b"x" * n)
EOF
run pf --kprobe 'vfs_write count' kprobe_arg_match.c -- python3 writes.py

step "7. vfs_write() calls per task, in a table, with a log2 histogram of the counts"
run pf --kprobe vfs_write task_calls.c --table 0:key=hex,value=u64 --sort value --hist 0:value -q \
	-- sh -c 'for i in 1 2 3; do echo x > /dev/null; done; python3 writes.py'

step "8. Without a vmlinux with DWARF (a distribution kernel): the types from BTF"
# /lib/modules/$(uname -r) and /usr/lib/debug (a -dbg package's vmlinux)
# hidden in a mount namespace: perf finds no vmlinux
nodwarf() {
	unshare -m bash -c 'mount -t tmpfs none "/lib/modules/$(uname -r)" &&
		mount -t tmpfs none /usr/lib/debug && exec "$@"' nodwarf "$@"
}
# Not "perf -h | grep -q": perf -h exits 129 (and grep's early exit kills
# it with SIGPIPE), which pipefail makes the pipe's status.
help=$("$PERF" bpf-filter -h 2>&1)
if [ -r /sys/kernel/btf/vmlinux ] && grep -q -- --btf <<<"$help"; then
	echo "(/lib/modules/$(uname -r) and /usr/lib/debug hidden: no vmlinux with DWARF)"
	run nodwarf "$PERF" bpf-filter --event net:netif_receive_skb --member sk_buff.dev
	run nodwarf "$PERF" bpf-filter --kprobe 'vfs_write count'
	run nodwarf "$PERF" bpf-filter --event net:netif_receive_skb filter_ex2.c \
		--table 0:key=ptr,value=u64 -- ping -c 3 -i 0.2 -q 127.0.0.1
else
	echo "SKIPPED: no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF), or perf without libbpf"
	skipped=$((skipped + 1))
fi

step "9. The kernel interface underneath: the filter file"
ev=$T/events/net/netif_receive_skb
run pf --event net:netif_receive_skb --check filter_ex2.c -o filter_ex2_6.1.bpf
run sh -c "cat filter_ex2_6.1.bpf > $ev/filter"
echo "# cat $ev/filter"; cat "$ev/filter"
echo 1 > "$ev/enable"; ping3; echo 0 > "$ev/enable"
echo "# cat $ev/filter_tables"; cat "$ev/filter_tables"
run cmp filter_ex2_6.1.bpf "$ev/filter_image"
echo "filter_image reads back the attached image byte for byte"

step "10. A bad image is refused with an errno and a message; the filter in place stays"
python3 - <<'EOF'
import struct
insns = struct.pack('<BBhi', 0xdb, 0x0a, 8, 0) + struct.pack('<BBhi', 0x06, 0, 0, 1)
open('bad.bpf', 'wb').write(b'bpf\0' + struct.pack('<iii', len(insns), 0, 0) + insns)
EOF
"$TFC" -d bad.bpf 2>&1 | sed -n '1,3p'
printf '\033[36m# cat bad.bpf > %s/filter\033[0m\n' "$ev"
if cat bad.bpf > "$ev/filter"; then
	echo "the kernel took a bad image"; failed=$((failed + 1))
fi
echo "# cat $ev/filter"; cat "$ev/filter"
echo "# tail -n 3 $T/error_log"; tail -n 3 "$T/error_log" | sed "s/^/  /"
echo 0 > "$ev/filter"

step "11. The same filters on the interpreter and on the JIT"
for jit in 0 1; do
	echo "$jit" > /proc/sys/kernel/bpf64_jit_enable
	cat filter_ex2.bpf > "$ev/filter"
	printf 'bpf64_jit_enable=%s: %s\n' "$jit" "$(head -n 1 "$ev/filter")"
	echo 0 > "$ev/filter"
done

step "12. bpftrace's jobs: files opened by process and path, on the system call event"
run pf --event syscalls:sys_enter_openat
run pf --event syscalls:sys_enter_openat opens.c --clang-opt '-DCOMM="cat"' -- cat /etc/hostname
echo "# read latency per process name: a kprobe and a kretprobe filter in one file"
run pf read_latency.c -- dd if=/dev/zero of=/dev/null count=200 status=none

echo
if [ $failed -eq 0 ] && [ $skipped -eq 0 ]; then
	echo "demo: every step worked"
else
	echo "demo: $failed command(s) failed, $skipped step(s) skipped"
fi
[ $failed -eq 0 ] && [ $skipped -eq 0 ]
