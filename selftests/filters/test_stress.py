#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: attach, replace, detach, reject, remove instances and delete
# kprobe events while both CPUs fire the events, and filters insert and
# delete table elements that the other CPU looks up; nothing leaks or breaks
# requires: kprobe_events
import random
import threading
import time
from common import *

SECONDS = int(os.environ.get("STRESS_SECONDS", "30"))
# ... and at least MIN_OPS operations, however slow the kernel (a debug
# kernel under TCG with other guests beside it did one in 60 s), for at
# most ten times as long
MIN_OPS = int(os.environ.get("STRESS_MIN_OPS", "20"))
k = need_root_and_bpf64(7)
random.seed(int(os.environ.get("STRESS_SEED", "0")) or time.time_ns())
kp = path("kprobe_events")
tp = event_dir(NETIF_RX)
ex1, ex2 = corrected_example("filter_ex1"), corrected_example("filter_ex2")
bad = bytearray(ex1)
bad[16 + 8 + 2] = 105


def counter(max_entries):
    """A program that counts events per CPU-ish key in a big table."""
    p = Prog()
    t = p.table(8, 64, max_entries)
    p.mov(R6, R1)
    p.ctx(R7, "sp")
    p.and_(R7, 0xff0)
    p.stx(8, R10, -8, R7)
    for off in range(-72, -8, 8):
        p.st(8, R10, off, 0)
    p.mov(R1, R6)
    p.mov(R2, t)
    p.mov(R3, R10)
    p.add(R3, -8)
    p.mov(R4, R10)
    p.add(R4, -72)
    p.call("bpf_table_update")
    p.ret(0)
    return p.image()


def churn():
    """Insert or delete one of 4 keys per event, reading an element after
    deleting it: lookups on one CPU race deletes on the other, readers of
    filter_tables race both, and slots are reused after grace periods."""
    p = Prog()
    t = p.table(8, 64, 4)
    p.mov(R6, R1)
    p.ctx(R7, "sp")
    p.rsh(R7, 4)
    p.and_(R7, 3)
    p.stx(8, R10, -8, R7)
    for off in range(-72, -8, 8):
        p.st(8, R10, off, 0)
    p.table_call("bpf_table_lookup", t, -8)
    p.jmp("jeq", R0, 0, "insert")
    p.mov(R9, R0)
    p.table_call("bpf_table_delete", t, -8)
    p.ldx(8, R8, R9, 56)
    p.ja("out")
    p.label("insert")
    p.table_call("bpf_table_update", t, -8, -72)
    p.label("out")
    p.ret(0)
    return p.image()


images = [ex1, ex2, Prog().ret(1).image(), Prog().ret(0).image(), counter(4096), churn()]
k.expect("the insert/delete churn filter loads", 0, write(tp + "/filter", images[5]))
write(tp + "/filter", "0")


def mem_available():
    for line in read("/proc/meminfo").splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])


def add_kprobe():
    return append(kp, "p:ksft/open do_sys_openat2\n")


add_kprobe()
kev = event_dir("ksft:open")
stop = threading.Event()
load = [subprocess.Popen(["taskset", "-c", str(cpu), "ping", "-f", "-q", "-w",
                          str(SECONDS * 10 + 10), "127.0.0.1"], stdout=subprocess.DEVNULL)
        for cpu in (0, 1)]
load += [subprocess.Popen(["taskset", "-c", str(cpu), "bash", "-c",
                           "while :; do read -r x < /etc/hostname; done"])
         for cpu in (0, 1)]


def reader():
    """Read the filter files all the time, as a monitoring tool would."""
    while not stop.is_set():
        for ev in (tp, kev):
            for f in ("filter", "filter_image", "filter_tables"):
                try:
                    read_bytes(os.path.join(ev, f))
                except OSError:
                    pass


threads = [threading.Thread(target=reader)]
for t in threads:
    t.start()
write(tp + "/enable", "1")
write(kev + "/enable", "1")

ops = 0
unexpected = []
start = time.time()


def more():
    elapsed = time.time() - start
    return elapsed < SECONDS or (ops < MIN_OPS and elapsed < 10 * SECONDS)


while more():
    ev = random.choice([tp, kev])
    action = random.randrange(8)
    if action < 4:
        err = write(ev + "/filter", random.choice(images))
    elif action == 4:
        err = write(ev + "/filter", random.choice(["0", "common_pid != 0"]))
    elif action == 5:
        err = write(ev + "/filter", bytes(bad))
        err = 0 if err == ERRNO.EACCES else err
    elif action == 6:
        inst = "ksft_stress"
        os.mkdir(path("instances", inst))
        iev = event_dir(NETIF_RX, inst)
        err = write(iev + "/filter", random.choice(images))
        write(iev + "/enable", "1")
        time.sleep(random.random() / 20)
        os.rmdir(path("instances", inst))
    else:
        write(kev + "/enable", "0")
        err = append(kp, "-:ksft/open")
        err = err or add_kprobe() or write(kev + "/filter", random.choice(images))
        write(kev + "/enable", "1")
    if err:
        unexpected.append((action, os.strerror(err)))
    ops += 1
stop.set()
for t in threads:
    t.join()
write(tp + "/enable", "0")
write(kev + "/enable", "0")
for p in load:
    p.kill()
    p.wait()
print("# %d operations in %.0f s" % (ops, time.time() - start))
k.check(ops >= MIN_OPS, "the operations ran (at least %d)" % MIN_OPS, ops)
k.expect("no operation failed unexpectedly", [], unexpected[:10])

# Afterwards the events work as before.
write(tp + "/filter", "0")
clear_trace()
write(tp + "/enable", "1")
ping(1)
write(tp + "/enable", "0")
k.expect("the tracepoint records normally again", 2,
         len([l for l in trace_lines() if "netif_receive_skb: dev=lo" in l]))
write(kev + "/filter", "0")
clear_trace()
write(kev + "/enable", "1")
read("/etc/hostname")
write(kev + "/enable", "0")
k.check(any("open: (do_sys_openat2" in l for l in trace_lines()), "the kprobe event records normally again")

# 200 attach/detach cycles of a program with a 4096-entry table (~600 KB)
# must give the memory back.
for i in range(10):
    write(tp + "/filter", images[4])
    write(tp + "/filter", "0")
before = mem_available()
for i in range(200):
    k_img = images[4] if i % 2 else ex2
    assert write(tp + "/filter", k_img) == 0
    assert write(tp + "/filter", "0") == 0
after = mem_available()
print("# MemAvailable %d kB before, %d kB after 200 attach/detach cycles" % (before, after))
k.check(before - after < 16 * 1024, "attach/detach cycles do not leak (< 16 MB over 200 cycles of ~600 KB)",
        (before, after))
write(kp, "")
k.check(not os.path.exists(kev), "the kprobe event is gone")
k.finish()
