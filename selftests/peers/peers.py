# SPDX-License-Identifier: GPL-2.0
"""What the pairs of BPF64 filters and bpftrace programs share: perf and
its vmlinux, bpftrace attached before a workload and stopped after it, and
perf bpf-filter's run of the same workload."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import ktap  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PERF = os.environ.get("PERF_BIN") or os.environ.get("PERF") or os.path.join(TOP, "build/perf/perf")
EXC = os.path.join(TOP, "build/linux/tools/bpf64/examples/c")
WORK = os.path.join("/tmp", "bpftrace-pairs-%d" % os.getpid())
# perf under glibc's malloc checks: the environment the shell tests get from
# selftests/lib/malloc_check.sh (a double free aborts perf at once).
MALLOC_CHECK_ENV = dict(os.environ)
MALLOC_CHECK_ENV.update(line.split("=", 1) for line in subprocess.run(
    ["bash", "-c", '. "$1"; env | grep -E "^(LD_PRELOAD|GLIBC_TUNABLES)="', "-",
     os.path.join(TOP, "selftests", "lib", "malloc_check.sh")],
    capture_output=True, text=True).stdout.splitlines())
ATTACH_TIMEOUT = 300        # bpftrace compiles with LLVM: slow under TCG

os.makedirs(WORK, exist_ok=True)
os.environ.setdefault("HOME", WORK)


def find_vmlinux():
    """The vmlinux with the running kernel's build id, for perf -k."""
    want = subprocess.run([PERF, "buildid-list", "-k"], capture_output=True,
                          text=True).stdout.strip()
    cands = ["/lib/modules/%s/build/vmlinux" % os.uname().release,
             "/usr/lib/debug/boot/vmlinux-%s" % os.uname().release]
    cands += sorted(os.path.join(TOP, "build", d, "vmlinux")
                    for d in os.listdir(os.path.join(TOP, "build"))
                    if d.startswith("kbuild"))
    for f in cands:
        if os.path.exists(f):
            got = subprocess.run([PERF, "buildid-list", "-i", f], capture_output=True,
                                 text=True).stdout.split()
            if got and got[0] == want:
                return f
    return None


def missing():
    if os.geteuid() != 0:
        return "needs root"
    if subprocess.run(["which", "bpftrace"], capture_output=True).returncode:
        return "no bpftrace (apt-get install bpftrace: make test installs it)"
    if subprocess.run([PERF, "bpf-filter", "-h"], capture_output=True).returncode != 129:
        return "no perf bpf-filter in " + PERF
    if subprocess.run(["which", "clang"], capture_output=True).returncode:
        return "no clang"
    return None


def start(plan):
    """The test's Ktap and the vmlinux; all fail without bpftrace, perf
    and clang: bpftrace is the oracle of the jobs, without it they are
    not shown."""
    k = ktap.Ktap(plan)
    why = missing()
    if why:
        for i in range(plan):
            k.result(False, "a pair needs bpftrace, perf and clang: " + why)
        k.finish()
    vmlinux = find_vmlinux()
    k.check(vmlinux, "a vmlinux with the running kernel's build id for perf", TOP)
    return k, vmlinux


class Bpftrace:
    """A bpftrace program (-e PROG, or a script FILE with script=True),
    attached before the workload, stopped after."""

    def __init__(self, prog, env=None, script=False):
        self.prog = prog
        self.proc = subprocess.Popen(["bpftrace"] + ([prog] if script else ["-e", prog]),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True, env=env)
        self.head = []
        deadline = time.time() + ATTACH_TIMEOUT
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.head.append(line)
            if line.startswith("Attaching "):
                return
        raise RuntimeError("bpftrace did not attach: " + "".join(self.head))

    def stop(self):
        """What bpftrace printed after attaching, and the maps it prints at
        exit, as text.  Under TCG a SIGINT has been seen to go unanswered:
        it is sent again."""
        for attempt in range(3):
            self.proc.send_signal(signal.SIGINT)
            try:
                out, _ = self.proc.communicate(timeout=ATTACH_TIMEOUT // 3)
                return out
            except subprocess.TimeoutExpired:
                continue
        self.proc.kill()
        return self.proc.communicate()[0]


def perf_lines(vmlinux, args, workload, quiet=True):
    """The --json objects perf bpf-filter ARGS -- WORKLOAD printed, or []."""
    cmd = [PERF, "bpf-filter", "--vmlinux", vmlinux, "--json"] + (["-q"] if quiet else []) + \
        args + ["--", "sh", "-c", workload]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=WORK,
                       timeout=ATTACH_TIMEOUT, env=MALLOC_CHECK_ENV)
    objs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode or not any("tables" in o for o in objs):
        sys.stdout.write("# perf exit %d: %s\n" % (r.returncode,
                                                   r.stderr[-2000:].replace("\n", "\n# ")))
        return []
    return objs


def bucket_low(label):
    """The low bound of a histogram label: (..., 0) -> None, [4K, 8K) -> 4096."""
    if label.startswith("(..."):
        return None
    m = re.match(r"\[(\d+)([KMGTPE]?)", label)
    return int(m.group(1)) * 1024 ** " KMGTPE".index(m.group(2) or " ")


def bt_hist(text):
    """Histogram lines of bpftrace's output: {low bound: count}."""
    out = {}
    for m in re.finditer(r"^(\(\.\.\., 0\)|\[[^\]\)]*[\]\)])\s+(\d+) \|", text, re.M):
        out[bucket_low(m.group(1))] = int(m.group(2))
    return out


def bt_hists(text):
    """bpftrace's histograms of a map with keys, @NAME[KEY]: {KEY: {low bound: count}}."""
    parts = re.split(r"^@\w*\[(.*)\]:\s*$", text, flags=re.M)
    return {key: bt_hist(body) for key, body in zip(parts[1::2], parts[2::2])}


def bt_map(text):
    """@[key]: value lines of bpftrace's output, as a dict."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^@\[(.*)\]: (\d+)$", text, re.M)}
