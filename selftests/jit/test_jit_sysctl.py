#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: kernel.bpf64_jit_enable: 0 interprets, 1 JIT-compiles, 2 also
# dumps the code to the kernel log; the kernel's JIT computes what its
# interpreter computes on the corner cases of the instruction set
import hashlib
import re
from common import *

k = need_jit(14)
ev = event_dir(NETIF_RX)


def corner_cases():
    """Corner cases, each result stored in a table under its number: any
    engine must leave the same table.  R0, R3 and R4 (rax, rdx, rcx to the
    JIT) take part in divisions and shifts."""
    p = Prog()
    t = p.table(8, 8, 64)
    n = [0]

    def store(reg):
        p.st(8, R10, -8, n[0])
        p.stx(8, R10, -16, reg)
        p.mov(R1, R9)
        p.mov(R2, t)
        p.mov(R3, R10)
        p.add(R3, -8)
        p.mov(R4, R10)
        p.add(R4, -16)
        p.call("bpf_table_update")
        n[0] += 1

    p.mov(R9, R1)                                   # ctx, for the calls
    p.mov(R7, -1); p.rsh(R7, 1); store(R7)          # logical shift
    p.mov(R7, -2**31); p.arsh(R7, 4); store(R7)     # arithmetic shift
    p.mov(R7, 0x12345678); p.mul(R7, -3); store(R7)
    p.mov(R0, 1000); p.mov(R3, 0); p.div(R0, R3); store(R0)    # / 0 is 0
    p.mov(R3, 1000); p.mov(R0, 0); p.mod(R3, R0); store(R3)    # % 0 keeps
    p.mov(R0, -7); p.mov(R3, 3); p.div(R0, R3); store(R0)      # unsigned
    p.mov(R3, -7); p.mov(R0, 1000); p.mod(R3, R0); store(R3)
    p.mov(R7, -7); p.mod(R7, -2); store(R7)         # imm sign-extended
    p.mov(R7, -1); p.mov(R4, 65); p.lsh(R7, R4); store(R7)     # 65 & 63
    p.mov(R4, 0x7f); p.mov(R0, 68); p.arsh(R4, R0); store(R4)  # shift rcx
    p.mov(R7, -0x77665545); p.bswap32(R7); store(R7)           # upper half 0
    p.mov(R7, 0x01020304); p.lsh(R7, 32); p.or_(R7, 0x05060708)
    p.bswap64(R7); store(R7)
    p.mov(R7, 5); p.neg(R7); store(R7)
    p.st(8, R10, -24, 100); p.mov(R8, -1); p.xadd(8, R10, -24, R8)
    p.ldx(8, R7, R10, -24); store(R7)
    p.st(8, R10, -32, -2); p.st(4, R10, -32, -1)
    p.mov(R8, 2); p.xadd(4, R10, -32, R8)
    p.ldx(8, R7, R10, -32); store(R7)               # 32-bit wrap, upper kept
    p.mov(R7, -5); p.mov(R6, 1)
    p.jmp("jsgt", R7, 3, "big"); p.mov(R6, 2); p.label("big")
    p.jmp("jgt", R7, 3, "ubig"); p.mov(R6, 3); p.label("ubig")
    p.jmp("jset", R7, 0x100, "set"); p.add(R6, 10); p.label("set")
    store(R6)
    p.mov(R0, 0)
    p.ret_r0()
    return p.image(), n[0]


def run_and_read_tables():
    write(ev + "/enable", "1")
    ping(1)
    write(ev + "/enable", "0")
    return read(ev + "/filter_tables")


image, cases = corner_cases()
tag = hashlib.sha256(image).hexdigest()[:16]
orig = get_jit()
k.expect("the JIT is on by default", 1, orig)

k.expect("kernel.bpf64_jit_enable = 0 is accepted", 0, set_jit(0))
k.expect("... and a program then loads", 0, write(ev + "/filter", image))
k.expect("... interpreted", 0, engine(ev))
interp = run_and_read_tables()
k.check(re.search(r"entries %d\n" % cases, interp),
        "the interpreter stores every corner case", interp)

k.expect("kernel.bpf64_jit_enable = 1: a program loads", 0,
         set_jit(1) or write(ev + "/filter", image))
jited = engine(ev)
k.check(jited and jited > 0, "... JIT-compiled", read(ev + "/filter"))
jit = run_and_read_tables()
k.expect("the JIT's code leaves the same tables as the interpreter", interp, jit)

set_jit(0)
k.expect("the setting applies to later loads: the program stays compiled",
         jited, engine(ev))

write("/dev/kmsg", "ksft_jit: dump follows\n")
k.expect("kernel.bpf64_jit_enable = 2: a program loads", 0,
         set_jit(2) or write(ev + "/filter", image))
log = dmesg()
log = log[log.rfind("ksft_jit: dump follows"):]
m = re.search(r"bpf64: tag %s: (\d+) insns, (\d+) bytes of code, \d+ passes" % tag, log)
k.check(m and int(m.group(2)) == engine(ev),
        "... and the kernel log has the code's size and the filter file's", log[-2000:])
# the dump of the program's code, up to the next one (its code as a probe)
first = log[m.end():] if m else ""
first = first[:first.find("bpf64: tag")] if "bpf64: tag" in first else first
dump = " ".join(re.findall(r"bpf64 jit: [0-9a-f]{8}: ((?:[0-9a-f]{2} ?)+)", first)).split()
k.check(m and len(dump) == int(m.group(2)),
        "... and a hex dump of every byte", " ".join(dump[:32]))
# The prologue: endbr64 with IBT, then push rbp; mov rbp, rsp
k.check(" ".join(dump).replace("f3 0f 1e fa ", "", 1).startswith("55 48 89 e5"),
        "... starting with the prologue", " ".join(dump[:16]))

k.check(set_jit(3) == ERRNO.EINVAL and set_jit(-1) == ERRNO.EINVAL and get_jit() == 2,
        "values other than 0, 1, 2 are refused with EINVAL", get_jit())
set_jit(orig)
write(ev + "/filter", "0")
ktap.reset()
k.finish()
