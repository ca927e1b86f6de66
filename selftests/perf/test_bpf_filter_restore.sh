#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter puts tracing back as it found it: after
# SIGINT and SIGTERM, with --global (a predicate filter, a BPF64 filter and
# the enable state restored), on error paths, and the instances and kprobes
# of runs that were killed are removed by the next run
# requires: perf bpf-filter, BPF64 event filters, kprobe events
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 21
make_seed_images
E=$TRACEFS/events/net/netif_receive_skb
top_filter_is() { grep -q "$1" "$E/filter"; }

# --- --global: a predicate filter and the enable state come back -----------
echo 'common_pid != 0' > "$E/filter"
echo 1 > "$E/enable"
before=$(state)
"$PERF" bpf-filter --global --event net:netif_receive_skb "$WORK/filter_ex1.bpf" > "$WORK/out" 2>&1 &
pid=$!
wait_until 30 top_filter_is "^bpf64 tag"
ktap_check "--global attaches to the top-level event" top_filter_is "^bpf64 tag"
ping -c 2 -i 0.2 127.0.0.1 > /dev/null
kill -INT $pid
wait $pid
ktap_expect "SIGINT: exit 0" 0 $?
ktap_expect "--global: the predicate filter and enable 1 are back" "$before" "$(state)"

# --- --global: a BPF64 filter that was there comes back, byte for byte -----
cat "$WORK/filter_ex2.bpf" > "$E/filter"
echo 0 > "$E/enable"
before=$(state)
bf --global --event net:netif_receive_skb "$WORK/filter_ex1.bpf" -q -- ping -c 1 127.0.0.1 > /dev/null 2>&1
ktap_expect "--global over a BPF64 filter: exit 0" 0 $?
ktap_expect "the BPF64 filter (its tag) and enable 0 are back" "$before" "$(state)"
ktap_check "... the same image" cmp "$E/filter_image" "$WORK/filter_ex2.bpf"

# --- --global and a rejected image: nothing changes -------------------------
python3 - "$WORK/filter_ex1.bpf" "$WORK/bad.bpf" <<'PY'
import sys
img = bytearray(open(sys.argv[1], 'rb').read())
img[16 + 8 + 2] = 105          # insn 1 reads the context at +105
open(sys.argv[2], 'wb').write(img)
PY
echo 1 > "$E/enable"
before=$(state)
bf --global --event net:netif_receive_skb "$WORK/bad.bpf" > /dev/null 2>&1
ktap_expect "--global with a rejected image: exit 1" 1 $?
ktap_expect "... the filter and enable state untouched" "$before" "$(state)"
echo 0 > "$E/filter"
echo 0 > "$E/enable"

# --- a private instance: the top level is never touched ---------------------
echo 'len > 0' > "$E/filter"
before=$(state)
"$PERF" bpf-filter --event net:netif_receive_skb "$WORK/filter_ex1.bpf" > /dev/null 2>&1 &
pid=$!
wait_until 30 enabled_in $pid net/netif_receive_skb
ktap_expect "while it runs, the top-level event is as before" \
	"$(sed 's/^instances: /instances: perf-bpf-filter-'$pid' /' <<<"$before")" "$(state)"
kill -INT $pid
wait $pid
ktap_expect "SIGINT: the instance is gone, the top level as before" "$before" "$(state)"
echo 0 > "$E/filter"

# --- a kprobe run ended by SIGTERM ------------------------------------------
before=$(state)
"$PERF" bpf-filter --kprobe do_sys_openat2 "$WORK/filter_ex1.bpf" > /dev/null 2>&1 &
pid=$!
wait_until 60 enabled_in $pid bpf_filter_$pid/do_sys_openat2
ktap_check "the kprobe exists while it runs" grep -q "bpf_filter_$pid/do_sys_openat2 " "$TRACEFS/kprobe_events"
kill -TERM $pid
wait $pid
ktap_expect "SIGTERM: exit 0, the kprobe and the instance are gone" "0 $before" "$? $(state)"

# --- a kprobe run and a rejected image: the kprobe is deleted ---------------
bf --kprobe do_sys_openat2 "$WORK/bad.bpf" > /dev/null 2> "$WORK/err"
ktap_expect "a rejected image on a kprobe: exit 1, the kprobe deleted" "1 $before" "$? $(state)"

# --- killed runs: the next run cleans up ------------------------------------
"$PERF" bpf-filter --kprobe do_sys_openat2 "$WORK/filter_ex1.bpf" > /dev/null 2>&1 &
dead1=$!
wait_until 60 enabled_in $dead1 bpf_filter_$dead1/do_sys_openat2
kill -KILL $dead1
wait $dead1 2> /dev/null
ktap_check "SIGKILL leaves the kprobe and its instance behind" bash -c "
	[ -d $(instance_of $dead1) ] && grep -q 'bpf_filter_$dead1/do_sys_openat2 ' $TRACEFS/kprobe_events"
top_enabled() { [ "$(cat "$TRACEFS/events/$1/enable" 2> /dev/null)" = 1 ]; }
"$PERF" bpf-filter --global --kprobe getname_flags "$WORK/filter_ex1.bpf" > /dev/null 2> "$WORK/err2" &
dead2=$!
wait_until 60 top_enabled bpf_filter_$dead2/getname_flags
kill -KILL $dead2
wait $dead2 2> /dev/null
ktap_check "the next run removed that instance and kprobe" bash -c "
	grep -q 'removing the trace instance perf-bpf-filter-$dead1 of a perf bpf-filter that is gone' '$WORK/err2' &&
	grep -q 'removing the kprobe bpf_filter_$dead1:do_sys_openat2 of a perf bpf-filter that is gone$' '$WORK/err2' &&
	[ ! -d $(instance_of $dead1) ] && ! grep -q 'bpf_filter_$dead1/' $TRACEFS/kprobe_events"
ktap_check "SIGKILL of a --global run leaves its kprobe enabled at the top level" top_enabled bpf_filter_$dead2/getname_flags
bf --event net:netif_receive_skb "$WORK/filter_ex1.bpf" --timeout 1000 > /dev/null 2> "$WORK/err"
ktap_expect_ok "the next run: exit 0" $? "$WORK/err"
ktap_check "... disables and removes that kprobe" \
	grep -q "removing the kprobe bpf_filter_$dead2:getname_flags of a perf bpf-filter that is gone$" "$WORK/err"
ktap_expect "nothing of theirs is left" "$before" "$(state)"

# --- a live run's kprobe is not stale ---------------------------------------
"$PERF" bpf-filter --kprobe do_sys_openat2 "$WORK/filter_ex1.bpf" > /dev/null 2>&1 &
live=$!
wait_until 60 enabled_in $live bpf_filter_$live/do_sys_openat2
bf --event net:netif_receive_skb "$WORK/filter_ex1.bpf" --timeout 1000 > /dev/null 2>&1
ktap_check "another run leaves a live run's kprobe and instance alone" bash -c "
	[ -d $(instance_of $live) ] && grep -q 'bpf_filter_$live/do_sys_openat2 ' $TRACEFS/kprobe_events"
kill -INT $live
wait $live
ktap_expect "... which cleans up after itself" "$before" "$(state)"
ktap_finished
