#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: loading and freeing 10000 JIT-compiled programs leaks neither
# their code nor the JIT's or the loader's memory
#
# The code of a program is one vmalloc area allocated by
# bpf_jit_binary_alloc(): /proc/vmallocinfo names its caller, so the number
# of those areas must come back exactly.  The rest is kmalloc/kvmalloc
# memory, counted in SUnreclaim: the programs have 256 insns, so that
# the smallest allocation a load makes, the JIT's 256-byte array of jump
# targets, would leak 2.5 MB over 10000 loads; 1 MB of slack covers what
# else the kernel allocates meanwhile.
#
# Programs go to 100 kprobe events of one group, and writing "0" to the
# group's filter file frees a round of 100 after one RCU synchronization.
import re
import time
from common import *

ROUNDS, EVENTS, INSNS = 100, 100, 256
GROUP = "ksft_jit"
k = need_jit(8, "/proc/vmallocinfo", path("kprobe_events"))


def jit_areas():
    """vmalloc areas of JIT code: allocated by bpf_jit_alloc_exec() (the
    caller vmallocinfo shows for module_alloc() on behalf of the JIT)."""
    return sum(1 for l in read("/proc/vmallocinfo").splitlines()
               if re.search(r"\bbpf_jit_alloc_exec\+|\bbpf_jit_binary_alloc\+", l))


def meminfo():
    write("/proc/sys/vm/drop_caches", "3")
    info = {}
    for l in read("/proc/meminfo").splitlines():
        name, value = l.split(":")
        info[name] = int(value.split()[0]) * 1024
    return info


def load_round(seed):
    """A program on each event of the group; the failures."""
    bad = 0
    for i in range(EVENTS):
        e = path("events", GROUP, "p%d" % i)
        bad += write(e + "/filter", images[(seed + i) % len(images)]) != 0
    return bad


for i in range(EVENTS):
    append(path("kprobe_events"), "p:%s/p%d vfs_read\n" % (GROUP, i))
images = [alu_prog(INSNS, s) for s in range(7)]

# Warm up the caches, then count.
load_round(0)
write(path("events", GROUP, "filter"), "0")
areas0, mem0 = jit_areas(), meminfo()

bad = load_round(1)
e0 = path("events", GROUP, "p0")
k.check(not bad and engine(e0) and engine(e0) > 0,
        "%d programs load, JIT-compiled" % EVENTS, read(e0 + "/filter"))
k.expect("vmallocinfo shows one more JIT area per program", areas0 + EVENTS, jit_areas())
write(path("events", GROUP, "filter"), "0")
k.expect("... and none once they are freed", areas0, jit_areas())

start = time.time()
bad = 0
for r in range(2, ROUNDS + 1):
    bad += load_round(r)
    write(path("events", GROUP, "filter"), "0")
secs = time.time() - start
print("# %d loads and frees in %.1f s" % ((ROUNDS - 1) * EVENTS, secs))
k.expect("10000 programs loaded and freed in all", 0, bad)

areas, mem = jit_areas(), meminfo()
k.expect("no JIT area left", areas0, areas)
vdiff = mem["VmallocUsed"] - mem0["VmallocUsed"]
k.check(vdiff <= 1 << 20, "VmallocUsed grew by less than 1 MB (a page of code per program would be 40 MB)",
        "%+d bytes" % vdiff)
sdiff = mem["SUnreclaim"] - mem0["SUnreclaim"]
k.check(sdiff <= 1 << 20, "SUnreclaim grew by less than 1 MB",
        "%+d bytes" % sdiff)

write(path("kprobe_events"), "")
k.check(not os.path.exists(path("events", GROUP)), "the kprobe events are gone",
        read(path("kprobe_events")))
ktap.reset()
k.finish()
