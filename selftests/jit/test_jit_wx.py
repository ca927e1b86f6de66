#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: no writable and executable kernel mapping while JIT-compiled
# programs are loaded, run and freed; their code is read-only and executable
#
# CONFIG_DEBUG_WX checks the kernel page tables for W+X mappings once, at
# boot.  This test applies the same rule (RW and not NX) to the page tables
# of /sys/kernel/debug/page_tables/kernel (CONFIG_PTDUMP_DEBUGFS) before,
# while and after programs are loaded, and counts the read-only executable
# pages of the module area, where the JIT's code lives.
import re
import time
from common import *

PTDUMP = "/sys/kernel/debug/page_tables/kernel"
k = need_jit(9, PTDUMP)


def page_tables():
    """(W+X ranges, read-only executable bytes in the module area)"""
    wx, rox, modules = [], 0, False
    for line in read(PTDUMP).splitlines():
        if line.startswith("---["):
            modules = "Modules" in line and "End" not in line
            continue
        m = re.match(r"0x([0-9a-f]+)-0x([0-9a-f]+)\s+\S+\s+(.*)$", line)
        if not m:
            continue
        flags = m.group(3).split()
        size = int(m.group(2), 16) - int(m.group(1), 16)
        if "RW" in flags and "NX" not in flags and "x" in flags:
            wx.append(line)
        if modules and "ro" in flags and "x" in flags:
            rox += size
    return wx, rox


def events(count):
    """@count events that take BPF64 filters, other than NETIF_RX."""
    found = []
    for sys_ in sorted(os.listdir(path("events"))):
        d = path("events", sys_)
        if not os.path.isdir(d):
            continue
        for ev in sorted(os.listdir(d)):
            e = os.path.join(d, ev)
            if os.path.exists(e + "/filter_image") and e != event_dir(NETIF_RX):
                found.append(e)
                if len(found) == count:
                    return found
    return found


boot = re.search(r"x86/mm: Checked W\+X mappings: .*", dmesg())
if boot:
    k.check("passed" in boot.group(0), "CONFIG_DEBUG_WX found no W+X mapping at boot",
            boot.group(0))
else:
    k.skip("CONFIG_DEBUG_WX's boot message is no longer in the kernel log")
wx, rox0 = page_tables()
k.expect("no W+X mapping before loading programs", [], wx)

evs = events(32)
ok = [write(e + "/filter", alu_prog(64, i)) == 0 and (engine(e) or 0) > 0
      for i, e in enumerate(evs)]
k.check(len(evs) == 32 and all(ok), "32 events get a JIT-compiled program each",
        "%d events, %d compiled" % (len(evs), sum(ok)))
wx, rox = page_tables()
k.expect("no W+X mapping while they are loaded", [], wx)
k.check(rox >= rox0 + 32 * 4096,
        "their code adds read-only executable pages to the module area",
        "%d bytes before, %d with the programs" % (rox0, rox))

# Run them: enable every event that has one, make some happen.
for e in evs:
    write(e + "/enable", "1")
ping(3)
time.sleep(0.2)
for e in evs:
    write(e + "/enable", "0")
wx, _ = page_tables()
k.expect("no W+X mapping after they ran", [], wx)

# Many more loads and frees on one event.
ev = event_dir(NETIF_RX)
errs = [write(ev + "/filter", alu_prog(64, i)) for i in range(1000)]
write(ev + "/filter", "0")
k.check(not any(errs), "1000 more programs load and are freed", set(errs))
for e in evs:
    write(e + "/filter", "0")
wx, rox = page_tables()
k.expect("no W+X mapping after all are freed", [], wx)
# Other users of the module area (kprobes' instruction slots) may free
# pages meanwhile, never add: no more than before.
k.check(rox <= rox0, "the module area has no more read-only executable pages than before",
        "%d bytes before, %d after" % (rox0, rox))
ktap.reset()
k.finish()
