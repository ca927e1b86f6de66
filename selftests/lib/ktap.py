# SPDX-License-Identifier: GPL-2.0
"""KTAP output and tracefs helpers for python selftests (see ktap.sh)."""
import errno
import json
import os
import re
import subprocess
import sys
import time

TRACEFS = os.environ.get("TRACEFS", "/sys/kernel/tracing")


class Ktap:
    def __init__(self, plan):
        self.plan = plan
        self.count = self.passed = self.failed = self.skipped = 0
        print("TAP version 13")
        print("1..%d" % plan, flush=True)

    def result(self, ok, desc, detail=None):
        self.count += 1
        if ok:
            self.passed += 1
            print("ok %d %s" % (self.count, desc), flush=True)
        else:
            self.failed += 1
            for line in str(detail or "").splitlines()[-20:]:
                print("# " + line)
            print("not ok %d %s" % (self.count, desc), flush=True)
        return ok

    def check(self, cond, desc, detail=None):
        return self.result(bool(cond), desc, detail)

    def expect(self, desc, want, got):
        return self.result(want == got, desc, "expected: %r\ngot:      %r" % (want, got))

    def skip(self, desc):
        self.count += 1
        self.skipped += 1
        print("ok %d %s # SKIP" % (self.count, desc), flush=True)

    def finish(self):
        print("# %d passed, %d failed, %d skipped" % (self.passed, self.failed, self.skipped))
        if self.count != self.plan:
            print("Bail out! planned %d tests, ran %d" % (self.plan, self.count))
            sys.exit(1)
        if self.failed:
            sys.exit(1)
        sys.exit(4 if self.skipped and not self.passed else 0)


def path(*parts):
    return os.path.join(TRACEFS, *parts)


def read(p):
    with open(p) as f:
        return f.read()


def read_bytes(p):
    with open(p, "rb") as f:
        return f.read()


def write(p, data):
    """Write data in one write(); return 0 or the errno."""
    if isinstance(data, str):
        data = data.encode()
    fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, data)
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def append(p, text):
    """Append like the shell's >> (Python's "a" mode seeks, which tracefs
    files refuse); return 0 or the errno."""
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, text.encode())
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def event_dir(event, instance=None):
    """'net:netif_receive_skb' -> its directory in tracefs (or an instance)."""
    sys_, name = event.split(":")
    base = path("instances", instance) if instance else TRACEFS
    return os.path.join(base, "events", sys_, name)


def trace_lines(instance=None):
    base = path("instances", instance) if instance else TRACEFS
    return [l for l in read(os.path.join(base, "trace")).splitlines() if not l.startswith("#")]


def clear_trace(instance=None):
    base = path("instances", instance) if instance else TRACEFS
    write(os.path.join(base, "trace"), "")


def reset():
    """Reset tracing state like ftracetest's initialize_ftrace."""
    write(path("tracing_on"), "0")
    write(path("events/enable"), "0")
    for sys_ in os.listdir(path("events")):
        d = path("events", sys_)
        if not os.path.isdir(d):
            continue
        for ev in os.listdir(d):
            f = os.path.join(d, ev, "filter")
            if os.path.exists(f) and read(f).splitlines()[0] != "none":
                write(f, "0")
    for inst in os.listdir(path("instances")):
        if inst.startswith("ksft"):
            os.rmdir(path("instances", inst))
    write(path("kprobe_events"), "")
    write(path("error_log"), "")
    write(path("trace"), "")
    write(path("tracing_on"), "1")


def ping(count=1, addr="127.0.0.1"):
    return subprocess.run(["ping", "-c", str(count), "-i", "0.2", "-W", "2", addr],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def wait_for(pred, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def vmlinux():
    cand = os.environ.get("VMLINUX") or "/lib/modules/%s/build/vmlinux" % os.uname().release
    return cand if os.path.exists(cand) else None


# What the selftests read of the kernel's structures: looked up together, so
# that one gdb run serves them all.
KNOWN_MEMBERS = ("sk_buff.dev", "sk_buff.len", "net_device.name")
OFFSETS_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                             "build", "member-offsets.json")


def member_offsets(*members, vml=None):
    """Offsets of STRUCT.MEMBERs in this kernel, from its DWARF with gdb.

    gdb reads all of vmlinux's DWARF (a minute under TCG), so one run looks
    up KNOWN_MEMBERS and the ones asked, and the answers are cached in
    build/ for the same vmlinux (its path, size and mtime), where every
    guest of a run finds them."""
    vml = vml or vmlinux()
    st = os.stat(vml)
    key = "%s %d %d" % (os.path.realpath(vml), st.st_size, st.st_mtime_ns)
    known = {}
    try:
        with open(OFFSETS_CACHE) as f:
            known = json.load(f).get(key, {})
    except (OSError, ValueError, AttributeError):
        pass
    if all(m in known for m in members):
        return [known[m] for m in members]
    want = sorted(set(KNOWN_MEMBERS) | set(members))
    cmd = ["gdb", "-batch", "-nx"]
    for m in want:
        struct, member = m.split(".", 1)
        cmd += ["-ex", "print (long)&((struct %s *)0)->%s" % (struct, member)]
    out = subprocess.run(cmd + [vml], capture_output=True, text=True).stdout
    offs = [int(x) for x in re.findall(r"^\$\d+ = (-?\d+)$", out, re.M)]
    if len(offs) != len(want):
        raise RuntimeError("gdb found %d of %s in %s:\n%s" % (len(offs), want, vml, out))
    known = dict(zip(want, offs))
    tmp = "%s.%d" % (OFFSETS_CACHE, os.getpid())
    try:
        with open(tmp, "w") as f:
            json.dump({key: known}, f)
        os.rename(tmp, OFFSETS_CACHE)       # atomic: guests may race
    except OSError:
        pass
    return [known[m] for m in members]


def member_offset(struct, member, vml=None):
    """Offset of struct.member from the kernel's DWARF (member_offsets())."""
    return member_offsets("%s.%s" % (struct, member), vml=vml)[0]


ERRNO = errno
