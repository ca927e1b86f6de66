#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for 'make demo'.
set -e
T=/sys/kernel/tracing
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "guest: $(uname -r), $(nproc) vCPUs"
step "tracing net:netif_receive_skb during 'ping -c 2 127.0.0.1'"
echo 1 > $T/events/net/netif_receive_skb/enable
ping -c 2 -q 127.0.0.1 > /dev/null
echo 0 > $T/events/net/netif_receive_skb/enable
grep -v '^#' $T/trace
