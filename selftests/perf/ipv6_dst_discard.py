#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# ipv6_dst_discard.py [NONE [BLACKHOLE]]: IPv6 packets that end in one of
# the out-of-line copies of dst_discard(), a static inline of
# include/net/dst.h:
#  - NONE (3) packets to ::1 without a next header (IPPROTO_NONE): their
#    handler, net/ipv6/exthdrs.c's nodata_protocol, is dst_discard;
#  - BLACKHOLE (2) packets received on lo for 2001:db8::1, which has a
#    blackhole route (ip -6 route add blackhole 2001:db8::1): its input
#    is net/ipv6/route.c's dst_discard.
# The payload is 8 bytes: skb->len is 8 in the first (the IPv6 header is
# pulled), 48 in the second.
import socket
import struct
import sys
import time

none, hole = (int(a) for a in (sys.argv[1:3] + ['3', '2'][len(sys.argv) - 1:]))
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_NONE)
for i in range(none):
    s.sendto(b'x' * 8, ('::1', 0))
p = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
p.bind(('lo', 0))
src = socket.inet_pton(socket.AF_INET6, '2001:db8::2')
dst = socket.inet_pton(socket.AF_INET6, '2001:db8::1')
payload = b'y' * 8
ip6 = struct.pack('!IHBB', 6 << 28, len(payload), socket.IPPROTO_NONE, 64) + src + dst
for i in range(hole):
    p.send(b'\0' * 12 + struct.pack('!H', 0x86dd) + ip6 + payload)
time.sleep(0.2)
