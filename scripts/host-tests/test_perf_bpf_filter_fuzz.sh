#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter --check, --disasm and --tables-file on
# hostile files (empty, truncated at every length, oversized, random bytes,
# mutated images, mangled filter_tables text): no crash, no sanitizer report,
# no hang, and every failure says why on stderr
# requires: build/perf/perf (or PERF=...), the RFC's example images
#
# PERF_FUZZ_COUNT (default 150) mutated inputs per mode; PERF_FUZZ_SEED
# reproduces a run.  With a perf built with ASan/UBSan (scripts/build-perf
# OUT EXTRA_CFLAGS=-fsanitize=address,undefined ...), PERF=OUT/perf makes
# memory errors findings too.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
PERF=${PERF:-$TOP/build/perf/perf}
EX=$TOP/build/tools/bpf64/examples
if [ ! -x "$PERF" ] || ! "$PERF" bpf-filter -h 2>&1 | grep -q -- --tables-file ||
   [ ! -f "$EX/filter_ex1.bpf" ]; then
	ktap_plan 1
	ktap_skip "needs perf with bpf-filter ($PERF) and $EX"
	ktap_finished
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ktap_plan 5
python3 - "$PERF" "$EX" "$work" "${PERF_FUZZ_COUNT:-150}" "${PERF_FUZZ_SEED:-0}" <<'PY'
import os, random, struct, subprocess, sys, time

perf, ex, work, count, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
seed = seed or time.time_ns() % 2**32
rng = random.Random(seed)
env = dict(os.environ, ASAN_OPTIONS="exitcode=99:detect_leaks=0",
           UBSAN_OPTIONS="halt_on_error=1:exitcode=99:print_stacktrace=1")
print("# seed %d (PERF_FUZZ_SEED=%d reproduces), %d inputs per mode" % (seed, seed, count))

ex1 = open(os.path.join(ex, "filter_ex1.bpf"), "rb").read()
ex2 = open(os.path.join(ex, "filter_ex2.bpf"), "rb").read()
TABLES = (b"table 0 type hash key_size 8 elem_size 8 max_entries 4096 entries 2\n"
          b"key 0100000000000000 value 2a00000000000000\n"
          b"key 0200000000000000 value 0700000000000000\n"
          b"table 1 type hash key_size 4 elem_size 16 max_entries 8 entries 1\n"
          b"key 6c6f0000 value 0100000000000000ffffffffffffffff\n")
INTS = [0, 1, -1, 7, 8, 9, 20, 480, 4096, 4097, 35088, 2**31 - 1, -2**31, 2**30]
runs, problems = 0, {}


def run(mode, data, extra=(), name=None):
    """perf bpf-filter MODE FILE: a crash, a sanitizer report, a hang or a
    silent failure is a problem."""
    global runs
    runs += 1
    path = name or os.path.join(work, "in")
    if name is None:
        with open(path, "wb") as f:
            f.write(data)
    try:
        p = subprocess.run([perf, "bpf-filter", mode, path] + list(extra), env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return problem(mode, data, "hangs (30 s)")
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0 or p.returncode >= 99 or "Sanitizer" in err or "runtime error" in err:
        return problem(mode, data, "exit %d: %s" % (p.returncode, err[-1500:]))
    if p.returncode not in (0, 1, 2):
        return problem(mode, data, "exit %d" % p.returncode)
    if p.returncode and not err.strip() and not p.stdout.strip():
        return problem(mode, data, "fails (exit %d) without saying why" % p.returncode)
    if len(p.stdout) > 8 << 20:
        return problem(mode, data, "prints %d bytes" % len(p.stdout))


def problem(mode, data, what):
    key = (mode, what.splitlines()[0][:80])
    if key not in problems:
        keep = os.path.join(work, "..", "perf-fuzz-%d-%d" % (seed, len(problems)))
        if data is not None:
            with open(keep, "wb") as f:
                f.write(data)
        problems[key] = "%s: %s (input kept in %s)" % (mode, what, os.path.abspath(keep))


def mutate(img):
    img = bytearray(img)
    for _ in range(rng.choice((1, 1, 2, 3, 6))):
        what = rng.randrange(8)
        if what == 0 and img:
            img[rng.randrange(len(img))] ^= 1 << rng.randrange(8)
        elif what == 1 and img:
            img[rng.randrange(len(img))] = rng.randrange(256)
        elif what == 2 and len(img) >= 16:
            struct.pack_into("<i", img, 4 + 4 * rng.randrange(3), rng.choice(INTS))
        elif what == 3 and len(img) > 24:      # an insn field: code, regs, off, imm
            i = 16 + 8 * rng.randrange((len(img) - 16) // 8)
            f = rng.randrange(4)
            if f == 0:
                img[i] = rng.randrange(256)
            elif f == 1:
                img[i + 1] = rng.randrange(256)
            elif f == 2:
                struct.pack_into("<h", img, i + 2, rng.choice([0, 1, -1, -2, 32767, -32768, 100]))
            else:
                struct.pack_into("<i", img, i + 4, rng.choice(INTS))
        elif what == 4:
            del img[rng.randrange(len(img) + 1):]
        elif what == 5:
            img += bytes(rng.randrange(256) for _ in range(rng.choice((1, 8, 20, 100))))
        elif what == 6 and img:                 # control characters in the strings
            i = rng.randrange(len(img))
            img[i:i + 1] = rng.choice([b"\n", b"\r", b"\x1b[31m", b"%n%s%s", b"\xff\xfe"])
        else:
            i = rng.randrange(len(img) + 1)
            img[i:i] = bytes(8 * rng.randrange(1, 4))
    return bytes(img)


def mutate_text(text):
    lines = text.split(b"\n")
    for _ in range(rng.choice((1, 2, 4))):
        i = rng.randrange(len(lines))
        words = lines[i].split(b" ")
        what = rng.randrange(7)
        if what == 0 and words:
            words[rng.randrange(len(words))] = rng.choice(
                [b"", b"-1", b"4294967295", b"18446744073709551616", b"0x10", b"zz", b"99999999999",
                 b"1" * 300, b"\xff\x00", b"%s%n"])
        elif what == 1:                        # odd or long hex
            words.append(rng.choice([b"abc", b"0" * 4001, b"g0", b""]))
        elif what == 2:
            del lines[i]
            continue
        elif what == 3:
            lines.insert(i, lines[i])
        elif what == 4:
            lines[i] = lines[i][:rng.randrange(len(lines[i]) + 1)]
            continue
        elif what == 5:
            lines.insert(i, b"x" * rng.choice((1, 4096, 100000)))
            continue
        else:
            words = words[::-1]
        lines[i] = b" ".join(words)
    return b"\n".join(lines)


results = []
for mode in ("--check", "--disasm"):
    before = (runs, len(problems))
    for name in ("/nonexistent", "/", "/dev/null", work):
        run(mode, None, name=name)
    for data in (b"", b"bpf", b"bpf\0", b"bpf\0" + bytes(12), os.urandom(4096),
                 b"bpf\0" + os.urandom(40000), ex1 + bytes(1 << 20), ex1 * 20000):
        run(mode, data)
    for base in (ex1, ex2):
        for n in sorted(set([rng.randrange(len(base)) for _ in range(20)] + [15, 16, 17, 23, 24])):
            run(mode, base[:n])
    for _ in range(count):
        run(mode, mutate(rng.choice((ex1, ex2))))
    results.append((mode, runs - before[0], len(problems) - before[1]))

before = (runs, len(problems))
opts = [[], ["--json"], ["--table", "0:key=u64,value=u64"], ["--table", "1:key=str,value=hex"],
        ["--hist", "0"], ["--hist", "0:value", "--sort", "value"], ["--table", "0:key=s8,value=ptr"]]
for data in (b"", b"\n", b"table", TABLES, TABLES * 1000, os.urandom(2000), b"\0" * 100):
    run("--tables-file", data, rng.choice(opts))
for _ in range(count):
    run("--tables-file", mutate_text(TABLES), rng.choice(opts))
results.append(("--tables-file", runs - before[0], len(problems) - before[1]))

with open(os.path.join(work, "results"), "w") as f:
    for mode, n, bad in results:
        f.write("%s %d %d\n" % (mode, n, bad))
for p in problems.values():
    print("# " + p.replace("\n", "\n#   "))
print("# %d runs of perf bpf-filter" % runs)
PY
while read -r mode n bad; do
	ktap_expect "perf bpf-filter $mode: $n hostile inputs, no crash, hang or silent failure" 0 "$bad"
done < <(cat "$work/results" 2>/dev/null)
[ "$(wc -l < "$work/results" 2>/dev/null)" = 3 ] || ktap_fail "the fuzzer ran (results missing)"
ktap_check "perf bpf-filter --check still accepts the RFC example" "$PERF" bpf-filter --check "$EX/filter_ex1.bpf"
ktap_check "perf bpf-filter --disasm still disassembles it" \
	bash -c "'$PERF' bpf-filter --disasm '$EX/filter_ex1.bpf' | grep -q 'call bpf_trace_printk'"
ktap_finished
