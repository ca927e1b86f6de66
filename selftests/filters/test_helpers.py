#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: each helper of tracing filters: bpf_trace_printk formats,
# bpf_memcmp and bpf_load_pointer (also on bad pointers), bpf_dump_stack,
# bpf_table_lookup and bpf_table_update (miss, insert, overwrite, full)
# requires: kprobe_events
import re
from common import *

k = need_root_and_bpf64(12)
# ksys_sync() runs once per sync(1): one event per run.
append(path("kprobe_events"), "p:ksft/sync ksys_sync\n")
ev = event_dir("ksft:sync")


def run(prog):
    """The lines the program prints on one event."""
    err = write(ev + "/filter", prog.image())
    assert err == 0, os.strerror(err) + read(ev + "/filter")
    clear_trace()
    write(ev + "/enable", "1")
    subprocess.run(["sync"])
    write(ev + "/enable", "0")
    return [re.sub(r"^.*ksys_sync: ", "", l) for l in trace_lines()]


p = Prog()
p.printk("%d %u %x", -1, -1, -1)
p.mov(R6, 0x1234)
p.lsh(R6, 20)
p.printk("%lx %c %%", r(R6), 65)
p.printk("[%5d|%-3x|%05u]", 42, 10, 7)
p.ret(0)
k.expect("bpf_trace_printk formats d u x, lx c %%, width and flags",
         ["-1 4294967295 ffffffff", "123400000 A %", "[   42|a  |00007]"], run(p))


def printk_ret(fmt):
    p = Prog()
    p.printk(fmt, 1, 2, 3, off=-64)
    p.mov(R6, r(R0))
    p.printk("ret=%d", r(R6))
    p.ret(0)
    return run(p)


k.expect("four conversions are refused (-EINVAL)", ["ret=-22"], printk_ret("%d %d %d %d"))
k.expect("%ls is refused (-EINVAL): %s takes no length modifier", ["ret=-22"],
         printk_ret("%ls"))
k.expect("a printed line returns its length", ["1 2", "ret=3"], printk_ret("%d %d"))


def memcmp(ptr_setup, text, n):
    p = Prog()
    p.string(-8, text)
    p.string(-16, "lo")
    ptr_setup(p)                       # R1 = the unsafe pointer
    p.mov(R2, r(R10))
    p.add(R2, -8)
    p.mov(R3, n)
    p.call("bpf_memcmp")
    p.mov(R6, r(R0))
    p.printk("memcmp=%d", r(R6), off=-32)
    p.ret(0)
    return run(p)


def stack_ptr(p):
    p.mov(R1, r(R10))
    p.add(R1, -16)


k.expect("bpf_memcmp of equal bytes is 0", ["memcmp=0"], memcmp(stack_ptr, "lo", 2))
k.check(memcmp(stack_ptr, "la", 2) != ["memcmp=0"], "bpf_memcmp of different bytes is not 0")
k.expect("bpf_memcmp of a bad pointer is -EFAULT", ["memcmp=-14"],
         memcmp(lambda p: p.mov(R1, 16), "lo", 2))

p = Prog()
p.mov(R9, R1)                             # ctx; R1-R5 do not survive calls
p.mov(R1, 8)
p.call("bpf_load_pointer")
p.mov(R6, r(R0))
p.ldx(8, R1, R9, PT_REGS["sp"])
p.call("bpf_load_pointer")               # the probe's stack: readable
p.mov(R7, 0)
p.jmp("jeq", R0, 0, "out")
p.mov(R7, 1)
p.label("out")
p.printk("bad=%ld stack=%ld", r(R6), r(R7))
p.ret(0)
k.expect("bpf_load_pointer of a bad pointer is 0, of the stack is read",
         ["bad=0 stack=1"], run(p))

p = Prog()
p.call("bpf_dump_stack")
p.ret(0)
write(ev + "/filter", p.image())
clear_trace()
write(ev + "/enable", "1")
subprocess.run(["sync"])
write(ev + "/enable", "0")
text = read(path("trace"))
k.check(re.search(r"<stack trace>\n => ksys_sync\n( => .*\n)* => (__x64_sys_sync|do_syscall_64)", text),
        "bpf_dump_stack records the probed call's stack", text[-1200:])

# A 2-entry table: miss, insert, overwrite, a third key does not fit.
p = Prog()
t = p.table(8, 8, 2)


def update(p, key, value):
    p.st(8, R10, -8, key)
    p.st(8, R10, -16, value)
    p.mov(R1, r(R6))
    p.mov(R2, t)
    p.mov(R3, r(R10))
    p.add(R3, -8)
    p.mov(R4, r(R10))
    p.add(R4, -16)
    p.call("bpf_table_update")


p.mov(R6, R1)
p.st(8, R10, -8, 1)
p.mov(R1, r(R6))
p.mov(R2, t)
p.mov(R3, r(R10))
p.add(R3, -8)
p.call("bpf_table_lookup")
p.mov(R7, r(R0))                          # NULL: key 1 is not there yet
update(p, 1, 10)
p.mov(R8, r(R0))
update(p, 1, 11)                          # overwrite
p.mov(R9, r(R0))
update(p, 2, 20)
update(p, 3, 30)                          # full
p.stx(8, R10, -24, R0)
p.printk("miss=%ld insert=%ld overwrite=%ld", r(R7), r(R8), r(R9), off=-64)
p.ldx(8, R6, R10, -24)
p.printk("full=%ld", r(R6), off=-64)
p.ret(0)
k.expect("table: lookup miss is NULL, insert and overwrite 0, a full table -E2BIG",
         ["miss=0 insert=0 overwrite=0", "full=-7"], run(p))
tables = read(ev + "/filter_tables").splitlines()
k.expect("filter_tables shows both entries in insertion order, and the refused insert",
         ["table 0 type hash key_size 8 elem_size 8 max_entries 2 entries 2 full 1",
          "key 0100000000000000 value 0b00000000000000",
          "key 0200000000000000 value 1400000000000000"], tables)

# XADD on a table element counts events: three syncs.
p = Prog()
t = p.table(4, 8, 16)
p.mov(R6, R1)
p.st(4, R10, -4, 7)
p.mov(R1, r(R6))
p.mov(R2, t)
p.mov(R3, r(R10))
p.add(R3, -4)
p.call("bpf_table_lookup")
p.jmp("jne", R0, 0, "count")
p.st(8, R10, -16, 0)
p.mov(R1, r(R6))
p.mov(R2, t)
p.mov(R3, r(R10))
p.add(R3, -4)
p.mov(R4, r(R10))
p.add(R4, -16)
p.call("bpf_table_update")
p.mov(R1, r(R6))
p.mov(R2, t)
p.mov(R3, r(R10))
p.add(R3, -4)
p.call("bpf_table_lookup")
p.jmp("jeq", R0, 0, "out")
p.label("count")
p.mov(R1, 1)
p.xadd(8, R0, 0, R1)
p.label("out")
p.ret(0)
write(ev + "/filter", p.image())
write(ev + "/enable", "1")
for i in range(3):
    subprocess.run(["sync"])
write(ev + "/enable", "0")
k.expect("an XADD counter in a table counts the events",
         ["table 0 type hash key_size 4 elem_size 8 max_entries 16 entries 1",
          "key 07000000 value 0300000000000000"], read(ev + "/filter_tables").splitlines())
write(ev + "/filter", "0")
write(path("kprobe_events"), "")
k.finish()
