#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# fix_image.py IN OUT [ctx=OLD:NEW] [add=OLD:NEW]...
#
# Rewrite a BPF64 image (the RFC's seed examples) for this kernel: every
# 8-byte load from an offset OLD becomes a load from NEW (ctx=104:104 for
# the argument's place in struct pt_regs) and every "rX += OLD" becomes
# "rX += NEW" (add=32:16 for skb->dev).  The offsets come from
# 'perf bpf-filter --member sk_buff.dev' and the event's argument listing.
import struct
import sys

LDX_DW = 0x01 | 0x18 | 0xc0     # BPF64_LDX | BPF64_DW | BPF64_REL
ADD_K = 0x04 | 0x00 | 0x00      # BPF64_ALU | BPF64_ADD | BPF64_K

src, dst = sys.argv[1], sys.argv[2]
ctx, add = {}, {}
for arg in sys.argv[3:]:
    kind, pair = arg.split('=')
    old, new = (int(x) for x in pair.split(':'))
    {'ctx': ctx, 'add': add}[kind][old] = new

img = bytearray(open(src, 'rb').read())
magic, insn_bytes, table_bytes, strtab_bytes = struct.unpack_from('<4siii', img, 0)
assert magic == b'bpf\0', 'not a BPF64 image'
changed = 0
for off in range(16, 16 + insn_bytes, 8):
    code, regs, disp, imm = struct.unpack_from('<BBhi', img, off)
    if code == LDX_DW and disp in ctx:
        struct.pack_into('<BBhi', img, off, code, regs, ctx[disp], imm)
        changed += 1
    elif code == ADD_K and imm in add:
        struct.pack_into('<BBhi', img, off, code, regs, disp, add[imm])
        changed += 1
open(dst, 'wb').write(img)
print(f'{dst}: {changed} instructions rewritten')
