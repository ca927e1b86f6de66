#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bpf64_perf_load.py IMAGE SYS:EVENT -- COMMAND...: a counting perf event of
SYS:EVENT on every online CPU, the BPF64 IMAGE as the filter of its samples
(PERF_EVENT_IOC_SET_BPF64), COMMAND run, then on stderr the number of
samples the filter kept ("bpf64_perf: matched N"), as ebpf_load reports its
programs' matches."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "selftests", "lib"))
import perfev  # noqa: E402


def online_cpus():
    cpus = []
    for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
        lo, _, hi = part.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: bpf64_perf_load.py IMAGE SYS:EVENT -- COMMAND...")
    image = open(sys.argv[1], "rb").read()
    sys_, name = sys.argv[2].split(":")
    tp_id = int(open("/sys/kernel/tracing/events/%s/%s/id" % (sys_, name)).read())
    fds = [perfev.event_open(tp_id, cpu=cpu) for cpu in online_cpus()]
    for fd in fds:
        err, why = perfev.set_bpf64(fd, image)
        if err:
            sys.exit("bpf64_perf: %s: %s %s" % (sys.argv[1], os.strerror(err), why))
        perfev.enable(fd)
    sys.stderr.write("bpf64_perf: %s filters the samples of %s on %d perf events\n"
                     % (os.path.basename(sys.argv[1]), sys.argv[2], len(fds)))
    rc = subprocess.run(sys.argv[4:]).returncode
    sys.stderr.write("bpf64_perf: matched %d\n" % sum(perfev.count(fd) for fd in fds))
    sys.exit(rc)


if __name__ == "__main__":
    main()
