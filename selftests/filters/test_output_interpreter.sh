#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: test_output.py with filters interpreted
# (bpf64_jit_enable=0): %s, records and what the buffer refuses on the
# other engine
# requires: kprobe_events
exec env BPF64_JIT=0 python3 "$(dirname "$0")/test_output.py"
