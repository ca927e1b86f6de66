#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: net:netif_receive_skb fires for a ping on the loopback device
. ../lib/ktap.sh
. ../lib/tracefs.sh
ktap_require_root
ktap_plan 3
reset_tracing
ev=$TRACEFS/events/net/netif_receive_skb

ktap_check "enable net:netif_receive_skb" bash -c "echo 1 > $ev/enable"
ping -c 1 -W 2 127.0.0.1 > /dev/null
ktap_check "ping 127.0.0.1 succeeds" ping -c 1 -W 2 127.0.0.1
echo 0 > "$ev/enable"
# One echo request and one echo reply per ping, received on lo.
ktap_expect "4 packets received on lo" 4 \
	"$(grep -c 'netif_receive_skb: dev=lo ' "$TRACEFS/trace")"
reset_tracing
ktap_finished
