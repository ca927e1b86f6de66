#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the guest has what the tests need: two vCPUs, tracefs, debugfs, loopback
. ../lib/ktap.sh
ktap_require_root
ktap_plan 5

ktap_expect "both vCPUs online" "0-1" "$(cat /sys/devices/system/cpu/online)"
ktap_check "tracefs mounted at /sys/kernel/tracing" \
	grep -q '^tracefs /sys/kernel/tracing ' /proc/mounts
ktap_check "tracefs has the event tree" test -d /sys/kernel/tracing/events/net
ktap_check "debugfs mounted" grep -q '^debugfs /sys/kernel/debug ' /proc/mounts
ktap_check "loopback is up" bash -c 'ip -o link show lo | grep -q "UP"'
ktap_finished
