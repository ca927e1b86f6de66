#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: test_perf_filter.py with filters interpreted
# (bpf64_jit_enable=0): the filters of perf samples on the other engine
# requires: kprobe_events, perf events
exec env BPF64_JIT=0 python3 "$(dirname "$0")/test_perf_filter.py"
