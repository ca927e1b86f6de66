#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: BPF64 filters on system call events (syscalls:sys_enter_*,
# sys_exit_*): the filter sees the fields of the event's format as a
# tracepoint's arguments (__syscall_nr, then the call's arguments or its
# return value); kept and dropped events on both engines, a user string
# from an argument, negative returns, bpf_trace_printk, read-back, and
# predicates after an image
import re
import tempfile
from common import *

k = need_root_and_bpf64(12)
OPENAT = event_dir("syscalls:sys_enter_openat")
OPENAT_EXIT = event_dir("syscalls:sys_exit_openat")
READ_EXIT = event_dir("syscalls:sys_exit_read")
JIT = JIT_SYSCTL
NR_OPENAT, NR_READ = 257, 0
ENOENT = 2
# field n of the event's format is tracepoint argument n
ARG = {n + 1: reg for n, reg in enumerate(TP_ARG_REGS)}


def attach(ev, prog):
    err = write(ev + "/filter", prog.image())
    assert err == 0, os.strerror(err) + read(ev + "/filter")


def recorded(ev, action):
    """The trace lines of @ev while @action runs."""
    clear_trace()
    write(ev + "/enable", "1")
    action()
    write(ev + "/enable", "0")
    return trace_lines()


def table_keys(ev):
    return [bytes.fromhex(m.group(1)) for m in
            re.finditer(r"^key ([0-9a-f]+) value", read(ev + "/filter_tables"), re.M)]


def keep_field(nr, field, value, count_path=False):
    """Keep the events of system call @nr whose field @field (1-based, in
    the format's order) is @value; with @count_path, the string field 3
    (openat's filename, user memory) becomes a key of table 0."""
    p = Prog()
    t = p.table(32, 8, 16) if count_path else None
    p.mov(R6, R1)
    p.ctx(R7, ARG[1])
    p.jmp("jne", R7, nr, "drop")
    p.ldx(8, R7, R6, PT_REGS[ARG[field]])
    p.jmp("jne", R7, value, "drop")
    if count_path:
        p.mov(R1, R10).add(R1, -32).mov(R2, 32)
        p.ldx(8, R3, R6, PT_REGS[ARG[3]])
        p.call("bpf_probe_read_user_str")
        p.st(8, R10, -40, 1)
        p.table_call("bpf_table_update", t, -32, -40)
    p.mov(R0, 1)
    p.ja("out")
    p.label("drop")
    p.mov(R0, 0)
    p.label("out")
    p.ret_r0()
    return p


tmp = tempfile.mkdtemp(prefix="ksft-syscalls-")
for name in ("a", "b", "c"):
    with open(os.path.join(tmp, name), "wb") as f:
        f.write(bytes(10000))
dirfd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)


def opens():
    """Three openat()s relative to dirfd, two to the current directory."""
    for name in ("a", "b", "c"):
        os.close(os.open(name, os.O_RDONLY, dir_fd=dirfd))
    for name in ("a", "b"):
        os.close(os.open(os.path.join(tmp, name), os.O_RDONLY))


def reads():
    """Two read()s of 4321 bytes and three of 100."""
    fd = os.open(os.path.join(tmp, "a"), os.O_RDONLY)
    for size in (4321, 100, 4321, 100, 100):
        os.read(fd, size)
    os.close(fd)


orig_jit = read(JIT).strip()
for jit in (1, 0):
    engine = "JIT" if jit else "interpreter"
    write(JIT, "%d\n" % jit)
    attach(OPENAT, keep_field(NR_OPENAT, 2, dirfd, count_path=True))
    lines = recorded(OPENAT, opens)
    mine = [l for l in lines if re.search(r"sys_openat\(dfd: (0x)?0*%x," % dirfd, l)]
    k.check(len(lines) == 3 and len(mine) == 3,
            "%s: sys_enter_openat keeps the 3 openat()s whose dfd (field 2) is ours, "
            "drops the others" % engine, lines)
    k.expect("%s: ... filename (field 3) read from user memory: their paths" % engine,
             sorted([n.encode() + bytes(31) for n in ("a", "b", "c")]),
             sorted(table_keys(OPENAT)))
    attach(READ_EXIT, keep_field(NR_READ, 2, 4321))
    lines = recorded(READ_EXIT, reads)
    k.check(len(lines) == 2 and all("sys_read -> 0x10e1" in l for l in lines),
            "%s: sys_exit_read keeps the 2 read()s that returned 4321 (field 2, ret)"
            % engine, lines)
write(JIT, orig_jit + "\n")

# ---- a negative return value, sign-extended as the event's long ----
attach(OPENAT_EXIT, keep_field(257, 2, -ENOENT))


def failed_open():
    try:
        os.open(os.path.join(tmp, "none"), os.O_RDONLY)
    except FileNotFoundError:
        pass
    os.close(os.open(os.path.join(tmp, "a"), os.O_RDONLY))


lines = recorded(OPENAT_EXIT, failed_open)
k.check(len(lines) == 1 and "sys_openat -> 0xfffffffffffffffe" in lines[0],
        "sys_exit_openat: ret is -ENOENT as a 64-bit value (the failed open kept, "
        "the other dropped)", lines)

# ---- bpf_trace_printk: lines attributed to the function that raised sys_enter ----
p = Prog()
p.mov(R6, R1)
p.ctx(R7, ARG[1])
p.ldx(8, R8, R6, PT_REGS[ARG[2]])
p.jmp("jne", R8, dirfd, "drop")
p.printk("nr=%lu dfd=%ld", R7, R8)
p.label("drop")
p.ret(0)
attach(OPENAT, p)
lines = recorded(OPENAT, opens)
k.expect("bpf_trace_printk from sys_enter_openat's filter: one line per kept call, "
         "attributed to the function that raised sys_enter (syscall_trace_enter)",
         ["syscall_trace_enter: nr=%d dfd=%d" % (NR_OPENAT, dirfd)] * 3,
         [re.sub(r"^.* [0-9.]+: (\w+)(\.\w+\.\d+)*:", r"\1:", l) for l in lines])

# ---- read back, then predicates and "0" ----
img = keep_field(NR_OPENAT, 2, dirfd).image()
write(OPENAT + "/filter", img)
k.check(read(OPENAT + "/filter").startswith("bpf64 tag ") and
        read_bytes(OPENAT + "/filter_image") == img,
        "a system call event reads its image back from filter and filter_image",
        read(OPENAT + "/filter"))
err = write(OPENAT + "/filter", "dfd == %d" % dirfd)
lines = recorded(OPENAT, opens)
k.check(err == 0 and read_bytes(OPENAT + "/filter_image") == b"" and len(lines) == 3,
        "predicates replace the image, and filter as before (3 events of dfd %d)" % dirfd,
        (err, lines))
err = write(OPENAT + "/filter", "0")
lines = recorded(OPENAT, opens)
k.check(err == 0 and len(lines) >= 5,
        "\"0\" removes the filter: every openat() recorded", (err, len(lines)))
k.expect("the syscalls subsystem's filter file refuses images (EINVAL)",
         errno.EINVAL, write(path("events", "syscalls", "filter"), img))
os.close(dirfd)
k.finish()
