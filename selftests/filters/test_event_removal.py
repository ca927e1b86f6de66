#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: the files of an event, kept open or being opened while the
# event is removed, fail with ENODEV or ENOENT and never touch the freed
# event (KASAN checks the second part under make test-debug)
# requires: kprobe_events
import errno
import json
import os
import signal
import time
from common import *

SECONDS = int(os.environ.get("REMOVAL_SECONDS", "10"))
# ... and at least MIN_CYCLES removals, however slow the kernel, for at most
# ten times as long
MIN_CYCLES = 5
k = need_root_and_bpf64(16)
kp = path("kprobe_events")
PROBE = "p:ksft_rm/open do_sys_openat2\n"
FILES = ("filter", "filter_image", "filter_tables", "enable", "format", "id", "trigger")


def counter():
    """Counts events under one key; its table is what filter_tables shows."""
    p = Prog()
    t = p.table(8, 8, 16)
    p.mov(R6, R1)
    p.st(8, R10, -8, 7)
    p.st(8, R10, -16, 1)
    p.mov(R1, R6).mov(R2, t).mov(R3, R10).add(R3, -8).mov(R4, R10).add(R4, -16)
    p.call("bpf_table_update")
    p.ret(0)
    return p.image()


image = counter()
k.expect("a kprobe event is created", 0, append(kp, PROBE))
ev = event_dir("ksft_rm:open")
k.expect("a filter with a table is attached to it", 0, write(ev + "/filter", image))
write(ev + "/enable", "1")
read("/etc/hostname")
write(ev + "/enable", "0")

# Part 1: descriptors kept open across the removal.
fds = {f: os.open(os.path.join(ev, f), os.O_RDWR if f in ("filter", "enable") else os.O_RDONLY)
       for f in FILES}
k.expect("the kprobe event is deleted while its files are open", 0, append(kp, "-:ksft_rm/open"))
k.check(not os.path.exists(ev), "its directory is gone")


def write_fd(fd, data):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, data)
        return 0
    except OSError as e:
        return e.errno


def read_fd(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 65536)
    except OSError as e:
        return e.errno


k.expect("an image written through the kept filter descriptor fails with ENODEV",
         errno.ENODEV, write_fd(fds["filter"], image))
k.expect("so does a predicate", errno.ENODEV, write_fd(fds["filter"], b"common_pid != 0"))
k.expect("enabling through the kept enable descriptor fails with ENODEV",
         errno.ENODEV, write_fd(fds["enable"], b"1"))
k.expect("format and id read through kept descriptors fail with ENODEV",
         [errno.ENODEV, errno.ENODEV], [read_fd(fds["format"]), read_fd(fds["id"])])
tables = read_fd(fds["filter_tables"])
k.check(isinstance(tables, bytes) and b"entries 1" in tables,
        "filter_tables opened before the removal still shows the table it opened", tables)
for fd in fds.values():
    os.close(fd)
k.expect("the event can be created again under the same name", 0, append(kp, PROBE))
k.expect("it has no filter", "none", read(ev + "/filter").strip())

# Part 2: opens racing with removals.  Each CPU opens and reads the files
# of the kprobe event and of an instance's tracepoint in a loop while this
# process deletes and re-creates them.
inst = "ksft_removal"
iev = event_dir(NETIF_RX, inst)
targets = [os.path.join(ev, f) for f in FILES] + [os.path.join(iev, f) for f in FILES]
ALLOWED = (errno.ENOENT, errno.ENODEV)


def opener(cpu, wfd):
    """Open and read the files until the remover is done (SIGTERM)."""
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    os.sched_setaffinity(0, {cpu})
    tally = {}
    while not done:
        for p in targets:
            try:
                fd = os.open(p, os.O_RDONLY)
                try:
                    os.read(fd, 4096)
                finally:
                    os.close(fd)
                key = "ok"
            except OSError as e:
                key = errno.errorcode.get(e.errno, str(e.errno))
            tally[key] = tally.get(key, 0) + 1
    os.write(wfd, json.dumps(tally).encode())
    os._exit(0)


children = []
for cpu in (0, 1):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        opener(cpu, w)
    os.close(w)
    children.append((pid, r))

cycles, unexpected = 0, []
start = time.time()
while time.time() - start < SECONDS or (cycles < MIN_CYCLES and
                                        time.time() - start < 10 * SECONDS):
    for err in (append(kp, "-:ksft_rm/open"), append(kp, PROBE),
                write(ev + "/filter", image)):
        if err and err not in ALLOWED:
            unexpected.append(os.strerror(err))
    try:
        os.mkdir(path("instances", inst))
        write(iev + "/filter", image)
        os.rmdir(path("instances", inst))
    except OSError as e:
        # An open file of the instance keeps it: rmdir says EBUSY.
        if e.errno not in (errno.EBUSY, errno.EEXIST):
            unexpected.append(os.strerror(e.errno))
    cycles += 1

tally = {}
for pid, r in children:
    os.kill(pid, signal.SIGTERM)
for pid, r in children:
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    for key, n in json.loads(data.decode() or "{}").items():
        tally[key] = tally.get(key, 0) + n
for _ in range(50):
    try:
        os.rmdir(path("instances", inst))
    except FileNotFoundError:
        break
    except OSError:
        time.sleep(0.1)

print("# %d removal cycles, opens: %s" % (cycles, tally))
k.expect("creating and removing the events never failed otherwise", [], unexpected[:10])
k.check(cycles >= MIN_CYCLES and tally.get("ok", 0) > 0, "events were removed while opens succeeded",
        (cycles, tally))
k.expect("every failed open said ENOENT or ENODEV", [],
         sorted(set(tally) - {"ok", "ENOENT", "ENODEV"}))

# Afterwards the event works and counts.
write(ev + "/filter", image)
write(ev + "/enable", "1")
read("/etc/hostname")
write(ev + "/enable", "0")
k.check("entries 1" in read(ev + "/filter_tables"), "the re-created event runs its filter")
write(ev + "/filter", "0")
k.expect("the kprobe event is deleted at the end", 0, append(kp, "-:ksft_rm/open"))
k.finish()
