# SPDX-License-Identifier: GPL-2.0
"""A small BPF64 assembler for the selftests.

    p = Prog()
    p.string(-16, "pid %d\\n")             # bytes on the stack at r10-16
    p.mov(R1, R10); p.add(R1, -16)
    p.mov(R2, 8); p.mov(R3, 42); p.mov(R4, 0); p.mov(R5, 0)
    p.call("bpf_trace_printk")
    p.ret(0)
    open("f.bpf", "wb").write(p.image())

Jumps take label names, resolved when the image is built; helper names go
to the string table.  Encodings are those of include/uapi/linux/bpf64.h.
"""
import struct



class Reg(int):
    """A register operand; plain ints are immediates: p.mov(R6, R0) copies
    R0, p.mov(R6, 0) loads 0."""


R0, R1, R2, R3, R4, R5, R6, R7, R8, R9, R10 = (Reg(i) for i in range(11))
FP = R10

LDX, ST, STX, ALU, JMP, RET = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
W, H, B, DW = 0x00, 0x08, 0x10, 0x18
REL, XADD = 0xC0, 0xE0
K, X = 0x00, 0x08
ALU_OPS = dict(add=0x00, sub=0x10, mul=0x20, div=0x30, or_=0x40, and_=0x50,
               lsh=0x60, rsh=0x70, neg=0x80, mod=0x90, xor=0xA0, mov=0xB0,
               arsh=0xC0, bswap32=0xD0, bswap64=0xE0)
JMP_OPS = dict(ja=0x00, jeq=0x10, jgt=0x20, jge=0x30, jset=0x40, jne=0x50,
               jsgt=0x60, jsge=0x70, call=0x80)
SIZES = {1: B, 2: H, 4: W, 8: DW}

# struct pt_regs offsets on x86-64: where a filter reads its ctx
PT_REGS = dict(r15=0, r14=8, r13=16, r12=24, bp=32, bx=40, r11=48, r10=56,
               r9=64, r8=72, ax=80, cx=88, dx=96, si=104, di=112,
               orig_ax=120, ip=128, cs=136, flags=144, sp=152, ss=160)
# tracepoint arguments 1..12 (kernel/trace/trace_events_bpf64.c)
TP_ARG_REGS = ["si", "dx", "cx", "r8", "r9", "r10", "r11", "r12", "r13",
               "r14", "r15", "bx"]


def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", code, dst | (src << 4), off, imm)


class Prog:
    def __init__(self):
        self.insns = []          # (code, dst, src, off, imm, label or None)
        self.labels = {}
        self.tables = []
        self.names = []

    # -- raw and ALU -------------------------------------------------------
    def emit(self, code, dst=0, src=0, off=0, imm=0, target=None):
        self.insns.append([code, dst, src, off, imm, target])
        return self

    def alu(self, op, dst, x):
        """dst op= x; x is a register (Reg) or an immediate (int)."""
        code = ALU | ALU_OPS[op]
        if isinstance(x, Reg):
            return self.emit(code | X, dst, int(x))
        return self.emit(code | K, dst, 0, 0, x)

    def __getattr__(self, name):
        op = name.rstrip("_") + ("_" if name.rstrip("_") in ("or", "and") else "")
        if op in ALU_OPS and op not in ("neg", "bswap32", "bswap64"):
            return lambda dst, x: self.alu(op, dst, x)
        raise AttributeError(name)

    def neg(self, dst):
        return self.emit(ALU | ALU_OPS["neg"] | X, dst)

    def bswap32(self, dst):
        return self.emit(ALU | ALU_OPS["bswap32"] | X, dst)

    def bswap64(self, dst):
        return self.emit(ALU | ALU_OPS["bswap64"] | X, dst)

    # -- memory -----------------------------------------------------------
    def ldx(self, size, dst, src, off):
        return self.emit(LDX | SIZES[size] | REL, dst, src, off)

    def stx(self, size, dst, off, src):
        return self.emit(STX | SIZES[size] | REL, dst, src, off)

    def st(self, size, dst, off, imm):
        return self.emit(ST | SIZES[size] | REL, dst, 0, off, imm)

    def xadd(self, size, dst, off, src):
        return self.emit(STX | SIZES[size] | XADD, dst, src, off)

    def ctx(self, dst, reg):
        """dst = the pt_regs field reg ("si", "ax", ...) of ctx in R1."""
        return self.ldx(8, dst, R1, PT_REGS[reg])

    def string(self, off, text):
        """Store text, NUL-terminated and padded to 4 bytes, at r10+off."""
        data = text.encode() + b"\0"
        data += b"\0" * (-len(data) % 4)
        for i in range(0, len(data), 4):
            self.st(4, R10, off + i, struct.unpack("<i", data[i:i + 4])[0])
        return len(text) + 1

    # -- control ----------------------------------------------------------
    def label(self, name):
        self.labels[name] = len(self.insns)
        return self

    def jmp(self, op, dst, x, target):
        code = JMP | JMP_OPS[op]
        if isinstance(x, Reg):
            return self.emit(code | X, dst, int(x), target=target)
        return self.emit(code | K, dst, 0, 0, x, target=target)

    def ja(self, target):
        return self.emit(JMP | X, target=target)

    def call(self, name):
        return self.emit(JMP | JMP_OPS["call"], imm=self.strtab_offset(name))

    def ret(self, verdict=0):
        return self.emit(RET | K, imm=verdict)

    def ret_r0(self):
        return self.emit(RET | X)

    def printk(self, fmt, *args, off=None):
        """bpf_trace_printk(fmt, size, args...): args are registers or ints;
        uses R1-R5 and the stack below off (default: just fits fmt)."""
        size = len(fmt.encode()) + 1
        off = off if off is not None else -((size + 7) // 8 * 8)
        self.string(off, fmt)
        for reg, a in zip([R3, R4, R5], list(args) + [0] * (3 - len(args))):
            self.mov(reg, a)
        self.mov(R1, R10)
        self.add(R1, off)
        self.mov(R2, size)
        return self.call("bpf_trace_printk")

    # -- tables and image -------------------------------------------------
    def table(self, key_size, elem_size, max_entries, type_=1, param1=0):
        self.tables.append((type_, key_size, elem_size, max_entries, param1))
        return len(self.tables) - 1

    def table_call(self, helper, table, key_off, value_off=None, ctx=R6):
        """helper(ctx, table, r10 + key_off[, r10 + value_off]): the table
        helpers' calling sequence, with ctx kept in a callee-saved register."""
        self.mov(R1, ctx).mov(R2, table).mov(R3, R10).add(R3, key_off)
        if value_off is not None:
            self.mov(R4, R10).add(R4, value_off)
        return self.call(helper)

    def strtab_offset(self, name):
        if name not in self.names:
            self.names.append(name)
        return 1 + sum(len(n) + 1 for n in self.names[:self.names.index(name)])

    def code(self):
        out = b""
        for i, (code, dst, src, off, imm, target) in enumerate(self.insns):
            if target is not None:
                off = self.labels[target] - i - 1
            out += insn(code, int(dst), int(src), off, imm)
        return out

    def image(self):
        ins = self.code()
        tables = b"".join(struct.pack("<5I", *t) for t in self.tables)
        strtab = b"\0" + b"".join(n.encode() + b"\0" for n in self.names) if self.names else b""
        return b"bpf\0" + struct.pack("<iii", len(ins), len(tables), len(strtab)) + ins + tables + strtab


def r(n):
    """Register operand from a number (registers already are Reg)."""
    return Reg(n)


def parse_image(data):
    """(insns, tables, strtab) of an image, for tests that patch one."""
    magic, ni, nt, ns = struct.unpack("<4siii", data[:16])
    assert magic == b"bpf\0"
    insns = [list(struct.unpack("<BBhi", data[16 + 8 * i:24 + 8 * i])) for i in range(ni // 8)]
    return insns, data[16 + ni:16 + ni + nt], data[16 + ni + nt:]


def build_image(insns, tables=b"", strtab=b""):
    ins = b"".join(struct.pack("<BBhi", *i) for i in insns)
    return b"bpf\0" + struct.pack("<iii", len(ins), len(tables), len(strtab)) + ins + tables + strtab


def stack_region_counter(max_entries):
    """A filter that counts its events per 16 KB stack region (a task's
    stack, an IRQ or NMI stack) in a table: bpf_table_update() of a new key,
    XADD on the element bpf_table_lookup() finds.  With max_entries small
    the table fills up and updates fail with -E2BIG."""
    p = Prog()
    t = p.table(8, 8, max_entries)
    p.mov(R6, R1)
    p.ctx(R7, "sp")
    p.rsh(R7, 14)
    p.stx(8, R10, -8, R7)
    p.mov(R1, R6).mov(R2, t).mov(R3, R10).add(R3, -8)
    p.call("bpf_table_lookup")
    p.jmp("jne", R0, 0, "count")
    p.st(8, R10, -16, 1)
    p.mov(R1, R6).mov(R2, t).mov(R3, R10).add(R3, -8).mov(R4, R10).add(R4, -16)
    p.call("bpf_table_update")
    p.ja("out")
    p.label("count")
    p.mov(R1, 1)
    p.xadd(8, R0, 0, R1)
    p.label("out")
    p.ret(0)
    return p.image()
