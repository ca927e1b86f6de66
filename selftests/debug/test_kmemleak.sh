#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: kmemleak finds no new suspected leak after the tests that ran
# before this one in the guest (scripts/test-debug clears what it suspects
# after boot, which is not the tests')
. ../lib/ktap.sh
KM=/sys/kernel/debug/kmemleak
ktap_require_root
ktap_plan 1
if [ ! -e $KM ]; then
	ktap_skip "no $KM (the kernel has no CONFIG_DEBUG_KMEMLEAK)"
	ktap_finished
fi
# kmemleak reports only objects older than 5 s, and wants two scans.
sleep 6
echo scan > $KM
echo scan > $KM
leaks=$(grep -c '^unreferenced object' $KM)
[ "$leaks" = 0 ] || head -n 200 $KM | sed 's/^/# /'
ktap_expect "kmemleak: no new suspected leak after the tests" 0 "$leaks"
ktap_finished
