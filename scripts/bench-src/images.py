# SPDX-License-Identifier: GPL-2.0
"""The BPF64 filters of the benchmark (scripts/bench): the RFC's filter_ex1
work without its print, keeping only events on "eth5" (none on loopback):

    dev = bpf_load_pointer(&skb->dev)
    if (bpf_memcmp(dev->name, "eth5", 4) == 0) return 1;   /* record */
    return 0;                                             /* drop   */

    images.py SKB_DEV_OFF OUTDIR

writes OUTDIR/bpf64_tp.bpf (skb is the tracepoint's first argument, in si),
OUTDIR/bpf64_kp.bpf (skb is kfree_skb_reason()'s first argument, in di),
OUTDIR/bpf64_kr.bpf (skb is __netdev_alloc_skb()'s return value, in ax) and,
for the breakdown of the cost, bpf64_tp_ret0.bpf (return 0) and
bpf64_tp_load.bpf (one bpf_load_pointer(), return 0), and the positive
controls bpf64_tp_lo.bpf, bpf64_kp_lo.bpf and bpf64_kr_lo.bpf, matching "lo":
every event.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "selftests", "lib"))
from bpf64 import Prog, R0, R1, R2, R3, R10  # noqa: E402

ETH5 = int.from_bytes(b"eth5", "little")
LO = int.from_bytes(b"lo\0\0", "little")


def rfc_filter(skb_reg, skb_dev_off, name=ETH5):
    p = Prog()
    p.st(4, R10, -8, name)              # char devname[4] = "eth5"
    p.ctx(R1, skb_reg)                  # skb
    p.add(R1, skb_dev_off)              # &skb->dev
    p.call("bpf_load_pointer")
    p.mov(R1, R0)                       # dev->name, at offset 0
    p.mov(R2, R10)
    p.add(R2, -8)
    p.mov(R3, 4)
    p.call("bpf_memcmp")
    p.mov(R1, R0)
    p.mov(R0, 0)                        # drop, unless the names match
    p.jmp("jne", R1, 0, "out")
    p.mov(R0, 1)
    p.label("out")
    p.ret_r0()                          # the one RET is the last insn
    return p.image()


def ret0():
    """The cost of running a filter at all."""
    return Prog().ret(0).image()


def load_only(skb_reg, skb_dev_off):
    """... plus one bpf_load_pointer()."""
    p = Prog()
    p.ctx(R1, skb_reg)
    p.add(R1, skb_dev_off)
    p.call("bpf_load_pointer")
    p.mov(R0, 0)
    p.ret_r0()
    return p.image()


def main():
    off, outdir = int(sys.argv[1]), sys.argv[2]
    images = {"bpf64_tp.bpf": rfc_filter("si", off),
              "bpf64_kp.bpf": rfc_filter("di", off),
              "bpf64_kr.bpf": rfc_filter("ax", off),
              # the breakdown of the tracepoint filter's cost (--breakdown)
              "bpf64_tp_ret0.bpf": ret0(),
              "bpf64_tp_load.bpf": load_only("si", off),
              # the positive controls: the same work, matching "lo"
              "bpf64_tp_lo.bpf": rfc_filter("si", off, LO),
              "bpf64_kp_lo.bpf": rfc_filter("di", off, LO),
              "bpf64_kr_lo.bpf": rfc_filter("ax", off, LO)}
    for name, image in images.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(image)


if __name__ == "__main__":
    main()
