# SPDX-License-Identifier: GPL-2.0
"""Shared by the filter selftests: paths, images of the RFC's examples."""
import atexit
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
EXAMPLES = os.path.join(TOP, "build", "tools", "bpf64", "examples")

from ktap import *      # noqa: E402,F401,F403
from bpf64 import *     # noqa: E402,F401,F403
import bpf64            # noqa: E402
import ktap             # noqa: E402

NETIF_RX = "net:netif_receive_skb"


def example(name):
    return ktap.read_bytes(os.path.join(EXAMPLES, name + ".bpf"))


def corrected_example(name, dev_name=None):
    """The RFC's example with &skb->dev at this kernel's offset (the RFC's
    kernel had it at +32), taken from DWARF; optionally comparing the
    device name with dev_name instead of "lo"."""
    insns, tables, strtab = bpf64.parse_image(example(name))
    # insn 3 of both examples: r1 += 32, the address of skb->dev
    assert insns[3][0] == 0x04 and insns[3][3] == 32, insns[3]
    insns[3][3] = ktap.member_offset("sk_buff", "dev")
    if dev_name is not None:
        # filter_ex1's insn 0 stores the name compared: "lo" as 28524
        assert insns[0][3] == 28524
        insns[0][3] = int.from_bytes(dev_name.encode().ljust(4, b"\0"), "little")
    return bpf64.build_image(insns, tables, strtab)


JIT_SYSCTL = "/proc/sys/kernel/bpf64_jit_enable"


def use_engine(jit):
    """Filters loaded from now on run JIT'ed (1) or interpreted (0); the
    setting is restored at exit."""
    orig = ktap.read(JIT_SYSCTL).strip()
    atexit.register(ktap.write, JIT_SYSCTL, orig + "\n")
    ktap.write(JIT_SYSCTL, "%d\n" % jit)


def need_root_and_bpf64(plan):
    """Skip everything when the kernel has no BPF64 filters.  BPF64_JIT=0
    in the environment runs the test on the interpreter."""
    if os.geteuid() != 0 or not os.path.exists(
            os.path.join(ktap.event_dir(NETIF_RX), "filter_image")):
        k = ktap.Ktap(1)
        k.skip("needs root and CONFIG_BPF64_EVENT_FILTERS")
        k.finish()
    ktap.reset()
    if os.environ.get("BPF64_JIT") in ("0", "1"):
        use_engine(int(os.environ["BPF64_JIT"]))
    return ktap.Ktap(plan)


def file_offset(binary, symbol):
    """The file offset of symbol, as uprobe_events takes it."""
    syms = subprocess.run(["readelf", "-sW", binary], capture_output=True,
                          text=True, check=True).stdout
    # a library's symbols carry their version: sendto@@GLIBC_2.2.5
    vaddr = next(int(l.split()[1], 16) for l in syms.splitlines()
                 if len(l.split()) >= 8 and l.split()[7].split("@")[0] == symbol)
    segs = subprocess.run(["readelf", "-lW", binary], capture_output=True,
                          text=True, check=True).stdout
    for l in segs.splitlines():
        f = l.split()
        if f[:1] == ["LOAD"]:
            off, va, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if va <= vaddr < va + filesz:
                return vaddr - va + off
    raise LookupError(symbol)


def keep_all(reg="di"):
    """An image keeping every event; it reads one register of its context."""
    p = Prog()
    p.ctx(R6, reg)
    p.ret(1)
    return p.image()


def kprobe_profile(event):
    """(hits, misses) of a kprobe or kretprobe event in kprobe_profile."""
    for line in ktap.read(ktap.path("kprobe_profile")).splitlines():
        f = line.split()
        if f and f[0] == event:
            return int(f[1]), int(f[2])
    return None


def filter_line(evdir):
    """The first line of an event's filter file."""
    return ktap.read(evdir + "/filter").splitlines()[0]


def open_missing(prefix, tag, n=3):
    """Open n files that do not exist: /PREFIX-TAG-0 ..."""
    for i in range(n):
        try:
            open("/%s-%s-%d" % (prefix, tag, i))
        except OSError:
            pass


def second_instance(event, name):
    """A new trace instance NAME (emptied if left over): EVENT's directory."""
    inst = ktap.path("instances", name)
    if not os.path.isdir(inst):
        os.mkdir(inst)
    return ktap.event_dir(event, name)


def toggle_while(child, evdir, watch):
    """Enable and disable EVDIR until CHILD exits: (the number of times,
    the first lines of WATCH's filter file seen meanwhile)."""
    toggles, seen = 0, set()
    while child.poll() is None:
        ktap.write(evdir + "/enable", "1")
        seen.add(filter_line(watch))
        ktap.write(evdir + "/enable", "0")
        toggles += 1
    return toggles, seen


def kprobes_at(symbol):
    """The lines of debugfs' kprobes/list at SYMBOL's entry."""
    return [l for l in ktap.read("/sys/kernel/debug/kprobes/list").splitlines()
            if " %s+0x" % symbol in l]


def on_ftrace(line, direct=False):
    """Does a filter file's first line say the event runs from ftrace
    (with direct: as a trampoline of its own, a JIT'ed kprobe filter's)?"""
    return line.endswith(" path ftrace direct" if direct else " path ftrace")


def check_on_ftrace(k, evdir, symbol, probe, direct=False):
    """Two checks of an enabled kprobe event served from ftrace: its filter
    file says so, and its PROBE ("kprobe", "kretprobe") stays disarmed."""
    k.check(on_ftrace(filter_line(evdir), direct),
            "enabled, it runs from ftrace%s" % (" as a trampoline" if direct else ""),
            filter_line(evdir))
    kprobes = kprobes_at(symbol)
    k.check(len(kprobes) == 1 and "[DISABLED]" in kprobes[0],
            "its %s stays disarmed" % probe, kprobes)


def missing_opener(prefix, n, wait=False):
    """A child opening /PREFIX-0 ... /PREFIX-<n-1>, which do not exist.
    With wait, it has started when this returns and opens nothing until
    it reads a line on its stdin."""
    code = "import os, sys\n"
    if wait:
        code += "print('ready', flush=True)\nsys.stdin.readline()\n"
    code += ("for i in range(%d):\n"
             "    try: os.open('/%s-%%d' %% i, os.O_RDONLY)\n"
             "    except OSError: pass\n" % (n, prefix))
    pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) if wait else {}
    child = subprocess.Popen([sys.executable, "-c", code], **pipes)
    if wait:
        child.stdout.readline()
    return child
