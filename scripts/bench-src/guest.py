# SPDX-License-Identifier: GPL-2.0
"""The guest side of scripts/bench: run the RFC's skb alloc/free loop
(bpf64_bench.ko) under each tracing set-up, in alternating order, and write
one JSON line per measurement.  Run as root in the vm-run guest:

    /usr/bin/python3 guest.py --config build/bench/run/config.json

The config (written by scripts/bench) names the module, the BPF64 images,
the eBPF object and loader, the variants, iterations and repetitions.
"""
import argparse
import json
import os
import subprocess
import sys
import time

TRACEFS = "/sys/kernel/tracing"
RUN = "/sys/kernel/debug/bpf64_bench/run"
TP = TRACEFS + "/events/skb/kfree_skb"
KP_GROUP, KP_EVENT = "bench", "kfree_skb_reason"
KP = "%s/events/%s/%s" % (TRACEFS, KP_GROUP, KP_EVENT)
KR_EVENT = "netdev_alloc_skb_ret"
KR = "%s/events/%s/%s" % (TRACEFS, KP_GROUP, KR_EVENT)
JIT_SYSCTL = "/proc/sys/kernel/bpf64_jit_enable"


def write(path, data):
    """One write(); raise with the path on failure."""
    if isinstance(data, str):
        data = data.encode()
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, data)
    except OSError as e:
        raise OSError(e.errno, "%s: %s" % (path, e.strerror)) from None
    finally:
        os.close(fd)


def read(path):
    with open(path) as f:
        return f.read()


def append(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


class Bench:
    def __init__(self, cfg):
        self.cfg = cfg

    # -- the loop -----------------------------------------------------------
    def trigger_cmd(self, iters):
        """Shell command: a warm-up, then the measured run, then its result."""
        warm = max(1, iters // 20)
        return "echo > %s/trace && echo %d > %s && echo > %s/trace && echo %d > %s && cat %s" % (
            TRACEFS, warm, RUN, TRACEFS, iters, RUN, RUN)

    def run_loop(self, iters, wrapper=()):
        out = subprocess.run(list(wrapper) + ["/bin/sh", "-c", self.trigger_cmd(iters)],
                             capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError("loop failed (%d): %s%s" % (out.returncode, out.stdout, out.stderr))
        f = out.stdout.split()
        res = dict(zip(f[0::2], (int(x) for x in f[1::2])))
        if res.get("iterations") != iters:
            raise RuntimeError("loop ran %s of %d iterations" % (res.get("iterations"), iters))
        return res, out.stderr.strip()

    # -- tracing state ------------------------------------------------------
    def reset(self):
        write(TRACEFS + "/events/enable", "0")
        for d in (TP, KP, KR):
            if os.path.exists(d + "/filter") and read(d + "/filter").split("\n")[0] != "none":
                write(d + "/filter", "0")
        for d, ev in ((KP, KP_EVENT), (KR, KR_EVENT)):
            if os.path.exists(d):
                append(TRACEFS + "/kprobe_events", "-:%s/%s\n" % (KP_GROUP, ev))
        if os.path.exists(JIT_SYSCTL):
            write(JIT_SYSCTL, "1")
        write(TRACEFS + "/trace", "")

    def kprobe_event(self):
        append(TRACEFS + "/kprobe_events",
               "p:%s/%s kfree_skb_reason name=+0(+%d(%%di)):string\n"
               % (KP_GROUP, KP_EVENT, self.cfg["skb_dev_off"]))

    def bpf64_filter(self, evdir, image, jit):
        write(JIT_SYSCTL, "1" if jit else "0")
        with open(image, "rb") as f:
            write(evdir + "/filter", f.read())
        write(JIT_SYSCTL, "1")
        line = read(evdir + "/filter").split("\n")[0]
        want = "jited" if jit else "interpreted"
        if not line.startswith("bpf64 ") or want not in line:
            raise RuntimeError("%s/filter: %r, expected a BPF64 program %s" % (evdir, line, want))
        return line

    def setup(self, v):
        """Attach what variant v measures; return (wrapper command, info)."""
        c = self.cfg
        if v == "off":
            return (), ""
        if v == "tp_enabled":
            write(TP + "/enable", "1")
            return (), ""
        if v == "tp_predicate":
            write(TP + "/filter", "protocol == 65535")
            write(TP + "/enable", "1")
            return (), read(TP + "/filter").strip()
        if v in ("tp_bpf64_jit", "tp_bpf64_interp", "tp_bpf64_ret0", "tp_bpf64_load",
                 "tp_bpf64_jit_lo", "tp_bpf64_interp_lo"):
            image = dict(tp_bpf64_ret0=c["bpf64_tp_ret0_image"],
                         tp_bpf64_load=c["bpf64_tp_load_image"],
                         tp_bpf64_jit_lo=c["bpf64_tp_lo_image"],
                         tp_bpf64_interp_lo=c["bpf64_tp_lo_image"]).get(v, c["bpf64_tp_image"])
            line = self.bpf64_filter(TP, image, "interp" not in v)
            write(TP + "/enable", "1")
            return (), line
        if v in ("tp_bpf64_perf", "tp_bpf64_perf_lo"):
            image = c["bpf64_tp_lo_image" if v.endswith("_lo") else "bpf64_tp_image"]
            return (c["python"], c["bpf64_perf_load"], image, "skb:kfree_skb", "--"), ""
        ebpf = dict(tp_ebpf_raw="bench_raw_tp", tp_ebpf_perf="bench_tracepoint",
                    tp_ebpf_btf="bench_tp_btf", kp_ebpf="bench_kprobe",
                    kp_ebpf_fentry="bench_fentry", kr_ebpf_fexit="bench_fexit",
                    kr_ebpf="bench_kretprobe", tp_ebpf_raw_ret0="bench_raw_tp_ret0",
                    tp_ebpf_raw_load="bench_raw_tp_load", kp_ebpf_ret0="bench_kprobe_ret0")
        control = v.endswith("_lo") and v[:-3] in ebpf
        if v in ebpf or control:
            obj = c["ebpf_obj_lo"] if control else c["ebpf_obj"]
            return (c["ebpf_load"], obj, ebpf[v[:-3] if control else v], "--"), ""
        if v in ("kp_enabled", "kp_predicate", "kp_bpf64_jit", "kp_bpf64_jit_lo", "kp_bpf64_ret0",
                 "kp_bpf64_jit_kprobe", "kp_bpf64_ret0_kprobe"):
            self.kprobe_event()
            # enabled before its filter, the event stays on its kprobe
            on_kprobe = v.endswith("_kprobe")
            if on_kprobe:
                write(KP + "/enable", "1")
            info = ""
            if v == "kp_predicate":
                write(KP + "/filter", 'name == "eth5"')
                info = read(KP + "/filter").strip()
            elif v.startswith("kp_bpf64_ret0"):
                info = self.bpf64_filter(KP, c["bpf64_tp_ret0_image"], True)
            elif v.startswith("kp_bpf64_jit"):
                info = self.bpf64_filter(KP, c["bpf64_kp_lo_image" if v.endswith("_lo")
                                               else "bpf64_kp_image"], True)
            write(KP + "/enable", "1")
            if v.startswith("kp_bpf64"):
                info = read(KP + "/filter").split("\n")[0]
                want = " path kprobe" if on_kprobe else " path ftrace"
                if want not in info:
                    raise RuntimeError("%s: %r, expected%s" % (v, info, want))
            return (), info
        if v in ("kr_bpf64_jit", "kr_bpf64_jit_lo", "kr_bpf64_ret0"):
            append(TRACEFS + "/kprobe_events",
                   "r:%s/%s __netdev_alloc_skb\n" % (KP_GROUP, KR_EVENT))
            image = dict(kr_bpf64_ret0=c["bpf64_tp_ret0_image"],
                         kr_bpf64_jit_lo=c["bpf64_kr_lo_image"]).get(v, c["bpf64_kr_image"])
            info = self.bpf64_filter(KR, image, True)
            write(KR + "/enable", "1")
            return (), read(KR + "/filter").split("\n")[0]
        raise ValueError("unknown variant " + v)

    def check_outcome(self, v, iters, err):
        """Each variant did what it claims: the filters dropped every event
        (nothing recorded; only the benchmark's event is enabled and the
        buffer was emptied before the measured run), the positive controls
        ("_lo": the same work, matching "lo") kept every one (BPF64: all
        recorded; eBPF: all counted in the program's global, which has the
        warm-up's too), and tracing without a filter recorded."""
        recorded = 0
        for cpu in os.listdir(TRACEFS + "/per_cpu"):
            for line in read("%s/per_cpu/%s/stats" % (TRACEFS, cpu)).splitlines():
                if line.startswith(("entries:", "overrun:")):
                    recorded += int(line.split()[1])
        matched = [int(w.split()[-1]) for w in err.splitlines()
                   if w.startswith(("ebpf_load: matched ", "bpf64_perf: matched "))]
        counted = "ebpf" in v or "bpf64_perf" in v    # programs that report matches
        if counted and v.endswith("_lo"):
            if not matched or matched[0] < iters:
                raise RuntimeError("%s: matched %s of %d events" % (v, matched, iters))
        elif counted and matched and matched[0]:
            raise RuntimeError("%s: matched %d events, none should" % (v, matched[0]))
        if v in ("tp_enabled", "kp_enabled", "tp_bpf64_jit_lo", "tp_bpf64_interp_lo",
                 "kp_bpf64_jit_lo", "kr_bpf64_jit_lo"):
            if recorded < iters:
                raise RuntimeError("%s: %d of %d events recorded" % (v, recorded, iters))
        elif recorded:
            raise RuntimeError("%s: %d events recorded, the filter should drop all" % (v, recorded))
        return recorded

    def profile(self, v):
        """perf record -e cpu-clock around the loop: under -icount a sample
        every 10000 ns is one every 10000 instructions, so the profile counts
        instructions; without CONFIG_HIGH_RES_TIMERS the samples come at the
        tick only (HZ), hence the long profile runs."""
        d = self.cfg["profile_dir"]
        os.makedirs(d, exist_ok=True)
        data = "%s/perf-%s.data" % (d, v)
        # Under -icount a sample costs as many ns as it has instructions:
        # perf would take that for a slow interrupt and throttle itself.
        if read("/proc/sys/kernel/perf_cpu_time_max_percent").strip() != "0":
            write("/proc/sys/kernel/perf_event_max_sample_rate", "100000")
            write("/proc/sys/kernel/perf_cpu_time_max_percent", "0")
        for f in (data, data + ".old"):
            if os.path.exists(f):
                os.remove(f)
        self.reset()
        wrapper, _ = self.setup(v)
        try:
            # The task that runs the loop (in its write()), not the idle CPU.
            cmd = list(wrapper) + [self.cfg["perf"], "record", "-q", "-e", "cpu-clock",
                                   "-c", "10000", "-o", data, "--",
                                   "/bin/sh", "-c",
                                   "echo %d > %s" % (self.cfg["profile_iterations"], RUN)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        finally:
            self.reset()
        with open("%s/perf-%s.txt" % (d, v), "w") as f:
            subprocess.run([self.cfg["perf"], "report", "-i", data, "--stdio",
                            "--no-children", "--sort", "sym", "--percent-limit", "0.3"],
                           stdout=f, stderr=subprocess.DEVNULL, check=True)
        print("bench: profile of %s in %s/perf-%s.txt" % (v, d, v), flush=True)

    def measure(self, v, iters):
        self.reset()
        wrapper, info = self.setup(v)
        try:
            res, err = self.run_loop(iters, wrapper)
            recorded = self.check_outcome(v, iters, err)
        finally:
            self.reset()
        if err:
            info = (info + " " + err).strip()
        res["recorded"] = recorded
        return res, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)

    subprocess.run(["/sbin/insmod", cfg["module"]], check=True)
    b = Bench(cfg)
    variants, iters, reps = cfg["variants"], cfg["iterations"], cfg["repetitions"]
    out = open(cfg["results"], "w")
    meta = dict(kind="meta", release=os.uname().release, kernel_tag=cfg["kernel_tag"],
                iterations=iters, repetitions=reps, variants=variants,
                skb_dev_off=cfg["skb_dev_off"],
                ncpus=os.cpu_count())
    out.write(json.dumps(meta) + "\n")
    # Alternate: forward order on even repetitions, backward on odd ones,
    # so no variant always follows the same one.
    for rep in range(reps):
        order = variants if rep % 2 == 0 else variants[::-1]
        for pos, v in enumerate(order):
            t = time.time()
            res, info = b.measure(v, iters)
            rec = dict(kind="run", variant=v, rep=rep, position=pos, ns=res["ns"],
                       iterations=res["iterations"], cpu=res["cpu"],
                       recorded=res["recorded"], info=info)
            out.write(json.dumps(rec) + "\n")
            out.flush()
            print("bench: rep %d %-16s %6.1f ns/iter  (%.1fs) %s" % (
                rep, v, res["ns"] / res["iterations"], time.time() - t, info), flush=True)
    out.close()
    for v in cfg.get("profile", []):
        b.profile(v)
    subprocess.run(["/sbin/rmmod", "bpf64_bench"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
