#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: loading an image: too large is E2BIG before anything is
# copied; the checker runs without event_mutex and before the tables are
# allocated; an event removed while its image loads gets nothing attached
# (ENODEV) and nothing is left behind
# requires: kprobe_events
import ctypes
import errno
import mmap
import os
import re
import select
import struct
import threading
from common import *

k = need_root_and_bpf64(15)
kp = path("kprobe_events")
NETIF = event_dir("net:netif_receive_skb")
MAX_IMAGE = 16 + 4096 * 8 + 64 * 20 + 1024      # BPF64_MAX_IMAGE_SIZE
libc = ctypes.CDLL(None, use_errno=True)


def counter(table_entries):
    """Counts events in a table of @table_entries entries."""
    p = Prog()
    t = p.table(8, 8, table_entries)
    p.mov(R6, R1)
    p.st(8, R10, -8, 1)
    p.st(8, R10, -16, 1)
    p.mov(R1, R6).mov(R2, t).mov(R3, R10).add(R3, -8).mov(R4, R10).add(R4, -16)
    p.call("bpf_table_update")
    p.ret(0)
    return p.image()


def unsafe(table_entries):
    """The same with a read of uninitialised stack at the end: EACCES."""
    p = Prog()
    p.table(8, 8, table_entries)
    p.ldx(8, R0, R10, -8)
    p.ret_r0()
    return p.image()


def probe_lines(name):
    """The lines of kprobe event ksft_load/@name in the trace."""
    return [l for l in trace_lines() if " %s: (" % name in l]


# ---- too large: E2BIG, the filter stays ----
write(NETIF + "/filter", "0")
write(NETIF + "/filter", "len > 0")
big = b"bpf\0" + bytes(MAX_IMAGE)
k.expect("an image larger than the format allows gets E2BIG",
         errno.E2BIG, write(NETIF + "/filter", big))
k.check("image too large" in read(path("error_log")),
        "... explained in error_log", read(path("error_log"))[-300:])
k.check(read(NETIF + "/filter").startswith("len > 0"),
        "... and the predicate filter stays", read(NETIF + "/filter"))
write(NETIF + "/filter", "0")

# ---- what the loader holds while it checks, and when tables come ----
k.expect("probes on the checker (with event_mutex's owner) and the table "
         "allocator are created", 0,
         append(kp, "p:ksft_load/check bpf64_check owner=@event_mutex:x64\n") or
         append(kp, "p:ksft_load/talloc bpf64_table_alloc\n"))
write(event_dir("ksft_load:check") + "/enable", "1")
write(event_dir("ksft_load:talloc") + "/enable", "1")
clear_trace()
k.expect("an image with a 64k-entry table the checker refuses: EACCES",
         errno.EACCES, write(NETIF + "/filter", unsafe(65536)))
checks, allocs = probe_lines("check"), probe_lines("talloc")
k.check(len(checks) == 1 and "owner=0x0" in checks[0],
        "event_mutex is free while the checker runs", checks)
k.check(not allocs, "... and the refused image's table was never allocated",
        allocs)
clear_trace()
k.expect("an image with a table that the checker accepts loads", 0,
         write(NETIF + "/filter", counter(64)))
lines = [l for l in trace_lines() if re.search(r" (check|talloc): \(", l)]
k.check(len(lines) == 2 and " check:" in lines[0] and " talloc:" in lines[1],
        "... its table allocated after the check", lines)
write(NETIF + "/filter", "0")
write(event_dir("ksft_load:check") + "/enable", "0")
write(event_dir("ksft_load:talloc") + "/enable", "0")
append(kp, "-:ksft_load/check")
append(kp, "-:ksft_load/talloc")

# ---- the event removed while its image loads ----
# The write's copy of the image blocks on a userfaultfd page: the load is
# between its two holds of event_mutex then, and the event is removed.
UFFDIO_API = 0xc018aa3f
UFFDIO_REGISTER = 0xc020aa00
UFFDIO_COPY = 0xc028aa03
NR_USERFAULTFD = 323


def userfault_region(size):
    """An anonymous mapping whose first touch waits for us; (fd, address)."""
    fd = libc.syscall(NR_USERFAULTFD, os.O_CLOEXEC | os.O_NONBLOCK)
    if fd < 0:
        return None, None
    api = ctypes.create_string_buffer(struct.pack("QQQ", 0xAA, 0, 0))
    libc.mmap.restype = ctypes.c_void_p
    addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    reg = ctypes.create_string_buffer(struct.pack("QQQQ", addr, size, 1, 0))
    if libc.ioctl(fd, UFFDIO_API, api) or libc.ioctl(fd, UFFDIO_REGISTER, reg):
        return None, None
    return fd, addr


image = counter(16)
size = (len(image) + 4095) // 4096 * 4096
k.expect("a kprobe event is created", 0, append(kp, "p:ksft_load/rd vfs_read\n"))
ev = event_dir("ksft_load:rd")
uffd, addr = userfault_region(size)
k.check(uffd is not None, "a userfaultfd region holds the image", addr)
res = {}


def writer():
    fd = os.open(ev + "/filter", os.O_WRONLY)
    n = libc.write(fd, ctypes.c_void_p(addr), len(image))
    res["err"] = 0 if n == len(image) else ctypes.get_errno()
    os.close(fd)


t = threading.Thread(target=writer)
t.start()
faulted = select.select([uffd], [], [], 30)[0]
deleted = append(kp, "-:ksft_load/rd")
page = ctypes.create_string_buffer(image + bytes(size - len(image)), size)
copy = ctypes.create_string_buffer(
    struct.pack("QQQQq", addr, ctypes.addressof(page), size, 0, 0))
libc.ioctl(uffd, UFFDIO_COPY, copy)
t.join(60)
k.check(faulted and deleted == 0,
        "the event is deleted while the write waits for its image", deleted)
k.expect("... and the write fails with ENODEV", errno.ENODEV, res.get("err"))
k.check(not os.path.exists(ev) and "ksft_load" not in read(kp),
        "... nothing of the event is left", read(kp))
k.expect("events work afterwards: a new kprobe event takes a filter", 0,
         append(kp, "p:ksft_load/rd2 vfs_read\n") or
         write(event_dir("ksft_load:rd2") + "/filter", counter(16)))
write(event_dir("ksft_load:rd2") + "/filter", "0")
append(kp, "-:ksft_load/rd2")
os.close(uffd)
ktap.reset()
k.finish()
