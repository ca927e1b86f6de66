#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the series builds warning-free (W=1) with Debian's amd64
# config (retpolines, return thunks, SLS; IBT turned on)
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 1
out=$("$TOP/scripts/check-distro-config" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
ktap_expect "no W=1 warning in the series' lines with the distro config" 0 "$rc"
ktap_finished
