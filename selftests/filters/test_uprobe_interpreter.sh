#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: test_uprobe.py with filters interpreted
# (bpf64_jit_enable=0): uprobe and uretprobe filters, user strings and
# perf events of a uprobe on the other engine
# requires: uprobe_events, cc
exec env BPF64_JIT=0 python3 "$(dirname "$0")/test_uprobe.py"
