#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: user space's copies of the BPF64 headers are the kernel's
#
# tools/bpf64/check-headers.sh on the applied tree, then on copies of it
# with one drift each: the tools copy of the UAPI header changed, and a
# BPF64_TP_ARG() of bpf64_helpers.h reading another register.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
tree=$TOP/build/linux
check=tools/bpf64/check-headers.sh

if [ ! -x "$tree/$check" ]; then
	ktap_plan 1
	ktap_skip "needs build/linux with the series applied (make tree)"
	exit 0
fi
ktap_plan 4

ktap_check "the applied tree's headers agree" "$tree/$check"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/include/uapi/linux" "$work/tools/include/uapi/linux" \
	"$work/tools/lib/bpf64" "$work/tools/bpf64"
copy() {
	cp "$tree/include/uapi/linux/bpf64.h" "$work/include/uapi/linux/"
	cp "$tree/tools/include/uapi/linux/bpf64.h" "$work/tools/include/uapi/linux/"
	cp "$tree/tools/lib/bpf64/bpf64_helpers.h" "$work/tools/lib/bpf64/"
	cp "$tree/$check" "$work/tools/bpf64/"
}
copy
ktap_check "a copy of them agrees" "$work/$check"
echo "/* drift */" >> "$work/tools/include/uapi/linux/bpf64.h"
ktap_check "a tools copy of the UAPI header that drifted is reported" \
	bash -c "! $work/$check >/dev/null 2>&1 &&
		 $work/$check 2>&1 | grep -q 'differs from include/uapi/linux/bpf64.h'"
copy
sed -i 's/^\(#define __bpf64_tp_arg_12(ctx)[[:space:]]*((ctx)->\)bx)/\1bp)/' \
	"$work/tools/lib/bpf64/bpf64_helpers.h"
ktap_check "a BPF64_TP_ARG() reading another register than the UAPI names is reported" \
	bash -c "$work/$check 2>&1 | grep -q 'does not read the registers of BPF64_TP_ARG_REGS'"
ktap_finished
