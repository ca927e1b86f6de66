# SPDX-License-Identifier: GPL-2.0
"""The report of scripts/bench: statistics over the guest's measurements,
the table (instructions per iteration and overhead per event over tracing
off), the ratios and goals, results.json and overhead.png.  Run with
Debian's /usr/bin/python3 (matplotlib).

    report.py --results ours.jsonl [--base base.jsonl] [--jit-bench FILE]
              [--profile-dir DIR] [--series TEXT] --accel TEXT --host TEXT --out DIR
"""
import argparse
import json
import os
import re
import statistics
import sys

LABELS = [
    # key, run number, label, group
    ("off", "1", "tracing off", "base"),
    ("tp_enabled", "2", "skb:kfree_skb enabled, no filter", "tp"),
    ("tp_predicate", "3", "predicate filter 'protocol == 65535'", "tp"),
    ("tp_bpf64_jit", "4", "BPF64 filter, JIT", "tp"),
    ("tp_bpf64_interp", "5", "BPF64 filter, interpreter", "tp"),
    ("tp_ebpf_raw", "6", "upstream eBPF, raw tracepoint", "tp"),
    ("tp_ebpf_perf", "7", "upstream eBPF, perf-event tracepoint", "tp"),
    ("tp_ebpf_btf", "7b", "upstream eBPF, tp_btf (direct guarded loads)", "tp"),
    ("tp_bpf64_perf", "7c", "BPF64 filter of perf samples (PERF_EVENT_IOC_SET_BPF64), JIT",
     "tp"),
    ("kp_predicate", "8", "kprobe event, predicate 'name == \"eth5\"'", "kp"),
    ("kp_bpf64_jit", "9", "kprobe event, BPF64 filter, JIT (runs from ftrace)", "kp"),
    ("kp_bpf64_jit_kprobe", "9k", "the same, enabled before its filter: on the kprobe", "kp"),
    ("kp_ebpf", "10", "upstream eBPF kprobe program", "kp"),
    ("kp_ebpf_fentry", "10b", "upstream eBPF fentry/kfree_skb_reason (context)", "kp"),
    ("kp_enabled", "k0", "kprobe event enabled, no filter", "kp"),
    ("kr_bpf64_jit", "11", "kretprobe event on __netdev_alloc_skb, BPF64 filter of the "
     "returned skb, JIT", "kr"),
    ("kr_bpf64_ret0", "11e", "the same, an empty filter (the kretprobe path's floor)", "kr"),
    ("kr_ebpf_fexit", "12", "upstream eBPF fexit/__netdev_alloc_skb, the same work", "kr"),
    ("kr_ebpf", "12k", "upstream eBPF kretprobe program, the same work", "kr"),
    ("tp_bpf64_ret0", "b1", "breakdown: BPF64 'return 0', JIT", "bd"),
    ("tp_bpf64_load", "b2", "breakdown: BPF64 one bpf_load_pointer(), JIT", "bd"),
    ("tp_ebpf_raw_ret0", "b3", "breakdown: eBPF raw_tp 'return 0'", "bd"),
    ("tp_ebpf_raw_load", "b4", "breakdown: eBPF raw_tp one bpf_probe_read_kernel()", "bd"),
    ("kp_bpf64_ret0", "b5", "breakdown: kprobe event, BPF64 'return 0' (from ftrace)", "bd"),
    ("kp_bpf64_ret0_kprobe", "b5k", "breakdown: the same on the kprobe", "bd"),
    ("kp_ebpf_ret0", "b6", "breakdown: eBPF kprobe 'return 0'", "bd"),
    # positive controls: the same work, matching "lo": every event kept
    ("tp_bpf64_jit_lo", "c1", "control: BPF64 JIT matching \"lo\" (records all)", "ctl"),
    ("tp_bpf64_interp_lo", "c2", "control: BPF64 interpreter matching \"lo\"", "ctl"),
    ("kp_bpf64_jit_lo", "c3", "control: kprobe BPF64 JIT matching \"lo\"", "ctl"),
    ("tp_ebpf_raw_lo", "c4", "control: eBPF raw_tp matching \"lo\" (counts all)", "ctl"),
    ("tp_ebpf_btf_lo", "c5", "control: eBPF tp_btf matching \"lo\"", "ctl"),
    ("kp_ebpf_lo", "c6", "control: eBPF kprobe matching \"lo\"", "ctl"),
    ("kr_bpf64_jit_lo", "c8", "control: kretprobe BPF64 JIT matching \"lo\"", "ctl"),
    ("kr_ebpf_fexit_lo", "c9", "control: eBPF fexit matching \"lo\"", "ctl"),
    ("tp_bpf64_perf_lo", "c7", "control: BPF64 perf-sample filter matching \"lo\" (counts all)",
     "ctl"),
]
LABEL = {k: (n, l, g) for k, n, l, g in LABELS}

# name, numerator, denominator, goal (max or min), what
RATIOS = [
    ("bpf64_jit/predicate", "tp_bpf64_jit", "tp_predicate", ("<=", 0.25),
     "BPF64-JIT overhead over the predicate filter's (tracepoint); the predicate "
     "does less work: one field of the record, no pointer chase"),
    ("bpf64_jit/ebpf_tp_btf", "tp_bpf64_jit", "tp_ebpf_btf", ("<", 1.0),
     "BPF64-JIT overhead over upstream's strongest same-work program, tp_btf "
     "with direct guarded loads"),
    ("bpf64_jit/ebpf_raw_tp", "tp_bpf64_jit", "tp_ebpf_raw", ("<=", 0.6),
     "BPF64-JIT overhead over upstream eBPF raw_tp's (bpf_probe_read_kernel)"),
    ("bpf64_jit/ebpf_tracepoint", "tp_bpf64_jit", "tp_ebpf_perf", None,
     "BPF64-JIT overhead over upstream eBPF perf-event tracepoint's"),
    ("perf: bpf64_perf/ebpf_tracepoint", "tp_bpf64_perf", "tp_ebpf_perf", ("<=", 0.25),
     "the perf path: a BPF64 filter of a perf event's samples (run before the sample is "
     "built) over upstream's perf-event tracepoint program (run on the built sample)"),
    ("interpreter/jit", "tp_bpf64_interp", "tp_bpf64_jit", (">=", 4.0),
     "BPF64 interpreter overhead over the JIT's (guest)"),
    ("kprobe: bpf64_jit/predicate", "kp_bpf64_jit", "kp_predicate", None,
     "kprobe: BPF64-JIT overhead over the predicate filter's"),
    ("kprobe: bpf64_jit/ebpf", "kp_bpf64_jit", "kp_ebpf", ("<=", 0.5),
     "kprobe: BPF64-JIT overhead over upstream eBPF kprobe's"),
    ("kprobe: floor bpf64_ret0/ebpf", "kp_bpf64_ret0", "kp_ebpf", None,
     "kprobe: an empty BPF64 filter (the kprobe event's path alone) over upstream's "
     "kprobe program doing the work: the floor of the ratio above on this hook"),
    ("kprobe: bpf64_jit/ebpf_fentry", "kp_bpf64_jit", "kp_ebpf_fentry", ("<=", 1.0),
     "kprobe: BPF64-JIT overhead (the event runs from ftrace) over upstream fentry's"),
    ("kretprobe: bpf64_jit/ebpf_fexit", "kr_bpf64_jit", "kr_ebpf_fexit", ("<=", 1.0),
     "kretprobe: BPF64-JIT overhead on a return (the kretprobe path) over upstream fexit's"),
    ("kretprobe: bpf64_jit/ebpf", "kr_bpf64_jit", "kr_ebpf", None,
     "kretprobe: BPF64-JIT overhead over upstream eBPF kretprobe's"),
    ("kretprobe: floor bpf64_ret0/ebpf_fexit", "kr_bpf64_ret0", "kr_ebpf_fexit", None,
     "kretprobe: an empty BPF64 filter (the path alone) over upstream fexit doing the work"),
    ("kprobe: via kprobe/ebpf", "kp_bpf64_jit_kprobe", "kp_ebpf", None,
     "kprobe: BPF64-JIT overhead when the event runs on its kprobe, over upstream "
     "eBPF kprobe's (the path before the ftrace one, for context)"),
]

# name, variant, goal on its overhead (instructions per event), what
ABSOLUTE = [
    ("kprobe: empty filter", "kp_bpf64_ret0", ("<=", 60.0),
     "an empty BPF64 filter on the kprobe event running from ftrace: the path's floor"),
    ("kprobe: RFC filter", "kp_bpf64_jit", ("<=", 125.0),
     "the RFC's filter on the kprobe event running from ftrace"),
]


def load(path):
    meta, runs = None, {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec["kind"] == "meta":
                meta = rec
            else:
                runs.setdefault(rec["variant"], []).append(rec)
    if meta is None or not runs:
        sys.exit("report: %s has no measurements" % path)
    return meta, runs


def stats(recs):
    vals = [r["ns"] / r["iterations"] for r in recs]
    mn, med, mx = min(vals), statistics.median(vals), max(vals)
    return dict(values=[round(v, 3) for v in vals], n=len(vals), min=round(mn, 3),
                median=round(med, 3), max=round(mx, 3),
                spread_pct=round(100.0 * (mx - mn) / mn, 3))


def summarize(runs):
    out = {}
    for v, recs in runs.items():
        out[v] = stats(recs)
        out[v]["info"] = sorted({r["info"] for r in recs if r["info"]})
    if "off" in out:
        for v, s in out.items():
            s["overhead_min"] = round(s["min"] - out["off"]["min"], 3)
            s["overhead_median"] = round(s["median"] - out["off"]["median"], 3)
    return out


def goal_ok(value, goal):
    op, limit = goal
    if op == "<":
        return value < limit
    return value <= limit if op == "<=" else value >= limit


def parse_jit_bench(path):
    """jit_bench's 'name: insns N, interpreter X ns/run, JIT Y ns/run, ratio R'
    lines, from one or more runs: the best time of each, and their ratio."""
    res = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^([\w-]+): insns (\d+), interpreter ([\d.]+) ns/run, "
                         r"JIT ([\d.]+) ns/run, ratio ([\d.]+)", line)
            if not m:
                continue
            r = res.setdefault(m.group(1), dict(insns=int(m.group(2)), runs=0,
                                                interpreter_ns=float("inf"),
                                                jit_ns=float("inf")))
            r["runs"] += 1
            r["interpreter_ns"] = min(r["interpreter_ns"], float(m.group(3)))
            r["jit_ns"] = min(r["jit_ns"], float(m.group(4)))
            r["ratio"] = round(r["interpreter_ns"] / r["jit_ns"], 2)
    return res


def breakdown(summary):
    """Steps of the RFC's filter, from the breakdown variants: running an
    empty program, the first read (skb->dev), the rest (dev->name compare)."""
    need = ("tp_bpf64_ret0", "tp_bpf64_load", "tp_bpf64_jit",
            "tp_ebpf_raw_ret0", "tp_ebpf_raw_load", "tp_ebpf_raw")
    if not all(k in summary for k in need):
        return None
    o = {k: summary[k]["overhead_min"] for k in need}
    return [
        ("run an empty program ('return 0')", o["tp_bpf64_ret0"], o["tp_ebpf_raw_ret0"]),
        ("+ read skb->dev (load_pointer/probe_read)",
         o["tp_bpf64_load"] - o["tp_bpf64_ret0"], o["tp_ebpf_raw_load"] - o["tp_ebpf_raw_ret0"]),
        ("+ compare dev->name (memcmp/probe_read+cmp)",
         o["tp_bpf64_jit"] - o["tp_bpf64_load"], o["tp_ebpf_raw"] - o["tp_ebpf_raw_load"]),
        ("= the RFC's filter", o["tp_bpf64_jit"], o["tp_ebpf_raw"]),
    ]


def profiles(d, summary):
    """The perf report --sort sym outputs of the guest, as shares and as
    instructions per iteration."""
    out = {}
    if not os.path.isdir(d):
        return out
    for name in sorted(os.listdir(d)):
        m = re.match(r"perf-(\w+)\.txt$", name)
        if not m or m.group(1) not in summary:
            continue
        v, top, samples = m.group(1), [], 0
        with open(os.path.join(d, name)) as f:
            for line in f:
                sm = re.match(r"# Samples: (\d+)(K?)", line)
                if sm:
                    samples = int(sm.group(1)) * (1000 if sm.group(2) else 1)
                pm = re.match(r"\s+([\d.]+)%\s+\[k\]\s+(\S+)", line)
                if pm:
                    pct = float(pm.group(1))
                    top.append((pm.group(2), pct, round(pct / 100 * summary[v]["min"], 1)))
        out[v] = dict(samples=samples, top=top)
    return out


def chart(summary, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k, *_ in LABELS if k in summary and k != "off"]
    colors = dict(tp="#4472c4", kp="#ed7d31", kr="#ffc000", bd="#a5a5a5", ctl="#70ad47")
    y = list(range(len(keys)))[::-1]
    ovh = [summary[k]["overhead_min"] for k in keys]
    err = [max(0.0, summary[k]["overhead_median"] - summary[k]["overhead_min"]) for k in keys]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(keys) + 1.6))
    ax.barh(y, ovh, xerr=[[0] * len(keys), err], color=[colors[LABEL[k][2]] for k in keys],
            capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(["%s. %s" % (LABEL[k][0], LABEL[k][1]) for k in keys], fontsize=8)
    for yy, v in zip(y, ovh):
        ax.text(v, yy, " %.0f" % v, va="center", fontsize=8)
    ax.set_xlabel("overhead over tracing off, guest instructions per event "
                  "(min of runs; whisker to the median)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--base")
    ap.add_argument("--jit-bench")
    ap.add_argument("--accel", default="")
    ap.add_argument("--host", default="")
    ap.add_argument("--profile-dir")
    ap.add_argument("--series", default="")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    meta, runs = load(a.results)
    summary = summarize(runs)
    missing = [v for v in meta["variants"] if v not in summary or
               summary[v]["n"] != meta["repetitions"]]
    if missing:
        sys.exit("report: variants without all their runs: %s" % ", ".join(missing))
    report = dict(accelerator=a.accel, host=a.host, release=meta["release"], series=a.series,
                  iterations=meta["iterations"], repetitions=meta["repetitions"],
                  unit="guest instructions per iteration (-icount: 1 ns = 1 instruction)",
                  variants={}, ratios={}, goals=[])
    for k, n, l, g in LABELS:
        if k in summary:
            report["variants"][k] = dict(run=n, label=l, **summary[k])

    print()
    print("The RFC's benchmark: %d x netdev_alloc_skb(lo, 128) + kfree_skb(), %d runs each, "
          "alternating order" % (meta["iterations"], meta["repetitions"]))
    print("kernel %s; accelerator: %s" % (meta["release"], a.accel))
    if a.series:
        print("series: %s" % a.series)
    print("WARNING: TCG: only ratios are meaningful; figures are guest instructions, not time")
    print()
    hdr = "%-4s %-50s %9s %9s %7s %9s %9s" % ("run", "variant", "min", "median", "spread",
                                            "overhead", "(median)")
    print(hdr)
    print("%-4s %-50s %9s %9s %7s %9s %9s" % ("", "", "insn/it", "insn/it", "%",
                                            "insn/ev", "insn/ev"))
    print("-" * len(hdr))
    for k, n, l, g in LABELS:
        if k not in summary:
            continue
        s = summary[k]
        print("%-4s %-50s %9.1f %9.1f %7.2f %9.1f %9.1f" % (
            n, l, s["min"], s["median"], s["spread_pct"], s["overhead_min"],
            s["overhead_median"]))
    print()
    print("Ratios of overheads (min-based; median-based in brackets):")
    for name, num, den, goal, what in RATIOS:
        if num not in summary or den not in summary or summary[den]["overhead_min"] <= 0:
            continue
        r = summary[num]["overhead_min"] / summary[den]["overhead_min"]
        rm = (summary[num]["overhead_median"] / summary[den]["overhead_median"]
              if summary[den]["overhead_median"] > 0 else float("nan"))
        report["ratios"][name] = dict(min_based=round(r, 3), median_based=round(rm, 3),
                                      what=what)
        verdict = ""
        if goal:
            ok = goal_ok(r, goal)
            verdict = "goal %s %.2f: %s" % (goal[0], goal[1], "met" if ok else "MISSED")
            report["goals"].append(dict(goal="%s %s %.2f" % (name, goal[0], goal[1]),
                                        value=round(r, 3), met=ok))
        print("  %-28s %6.2f  [%6.2f]  %s" % (name, r, rm, verdict))

    for name, v, goal, what in ABSOLUTE:
        if v not in summary:
            continue
        x = summary[v]["overhead_min"]
        ok = goal_ok(x, goal)
        report["goals"].append(dict(goal="%s %s %.0f insns/event" % (name, goal[0], goal[1]),
                                    value=round(x, 1), met=ok, what=what))
        print("  %-28s %6.1f insns/event  goal %s %.0f: %s" % (
            name, x, goal[0], goal[1], "met" if ok else "MISSED"))

    bd = breakdown(summary)
    if bd:
        report["breakdown"] = bd
        print()
        print("Breakdown of the tracepoint filters' overhead (insns/event, min-based):")
        print("  %-44s %8s %8s" % ("", "BPF64", "eBPF"))
        for step, b, e in bd:
            print("  %-44s %8.1f %8.1f" % (step, b, e))

    if a.base:
        bmeta, bruns = load(a.base)
        bsum = summarize(bruns)
        report["baseline"] = dict(release=bmeta["release"], variants=bsum, ratios={})
        print()
        print("Fast path against the unpatched kernel (%s), per iteration:" % bmeta["release"])
        for k in ("off", "tp_enabled", "tp_predicate", "tp_ebpf_raw", "tp_ebpf_perf"):
            if k not in bsum or k not in summary:
                continue
            r = summary[k]["min"] / bsum[k]["min"]
            rm = summary[k]["median"] / bsum[k]["median"]
            # the measured noise; the goal is stated to two decimals
            noise = max(summary[k]["spread_pct"], bsum[k]["spread_pct"]) / 100
            ok = abs(r - 1) <= noise or round(r, 2) == 1.00
            diff = summary[k]["min"] - bsum[k]["min"]
            ovh = (summary[k]["overhead_min"] / bsum[k]["overhead_min"]
                   if k != "off" and bsum[k]["overhead_min"] > 0 else None)
            report["baseline"]["ratios"][k] = dict(
                min_based=round(r, 5), median_based=round(rm, 5), noise=round(noise, 5),
                overhead_ratio=round(ovh, 4) if ovh else None, insns_per_iteration_more=round(diff, 2),
                ok=ok)
            print("  %-4s %-40s ours/unpatched %.4f [%.4f] (%+.1f insns/iteration), "
                  "noise %.3f%%%s" % (LABEL[k][0], LABEL[k][1], r, rm, diff, 100 * noise,
                                      ", overhead ratio %.3f" % ovh if ovh else ""))
            if k == "tp_enabled":
                in_noise = abs(r - 1) <= noise
                report["goals"].append(dict(goal="fast path (run 2) ours/unpatched = 1.00",
                                            value=round(r, 5), met=ok,
                                            within_measurement_noise=in_noise,
                                            insns_per_event_more=round(diff, 2)))
                if in_noise:
                    verdict = "met (within the noise)"
                elif ok:
                    verdict = ("met at two decimals; the %+.1f insns/event are real "
                               "(the noise is %.3f%%)" % (diff, 100 * noise))
                else:
                    verdict = "MISSED"
                print("       goal 1.00: %s" % verdict)

    if a.jit_bench:
        jb = parse_jit_bench(a.jit_bench)
        report["host_jit"] = jb
        print()
        print("Host, native (jit_bench on %s):" % a.host)
        for name, r in jb.items():
            print("  %-14s %4d insns: interpreter %7.1f ns, JIT %6.1f ns, JIT %.1fx faster" % (
                name, r["insns"], r["interpreter_ns"], r["jit_ns"], r["ratio"]))
        if "seed-like" in jb:
            ok = jb["seed-like"]["ratio"] >= 5
            report["goals"].append(dict(goal="JIT >= 5x interpreter natively (RFC-like filter)",
                                        value=jb["seed-like"]["ratio"], met=ok))
            print("  goal JIT >= 5x interpreter, RFC-like filter: %s" % ("met" if ok else "MISSED"))
        if "compute" in jb:
            ok = jb["compute"]["ratio"] >= 5
            report["goals"].append(dict(goal="JIT >= 5x interpreter natively (compute filter)",
                                        value=jb["compute"]["ratio"], met=ok))
            print("  goal JIT >= 5x interpreter, compute filter:  %s" % ("met" if ok else "MISSED"))

    if a.profile_dir:
        prof = profiles(a.profile_dir, summary)
        if prof:
            report["profiles"] = prof
            print()
            print("Profiles (perf record -e cpu-clock in the guest, at the tick; "
                  "insns/iteration = share x the variant's min):")
            for v, p in prof.items():
                print("  %s (%d samples):" % (v, p["samples"]))
                for sym, pct, ins in p["top"][:14]:
                    print("    %6.2f%%  %7.1f  %s" % (pct, ins, sym))

    print()
    print("Goals: %d met, %d missed" % (sum(g["met"] for g in report["goals"]),
                                       sum(not g["met"] for g in report["goals"])))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    chart(summary, os.path.join(a.out, "overhead.png"),
          "The RFC's benchmark on %s, %d x %d iterations\n%s; only ratios are meaningful" % (
              meta["release"], meta["repetitions"], meta["iterations"], a.accel))
    print("bench: wrote %s and %s" % (os.path.join(a.out, "results.json"),
                                      os.path.join(a.out, "overhead.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
