#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ktap-summary.py [--slowest N] LOG...: count test results in KTAP logs and
print 'N passed, N failed[, N skipped]', after the N slowest tests.

Each log is either a host test (its own KTAP, then 'exit=N' and 'time=S'),
or, when its name starts with 'guest', a kselftest run (top-level results
with each test's KTAP nested under '# ', each result followed by
'# time: S NAME').
Leaf results are counted; a test that failed without a failing leaf (it
crashed, timed out, bailed out, or its plan did not match) counts as one
failure, so nothing that went wrong can vanish from the total.  Exit status
is 1 when anything failed.
"""
import re
import sys

RESULT = re.compile(r"^(ok|not ok) \d+\b(.*)$")


def classify(status, rest):
    if re.search(r"#\s*SKIP", rest, re.I):
        return "skip"
    return "pass" if status == "ok" else "fail"


def count_block(lines):
    """Count the leaf results of one test's KTAP lines."""
    counts = {"pass": 0, "fail": 0, "skip": 0}
    bailed = False
    for line in lines:
        if line.startswith("Bail out!"):
            bailed = True
        m = RESULT.match(line)
        if m:
            counts[classify(m.group(1), m.group(2))] += 1
    return counts, bailed


def failing_leaves(lines, limit=20):
    """Each failing leaf of a test after the diagnostics printed before it
    (ktap_check, ktap_expect and ktap.py print them first), so the summary
    at the end of a long run says what failed, not only which test."""
    out, diag = [], []
    for line in lines:
        m = RESULT.match(line)
        if m:
            if classify(m.group(1), m.group(2)) == "fail":
                out += diag[-8:] + [line]
            diag = []
        elif line.startswith("# "):
            diag.append(line)
    if len(out) > limit:
        out = out[:limit] + ["... %d lines more" % (len(out) - limit)]
    return "".join("\n    " + l for l in out)


def host_log(lines, times, name):
    exit_code = 1
    body = []
    for line in lines:
        if line.startswith("exit="):
            exit_code = int(line[5:] or 1)
        elif line.startswith("time="):
            times.append((float(line[5:]), "host: " + name))
        else:
            body.append(line)
    counts, bailed = count_block(body)
    failed = exit_code not in (0, 4) or bailed
    if failed and counts["fail"] == 0:
        counts["fail"] += 1
    if not any(counts.values()):
        counts["pass" if exit_code == 0 else "skip" if exit_code == 4 else "fail"] += 1
    return counts, [] if not failed else ["exit %d" % exit_code + failing_leaves(body)]


def guest_log(lines, times, name):
    totals = {"pass": 0, "fail": 0, "skip": 0}
    problems = []
    nested = []
    saw_plan = False
    planned = ran = 0
    exit_code = 1
    for line in lines:
        if line.startswith("exit="):
            exit_code = int(line[5:] or 1)
            continue
        m = re.match(r"^1\.\.(\d+)$", line)
        if m and not saw_plan:
            saw_plan, planned = True, int(m.group(1))
            continue
        m = re.match(r"^# time: ([0-9.]+) (.*)$", line)
        if m:
            times.append((float(m.group(1)), m.group(2)))
            continue
        if line.startswith("# "):
            nested.append(line[2:])
            continue
        m = RESULT.match(line)
        if m:
            ran += 1
            counts, bailed = count_block(nested)
            top = classify(m.group(1), m.group(2))
            if not any(counts.values()):
                counts[top] += 1
            elif (top == "fail" or bailed) and counts["fail"] == 0:
                counts["fail"] += 1
            if top == "fail":
                problems.append(line + failing_leaves(nested))
            for k in totals:
                totals[k] += counts[k]
            nested = []
    if not saw_plan or ran != planned:
        totals["fail"] += 1
        problems.append("guest run incomplete: %d of %d tests reported (exit %d)"
                        % (ran, planned, exit_code))
    elif exit_code != 0 and totals["fail"] == 0:
        totals["fail"] += 1
        problems.append("guest run exited %d" % exit_code)
    return totals, problems


def main():
    args = sys.argv[1:]
    slowest = 0
    if args[:1] == ["--slowest"]:
        slowest, args = int(args[1]), args[2:]
    totals = {"pass": 0, "fail": 0, "skip": 0}
    times = []
    for path in args:
        lines = open(path, errors="replace").read().splitlines()
        name = path.rsplit("/", 1)[-1][:-4]
        if name.startswith("host-"):
            name = name[5:]
        counts, problems = (guest_log if name.startswith("guest") else host_log)(
            lines, times, name)
        for k in totals:
            totals[k] += counts[k]
        for p in problems:
            print("FAILED: %s: %s" % (name, p))
    if slowest and times:
        print("the %d slowest tests:" % min(slowest, len(times)))
        for secs, test in sorted(times, reverse=True)[:slowest]:
            print("  %4d:%02d  %s" % (secs // 60, secs % 60, test))
    summary = "%d passed, %d failed" % (totals["pass"], totals["fail"])
    if totals["skip"]:
        summary += ", %d skipped" % totals["skip"]
    print(summary)
    return 1 if totals["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
