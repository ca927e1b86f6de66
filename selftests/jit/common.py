# SPDX-License-Identifier: GPL-2.0
"""Shared by the JIT selftests: the sysctl, the filter file's engine field,
programs of a given size."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))

from ktap import *      # noqa: E402,F401,F403
from bpf64 import *     # noqa: E402,F401,F403
import ktap             # noqa: E402

SYSCTL = "/proc/sys/kernel/bpf64_jit_enable"
NETIF_RX = "net:netif_receive_skb"


def need_jit(plan, *paths):
    """Skip everything without root, BPF64 filters, the JIT or @paths."""
    missing = [p for p in (event_dir(NETIF_RX) + "/filter_image", SYSCTL) + paths
               if not os.path.exists(p)]
    if os.geteuid() != 0 or missing:
        k = ktap.Ktap(1)
        k.skip("needs root and " + (", ".join(missing) or "nothing else"))
        k.finish()
    ktap.reset()
    return ktap.Ktap(plan)


def set_jit(mode):
    """Set kernel.bpf64_jit_enable; 0 or the errno."""
    return write(SYSCTL, "%d\n" % mode)


def get_jit():
    return int(read(SYSCTL))


def engine(ev_dir):
    """JIT code bytes of the event's program, 0 if interpreted, None if none."""
    line = read(ev_dir + "/filter").splitlines()[0]
    m = re.search(r" (?:jited (\d+)|interpreted)(?: missed \d+)?(?: probe)?(?: path .*)?$", line)
    if not line.startswith("bpf64 ") or not m:
        return None
    return int(m.group(1) or 0)


def alu_prog(insns, seed=0):
    """A straight-line program of @insns insns over the ctx's registers,
    different for each seed; it returns 0 (drop)."""
    p = Prog()
    p.ctx(R6, "si")
    p.ctx(R7, "dx")
    p.mov(R0, seed)
    ops = [lambda: p.add(R0, R6), lambda: p.xor(R0, 0x5a5a),
           lambda: p.mul(R0, 7), lambda: p.rsh(R0, 3), lambda: p.sub(R0, R7),
           lambda: p.lsh(R0, R7), lambda: p.mod(R0, 1000003)]
    i = 0
    while len(p.insns) < insns - 2:
        ops[(i + seed) % len(ops)]()
        i += 1
    p.mov(R0, 0)
    p.ret_r0()
    return p.image()


def dmesg():
    return subprocess.run(["dmesg"], capture_output=True, text=True).stdout
