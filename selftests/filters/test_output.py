#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: what filters write into the trace: bpf_trace_printk's %s
# (stack, a width, 127 characters at most, "(efault)", no length
# modifier), bpf_trace_output's records (raw data entries with the
# filter's type id, the checker's rules for them), and what the buffer
# refuses (-ENOSPC, counted as "lost N" in the filter file)
# requires: kprobe_events
import re
from common import *

k = need_root_and_bpf64(11)
# ksys_sync() runs once per sync(1): one event per run.
append(path("kprobe_events"), "p:ksft/sync ksys_sync\n")
ev = event_dir("ksft:sync")


def attach(prog, event_dir=ev):
    err = write(event_dir + "/filter", prog.image())
    assert err == 0, os.strerror(err) + read(event_dir + "/filter")


def sync_once(event_dir=ev, instance=None):
    clear_trace(instance)
    write(event_dir + "/enable", "1")
    subprocess.run(["sync"])
    write(event_dir + "/enable", "0")
    return trace_lines(instance)


def run(prog):
    """The lines the program prints on one event, without their heads."""
    attach(prog)
    return [re.sub(r"^.*ksys_sync: ", "", l) for l in sync_once()]


def stack_ptr(p, reg, off):
    p.mov(reg, R10)
    p.add(reg, off)


# --- %s ----------------------------------------------------------------------
p = Prog()
p.string(-16, "hello")
stack_ptr(p, R6, -16)
p.printk("[%s|%-7s|%3s]", r(R6), r(R6), r(R6), off=-48)
p.ret(0)
k.expect("%s prints a string of the stack, with a width and -",
         ["[hello|hello  |hello]"], run(p))

p = Prog()
p.printk("%s %s|", 16, 0x1000, off=-16)
p.mov(R6, R0)
p.printk("ret=%d", r(R6), off=-32)
p.ret(0)
k.expect("%s of an address that cannot be read prints (efault)",
         ["(efault) (efault)|", "ret=18"], run(p))

p = Prog()
p.string(-208, "a" * 200)
stack_ptr(p, R6, -208)
p.printk("%s", r(R6), off=-224)
p.ret(0)
k.expect("%s prints at most 127 characters", ["a" * 127], run(p))

p = Prog()
p.printk("%ls", 0, off=-16)
p.mov(R6, R0)
p.printk("ret=%d", r(R6), off=-32)
p.ret(0)
k.expect("%s takes no length modifier: %ls is refused (-EINVAL)", ["ret=-22"], run(p))


# --- bpf_trace_output --------------------------------------------------------
def output(p, type_, off, size):
    p.mov(R1, type_)
    stack_ptr(p, R2, off)
    p.mov(R3, size)
    return p.call("bpf_trace_output")


p = Prog()
p.st(4, R10, -16, 0x11223344)
p.string(-12, "abcdefg")                    # 8 bytes: r10-12 .. r10-5
p.st(4, R10, -4, -1)
output(p, 42, -16, 16)
p.mov(R6, R0)
p.printk("ret=%d", r(R6), off=-48)
p.ret(0)
attach(p)
lines = sync_once()
k.expect("bpf_trace_output writes its bytes as a raw data entry of its type; returns the size",
         ["# 2a buf: 44 33 22 11 61 62 63 64 65 66 67 00 ff ff ff ff", "ret=16"],
         [re.sub(r"^.*? \d+\.\d+: (ksys_sync: )?", "", l) for l in lines])

for what, body, msg in [
        ("a byte of the record not initialised",
         lambda p: (p.st(4, R10, -16, 1), output(p, 1, -16, 8)),
         r"R2: stack at R10-12 is not initialised \(8 bytes from R10-16\)"),
        ("a size of 0",
         lambda p: (p.st(8, R10, -8, 1), output(p, 1, -8, 0)),
         r"R3: size 0 of bpf_trace_output is outside 1\.\.480"),
        ("a size not constant",
         lambda p: (p.st(8, R10, -8, 1), p.ldx(8, R3, R1, PT_REGS["di"]),
                     p.mov(R1, 1), stack_ptr(p, R2, -8), p.call("bpf_trace_output")),
         r"R3 is a .*, bpf_trace_output expects a constant size")]:
    p = Prog()
    body(p)
    p.ret(0)
    err = write(ev + "/filter", p.image())
    k.check(err == errno.EACCES and re.search(msg, read(ev + "/filter")),
            "the checker refuses a record with %s (EACCES)" % what,
            "%s: %s" % (os.strerror(err), read(ev + "/filter")))

# --- what the buffer refuses is counted -----------------------------------------
inst = "ksft_output"
os.mkdir(path("instances", inst))
iev = event_dir("ksft:sync", inst)
p = Prog()
t = p.table(4, 8, 4)
p.mov(R6, R1)
p.printk("x", off=-8)
p.stx(8, R10, -16, R0)
p.st(8, R10, -24, 0)
output(p, 7, -24, 8)
p.stx(8, R10, -32, R0)
for key, val in ((0, -16), (1, -32)):
    p.st(4, R10, -36, key)
    p.table_call("bpf_table_update", t, -36, val)
p.ret(0)
attach(p, iev)
write(path("instances", inst, "tracing_on"), "0")
sync_once(iev, inst)
values = re.findall(r"^key 0[01]000000 value (\w+)$", read(iev + "/filter_tables"), re.M)
k.expect("with tracing off, bpf_trace_printk and bpf_trace_output return -ENOSPC",
         [(-28 & (2**64 - 1)).to_bytes(8, "little").hex()] * 2, values)
k.check(re.search(r" lost 2( path .*)?$", read(iev + "/filter").splitlines()[0]),
        "the filter file counts the line and the record the buffer refused: lost 2",
        read(iev + "/filter"))
write(iev + "/filter", "0")
os.rmdir(path("instances", inst))
# the trace_printk option is the top level's
attach(p)
write(path("options/trace_printk"), "0")
lines = sync_once()
write(path("options/trace_printk"), "1")
k.check(re.search(r" lost 1( path .*)?$", read(ev + "/filter").splitlines()[0]) and
        any(re.search(r"# 7 buf: 00 00 00 00 00 00 00 00$", l) for l in lines),
        "with the trace_printk option off, the line is refused (lost 1), the record written",
        read(ev + "/filter") + "\n".join(lines))
write(ev + "/filter", "0")
write(path("kprobe_events"), "")
k.finish()
