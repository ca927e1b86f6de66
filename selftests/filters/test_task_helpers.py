#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: the helpers of the task, the time, the CPU and strings, and
# bpf_table_delete: values checked against what user space knows (its pid,
# its name, its clock, the CPU it is pinned to, the path it opens), faults,
# truncation, the order deleted slots are reused in, and the checker's limits
# requires: kprobe_events
import re
import struct
import time
from common import *

k = need_root_and_bpf64(22)
kp = path("kprobe_events")
append(kp, "p:ksft_task/sync ksys_sync\n")
append(kp, "p:ksft_task/openat do_sys_openat2 dfd=%di filename=%si\n")
append(kp, "p:ksft_task/filp do_filp_open dfd=%di name=%si\n")
SYNC = event_dir("ksft_task:sync")
OPENAT = event_dir("ksft_task:openat")
FILP = event_dir("ksft_task:filp")
MY_TGID = os.getpid()


# the engine the filters run on (test_task_helpers_interpreter.sh: BPF64_JIT=0)
ENGINE = " interpreted" if os.environ.get("BPF64_JIT") == "0" else " jited "


def attach(ev, prog):
    err = write(ev + "/filter", prog.image())
    assert err == 0, os.strerror(err) + read(ev + "/filter")
    assert ENGINE in read(ev + "/filter"), "not%s: %s" % (ENGINE, read(ev + "/filter"))


def lines_of(ev, action):
    """The lines printed by @ev's filter while @action runs."""
    clear_trace()
    write(ev + "/enable", "1")
    action()
    write(ev + "/enable", "0")
    # printed lines are attributed to the probed function
    return [re.sub(r"^.* [0-9.]+: \w+: ", "", l) for l in trace_lines()]


def sync(cpu=None):
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    child = subprocess.Popen(["sync"], preexec_fn=pre)
    child.wait()
    return child.pid


def table_keys(ev, table=0):
    """(key bytes, value bytes) of a table in filter_tables."""
    out, cur = [], None
    for line in read(ev + "/filter_tables").splitlines():
        m = re.match(r"table (\d+) ", line)
        if m:
            cur = int(m.group(1))
            continue
        m = re.match(r"key ([0-9a-f]+) value ([0-9a-f]+)", line)
        if m and cur == table:
            out.append((bytes.fromhex(m.group(1)), bytes.fromhex(m.group(2))))
    return out


def only_my_process(p, label_drop="drop"):
    """Drop events of other processes: R0 = pid_tgid, compared with ours."""
    p.call("bpf_get_current_pid_tgid")
    p.rsh(R0, 32)
    p.jmp("jne", R0, MY_TGID, label_drop)


def drop(p):
    p.label("drop")
    p.ret(0)


# ---- bpf_get_current_pid_tgid ----
p = Prog()
p.call("bpf_get_current_pid_tgid")
p.mov(R6, R0)
p.rsh(R6, 32)
p.mov(R7, R0)
p.lsh(R7, 32)
p.rsh(R7, 32)
p.printk("tgid=%lu pid=%lu", R6, R7)
p.ret(0)
attach(SYNC, p)
pids = []
got = lines_of(SYNC, lambda: pids.append(sync()))
k.expect("bpf_get_current_pid_tgid is the tgid << 32 | the pid of the task",
         ["tgid=%d pid=%d" % (pids[0], pids[0])], got)

# ---- bpf_get_current_comm: 16 bytes never written, a table key ----
p = Prog()
t = p.table(16, 8, 4)
p.mov(R6, R1)
p.mov(R1, R10)
p.add(R1, -16)
p.mov(R2, 16)
p.call("bpf_get_current_comm")
p.mov(R7, R0)
p.st(8, R10, -24, 1)
p.table_call("bpf_table_update", t, -16, -24)
p.printk("comm=%ld", R7, off=-48)
p.ret(0)
attach(SYNC, p)
got = lines_of(SYNC, sync)
k.expect("bpf_get_current_comm returns 0", ["comm=0"], got)
k.expect("... and fills 16 bytes: the name, NUL-padded (a table key)",
         [b"sync" + bytes(12)], [key for key, _ in table_keys(SYNC)])

# ---- bpf_ktime_get_ns: CLOCK_MONOTONIC, between the times around it ----
p = Prog()
p.call("bpf_ktime_get_ns")
p.mov(R6, R0)
p.call("bpf_ktime_get_ns")
p.sub(R0, R6)
p.mov(R7, R0)
p.printk("t=%llu d=%lld", R6, R7)
p.ret(0)
attach(SYNC, p)
times = []
got = lines_of(SYNC, lambda: (times.append(time.monotonic_ns()), sync(),
                              times.append(time.monotonic_ns())))
m = re.match(r"t=(\d+) d=(-?\d+)$", got[0] if got else "")
k.check(m and times[0] <= int(m.group(1)) <= times[1] and int(m.group(2)) >= 0,
        "bpf_ktime_get_ns is CLOCK_MONOTONIC, and does not go back",
        (got, times))

# ---- bpf_get_smp_processor_id: the CPU sync is pinned to ----
p = Prog()
p.call("bpf_get_smp_processor_id")
p.mov(R6, R0)
p.printk("cpu=%lu", R6)
p.ret(0)
attach(SYNC, p)
cpus = sorted(os.sched_getaffinity(0))
got = lines_of(SYNC, lambda: [sync(c) for c in cpus])
k.expect("bpf_get_smp_processor_id is the CPU the event ran on (%d CPUs)" % len(cpus),
         ["cpu=%d" % c for c in cpus], got)


# ---- bpf_probe_read_user_str: the path this process opens ----
def read_str(helper, load_ptr, size=64):
    """R3 = load_ptr(p); helper(r10 - 64, size, R3), its result printed and
    the 64-byte buffer counted as a key of table 0; events of this process."""
    p = Prog()
    t = p.table(64, 8, 8)
    p.mov(R6, R1)
    only_my_process(p)
    load_ptr(p)
    p.mov(R1, R10)
    p.add(R1, -64)
    p.mov(R2, size)
    p.call(helper)
    p.mov(R7, R0)
    for off in range(-64 + (size + 7) // 8 * 8, 0, 8):     # the rest of the key
        p.st(8, R10, off, 0)
    p.st(8, R10, -72, 1)
    p.table_call("bpf_table_update", t, -64, -72)
    p.printk("len=%ld", R7, off=-96)
    drop(p)
    return p


def ctx_field(reg):
    return lambda p: p.ldx(8, R3, R6, PT_REGS[reg])


def read_user_str(size, ptr_reg="si"):
    return read_str("bpf_probe_read_user_str", ctx_field(ptr_reg), size)


PATH = "/nonexistent/bpf64-user-str"


def open_path():
    try:
        os.open(PATH, os.O_RDONLY)
    except FileNotFoundError:
        pass


def path_keys(ev):
    """The keys of @ev's table 0 but the paths of the tracefs files this
    process opens to disable the event after the action."""
    return [key for key, _ in table_keys(ev) if not key.startswith(b"/sys/")]


# The first event is open_path()'s; the write that disables the event opens
# a tracefs file, a second event.
attach(OPENAT, read_user_str(64))
got = lines_of(OPENAT, open_path)
k.expect("bpf_probe_read_user_str returns the length with the NUL",
         "len=%d" % (len(PATH) + 1), got[0] if got else None)
k.expect("... and copies the string, the rest of the buffer zeroed",
         [PATH.encode() + bytes(64 - len(PATH))], path_keys(OPENAT))
attach(OPENAT, read_user_str(8))
got = lines_of(OPENAT, open_path)
k.expect("a string longer than the buffer: 7 bytes and the NUL, length 8",
         ({"len=8"}, [PATH[:7].encode() + bytes(57)]),
         (set(got), [key for key, _ in table_keys(OPENAT) if key != b"/sys/ke" + bytes(57)]))
attach(OPENAT, read_user_str(64, "sp"))
got = lines_of(OPENAT, open_path)
k.expect("a kernel address read as user memory: -EFAULT, the buffer zeroed",
         ({"len=-14"}, [bytes(64)]), (set(got), [key for key, _ in table_keys(OPENAT)]))


# ---- bpf_probe_read_str: the kernel's copy of the path (struct filename) ----
def filename_name(p):
    """R3 = ((struct filename *)si)->name, at offset 0"""
    p.ldx(8, R1, R6, PT_REGS["si"])
    p.call("bpf_load_pointer")
    p.mov(R3, R0)


def read_kernel_str(how):
    load = {"filename": filename_name,
            "bad": lambda p: p.mov(R3, 16),
            "user": lambda p: p.mov(R3, 0x10000)}[how]  # user memory is no kernel string
    return read_str("bpf_probe_read_str", load)


attach(FILP, read_kernel_str("filename"))
got = lines_of(FILP, open_path)
k.expect("bpf_probe_read_str reads a kernel string: the path getname() copied",
         ("len=%d" % (len(PATH) + 1), [PATH.encode() + bytes(64 - len(PATH))]),
         (got[0] if got else None, path_keys(FILP)))
attach(FILP, read_kernel_str("bad"))
bad = lines_of(FILP, open_path)
attach(FILP, read_kernel_str("user"))
user = lines_of(FILP, open_path)
k.expect("... a bad pointer and a user address: -EFAULT, the buffer zeroed",
         ({"len=-14"}, {"len=-14"}, [bytes(64)]),
         (set(bad), set(user), [key for key, _ in table_keys(FILP)]))

# ---- bpf_table_delete: an event counter drives the phases ----
# table 0 (2 entries): phase 0 inserts A (slot 0); phase 1 deletes A
# (twice) and inserts B: the never-used slot 1; phase 2 inserts C: A's
# deleted slot 0; phase 3 inserts D: -E2BIG, both slots live; phase 4
# deletes B and inserts D at once into its slot.  Entries list in slot
# order, which shows where each insert went.
p = Prog()
t = p.table(8, 8, 2)
phase = p.table(8, 8, 1)
p.mov(R6, R1)
p.st(8, R10, -8, 0)
p.st(8, R10, -16, 0)
p.table_call("bpf_table_lookup", phase, -8)
p.jmp("jeq", R0, 0, "first")
p.ldx(8, R7, R0, 0)                   # R7 = phase
p.mov(R1, 1)
p.xadd(8, R0, 0, R1)
p.ja("go")
p.label("first")
p.st(8, R10, -16, 1)
p.table_call("bpf_table_update", phase, -8, -16)
p.mov(R7, 0)
p.label("go")
for off, key in ((-24, 0xA), (-32, 0xB), (-48, 0xC), (-56, 0xD)):
    p.st(8, R10, off, key)
p.st(8, R10, -40, 7)                  # value
p.jmp("jne", R7, 0, "not0")
p.table_call("bpf_table_update", t, -24, -40)
p.mov(R8, R0)
p.printk("p0 insA=%ld", R8, off=-96)
p.ja("out")
p.label("not0")
p.jmp("jne", R7, 1, "not1")
p.table_call("bpf_table_delete", t, -24)
p.mov(R8, R0)
p.table_call("bpf_table_delete", t, -24)
p.mov(R9, R0)
p.table_call("bpf_table_update", t, -32, -40)
p.mov(R7, R0)
p.printk("p1 del=%ld again=%ld insB=%ld", R8, R9, R7, off=-96)
p.ja("out")
for n, key_off, name in ((2, -48, "C"), (3, -56, "D")):
    p.label("not%d" % (n - 1))
    p.jmp("jne", R7, n, "not%d" % n)
    p.table_call("bpf_table_update", t, key_off, -40)
    p.mov(R8, R0)
    p.printk("p%d ins%s=%%ld" % (n, name), R8, off=-96)
    p.ja("out")
p.label("not3")
p.jmp("jne", R7, 4, "out")
p.table_call("bpf_table_delete", t, -32)
p.mov(R8, R0)
p.table_call("bpf_table_update", t, -56, -40)
p.mov(R9, R0)
p.printk("p4 delB=%ld insD=%ld", R8, R9, off=-96)
p.label("out")
p.ret(0)
attach(SYNC, p)


def elem(key):
    return (bytes([key]) + bytes(7), bytes([7]) + bytes(7))


def table0_header():
    return [line for line in read(SYNC + "/filter_tables").splitlines()
            if line.startswith("table 0 ")]


got = lines_of(SYNC, lambda: [sync() for _ in range(3)])
k.expect("delete: 0, again -ENOENT; inserts after it take the never-used slot, "
         "then the deleted one",
         ["p0 insA=0", "p1 del=0 again=-2 insB=0", "p2 insC=0"], got)
k.expect("... filter_tables lists C in A's old slot 0, before B in slot 1",
         [elem(0xC), elem(0xB)], table_keys(SYNC))
got = lines_of(SYNC, lambda: [sync() for _ in range(2)])
k.expect("a third key finds both slots live (-E2BIG); after a delete it "
         "takes the slot at once, no grace period", ["p3 insD=-7", "p4 delB=0 insD=0"], got)
k.expect("... filter_tables lists C and D, and counts the one refusal (full 1)",
         ([elem(0xC), elem(0xD)],
          ["table 0 type hash key_size 8 elem_size 8 max_entries 2 entries 2 full 1"]),
         (table_keys(SYNC), table0_header()))


# ---- bpf_get_stackid: the stack stored once, its id returned ----
def kallsyms():
    syms = []
    for line in read("/proc/kallsyms").splitlines():
        addr, _, name = line.split()[:3]
        syms.append((int(addr, 16), name))
    return sorted(syms)


def symbol_of(syms, addr):
    name = None
    for a, n in syms:
        if a > addr:
            break
        name = n
    return name


def stackid_prog(key_size=8, depth=8):
    """R7 = bpf_get_stackid(ctx, stacks); printed."""
    p = Prog()
    stacks = p.table(key_size, 8 * depth, 16)
    p.mov(R1, R1).mov(R2, stacks)
    p.call("bpf_get_stackid")
    p.mov(R7, R0)
    p.printk("id=%ld", R7)
    p.ret(0)
    return p


attach(SYNC, stackid_prog())
got = lines_of(SYNC, sync)
syms = kallsyms()
stored = table_keys(SYNC)
top = struct.unpack("<8Q", stored[0][1]) if len(stored) == 1 else ()
k.check(re.match(r"id=\d+$", got[0] if got else "") and len(stored) == 1 and
        int(got[0][3:]) == struct.unpack("<Q", stored[0][0])[0] and
        symbol_of(syms, top[0]) == "ksys_sync" and
        symbol_of(syms, top[1]) in ("__do_sys_sync", "__x64_sys_sync", "do_syscall_64"),
        "bpf_get_stackid on a kprobe: the id of the stack it stored, from ksys_sync up",
        (got, [(symbol_of(syms, a), hex(a)) for a in top]))
EXEC = event_dir("sched:sched_process_exec")
attach(EXEC, stackid_prog())
got = lines_of(EXEC, sync)
stored = table_keys(EXEC)
top = struct.unpack("<8Q", stored[0][1]) if len(stored) == 1 else ()
k.check(re.match(r"id=\d+$", got[0] if got else "") and top and
        symbol_of(syms, top[0]) in ("exec_binprm", "bprm_execve"),
        "... on a tracepoint: from the function that raised it (sched_process_exec)",
        (got, [(symbol_of(syms, a), hex(a)) for a in top]))
write(EXEC + "/filter", "0")

# ---- the checker's rules for the new helpers, through the filter file ----
def rejection(p):
    err = write(SYNC + "/filter", p.image())
    return err, read(SYNC + "/filter").splitlines()[-1]


for key_size, elem_size in ((4, 64), (8, 60)):
    p = Prog()
    stacks = p.table(key_size, elem_size, 16)
    p.mov(R1, R1).mov(R2, stacks)
    p.call("bpf_get_stackid")
    p.ret(0)
    err, line = rejection(p)
    k.check(err == ERRNO.EINVAL and line.endswith(
        "table 0 of bpf_get_stackid has key_size %d, elem_size %d: it needs key_size 8 "
        "and an elem_size of 8 bytes per return address" % (key_size, elem_size)),
        "a bpf_get_stackid table of key_size %d, elem_size %d is refused at load (EINVAL)"
        % (key_size, elem_size), (err, line))
p = Prog()
p.mov(R1, R10).add(R1, -24).mov(R2, 17)
p.call("bpf_get_current_comm")
p.ret(0)
err, line = rejection(p)
k.check(err == ERRNO.EACCES and
        line.endswith("R2: size 17 of bpf_get_current_comm is outside 1..16"),
        "a comm buffer larger than TASK_COMM_LEN is refused (EACCES)", (err, line))
p = Prog()
p.mov(R1, R10).add(R1, -480).mov(R2, 257).mov(R3, 0)
p.call("bpf_probe_read_str")
p.ret(0)
err, line = rejection(p)
k.check(err == ERRNO.EACCES and
        line.endswith("R2: size 257 of bpf_probe_read_str is outside 1..256"),
        "a string buffer larger than 256 bytes is refused (EACCES)", (err, line))
p = Prog()
p.mov(R1, R10).add(R1, -16).mov(R2, 8)
p.call("bpf_get_current_comm")
p.ldx(8, R0, R10, -8)
p.ret_r0()
err, line = rejection(p)
k.check(err == ERRNO.EACCES and
        line.endswith("read of uninitialised stack at R10-8 size 8"),
        "bytes past the buffer a helper filled stay uninitialised (EACCES)", (err, line))

write(SYNC + "/filter", "0")
write(OPENAT + "/filter", "0")
write(FILP + "/filter", "0")
write(kp, "")
k.finish()
