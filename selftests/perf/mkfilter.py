#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# mkfilter.py OUT print FORMAT OFF1 [OFF2 [OFF3]] [--if OFF VALUE]
#     print FORMAT with the 8-byte context fields at OFF1..OFF3 as the
#     arguments of bpf_trace_printk(), keep the event.  With --if, do that
#     only when the field at OFF equals VALUE, drop the event otherwise.
# mkfilter.py OUT count OFF [--if OFF VALUE]
#     table 0 (hash, u64 -> u64): count the events per value of the field
#     at OFF, keep the event.
#
# Small BPF64 images for the tests, built from the context offsets that
# 'perf bpf-filter' finds in DWARF.  The opcodes are those of
# include/uapi/linux/bpf64.h.
import struct
import sys

LDX_DW, ST_W, ST_DW, STX_DW, STX_XADD_DW = 0xd9, 0xc2, 0xda, 0xdb, 0xfb
MOV_X, MOV_K, ADD_K = 0xbc, 0xb4, 0x04
JA, JEQ_K, JNE_K, CALL = 0x0d, 0x15, 0x55, 0x85
RET_X = 0x0e        # return r0: the checker wants one RET, the last insn
HASH = 1


def insn(code, dst=0, src=0, off=0, imm=0):
    return (code, dst, src, off, imm)


def jump(code, dst, imm, label):
    """A jump to a label, resolved by assemble()."""
    return (code, dst, 0, label, imm)


def assemble(prog):
    where, n = {}, 0
    for x in prog:
        if isinstance(x, str):
            where[x] = n
        else:
            n += 1
    out, n = b'', 0
    for x in prog:
        if isinstance(x, str):
            continue
        code, dst, src, off, imm = x
        if isinstance(off, str):
            off = where[off] - n - 1
        out += struct.pack('<BBhi', code, dst | src << 4, off, imm)
        n += 1
    return out


def strtab_of(names):
    tab, offs = b'\0', {}
    for n in names:
        offs[n] = len(tab)
        tab += n.encode() + b'\0'
    return tab, offs


def guard(args, prog):
    """--if OFF VALUE: go to 'drop' unless ctx[OFF] == VALUE (r6 = ctx)."""
    if '--if' not in args:
        return False
    i = args.index('--if')
    off, value = int(args[i + 1], 0), int(args[i + 2], 0)
    del args[i:i + 3]
    prog += [insn(LDX_DW, 0, 6, off), jump(JNE_K, 0, value, 'drop')]
    return True


def epilogue(guarded):
    """keep: r0 = 1; drop: r0 = 0; the single RET, last (no dead code)."""
    if not guarded:
        return [insn(MOV_K, 0, 0, 0, 1), insn(RET_X)]
    return [insn(MOV_K, 0, 0, 0, 1), jump(JA, 0, 0, 'out'),
            'drop', insn(MOV_K, 0, 0, 0, 0), 'out', insn(RET_X)]


def build_print(args):
    fmt = args[0].encode().decode('unicode_escape').encode() + b'\0'
    strtab, names = strtab_of(['bpf_trace_printk'])
    prog = [insn(MOV_X, 6, 1)]
    guarded = guard(args, prog)
    offs = [int(a, 0) for a in args[1:]]
    size = (len(fmt) + 7) // 8 * 8
    fmt = fmt.ljust(size, b'\0')
    for i in range(0, size, 4):
        prog.append(insn(ST_W, 10, 0, -size + i, struct.unpack('<i', fmt[i:i + 4])[0]))
    for i, reg in enumerate((3, 4, 5)):
        # every argument register must be set, used or not
        if i < len(offs):
            prog.append(insn(LDX_DW, reg, 6, offs[i]))
        else:
            prog.append(insn(MOV_K, reg))
    prog += [insn(MOV_X, 1, 10), insn(ADD_K, 1, 0, 0, -size),
             insn(MOV_K, 2, 0, 0, size),
             insn(CALL, imm=names['bpf_trace_printk'])]
    return prog + epilogue(guarded), b'', strtab


def build_count(args):
    strtab, names = strtab_of(['bpf_table_lookup', 'bpf_table_update'])
    prog = [insn(MOV_X, 6, 1)]
    guarded = guard(args, prog)
    off = int(args[0], 0)
    prog += [
        insn(LDX_DW, 7, 6, off),
        insn(STX_DW, 10, 7, -8),                # key = ctx[off]
        insn(MOV_X, 1, 6), insn(MOV_K, 2), insn(MOV_X, 3, 10),
        insn(ADD_K, 3, 0, 0, -8),
        insn(CALL, imm=names['bpf_table_lookup']),
        jump(JEQ_K, 0, 0, 'new'),
        insn(MOV_K, 1, 0, 0, 1),
        insn(STX_XADD_DW, 0, 1, 0),             # lock *(u64 *)r0 += 1
        jump(JA, 0, 0, 'keep'),
        'new',
        insn(ST_DW, 10, 0, -16, 1),             # value = 1
        insn(MOV_X, 1, 6), insn(MOV_K, 2), insn(MOV_X, 3, 10),
        insn(ADD_K, 3, 0, 0, -8), insn(MOV_X, 4, 10),
        insn(ADD_K, 4, 0, 0, -16),
        insn(CALL, imm=names['bpf_table_update']),
        'keep',
    ]
    tables = struct.pack('<5I', HASH, 8, 8, 1024, 0)
    return prog + epilogue(guarded), tables, strtab


def main():
    out, kind, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    prog, tables, strtab = {'print': build_print, 'count': build_count}[kind](args)
    code = assemble(prog)
    with open(out, 'wb') as f:
        f.write(struct.pack('<4siii', b'bpf\0', len(code), len(tables), len(strtab)))
        f.write(code + tables + strtab)


main()
