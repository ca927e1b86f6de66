#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the design's line, perf bpf-filter --kprobe dst_discard:
# dst_discard is a static inline of include/net/dst.h with out-of-line
# copies in several files.  The listing shows each copy with its file; with
# a filter, one kprobe event per copy, the same filter on each, the events
# of two copies seen (IPv6 without a next header reaches net/ipv6/exthdrs.c's,
# a blackhole route net/ipv6/route.c's), the tables added up over the
# copies; a C filter reading skb on every copy; nothing left behind.
# requires: perf bpf-filter, BPF64 event filters, kprobe events on notrace
# functions (CONFIG_KPROBE_EVENTS_ON_NOTRACE: the copies of a static inline
# are notrace), python3, ip
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
perf() { "$PERF" "$@"; }
skip() { ktap_plan 1; ktap_skip "$1"; ktap_finished; }
config=/lib/modules/$(uname -r)/build/.config
if [ -f "$config" ] && ! grep -q '^CONFIG_KPROBE_EVENTS_ON_NOTRACE=y' "$config"; then
	# The copies of a static inline are notrace: such a kernel refuses
	# kprobe events on them, and perf bpf-filter says why.
	ktap_plan 3
	before=$(state)
	perf bpf-filter --kprobe dst_discard "$EX/filter_ex1.bpf" > /dev/null 2> "$WORK/err"
	ktap_expect "CONFIG_KPROBE_EVENTS_ON_NOTRACE off: --kprobe dst_discard FILTER fails" 1 $?
	ktap_check "... each copy refused, with the reason" bash -c "
		grep -q '^kprobe refused: the kernel would not create the kprobe on dst_discard, dst_discard at 0x' '$WORK/err' &&
		grep -q '^dst_discard is notrace (static inline functions are): a kernel without CONFIG_KPROBE_EVENTS_ON_NOTRACE\$' '$WORK/err'"
	ktap_expect "... and nothing is left" "$before" "$(state)"
	ktap_finished
fi
ip -6 route add blackhole 2001:db8::1 2> /dev/null || skip "no IPv6, or no ip(8)"
trap 'ip -6 route del blackhole 2001:db8::1 2> /dev/null; kill -INT $(jobs -p) 2> /dev/null; wait; rm -rf "$WORK"; bf_reset' EXIT
ktap_plan 17
before=$(state)
traffic="python3 $HERE/ipv6_dst_discard.py 3 2"

# --- the listing: every copy, with its file ---------------------------------
perf bpf-filter --kprobe dst_discard > "$WORK/list" 2> "$WORK/err"
ktap_expect_ok "perf bpf-filter --kprobe dst_discard: exit 0" $? "$WORK/err"
ncopies=$(sed -n 's/^dst_discard: kprobe at \([0-9]*\) out-of-line copies .*/\1/p' "$WORK/list")
ktap_check "it lists several out-of-line copies ($ncopies)" test "${ncopies:-0}" -ge 2
ktap_check "... with their files, among them net/ipv6/route.c and net/ipv6/exthdrs.c" bash -c "
	grep -qE '^  [0-9]+ +dst_discard\+0 +0x[0-9a-f]+ +net/ipv6/route.c\$' '$WORK/list' &&
	grep -qE '^  [0-9]+ +dst_discard\+0 +0x[0-9a-f]+ +net/ipv6/exthdrs.c\$' '$WORK/list'"
ktap_check "... and skb, in di at every copy (ctx+112)" \
	grep -qE '^  skb +struct sk_buff \* +%di +ctx\+112$' "$WORK/list"

# --- a filter on every copy --------------------------------------------------
IP=$(bf --arg ip --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["registers"][0]["ctx_offset"])')
python3 "$HERE/mkfilter.py" "$WORK/ip.bpf" count "$IP" > /dev/null
perf bpf-filter --kprobe dst_discard "$WORK/ip.bpf" --table 0:key=ptr,value=u64 -- $traffic \
	> "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "perf bpf-filter --kprobe dst_discard FILTER -- traffic: exit 0" $? "$WORK/err"
ktap_check "one kprobe event per copy, each said with its file" bash -c "
	grep -q '^created $ncopies kprobe events on dst_discard, one for each out-of-line copy:\$' '$WORK/err' &&
	[ \$(grep -cE '^  bpf_filter_[0-9]+:dst_discard(_[0-9]+)?: dst_discard at 0x[0-9a-f]+ in ' '$WORK/err') -eq $ncopies ]"
ktap_check "the same filter attached to each" \
	test "$(grep -c '^attached .*ip.bpf to bpf_filter_[0-9]*:dst_discard' "$WORK/err")" -eq "$ncopies"
# the event of the copy in FILE
event_of() { sed -n "s/^  bpf_filter_[0-9]*:\(dst_discard[_0-9]*\): .* in $1\$/\1/p" "$WORK/err"; }
exthdrs=$(event_of 'net\/ipv6\/exthdrs.c') route=$(event_of 'net\/ipv6\/route.c')
ktap_expect "the copy in net/ipv6/exthdrs.c fired 3 times, the one in net/ipv6/route.c twice" "3 2" \
	"$(grep -c " $exthdrs: (" "$WORK/out") $(grep -c " $route: (" "$WORK/out")"
ktap_check "the tables of the copies are added up, and said to be" \
	grep -q "^# tables of the filters on $ncopies events bpf_filter_[0-9]*:dst_discard\.\.\., added up (end)\$" "$WORK/out"
perf bpf-filter --kprobe dst_discard "$WORK/ip.bpf" --table 0:key=ptr,value=u64 --json -q -- $traffic \
	> "$WORK/out.json" 2> "$WORK/err"
ktap_expect_ok "... --json -q: exit 0" $? "$WORK/err"
ktap_check "... one table: two keys (the copies' ips), 3 and 2 calls" python3 - "$WORK/out.json" "$ncopies" <<'PY'
import json, sys
j = json.loads(open(sys.argv[1]).read())
assert j['summed'] is True and len(j['events']) == int(sys.argv[2]), j
e = j['tables'][0]['entries']
assert sorted(x['value'] for x in e) == [2, 3], e
assert all(x['key'].startswith('dst_discard+') for x in e), e
assert len({x['key_hex'] for x in e}) == 2, e
PY

perf bpf-filter --kprobe dst_discard "$WORK/ip.bpf" --table 0:key=ptr,value=str -- $traffic \
	> "$WORK/out" 2> "$WORK/err"
ktap_check "values that are not numbers: the tables of each copy, said so" bash -c "
	grep -q 'the values of table 0 are not numbers (give their type with --table 0:value=u64): the tables of each event follow' '$WORK/err' &&
	[ \$(grep -c '^# tables of the filter on bpf_filter_[0-9]*:dst_discard[_0-9]* (end)\$' '$WORK/out') -eq $ncopies ]"

# --- a C filter reading skb, on every copy -----------------------------------
if command -v clang > /dev/null; then
	perf bpf-filter --kprobe dst_discard "$HERE/skb_len.c" -- $traffic > "$WORK/out" 2> "$WORK/err"
	ktap_expect_ok "a C filter with ARG_skb on every copy: exit 0" $? "$WORK/err"
	ktap_expect "... skb->len: 8 after the IPv6 header (exthdrs.c), 48 with it (route.c)" "3 2" \
		"$(grep -cE ': len 8\s*$' "$WORK/out") $(grep -cE ': len 48\s*$' "$WORK/out")"
else
	ktap_skip "a C filter with ARG_skb on every copy (no clang)"
	ktap_skip "... skb->len (no clang)"
fi

# --- a kretprobe on every copy, and what is left ------------------------------
perf bpf-filter --kretprobe dst_discard "$WORK/ip.bpf" -q -- $traffic > /dev/null 2> "$WORK/err"
ktap_expect_ok "--kretprobe dst_discard: exit 0" $? "$WORK/err"
ktap_check "... one kretprobe event per copy" \
	grep -q "^created $ncopies kretprobe events on dst_discard%return, one for each out-of-line copy:\$" "$WORK/err"
ktap_expect "no kprobe, no instance left, the top level as before" "$before" "$(state)"
ktap_finished
