#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: a filter's verdict decides whether the event is recorded:
# 0 drops it, anything else records it, RET|K and RET|X alike
from common import *

k = need_root_and_bpf64(6)
ev = event_dir(NETIF_RX)


def recorded(prog, *ping_args):
    """Events recorded during one ping with prog attached."""
    assert write(ev + "/filter", prog.image()) == 0
    clear_trace()
    write(ev + "/enable", "1")
    for size in ping_args or (56,):
        subprocess.run(["ping", "-c1", "-W2", "-s", str(size), "127.0.0.1"],
                       stdout=subprocess.DEVNULL)
    write(ev + "/enable", "0")
    return [l for l in trace_lines() if "netif_receive_skb: dev=lo" in l]


k.expect("ret 0 drops every event", 0, len(recorded(Prog().ret(0))))
k.expect("ret 1 records every event (request and reply)", 2, len(recorded(Prog().ret(1))))
k.expect("ret -1 records them too (any non-zero verdict)", 2, len(recorded(Prog().ret(-1))))
k.expect("RET|X with R0 = 1 records", 2, len(recorded(Prog().mov(R0, 1).ret_r0())))
k.expect("RET|X with R0 = 0 drops", 0, len(recorded(Prog().mov(R0, 0).ret_r0())))

# Keep only packets longer than 100 bytes: skb->len through bpf_load_pointer.
q = Prog()
q.ctx(R1, "si")
q.add(R1, member_offset("sk_buff", "len"))
q.call("bpf_load_pointer")
q.and_(R0, 0xffff)
q.mov(R6, R0)
q.mov(R0, 0)
q.jmp("jge", R6, 101, "keep")
q.ja("out")
q.label("keep")
q.mov(R0, 1)
q.label("out")
q.ret_r0()
lines = recorded(q, 10, 200)
k.check(len(lines) == 2 and all("len=228" in l for l in lines),
        "a filter reading skb->len keeps only the 200-byte pings", lines)
write(ev + "/filter", "0")
k.finish()
