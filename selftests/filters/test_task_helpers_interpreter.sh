#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: test_task_helpers.py with filters interpreted
# (bpf64_jit_enable=0): the helpers of the task, the time, the CPU,
# strings, stacks and bpf_table_delete on the other engine
# requires: kprobe_events
exec env BPF64_JIT=0 python3 "$(dirname "$0")/test_task_helpers.py"
