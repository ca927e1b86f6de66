#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: hostile images: HOSTILE_IMAGES (default 100000) random and
# mutated images (with KSFT_PART=K/N, the K-th of N equal shares of them, so
# that run-tests can spread them over its guests) written to the filter
# files of a tracepoint, a kprobe, a kretprobe, a kprobe in an instance, a
# system call event and a uprobe (libc's sendto()) while the events fire; a rejected write leaves the
# previous filter as it was, the kernel agrees with the user-space checker,
# and the events work afterwards
# requires: kprobe_events, uprobe_events
import atexit
import hashlib
import os
import random
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "filters"))
from common import *    # noqa: E402,F403  selftests/filters/common.py

TOTAL = int(os.environ.get("HOSTILE_IMAGES", "100000"))
PART, PARTS = (int(x) for x in (os.environ.get("KSFT_PART") or "1/1").split("/"))
COUNT = TOTAL // PARTS + (PART <= TOTAL % PARTS)
SEED = int(os.environ.get("HOSTILE_SEED", "0")) or time.time_ns() % 2**32
TFC = os.path.join(TOP, "build", "bin", "trace_filter_check")
REJECT_ERRNOS = {ERRNO.EINVAL, ERRNO.EACCES, ERRNO.E2BIG, ERRNO.ENOMEM}
MAX_IMAGE = 35088      # BPF64_MAX_IMAGE_SIZE
HDR = 16
LOAD_INTERVAL = float(os.environ.get("HOSTILE_LOAD_MS", "20")) / 1000

k = need_root_and_bpf64(17)
rng = random.Random(SEED)      # the writers have their own
print("# seed %d (HOSTILE_SEED=%d%s reproduces the images), %d images%s" % (
    SEED, SEED, " KSFT_PART=%d/%d" % (PART, PARTS) if PARTS > 1 else "", COUNT,
    " (part %d of %d of %d)" % (PART, PARTS, TOTAL) if PARTS > 1 else ""))

# ---- the events ------------------------------------------------------------
kp = path("kprobe_events")
INST = "ksft_hostile"
append(kp, "p:ksft_hostile/open do_sys_openat2 dfd=%di:s32\n")
append(kp, "r:ksft_hostile/openret do_sys_openat2 ret=$retval:s64\n")
# the ping of the load calls libc's sendto() every HOSTILE_LOAD_MS
up = path("uprobe_events")
LIBC = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
append(up, "p:ksft_hostile/sendto %s:%#x\n" % (LIBC, file_offset(LIBC, "sendto")))
os.mkdir(path("instances", INST))
targets = {
    "tracepoint": event_dir(NETIF_RX),
    "kprobe": event_dir("ksft_hostile:open"),
    "kretprobe": event_dir("ksft_hostile:openret"),
    "instance kprobe": event_dir("ksft_hostile:open", INST),
    "syscall": event_dir("syscalls:sys_enter_openat"),
    "uprobe": event_dir("ksft_hostile:sendto"),
}

# ---- valid images: the base of the mutations --------------------------------


def prog_ret(v):
    return Prog().ret(v).image()


def prog_counter(max_entries):
    """Count events per (masked) sp in a table: bpf_table_update."""
    p = Prog()
    t = p.table(8, 16, max_entries)
    p.mov(R6, R1)
    p.ctx(R7, "sp")
    p.and_(R7, 0xff0)
    p.stx(8, R10, -8, R7)
    p.st(8, R10, -24, 1)
    p.st(8, R10, -16, 0)
    p.table_call("bpf_table_update", t, -8, -24)
    p.ret(1)
    return p.image()


def prog_lookup_xadd():
    """Look up a key, count in the element with XADD, keep odd counts."""
    p = Prog()
    t = p.table(8, 8, 64)
    p.mov(R6, R1)
    p.ctx(R7, "di")
    p.and_(R7, 7)
    p.stx(8, R10, -8, R7)
    p.st(8, R10, -16, 0)
    p.table_call("bpf_table_update", t, -8, -16)
    p.table_call("bpf_table_lookup", t, -8)
    p.mov(R8, 0)
    p.jmp("jeq", R0, 0, "out")
    p.mov(R1, 1)
    p.xadd(8, R0, 0, R1)
    p.ldx(8, R8, R0, 0)
    p.and_(R8, 1)
    p.label("out")
    p.mov(R0, R8)
    p.ret_r0()
    return p.image()


def prog_printk():
    p = Prog()
    p.mov(R6, R1)
    p.ctx(R7, "si")
    p.ctx(R8, "ax")
    p.printk("si=%lx ax=%lld", R7, R8)
    p.ret(0)
    return p.image()


def prog_output():
    """A record of the ctx's registers, and the task's name printed with %s."""
    p = Prog()
    p.mov(R6, R1)
    for i, reg in enumerate(["di", "si", "dx", "ax"]):
        p.ctx(R7, reg)
        p.stx(8, R10, -64 + 8 * i, R7)
    p.mov(R1, R10).add(R1, -32).mov(R2, 16)
    p.call("bpf_get_current_comm")
    p.mov(R1, 0x2a).mov(R2, R10).add(R2, -64).mov(R3, 48)
    p.call("bpf_trace_output")
    p.mov(R7, R10).add(R7, -32)
    p.printk("%s %ld", R7, R0, off=-80)
    p.ret(1)
    return p.image()


def prog_branchy():
    """Diamonds on ctx fields, spills and fills, pointer arithmetic."""
    p = Prog()
    p.mov(R6, R1)
    p.stx(8, R10, -32, R6)           # spill ctx
    for i, reg in enumerate(["di", "si", "dx", "cx"]):
        p.ctx(R7, reg)
        p.jmp("jgt", R7, 1000 * i, "a%d" % i)
        p.mov(R8, i)
        p.ja("b%d" % i)
        p.label("a%d" % i)
        p.mov(R8, -i)
        p.label("b%d" % i)
        p.stx(8, R10, -8 * (i + 1), R8)
    p.ldx(8, R1, R10, -32)           # fill ctx
    p.ldx(8, R9, R1, 80)
    p.mov(R2, R10).add(R2, -16)
    p.ldx(8, R0, R2, 0)
    p.neg(R0).bswap64(R0).rsh(R0, 63)
    p.ret_r0()
    return p.image()


def prog_memcmp():
    p = Prog()
    p.mov(R6, R1)
    p.ctx(R1, "si")
    p.call("bpf_load_pointer")
    p.mov(R1, R0)
    p.string(-8, "lo")
    p.mov(R2, R10).add(R2, -8)
    p.mov(R3, 3)
    p.call("bpf_memcmp")
    p.mov(R7, R0)
    p.mov(R1, R6)
    p.call("bpf_dump_stack")
    p.mov(R0, R7)
    p.ret_r0()
    return p.image()


def prog_task_helpers():
    """The task, time, CPU and string helpers; an insert and a delete per
    event, so that slots wait for grace periods while images come and go."""
    p = Prog()
    t = p.table(16, 8, 8)
    p.mov(R6, R1)
    p.call("bpf_ktime_get_ns")
    p.mov(R7, R0)
    p.call("bpf_get_smp_processor_id")
    p.add(R7, R0)
    p.call("bpf_get_current_pid_tgid")
    p.add(R7, R0)
    p.mov(R1, R10).add(R1, -16).mov(R2, 16)
    p.call("bpf_get_current_comm")
    for helper in ("bpf_probe_read_user_str", "bpf_probe_read_str"):
        p.ldx(8, R3, R6, PT_REGS["si"])
        p.mov(R1, R10).add(R1, -64).mov(R2, 48)
        p.call(helper)
    p.stx(8, R10, -72, R7)
    p.table_call("bpf_table_update", t, -16, -72)
    p.jmp("jne", R0, 0, "out")
    p.table_call("bpf_table_delete", t, -16)
    p.label("out")
    p.ret(1)
    return p.image()


def big_prog(n):
    """n insns, most of them ALU: images of every size up to the maximum."""
    p = Prog()
    p.mov(R0, 0)
    for i in range(n - 2):
        p.add(R0, i & 0xff)
    p.ret_r0()
    return p.image()


bases = [prog_ret(1), prog_ret(0), prog_counter(16), prog_counter(4096),
         prog_lookup_xadd(), prog_printk(), prog_output(), prog_branchy(), prog_memcmp(),
         prog_task_helpers(), big_prog(200), example("filter_ex1"), example("filter_ex2"), big_prog(4096)]
# Mutations of the task, string and delete helpers' base start from a loaded image.
k.expect("the base image with the task, string and delete helpers loads", 0,
         write(targets["kprobe"] + "/filter", prog_task_helpers()))
write(targets["kprobe"] + "/filter", "0")

# ---- mutations ----------------------------------------------------------------
OPCODES = []
for code in (ALU | op | src for op in ALU_OPS.values() for src in (K, X)):
    OPCODES.append(code)
OPCODES += [LDX | s | REL for s in SIZES.values()] + [STX | s | REL for s in SIZES.values()]
OPCODES += [ST | s | REL for s in SIZES.values()] + [STX | W | XADD, STX | DW | XADD]
OPCODES += [JMP | op | src for op in JMP_OPS.values() for src in (K, X)]
OPCODES += [RET | K, RET | X]
IMMS = [0, 1, -1, 2, 7, 8, 31, 32, 63, 64, 255, 479, 480, 481, 512, 4096, 65536,
        2**31 - 1, -2**31, -8, -480, -481, -488, 1 << 29]
OFFS = [0, 1, 4, 8, 16, 80, 104, 160, 164, 168, 176, -1, -4, -8, -16, -472, -480,
        -481, -488, -512, 32767, -32768]


def n_insns(img):
    return max(0, (len(img) - HDR) // 8)


def mutate(img):
    img = bytearray(img)
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4, 8))):
        n = n_insns(img)
        what = rng.randrange(12)
        if what == 0 and len(img) > 4:              # a bit, anywhere but the magic
            i = rng.randrange(4, len(img))
            img[i] ^= 1 << rng.randrange(8)
        elif what == 1 and len(img) > 4:            # a byte
            img[rng.randrange(4, len(img))] = rng.randrange(256)
        elif what in (2, 3) and n:                  # an opcode
            i = HDR + 8 * rng.randrange(n)
            img[i] = rng.choice(OPCODES) if rng.randrange(8) else rng.randrange(256)
        elif what == 4 and n:                       # registers
            img[HDR + 8 * rng.randrange(n) + 1] = rng.randrange(256) if rng.randrange(4) == 0 \
                else rng.randrange(11) | (rng.randrange(11) << 4)
        elif what == 5 and n:                       # off
            struct.pack_into("<h", img, HDR + 8 * rng.randrange(n) + 2,
                             rng.choice(OFFS) if rng.randrange(2) else rng.randrange(-8, 9))
        elif what == 6 and n:                       # imm
            struct.pack_into("<i", img, HDR + 8 * rng.randrange(n) + 4, rng.choice(IMMS))
        elif what == 7 and len(img) >= HDR:         # a header size
            f = 4 + 4 * rng.randrange(3)
            v = struct.unpack_from("<i", img, f)[0]
            v = rng.choice(IMMS + [v + 8, v - 8, v + 20, v - 20, v + 1])
            struct.pack_into("<i", img, f, max(-2**31, min(2**31 - 1, v)))
        elif what == 8:                             # cut
            del img[rng.randrange(4, len(img) + 1):]
        elif what == 9:                             # grow
            img += bytes(rng.randrange(256) for _ in range(rng.choice((1, 3, 8, 20, 64))))
        elif what == 10 and n > 1:                  # insert or delete an insn, fix the header
            i = HDR + 8 * rng.randrange(n)
            delta = 8 if rng.randrange(2) else -8
            if delta > 0:
                img[i:i] = struct.pack("<BBhi", rng.choice(OPCODES), rng.randrange(256),
                                       rng.choice(OFFS), rng.choice(IMMS))
            else:
                del img[i:i + 8]
            if rng.randrange(4):
                v = struct.unpack_from("<i", img, 4)[0] + delta
                struct.pack_into("<i", img, 4, max(-2**31, min(2**31 - 1, v)))
        elif what == 11 and len(img) >= HDR:        # a table definition
            ni, nt = struct.unpack_from("<ii", img, 4)
            if 0 <= ni and nt >= 20 and HDR + ni + 20 <= len(img):
                struct.pack_into("<I", img, HDR + ni + 4 * rng.randrange(5),
                                 rng.choice([0, 1, 2, 3, 8, 480, 481, 65536, 65537, 2**32 - 1]))
    return bytes(img)


def random_image():
    """Consistent header, random insns: deep in the checker, rarely accepted."""
    n = rng.randrange(1, 64)
    ins = bytearray()
    for i in range(n):
        ins += struct.pack("<BBhi", rng.choice(OPCODES), rng.randrange(11) | rng.randrange(11) << 4,
                           rng.randrange(-2, n - i) if rng.randrange(2) else rng.choice(OFFS),
                           rng.choice(IMMS))
    ins += insn(RET | K, imm=1)
    strtab = rng.choice((b"", b"\0bpf_table_lookup\0bpf_trace_printk\0",
                         b"\0bpf_table_delete\0bpf_probe_read_str\0bpf_get_current_comm\0",
                         b"\0bpf_trace_output\0bpf_get_current_comm\0"))
    tables = struct.pack("<5I", 1, 8, 8, 16, 0) if rng.randrange(2) else b""
    return b"bpf\0" + struct.pack("<iii", len(ins), len(tables), len(strtab)) + ins + tables + strtab


def garbage():
    """Random bytes after the magic; sometimes longer than any image may be."""
    size = rng.choice((0, 1, 12, 13, 40, 300, 4096, MAX_IMAGE - 4, MAX_IMAGE - 3, 40000))
    return b"bpf\0" + rng.randbytes(size)


def base():
    # the largest images cost the most: one in 40
    return bases[-1] if rng.randrange(40) == 0 else rng.choice(bases[:-1])


def next_image():
    """Mostly rejected images: an accepted one costs a grace period."""
    x = rng.randrange(100)
    if x < 80:
        return mutate(base())
    if x < 91:
        return random_image()
    if x < 99:
        return garbage()
    return base()


# ---- the state every filter file must show --------------------------------------


def tag(img):
    return hashlib.sha256(img).hexdigest()[:16]


FILTER_RE = re.compile(r"^bpf64 tag ([0-9a-f]{16}) insns (\d+) tables (\d+) (jited \d+|interpreted)( missed \d+)?( probe)?( path (ftrace( direct)?|kprobe \([^)]*\)))?$")


def filter_state(ev):
    # bytes: what a rejected image makes the checker print is not ours to trust
    lines = read_bytes(ev + "/filter").decode(errors="replace").splitlines()
    m = FILTER_RE.match(lines[0]) if lines else None
    return (m.group(1) if m else lines[0] if lines else ""), lines[1:]


expected = {}
for name, ev in targets.items():
    img = prog_counter(16)
    assert write(ev + "/filter", img) == 0, name
    expected[name] = img
k.expect("each event starts with a filter attached", list(targets),
         [n for n, ev in targets.items() if filter_state(ev)[0] == tag(expected[n])])

# ---- load: the events fire on both CPUs all along ------------------------------
for ev in targets.values():
    write(ev + "/enable", "1")
QUIET = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# Events on each CPU all along (a ping and an open every HOSTILE_LOAD_MS,
# default 20), and readers of what is attached, as monitoring tools would
# be; they leave the writer most of the CPU time (under TCG, a 2 ms load
# took a third of it: 3000 images in 16 s instead of 10 s).
LOAD = (r"import sys, time\n"
        r"files = [f + n for f in sys.argv[1:] for n in ('/filter', '/filter_image', '/filter_tables')]\n"
        r"while True:\n"
        r"    for f in files:\n"
        r"        open('/etc/hostname').read()\n"
        r"        try:\n"
        r"            open(f, 'rb').read()\n"
        r"        except OSError:\n"
        r"            pass\n"
        r"    time.sleep(%g)\n" % LOAD_INTERVAL)
load = [subprocess.Popen(["taskset", "-c", str(cpu), "ping", "-i", "%g" % LOAD_INTERVAL, "-q",
                          "127.0.0.1"], **QUIET)
        for cpu in (0, 1)]
load += [subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c", LOAD] +
                          list(targets.values()), **QUIET) for cpu in (0, 1)]


@atexit.register
def stop_load():
    for p in load:
        p.kill()
        p.wait()


# ---- the hostile writes: one writer per CPU, each on its own events ----------------
WRITERS = 2
names = list(targets)
tfc_ok = os.access(TFC, os.X_OK)


def writer(wid, names, count):
    """Write count images to the filter files of names; the findings."""
    global rng
    rng = random.Random(SEED + WRITERS * (PART - 1) + wid)   # each part its own
    os.sched_setaffinity(0, {wid % os.cpu_count()})
    res = dict(accepted=0, rejected=0, images_compared=0, tfc=0, by_errno={}, bad_errno=[],
               changed=[], not_shown=[], image_diff=[], tables_diff=[], tfc_disagree=[])
    t0 = time.time()
    for i in range(count):
        name = names[i % len(names)]
        ev = targets[name]
        img = next_image()
        err = write(ev + "/filter", img)
        cur, rest = filter_state(ev)
        if err == 0:
            res["accepted"] += 1
            expected[name] = img
            if cur != tag(img):
                res["not_shown"].append((i, name, cur))
        else:
            res["rejected"] += 1
            res["by_errno"][err] = res["by_errno"].get(err, 0) + 1
            # EBUSY: a kprobe event running from ftrace refuses a filter
            # that reads a register ftrace does not save (its filter says so)
            busy = err == ERRNO.EBUSY and read(ev + "/filter").startswith("bpf64 ") and \
                " path ftrace" in read(ev + "/filter").splitlines()[0]
            if (err not in REJECT_ERRNOS and not busy) or \
                    (len(img) > MAX_IMAGE and err != ERRNO.E2BIG):
                res["bad_errno"].append((i, name, os.strerror(err), len(img)))
            if cur != tag(expected[name]):
                res["changed"].append((i, name, cur, tag(expected[name])))
        # Now and then, all of it: the image byte for byte, the tables'
        # headers, and the user-space checker's verdict on the same image.
        if i % 97 == 0:
            res["images_compared"] += 1
            if read_bytes(ev + "/filter_image") != expected[name]:
                res["image_diff"].append((i, name))
            nt = struct.unpack_from("<i", expected[name], 8)[0] // 20
            tables = read_bytes(ev + "/filter_tables").decode(errors="replace")
            heads = [l for l in tables.splitlines() if l.startswith("table ")]
            if len(heads) != nt:
                res["tables_diff"].append((i, name, nt, len(heads)))
        if tfc_ok and i % 499 == 0 and len(img) <= MAX_IMAGE:
            res["tfc"] += 1
            f = "/tmp/hostile%d.bpf" % wid
            with open(f, "wb") as out:
                out.write(img)
            rc = subprocess.run([TFC, f], stdout=subprocess.DEVNULL).returncode
            if (rc == 0) != (err in (0, ERRNO.EBUSY)):
                res["tfc_disagree"].append((i, name, rc, err))
        if wid == 0 and i and i % 10000 == 0:
            print("# %d images, %.0f s" % (i * WRITERS, time.time() - t0), flush=True)
    return res


start = time.time()
children = []
for wid in range(WRITERS):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        load.clear()            # the parent stops the load
        res = writer(wid, names[wid::WRITERS], COUNT // WRITERS + (wid < COUNT % WRITERS))
        with os.fdopen(w, "w") as out:
            out.write(repr(res))
        os._exit(0)
    os.close(w)
    children.append((pid, r))
results = []
for pid, r in children:
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    results.append(eval(data) if data else None)
elapsed = time.time() - start
stop_load()
for ev in targets.values():
    write(ev + "/enable", "0")
k.check(all(results), "the writers finished", results)
stats = {key: sum(res[key] for res in results if res) for key in ("accepted", "rejected", "images_compared", "tfc")}
by_errno = {}
for res in filter(None, results):
    for e, n in res["by_errno"].items():
        by_errno[e] = by_errno.get(e, 0) + n


def findings(key):
    return [x for res in results if res for x in res[key]][:10]


print("# %d images in %.0f s: %d accepted, %d rejected (%s)" % (
    COUNT, elapsed, stats["accepted"], stats["rejected"],
    ", ".join("%s %d" % (ERRNO.errorcode[e], n) for e, n in sorted(by_errno.items()))))
print("# filter_image and filter_tables compared %d times, trace_filter_check run %d times" % (
    stats["images_compared"], stats["tfc"]))
k.check(stats["accepted"] + stats["rejected"] == COUNT and stats["accepted"] and
        stats["rejected"] > COUNT // 4, "%d images written, accepted and rejected" % COUNT, stats)
k.expect("every rejection has the checker's errno (EINVAL, EACCES, E2BIG, ENOMEM)", [],
         findings("bad_errno"))
k.expect("a rejected image leaves the previous filter attached", [], findings("changed"))
k.expect("an accepted image is what the filter file shows (its tag)", [], findings("not_shown"))
k.expect("filter_image holds the attached image, byte for byte", [], findings("image_diff"))
k.expect("filter_tables lists the attached program's tables", [], findings("tables_diff"))
if tfc_ok:
    k.expect("the kernel and trace_filter_check agree on every image compared", [],
             findings("tfc_disagree"))
else:
    k.skip("no build/bin/trace_filter_check to compare with")

# ---- afterwards: the events work ---------------------------------------------------


def records(name, trigger, pattern, filt="0", instance=None):
    ev = targets[name]
    write(ev + "/filter", filt)
    clear_trace(instance)
    write(ev + "/enable", "1")
    trigger()
    write(ev + "/enable", "0")
    return len([l for l in trace_lines(instance) if pattern in l])


def opens():
    for _ in range(3):
        read("/etc/hostname")


k.check(records("tracepoint", lambda: ping(2), "netif_receive_skb: dev=lo") >= 2,
        "the tracepoint records again without a filter")
k.check(records("kprobe", opens, "open: (do_sys_openat2") >= 3,
        "the kprobe event records again without a filter")
k.check(records("kretprobe", opens, "openret: (") >= 3,
        "the kretprobe event records again without a filter")
k.check(records("syscall", opens, "sys_openat(") >= 3,
        "the system call event records again without a filter")
k.check(records("uprobe", lambda: ping(2), "sendto: (0x") >= 2,
        "the uprobe event records again without a filter")
k.check(records("instance kprobe", opens, "open: (do_sys_openat2", prog_ret(1), INST) >= 3,
        "the kprobe event of the instance records with a filter that keeps everything")
write(targets["instance kprobe"] + "/filter", "0")
os.rmdir(path("instances", INST))
write(kp, "")
write(up, "")
k.check(not os.path.exists(targets["kprobe"]) and not os.path.exists(targets["uprobe"]) and
        not os.path.exists(path("instances", INST)),
        "the kprobe and uprobe events and the instance are removed")
k.finish()
