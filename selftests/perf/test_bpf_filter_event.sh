#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter --event net:netif_receive_skb with the RFC's
# examples, their offsets corrected from DWARF (--member sk_buff.dev): the
# trace while pinging lo, the tables (--table, --json, --hist, --sort),
# --interval, SIGUSR1, --timeout, --readback; the top-level event untouched
# requires: perf bpf-filter, BPF64 event filters, ping
cd "$(dirname "$0")" || exit 1
. ./lib.sh
bf_require
ktap_plan 26
ping="ping -c 3 -i 0.2 127.0.0.1"

# --- offsets from DWARF, the seed images corrected with them ---------------
make_seed_images
ktap_expect "skb is the tracepoint's arg1, at ctx+104 (si)" 104 "$ARG_SKB"
dev=$("$PERF" probe -k "$VMLINUX" --definition 'consume_skb skb->dev' 2>/dev/null |
	sed -n 's/.* dev=+\([0-9]*\)(.*/\1/p')
ktap_expect "--member sk_buff.dev is where perf probe reads skb->dev" "$dev" "$OFF_DEV"
for f in filter_ex1 filter_ex2; do
	ktap_check "$f.bpf with this kernel's offsets passes --check" bf --check "$WORK/$f.bpf"
done
before=$(state)

# --- filter_ex1: print lo's packets, drop the events ------------------------
bf --event net:netif_receive_skb "$WORK/filter_ex1.bpf" -- $ping > "$WORK/out" 2> "$WORK/err"
ktap_expect_ok "filter_ex1 with ping: exit 0" $? "$WORK/err"
ktap_check "it attached in a private instance" \
	grep -q "attached .*filter_ex1.bpf to net:netif_receive_skb in the trace instance perf-bpf-filter-" "$WORK/err"
ktap_expect "it printed each of the 6 packets on lo" 6 \
	"$(grep -c '__netif_receive_skb_core[.a-z0-9]*: skb [0-9a-f]* dev [0-9a-f]*' "$WORK/out")"
ktap_expect "... all of the same device" 1 "$(grep -o ' dev [0-9a-f]*' "$WORK/out" | sort -u | wc -l)"
ktap_check "... and dropped the events (it returns 0)" bash -c "! grep -q 'netif_receive_skb: dev=' '$WORK/out'"
ktap_expect "the top-level event, instances and kprobes are as before" "$before" "$(state)"

# --- filter_ex2: packets per device in table 0 ------------------------------
bf --event net:netif_receive_skb "$WORK/filter_ex2.bpf" --table 0:key=ptr,value=u64 --json \
	-- sh -c "$ping > /dev/null" > "$WORK/out.json" 2> "$WORK/err"
ktap_expect_ok "filter_ex2 --json with ping: exit 0" $? "$WORK/err"
ktap_check "every line of the output is JSON" python3 -c "
import json, sys
for line in open(sys.argv[1]):
    json.loads(line)" "$WORK/out.json"
grep '"tables"' "$WORK/out.json" > "$WORK/tables.json"
ktap_expect "the tables come once, at the end" "1 end" \
	"$(wc -l < "$WORK/tables.json") $(json 'j["why"]' "$WORK/tables.json")"
ktap_expect "one device counted: 6 packets, the first inserting 0" "1 5" \
	"$(json 'len(j["tables"][0]["entries"]), j["tables"][0]["entries"][0]["value"]' "$WORK/tables.json")"
ktap_check "the key is a kernel address (ptr), its bytes in key_hex" python3 -c "
import json, sys
e = json.load(open(sys.argv[1]))['tables'][0]['entries'][0]
addr = int(e['key'].split()[0], 16)
assert addr >= 0xff00000000000000, e
assert bytes.fromhex(e['key_hex']) == addr.to_bytes(8, 'little'), e" "$WORK/tables.json"
ktap_expect "the filter line and the event are in the JSON" "net:netif_receive_skb bpf64 tag" \
	"$(json 'j["event"], j["filter"][:9]' "$WORK/tables.json" | tr -d "(),'")"
ktap_expect "the top-level event, instances and kprobes are as before" "$before" "$(state)"

bf --event net:netif_receive_skb "$WORK/filter_ex2.bpf" -q --table 0:key=hex,value=u64 \
	--sort value --hist 0:value -- $ping > "$WORK/out" 2> "$WORK/err"
ktap_check "--hist 0:value draws the value 5 in 4 - 8, as perf ftrace latency draws" \
	grep -qE '^ +4 - 8 +\| +1 \| #{46} \|$' "$WORK/out"
ktap_check "--table hex shows the key as a number, -q no trace" bash -c "
	grep -qE '^  0xff[0-9a-f]{14} +5\$' '$WORK/out' && ! grep -q netif_receive_skb: '$WORK/out' &&
	! grep -q attached '$WORK/err'"

# --- --interval, SIGUSR1, --timeout ----------------------------------------
"$PERF" bpf-filter --event net:netif_receive_skb "$WORK/filter_ex2.bpf" --json -q -I 1000 > "$WORK/iv.json" 2>&1 &
pid=$!
wait_until 30 enabled_in $pid net/netif_receive_skb
ping -c 4 -i 0.5 127.0.0.1 > /dev/null
kill -USR1 $pid
sleep 1.5
kill -INT $pid
wait $pid
ktap_expect "SIGINT ends a run with --interval: exit 0" 0 $?
ktap_check "tables every second, on SIGUSR1 and at the end" python3 -c "
import json, sys
why = [json.loads(l)['why'] for l in open(sys.argv[1]) if l.startswith('{')]
assert why.count('interval') >= 2 and why.count('SIGUSR1') == 1 and why[-1] == 'end', why" "$WORK/iv.json"
start=$(date +%s)
bf --event net:netif_receive_skb "$WORK/filter_ex1.bpf" -q --timeout 2000 > /dev/null 2>&1
ktap_expect "--timeout 2000 stops after 2 seconds: exit 0" "0 ok" \
	"$? $([ $(($(date +%s) - start)) -ge 2 ] && [ $(($(date +%s) - start)) -lt 30 ] && echo ok)"

# --- --readback of what is attached ----------------------------------------
"$PERF" bpf-filter --event net:netif_receive_skb "$WORK/filter_ex2.bpf" -q > /dev/null 2>&1 &
pid=$!
wait_until 30 enabled_in $pid net/netif_receive_skb
bf --readback net:netif_receive_skb > "$WORK/rb" 2>&1
kill -INT $pid
wait $pid
tag=$(bf --check "$WORK/filter_ex2.bpf" | sed -n 's/.* tag //p')
ktap_check "--readback finds the filter in the instance, with its tag" \
	grep -q "^; net:netif_receive_skb in the trace instance perf-bpf-filter-$pid: bpf64 tag $tag " "$WORK/rb"
ktap_expect "--readback disassembles the image that was attached" \
	"$(bf --disasm "$WORK/filter_ex2.bpf" | grep '^ *[0-9]*: ')" "$(grep '^ *[0-9]*: ' "$WORK/rb")"
ktap_expect "--readback after the run: nothing attached" "no BPF64 filter is attached to net:netif_receive_skb" \
	"$(bf --readback net:netif_receive_skb 2>&1)"
ktap_expect "the top-level event, instances and kprobes are as before" "$before" "$(state)"
ktap_finished
