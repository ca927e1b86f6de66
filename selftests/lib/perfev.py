# SPDX-License-Identifier: GPL-2.0
"""perf events of trace events from Python, for the selftests of BPF64
filters on perf samples: perf_event_open(2) of a tracepoint (or kprobe)
event by its id, PERF_EVENT_IOC_SET_BPF64 with an image, the count."""
import ctypes
import os
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_NR_perf_event_open = 298          # x86-64
PERF_TYPE_SOFTWARE = 1
PERF_TYPE_TRACEPOINT = 2
PERF_ATTR_SIZE = 128
PERF_EVENT_IOC_ENABLE = 0x2400


def _ioc_w(type_, nr, size):
    return (1 << 30) | (size << 16) | (ord(type_) << 8) | nr


# include/uapi/linux/bpf64.h: struct bpf64_perf_filter is 24 bytes
PERF_EVENT_IOC_SET_BPF64 = _ioc_w("$", 0x80, 24)


def event_open(config, type_=PERF_TYPE_TRACEPOINT, cpu=-1, pid=-1):
    """A counting perf event, disabled: its fd."""
    attr = bytearray(PERF_ATTR_SIZE)
    # type, size, config, sample_period; flags: disabled
    struct.pack_into("<IIQQ", attr, 0, type_, PERF_ATTR_SIZE, config, 1)
    struct.pack_into("<Q", attr, 40, 1)
    buf = ctypes.create_string_buffer(bytes(attr))
    fd = _libc.syscall(_NR_perf_event_open, buf, pid, cpu, -1, 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "perf_event_open")
    return fd


def set_bpf64(fd, image, log_size=256):
    """PERF_EVENT_IOC_SET_BPF64: (0 or errno, the reason of a rejection)."""
    img = ctypes.create_string_buffer(image)
    log = ctypes.create_string_buffer(max(log_size, 1))
    req = ctypes.create_string_buffer(struct.pack(
        "<QIIQ", ctypes.addressof(img), len(image), log_size, ctypes.addressof(log)))
    ret = _libc.ioctl(fd, PERF_EVENT_IOC_SET_BPF64, req)
    return (0 if ret == 0 else ctypes.get_errno()), log.value.decode()


def enable(fd):
    if _libc.ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0:
        raise OSError(ctypes.get_errno(), "PERF_EVENT_IOC_ENABLE")


def count(fd):
    return struct.unpack("<Q", os.read(fd, 8))[0]
