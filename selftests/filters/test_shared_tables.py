#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: tables shared by name between filters on two events: a
# kprobe's filter stores a timestamp per thread that its kretprobe's filter
# reads and deletes; filter_tables shows the table on both events; a
# different definition of the name is refused; the table lives while one
# filter holds it and a new one starts empty
# requires: kprobe_events
import re
from common import *

k = need_root_and_bpf64(9)
kp = path("kprobe_events")
append(kp, "p:ksft_shared/entry ksys_sync\n")
append(kp, "r:ksft_shared/ret ksys_sync\n")
append(kp, "p:ksft_shared/other do_sys_openat2\n")
ENTRY, RET, OTHER = (event_dir("ksft_shared:" + e) for e in ("entry", "ret", "other"))
NAME = "ksft_start"


def shared(p, key=8, elem=8, entries=64):
    return p.table(key, elem, entries, param1=p.strtab_offset(NAME))


def entry_prog():
    """start[pid_tgid] = now"""
    p = Prog()
    t = shared(p)
    p.mov(R6, R1)
    p.call("bpf_get_current_pid_tgid")
    p.stx(8, R10, -8, R0)
    p.call("bpf_ktime_get_ns")
    p.stx(8, R10, -16, R0)
    p.table_call("bpf_table_update", t, -8, -16)
    p.ret(0)
    return p.image()


def ret_prog():
    """delta = now - start[pid_tgid]; delete it; count[0] += 1 if delta > 0"""
    p = Prog()
    count = p.table(8, 8, 1)
    t = shared(p)
    p.mov(R6, R1)
    p.call("bpf_get_current_pid_tgid")
    p.stx(8, R10, -8, R0)
    p.table_call("bpf_table_lookup", t, -8)
    p.jmp("jeq", R0, 0, "out")
    p.ldx(8, R7, R0, 0)
    p.table_call("bpf_table_delete", t, -8)
    p.call("bpf_ktime_get_ns")
    p.jmp("jge", R7, R0, "out")          # not after the start: not counted
    p.st(8, R10, -16, 0)
    p.table_call("bpf_table_lookup", count, -16)
    p.jmp("jne", R0, 0, "add")
    p.st(8, R10, -24, 0)
    p.table_call("bpf_table_update", count, -16, -24)
    p.table_call("bpf_table_lookup", count, -16)
    p.jmp("jeq", R0, 0, "out")
    p.label("add")
    p.mov(R1, 1)
    p.xadd(8, R0, 0, R1)
    p.label("out")
    p.ret(0)
    return p.image()


def headers(ev):
    return [l for l in read(ev + "/filter_tables").splitlines() if l.startswith("table ")]


def syncs(n, events):
    for ev in events:
        write(ev + "/enable", "1")
    for i in range(n):
        subprocess.run(["sync"])
    for ev in events:
        write(ev + "/enable", "0")


k.expect("a kprobe filter and a kretprobe filter name the same table",
         (0, 0), (write(ENTRY + "/filter", entry_prog()), write(RET + "/filter", ret_prog())))
syncs(3, [ENTRY, RET])
k.expect("the kretprobe's filter measured each of 3 syncs from the kprobe's timestamp",
         ["key 0000000000000000 value 0300000000000000"],
         [l for l in read(RET + "/filter_tables").splitlines() if l.startswith("key ")])
want = "table 0 type hash key_size 8 elem_size 8 max_entries 64 entries 0 shared " + NAME
k.expect("... and deleted each start: filter_tables of both events show the one table, empty",
         ([want], want.replace("table 0", "table 1")),
         (headers(ENTRY), headers(RET)[1] if len(headers(RET)) > 1 else None))

p = Prog()
shared(p, elem=16)
p.ret(0)
write(path("error_log"), "")
k.expect("another definition of the name is refused with EINVAL", ERRNO.EINVAL,
         write(OTHER + "/filter", p.image()))
k.check("another filter shares it as key_size 8 elem_size 8 max_entries 64" in read(OTHER + "/filter"),
        "... saying how it is defined", read(OTHER + "/filter")[-300:])

# Lifetime: only the kprobe's filter left; a start is stored and stays.
write(RET + "/filter", "0")
syncs(1, [ENTRY])
k.check(re.search(r"entries 1 shared " + NAME, read(ENTRY + "/filter_tables")),
        "with the kretprobe's filter gone, the kprobe's filter keeps the table", headers(ENTRY))
# Another filter takes the name, then the kprobe's filter goes: the entry stays.
write(RET + "/filter", ret_prog())
write(ENTRY + "/filter", "0")
k.check(re.search(r"entries 1 shared " + NAME, read(RET + "/filter_tables")),
        "a table outlives the filter that created it while another holds it", headers(RET))
write(RET + "/filter", "0")
write(ENTRY + "/filter", entry_prog())
k.check(re.search(r"entries 0 shared " + NAME, read(ENTRY + "/filter_tables")),
        "once no filter holds it, it is freed: the next filter gets a new, empty one",
        headers(ENTRY))
p = Prog()
shared(p, elem=16)
p.ret(0)
write(ENTRY + "/filter", "0")
k.expect("... of any definition: the name is free again", 0, write(OTHER + "/filter", p.image()))

write(OTHER + "/filter", "0")
write(kp, "")
k.finish()
