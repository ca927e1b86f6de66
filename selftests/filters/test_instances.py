#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: filters in trace instances print into their instance, run
# next to other instances' filters, and go away with the instance
import re
from common import *

k = need_root_and_bpf64(8)
inst = "ksft_inst"
os.mkdir(path("instances", inst))
iev, gev = event_dir(NETIF_RX, inst), event_dir(NETIF_RX)

k.check(os.path.exists(iev + "/filter_image"), "instance events have filter_image")
k.expect("an image attaches in the instance", 0, write(iev + "/filter", corrected_example("filter_ex1")))
k.expect("another attaches to the same event in the global instance", 0,
         write(gev + "/filter", corrected_example("filter_ex2")))
write(iev + "/enable", "1")
write(gev + "/enable", "1")
ping(2)
write(iev + "/enable", "0")
write(gev + "/enable", "0")
ilines = trace_lines(inst)
k.expect("the instance's filter printed into the instance (4 packets)", 4,
         len([l for l in ilines if re.search(r"__netif_receive_skb_core[.\w]*: skb \S+ dev ", l)]))
k.expect("nothing was printed into the global buffer", [], [l for l in trace_lines() if "skb " in l])
k.check(re.search(r"entries 1\nkey [0-9a-f]{16} value 0300000000000000",
                  read(gev + "/filter_tables")),
        "the global filter counted the same packets", read(gev + "/filter_tables"))

# Remove the instance while its event is enabled with a filter attached.
write(iev + "/enable", "1")
k.check(subprocess.run(["rmdir", path("instances", inst)]).returncode == 0,
        "the instance is removed with an enabled, filtered event")
ping(1)
write(gev + "/enable", "1")
k.expect("the global event still runs its filter afterwards", 0, ping(2))
write(gev + "/enable", "0")
write(gev + "/filter", "0")
k.finish()
