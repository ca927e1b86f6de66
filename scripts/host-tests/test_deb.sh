#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the pieces of make deb and make test-distro that make test
# can afford: mkinitramfs puts busybox, the modules asked for and what
# they depend on (in modprobe's order) and an /init into the image, and
# refuses a module the kernel does not have; vm-run boots the test kernel
# through such an initramfs (its /init mounts the 9p root and starts
# vm-init: --initrd) with the modules of --modules; and, when make deb has
# run, its packages hold what they promise
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
KBUILD=$TOP/build/kbuild
DEB=$TOP/build/deb
if [ ! -f "$KBUILD/arch/x86/boot/bzImage" ] || [ ! -d "$KBUILD/modules/lib/modules" ]; then
	ktap_plan 1
	ktap_skip "needs the test kernel and its modules (make kernel)"
	ktap_finished
fi
ktap_plan 10
release=$(cat "$KBUILD/include/config/kernel.release")
work=$(mktemp -d "$TOP/build/test-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A copy of the modules directory: mkinitramfs runs depmod in it.
mkdir -p "$work/root/lib/modules"
cp -r "$KBUILD/modules/lib/modules/$release" "$work/root/lib/modules/"
rm -f "$work/root/lib/modules/$release/build"
"$TOP/scripts/mkinitramfs" "$work/root" "$release" "$work/initrd.img" dummy test_bpf64 \
	> "$work/mk.out" 2>&1
ktap_expect "mkinitramfs of dummy and test_bpf64: exit 0" "0" "$?"
list=$(zcat "$work/initrd.img" | cpio -t --quiet 2> /dev/null | sort)
ktap_expect "... busybox, /init and the two modules, numbered in load order" \
	"$(printf '%s\n' . bin bin/busybox dev init lib lib/modules lib/modules/01-dummy.ko \
		lib/modules/02-test_bpf64.ko newroot proc sys)" "$list"
"$TOP/scripts/mkinitramfs" "$work/root" "$release" "$work/bad.img" no_such_module \
	> "$work/bad.out" 2>&1
ktap_check "... refuses a module the kernel does not have, naming it" \
	bash -c "[ $? -ne 0 ] && grep -q 'no_such_module: not a module of $release' '$work/bad.out'"

# The test kernel has virtio and 9p built in: its initramfs needs no
# module, and shows that /init finds the root and init= on the command line.
"$TOP/scripts/mkinitramfs" "$work/root" "$release" "$work/boot.img" dummy > /dev/null 2>&1
out=$("$TOP/scripts/vm-run" --timeout 300 --initrd "$work/boot.img" --modules "$work/root" -- \
	'echo "pid1=$(cat /proc/1/comm) dummy=$(cat /sys/module/dummy/initstate 2>/dev/null)"; ls /lib/modules/$(uname -r)/modules.dep' 2>&1)
rc=$?
ktap_expect "vm-run --initrd: the guest boots through /init and runs the command" 0 $rc
ktap_check "... vm-init runs as PID 1 after switch_root, dummy.ko loaded by /init" \
	grep -q "^pid1=vm-init dummy=live$" <<<"$out"
ktap_check "... /lib/modules/RELEASE is --modules' (depmod ran there)" \
	grep -q "^/lib/modules/$release/modules.dep$" <<<"$out"
[ $rc -eq 0 ] || echo "$out" | tail -n 20 | sed 's/^/# /'

# What make deb built, when it ran.
image=$(ls "$DEB"/linux-image-*-bpf64_*.deb 2> /dev/null | head -n 1)
perf=$(ls "$DEB"/linux-perf-bpf64_*.deb 2> /dev/null | head -n 1)
if [ -z "$image" ] || [ -z "$perf" ]; then
	for t in "the kernel's modules" "perf's package: dependencies" "... its files"; do
		ktap_skip "$t: no packages in build/deb (make deb has not run here)"
	done
	ktap_skip "the -dbg package: no packages in build/deb"
	ktap_finished
fi
mods=$(sed -n 's/^DEB_MODULES := //p; /^DEB_MODULES :=/,/^$/{s/^\t//p}' "$TOP/Makefile" | tr -d '\\' | xargs)
contents=$(dpkg-deb -c "$image")
missing=
for m in $mods; do
	grep -qE "/(${m}|${m//_/-})\.ko$" <<<"$contents" || missing+=" $m"
done
ktap_expect "$(basename "$image") has the modules DEB_MODULES names ($(echo $mods | wc -w))" "" "$missing"
ctl=$(dpkg-deb -f "$perf" Depends Recommends Conflicts)
ktap_check "$(basename "$perf") depends on libdw, libelf, libtraceevent, recommends clang" \
	bash -c "grep -q libdw1 <<<'$ctl' && grep -q libelf1 <<<'$ctl' && grep -q libtraceevent1 <<<'$ctl' && grep -q '^Recommends: clang' <<<'$ctl'"
files=$(dpkg-deb -c "$perf" | awk '{print $6}')
want="./usr/bin/perf ./usr/bin/trace_filter_check ./usr/include/bpf64/bpf64_helpers.h
./usr/share/man/man1/perf-bpf-filter.1.gz ./usr/share/doc/linux-perf-bpf64/examples/filter_ex1.bpf
./usr/share/doc/linux-perf-bpf64/examples/c/read_latency.c"
absent=$(for f in $want; do grep -qx -- "$f" <<<"$files" || echo "$f"; done)
ktap_expect "... perf, its man page, trace_filter_check, bpf64_helpers.h, the examples" "" "$absent"
dbg=$(ls "$DEB"/linux-image-*-dbg_*.deb 2> /dev/null | head -n 1)
if [ -n "$dbg" ]; then
	ktap_check "$(basename "$dbg") has vmlinux where perf looks (/usr/lib/debug/boot)" \
		bash -c "dpkg-deb -c '$dbg' | grep -q './usr/lib/debug/boot/vmlinux-'"
else
	ktap_skip "no -dbg package in build/deb"
fi
ktap_finished
