#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# description: who may attach and read BPF64 filters: a non-root user, even
# in tracefs's group (mount option gid=), cannot write a filter file, read
# filter_image or filter_tables; root without CAP_PERFMON and CAP_SYS_ADMIN
# cannot attach an image, nor can a user writing to a filter file that root
# opened; nothing is attached by any of these attempts
# requires: kprobe_events, useradd, setpriv
import grp
import os
import pwd
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "filters"))
from common import *    # noqa: E402,F403  selftests/filters/common.py
import hashlib          # noqa: E402

USER, GROUP = "ksft_bpf64", "ksft_tracing"
PLAN = 18
if not shutil.which("useradd") or not shutil.which("setpriv"):
    k = Ktap(1)
    k.skip("needs useradd and setpriv")
    k.finish()
k = need_root_and_bpf64(PLAN)

kp = path("kprobe_events")
append(kp, "p:ksft_priv/open do_sys_openat2\n")
events = {"tracepoint": event_dir(NETIF_RX), "kprobe": event_dir("ksft_priv:open")}
attached = Prog().ret(1).image()
image = Prog().ret(0).image()


def tag(img):
    return hashlib.sha256(img).hexdigest()[:16]


def shows(ev, img):
    """The filter file shows img's program as the attached one."""
    return read(ev + "/filter").startswith("bpf64 tag %s " % tag(img))


for ev in events.values():
    assert write(ev + "/filter", attached) == 0

# A user, in a group that tracefs gives read access to its files.
subprocess.run(["groupadd", GROUP], check=True)
subprocess.run(["useradd", "-M", "-N", "-g", GROUP, "-s", "/bin/sh", USER], check=True)
uid, gid = pwd.getpwnam(USER).pw_uid, grp.getgrnam(GROUP).gr_gid
mount_opts = [l.split()[3] for l in read("/proc/mounts").splitlines() if l.split()[1] == TRACEFS][0]
k.expect("tracefs is remounted with gid=%s, mode=0750" % GROUP, 0,
         subprocess.run(["mount", "-o", "remount,gid=%d,mode=0750" % gid, TRACEFS]).returncode)


def as_user(fn, groups=True):
    """fn() in a child with the user's uid, in the tracing group or not, and
    no capabilities; its result: 0, an errno, or a string."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(gid if groups else 65534)     # nogroup
            os.setuid(uid)
            res = fn()
        except OSError as e:
            res = e.errno
        except BaseException as e:      # noqa: B902
            res = repr(e)
        os.write(w, repr(res).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 65536)
    os.close(r)
    os.waitpid(pid, 0)
    return eval(data)


def open_write(p, data):
    fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return 0


def open_read(p):
    with open(p, "rb") as f:
        f.read()
    return 0


for name, ev in events.items():
    k.expect("%s: the user cannot open the filter file for writing" % name, ERRNO.EACCES,
             as_user(lambda: open_write(ev + "/filter", image)))
    k.expect("%s: the user cannot read filter_image" % name, ERRNO.EACCES,
             as_user(lambda: open_read(ev + "/filter_image")))
    k.expect("%s: the user cannot read filter_tables" % name, ERRNO.EACCES,
             as_user(lambda: open_read(ev + "/filter_tables")))
    k.check(shows(ev, attached) and read_bytes(ev + "/filter_image") == attached,
            "%s: root's filter is still attached, image unchanged" % name)
k.expect("the group's member reads the filter file (mode 0640): the program's line, not its image",
         0, as_user(lambda: open_read(events["tracepoint"] + "/filter")))
k.expect("a user outside the group cannot even read the filter file", ERRNO.EACCES,
         as_user(lambda: open_read(events["tracepoint"] + "/filter"), groups=False))

# Root without CAP_PERFMON and CAP_SYS_ADMIN: the files open (root owns
# them), the image does not attach.
with open("/tmp/ksft_priv.bpf", "wb") as f:
    f.write(image)
WRITE = ("import os, sys\n"
         "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)\n"
         "try:\n"
         "    os.write(fd, open(sys.argv[2], 'rb').read())\n"
         "except OSError as e:\n"
         "    sys.exit(e.errno)\n")


def capped_write(ev, drop):
    write(path("error_log"), "")
    return subprocess.run(["setpriv", "--bounding-set=" + drop, "--", sys.executable, "-c", WRITE,
                           ev + "/filter", "/tmp/ksft_priv.bpf"]).returncode


ev = events["kprobe"]
k.expect("root without CAP_PERFMON and CAP_SYS_ADMIN: writing an image fails with EPERM",
         ERRNO.EPERM, capped_write(ev, "-perfmon,-sys_admin"))
k.check(shows(ev, attached), "... and root's filter stays attached", read(ev + "/filter"))
k.check("needs CAP_PERFMON or CAP_SYS_ADMIN" in read(path("error_log")),
        "... error_log says which capability is missing", read(path("error_log")))
k.expect("root with CAP_PERFMON but without CAP_SYS_ADMIN attaches the image", 0,
         capped_write(ev, "-sys_admin"))
k.check(shows(ev, image), "... and it is the one attached now", read(ev + "/filter"))
write(ev + "/filter", attached)

# A filter file root opened, written after dropping to the user: the
# capability is checked at write(), for the writer.
fd = os.open(ev + "/filter", os.O_WRONLY | os.O_TRUNC)
k.expect("a user writing to a filter file that root opened gets EPERM", ERRNO.EPERM,
         as_user(lambda: os.write(fd, image) and 0))
os.close(fd)
k.check(shows(ev, attached), "... and root's filter stays attached", read(ev + "/filter"))

# Back to root only.
subprocess.run(["mount", "-o", "remount," + ",".join(
    o for o in mount_opts.split(",") if not o.startswith(("gid=", "mode="))) + ",gid=0,mode=0700", TRACEFS])
for ev in events.values():
    write(ev + "/filter", "0")
write(kp, "")
subprocess.run(["userdel", USER])
subprocess.run(["groupdel", GROUP])
os.unlink("/tmp/ksft_priv.bpf")
k.finish()
