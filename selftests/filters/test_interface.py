#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: the filter file interface: attach, summary line, readback,
# rejections (errno, error_log, filter file), size limits, replace, remove
import hashlib
import re
from common import *

k = need_root_and_bpf64(29)
ev = event_dir(NETIF_RX)
ex1 = corrected_example("filter_ex1")
ex2 = corrected_example("filter_ex2")


def summary():
    return read(ev + "/filter").splitlines()


def tag(img):
    return hashlib.sha256(img).hexdigest()[:16]


k.expect("an image attaches", 0, write(ev + "/filter", ex1))
line = summary()[0]
m = re.match(r"bpf64 tag ([0-9a-f]{16}) insns 24 tables 0 (jited [1-9][0-9]*( probe)?|interpreted)$", line)
k.check(m, "the filter file shows tag, insns, tables and the engine", line)
k.expect("the tag is the start of sha256(image)", tag(ex1), m.group(1) if m else None)
k.expect("filter_image reads back the image byte for byte", ex1, read_bytes(ev + "/filter_image"))
k.expect("filter_tables is empty without tables", "", read(ev + "/filter_tables"))

k.expect("another image replaces it", 0, write(ev + "/filter", ex2))
k.check(re.match(r"bpf64 tag %s insns 40 tables 1 " % tag(ex2), summary()[0]),
        "the filter file shows the new program", summary())

# A rejected image leaves the attached filter running.
bad = bytearray(ex1)
bad[16 + 8 + 2] = 105                   # insn 1: r6 = *(u64 *)(r1 +105)
write(path("error_log"), "")
k.expect("a misaligned ctx read is rejected with EACCES", ERRNO.EACCES, write(ev + "/filter", bytes(bad)))
lines = summary()
k.check(lines[0].startswith("bpf64 tag %s " % tag(ex2)), "the previous filter stays", lines)
msg = "insn 1: (d9) r6 = *(u64 *)(r1 +105): invalid ctx access off=105 size=8"
k.expect("the filter file shows the checker's message", "# rejected: " + msg, lines[-1])
log = read(path("error_log"))
k.check("bpf64 filter net:netif_receive_skb: error: BPF64 image rejected" in log and
        "Command: " + msg in log, "error_log has the rejection", log)
write(ev + "/enable", "1")
ping(2)
write(ev + "/enable", "0")
k.check(re.search(r"value 0[1-9]", read(ev + "/filter_tables")),
        "the previous filter still counts packets", read(ev + "/filter_tables"))

k.expect("a truncated image is rejected with EINVAL", ERRNO.EINVAL, write(ev + "/filter", ex1[:-1]))
k.check("header sections add up to 254 bytes, the image has 253" in summary()[-1],
        "... saying why", summary())
big = Prog()
for i in range(4096):
    big.add(R0, 1)
big.ret(0)
k.expect("4097 insns are rejected with E2BIG", ERRNO.E2BIG, write(ev + "/filter", big.image()))
k.check("4097 insns, the limit is 4096" in summary()[-1], "... saying why", summary())
huge = b"bpf\0" + b"\0" * 40000
k.expect("a write larger than the format allows fails with E2BIG", ERRNO.E2BIG, write(ev + "/filter", huge))
k.check("BPF64 image larger than the format allows" in read(path("error_log")),
        "... and error_log says so", read(path("error_log")))

# An image larger than a page in one write() is fine.
p = Prog()
p.mov(R0, 0)
for i in range(1000):
    p.add(R0, 1)
p.ret_r0()
k.expect("an 8 KB image attaches from one write()", 0, write(ev + "/filter", p.image()))
k.check(summary()[0].startswith("bpf64 tag %s insns 1002 " % tag(p.image())) and len(summary()) == 1,
        "a successful write clears the rejection", summary())
k.expect("... and reads back", p.image(), read_bytes(ev + "/filter_image"))

k.expect("the subsystem filter refuses images with EINVAL", ERRNO.EINVAL,
         write(path("events/net/filter"), ex1))
k.check("BPF64 images attach to one event" in read(path("error_log")),
        "... explained in error_log", read(path("error_log")))

k.expect("a predicate replaces the program", 0, write(ev + "/filter", "len > 1000000"))
k.expect("... and shows", ["len > 1000000"], summary())
k.expect("... filter_image is empty", b"", read_bytes(ev + "/filter_image"))
k.expect("an image replaces the predicate", 0, write(ev + "/filter", ex1))
k.expect("'0' removes the program", 0, write(ev + "/filter", "0"))
k.expect("... the filter file says none", ["none"], summary())
k.finish()
