#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: a kprobe event is defined, read back, enabled, hit, disabled and deleted
# requires: kprobe_events
. ../lib/ktap.sh
. ../lib/tracefs.sh
ktap_require_root
[ -f "$TRACEFS/kprobe_events" ] || { ktap_plan 1; ktap_skip "no kprobe_events"; ktap_finished; }
ktap_plan 7
reset_tracing

# do_sys_openat2 runs on every open(2); the flags argument is in %dx.
ktap_check "define kprobe on do_sys_openat2" \
	bash -c "echo 'p:ksft/open do_sys_openat2 dfd=%di:s32' >> $TRACEFS/kprobe_events"
ktap_check "definition reads back" \
	grep -q '^p:ksft/open do_sys_openat2 dfd=%di:s32' "$TRACEFS/kprobe_events"
ktap_check "enable it" bash -c "echo 1 > $TRACEFS/events/ksft/open/enable"
cat /etc/hostname > /dev/null
ktap_check "hit shows in the trace with its argument (AT_FDCWD)" \
	grep -qE 'open: \(do_sys_openat2\+0x0/0x[0-9a-f]+\) dfd=-100' "$TRACEFS/trace"
ktap_check "disable it" bash -c "echo 0 > $TRACEFS/events/ksft/open/enable"
ktap_check "delete it" bash -c "echo '-:ksft/open' >> $TRACEFS/kprobe_events"
ktap_check "it is gone" bash -c "! test -d $TRACEFS/events/ksft/open && ! grep -q open $TRACEFS/kprobe_events"
reset_tracing
ktap_finished
