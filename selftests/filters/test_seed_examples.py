#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: the RFC's two example filters on net:netif_receive_skb: ex1
# prints only for lo, ex2 counts the packets of each device in table 0
import re
from common import *

k = need_root_and_bpf64(13)
ev = event_dir(NETIF_RX)

# The images as the RFC built them load unchanged (they read the wrong
# sk_buff field on this kernel, which bpf_load_pointer() survives).
k.expect("the RFC's filter_ex1.bpf loads unchanged", 0, write(ev + "/filter", example("filter_ex1")))
k.expect("the RFC's filter_ex2.bpf loads unchanged", 0, write(ev + "/filter", example("filter_ex2")))
write(ev + "/filter", "0")

# ex1, with skb->dev at this kernel's offset: prints skb and dev for lo.
k.expect("ex1 attaches", 0, write(ev + "/filter", corrected_example("filter_ex1")))
clear_trace()
write(ev + "/enable", "1")
k.expect("ping -c3 127.0.0.1 succeeds", 0, ping(3))
write(ev + "/enable", "0")
lines = trace_lines()
prints = [l for l in lines if re.search(r"__netif_receive_skb_core[.\w]*: skb \S+ dev \S+", l)]
k.expect("ex1 printed once per packet received on lo (3 requests, 3 replies)", 6, len(prints))
k.expect("ex1 dropped the events themselves (verdict 0)", 0,
         len([l for l in lines if "netif_receive_skb: dev=" in l]))
devs = {re.search(r"dev (\S+)", l).group(1) for l in prints}
k.expect("all packets came from one device", 1, len(devs))

# The same filter comparing the name with "et": nothing on lo matches.
write(ev + "/filter", corrected_example("filter_ex1", dev_name="et"))
clear_trace()
write(ev + "/enable", "1")
ping(3)
write(ev + "/enable", "0")
k.expect("ex1 comparing with 'et' prints nothing for lo", [], trace_lines())

# ex2: counts per device; an unfiltered instance counts the events too.
inst = "ksft_count"
os.mkdir(path("instances", inst))
k.expect("ex2 attaches", 0, write(ev + "/filter", corrected_example("filter_ex2")))
write(event_dir(NETIF_RX, inst) + "/enable", "1")
write(ev + "/enable", "1")
ping(3)
write(ev + "/enable", "0")
write(event_dir(NETIF_RX, inst) + "/enable", "0")
received = len([l for l in trace_lines(inst) if "netif_receive_skb: dev=lo" in l])
k.expect("6 packets received on lo", 6, received)
tables = read(ev + "/filter_tables").splitlines()
k.check(tables and re.match(r"table 0 type hash key_size 8 elem_size 8 max_entries 4096 entries 1$",
                            tables[0]), "filter_tables: one table, one device", tables)
m = re.match(r"key ([0-9a-f]{16}) value ([0-9a-f]{16})$", tables[1] if len(tables) > 1 else "")
# ex2 inserts a zero count for a device's first packet, then adds one per packet.
k.check(m and int.from_bytes(bytes.fromhex(m.group(2)), "little") == received - 1,
        "the count in table 0 is the packets received on lo, less the first", tables)
k.check(m and int.from_bytes(bytes.fromhex(m.group(1)), "little") >> 56 == 0xff,
        "the key is a kernel pointer (the net_device)", tables)
write(ev + "/filter", "0")
os.rmdir(path("instances", inst))
k.finish()
