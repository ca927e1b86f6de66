#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: perf bpf-filter without a kernel: --check and --disasm on the
# RFC's images and on rejected ones, the DWARF listings (--kprobe, --event,
# --member, --arg, --gen-header) of the test kernel's vmlinux compared with
# perf probe --definition, and the table decoding (--tables-file, --json,
# --hist, --sort).  Nothing is attached: the host kernel is never touched.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
. "$TOP/selftests/lib/malloc_check.sh"
perf=${PERF:-$TOP/build/perf/perf}
ex=$TOP/build/tools/bpf64/examples
vmlinux=$TOP/build/kbuild/vmlinux
uapi=$TOP/build/linux/tools/include/uapi
exc=$TOP/build/linux/tools/bpf64/examples/c
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$perf" bpf-filter -h > /dev/null 2>&1
if [ $? -ne 129 ]; then	# usage's exit status
	ktap_plan 1
	ktap_skip "perf has no bpf-filter command (make perf)"
	ktap_finished
fi
if [ ! -f "$ex/filter_ex1.bpf" ] || [ ! -f "$vmlinux" ]; then
	ktap_plan 1
	ktap_skip "needs build/tools/bpf64/examples (make tools) and build/kbuild/vmlinux (make kernel)"
	ktap_finished
fi
ktap_plan 104

bf() { "$perf" bpf-filter "$@"; }
# json EXPR FILE: evaluate the Python expression EXPR on the JSON in FILE (j)
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$2"; }
# The value of NAME=... in 'perf probe --definition PROBE' output at the
# function itself (not its inlined copies): skb=%di:x64 -> %di
probe_def() {
	local func=${1%% *}

	func=${func%%+*}
	"$perf" probe -k "$vmlinux" --definition "$1" 2>/dev/null | grep " $func+" |
		grep -o "$2=[^ ]*" | head -n1 | sed "s/^$2=//; s/:[a-z0-9]*\$//"
}

# --- the checker ---------------------------------------------------------
for f in filter_ex1 filter_ex2; do
	out=$(bf --check "$ex/$f.bpf")
	ktap_expect "--check $f.bpf: accepted (exit 0)" 0 $?
	ktap_check "--check $f.bpf: the checker's statistics and the tag of sha256(image)" bash -c "
		grep -q '^processed [0-9]* insns' <<<'$out' &&
		grep -q 'accepted: .* tag $(sha256sum "$ex/$f.bpf" | cut -c1-16)\$' <<<'$out'"
done
out=$(bf -v --check "$ex/filter_ex1.bpf")
ktap_check "--check -v logs every instruction simulated" bash -c "[ \$(grep -c '^[0-9]*: ' <<<'$out') -gt 20 ]"

head -c -1 "$ex/filter_ex1.bpf" > "$work/short.bpf"
out=$(bf --check "$work/short.bpf")
ktap_expect "a truncated image is rejected (exit 1)" 1 $?
ktap_check "... with the checker's reason" grep -q "header sections add up to 254 bytes, the image has 253" <<<"$out"
python3 - "$ex/filter_ex1.bpf" "$work" <<'PY'
import sys
img = bytearray(open(sys.argv[1], 'rb').read())
bad = bytearray(img)
bad[16 + 8 + 2] = 105          # insn 1: r6 = *(u64 *)(r1 +105)
open(sys.argv[2] + '/misaligned.bpf', 'wb').write(bad)
bad = bytearray(img)
bad[16 + 2 * 8] = 0xff         # insn 2: an unknown opcode
open(sys.argv[2] + '/opcode.bpf', 'wb').write(bad)
PY
out=$(bf --check "$work/misaligned.bpf")
ktap_expect "a misaligned context read is rejected (exit 1)" 1 $?
ktap_check "... naming the instruction and the access" \
	grep -q "insn 1: (d9) r6 = \*(u64 \*)(r1 +105): invalid ctx access off=105 size=8" <<<"$out"
ktap_check "... and why, not as a permission problem" grep -q "misaligned.bpf: rejected: unsafe program (EACCES)\$" <<<"$out"
out=$(bf --check "$work/opcode.bpf")
ktap_expect "an unknown opcode is rejected (exit 1)" 1 $?
ktap_check "... saying so" grep -q "insn 2: (ff) invalid opcode: unknown opcode ff" <<<"$out"
ktap_check "... a malformed program (EINVAL)" grep -q "opcode.bpf: rejected: malformed program (EINVAL)\$" <<<"$out"
bf --check "$work/nonexistent.bpf" > /dev/null 2> "$work/err"
ktap_expect "an unreadable image exits 2" 2 $?
ktap_check "... saying why" grep -q "cannot use image .*nonexistent.bpf: No such file or directory" "$work/err"
echo "not an image" > "$work/text.bpf"
bf --check "$work/text.bpf" > /dev/null 2> "$work/err"
ktap_expect "a file that is not an image exits 2" 2 $?
ktap_check "... saying why" grep -q 'not a BPF64 image (no "bpf" magic)' "$work/err"

# --- the disassembler ----------------------------------------------------
bf --disasm "$ex/filter_ex2.bpf" > "$work/ex2.txt"
ktap_expect "--disasm filter_ex2.bpf exits 0" 0 $?
ktap_check "--disasm shows the table definition" \
	grep -q "^; table 0: type hash key_size 8 elem_size 8 max_entries 4096" "$work/ex2.txt"
ktap_check "--disasm names helpers" grep -q "^ *11: call bpf_table_lookup$" "$work/ex2.txt"
ktap_check "--disasm turns jumps into labels" bash -c "
	grep -q '^ *12: if r0 == 0 goto L1\$' '$work/ex2.txt' &&
	grep -q '^ *17: if r1 != 0 goto L2\$' '$work/ex2.txt' &&
	grep -A1 '^L1:\$' '$work/ex2.txt' | grep -q '^ *31: ' &&
	grep -A1 '^L2:\$' '$work/ex2.txt' | grep -q '^ *39: ret 0'"
ktap_check "--disasm follows the context through r6 = r1" \
	grep -q "^ *2: r1 = \*(u64 \*)(r6 +104).*; ctx->si (tracepoint arg1)" "$work/ex2.txt"
ktap_check "--disasm shows the strings built on the stack" \
	grep -q '18: .*= 544630116.*; "dev "' "$work/ex2.txt"
ktap_check "--disasm ends with the checker's verdict" \
	grep -q "^; the checker accepts it: processed" "$work/ex2.txt"
out=$(bf --disasm "$work/misaligned.bpf")
ktap_check "--disasm lists a rejected image, with the rejection" \
	grep -q "^; the checker rejects it: insn 1: .*invalid ctx access" <<<"$out"
# an image of no instructions: the kernel's parser refuses it, offline too
printf 'bpf\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$work/empty.bpf"
bf --disasm "$work/empty.bpf" > /dev/null 2> "$work/err"
ktap_expect "--disasm of an image without instructions fails" 1 $?
ktap_check "... with the kernel's reason" \
	grep -q "not a valid BPF64 image: instruction section of 0 bytes: must be a positive multiple of 8" "$work/err"
out=$(bf --raw --disasm "$ex/filter_ex1.bpf")
ktap_check "--disasm --raw shows the instruction bytes" \
	grep -q "^ *1: d9 16 68 00 00 00 00 00  r6 = \*(u64 \*)(r1 +104)" <<<"$out"

# --- DWARF: arguments, compared with perf probe --------------------------
bf --kprobe consume_skb --vmlinux "$vmlinux" --json > "$work/k.json"
ktap_expect "--kprobe consume_skb --json exits 0" 0 $?
loc=$(probe_def "consume_skb skb" skb)
ktap_expect "skb is where perf probe --definition finds it" "$loc" \
	"$(json 'j["probe"]["args"][0]["location"]' "$work/k.json")"
ktap_expect "... its C type" "struct sk_buff *" "$(json 'j["probe"]["args"][0]["type"]' "$work/k.json")"
ktap_expect "... its ctx offset is struct pt_regs' %di" 112 \
	"$(json 'j["probe"]["args"][0]["ctx_offset"]' "$work/k.json")"
out=$(bf --kprobe dst_discard_out --vmlinux "$vmlinux")
ktap_check "--kprobe dst_discard_out lists net, sk, skb with registers and offsets" bash -c "
	grep -qE '^ +net +struct net \* +%di +ctx\+112\$' <<<'$out' &&
	grep -qE '^ +sk +struct sock \* +%si +ctx\+104\$' <<<'$out' &&
	grep -qE '^ +skb +struct sk_buff \* +%dx +ctx\+96\$' <<<'$out'"
ktap_expect "... skb where perf probe finds it" "$(probe_def 'dst_discard_out skb' skb)" \
	"$(grep -E '^ +skb ' <<<"$out" | awk '{print $5}')"
out=$(bf --kretprobe dst_discard_out --vmlinux "$vmlinux")
ktap_check "--kretprobe shows the return value in %ax" \
	grep -qE '^ +\$retval +int +%ax +ctx\+80$' <<<"$out"
out=$(bf --kprobe 'do_sys_openat2+20' --vmlinux "$vmlinux" --json)
ktap_check "FUNC+OFF: the locations perf probe finds there" bash -c "
	[ \"\$(python3 -c 'import json,sys; a={x[\"name\"]: x[\"location\"] for x in json.loads(sys.argv[1])[\"probe\"][\"args\"]}; print(a[\"filename\"])' '$out')\" = \
	  \"$(probe_def 'do_sys_openat2+20 filename' filename)\" ]"
out=$(bf --event net:netif_receive_skb --vmlinux "$vmlinux")
ktap_check "--event net:netif_receive_skb: skb is tracepoint arg1, in si (ctx+104)" \
	grep -qE '^ +skb +struct sk_buff \* +arg1 %si +ctx\+104$' <<<"$out"
out=$(bf --event raw_syscalls:sys_enter --vmlinux "$vmlinux")
ktap_check "--event raw_syscalls:sys_enter: regs in si, id in dx" bash -c "
	grep -qE '^ +regs +struct pt_regs \* +arg1 %si +ctx\+104\$' <<<'$out' &&
	grep -qE '^ +id +long int +arg2 %dx +ctx\+96\$' <<<'$out'"
out=$(bf --kprobe do_sys_openat2 --vmlinux "$vmlinux" --arg how --arg di --arg r8 --arg rax)
ktap_check "--arg selects an argument and resolves register names" bash -c "
	grep -qE '^ +how +struct open_how \* +%dx +ctx\+96\$' <<<'$out' &&
	! grep -qE '^ +dfd ' <<<'$out' &&
	grep -qE '^ +%di +ctx\+112\$' <<<'$out' && grep -qE '^ +%r8 +ctx\+72\$' <<<'$out' &&
	grep -qE '^ +%ax +ctx\+80\$' <<<'$out'"

# --- DWARF: members, compared with perf probe ----------------------------
bf --vmlinux "$vmlinux" --member sk_buff.dev --member sk_buff.len --member 'struct sk_buff.protocol' \
	--member net_device.name --json > "$work/m.json"
ktap_expect "--member --json exits 0" 0 $?
for m in dev:0 len:1 protocol:2; do
	name=${m%:*} i=${m#*:}
	want=$(probe_def "consume_skb skb->$name" "$name" | sed -n 's/^+\([0-9]*\)(.*/\1/p')
	ktap_expect "sk_buff.$name at the offset perf probe uses ($want)" "$want" \
		"$(json "j['members'][$i]['offset']" "$work/m.json")"
done
ktap_expect "net_device.name is char[16]" "char[16] 0 16" \
	"$(json "j['members'][3]['type'], j['members'][3]['offset'], j['members'][3]['size']" "$work/m.json")"
out=$(bf --vmlinux "$vmlinux" --member sk_buff.headers.protocol --member sk_buff.pkt_type)
ktap_check "--member follows nested and anonymous members, reports bitfields" bash -c "
	grep -qE '^ +sk_buff.headers.protocol +__be16 +$(json "j['members'][2]['offset']" "$work/m.json") +2\$' <<<'$out' &&
	grep -qE '^ +sk_buff.pkt_type +__u8 +[0-9]+ +1 \(bits 0..2 ' <<<'$out'"
bf --vmlinux "$vmlinux" --member sk_buff.dev.name > /dev/null 2> "$work/err"
ktap_expect "--member through a pointer fails" 1 $?
ktap_check "... saying it is a pointer" grep -q "sk_buff.dev is a pointer (struct net_device \*)" "$work/err"
bf --vmlinux "$vmlinux" --member sk_buff.nosuch > /dev/null 2> "$work/err"
ktap_check "--member of a missing member says so" grep -q "struct sk_buff has no member nosuch" "$work/err"

# --- DWARF: errors --------------------------------------------------------
out=$(bf --kprobe ip_local_deliver_finish -k "$vmlinux")
ktap_expect "a function inlined everywhere: its places, as perf probe finds them" 0 $?
ktap_check "... where it is inlined, and skb there" bash -c "
	grep -q '^ip_local_deliver_finish: kprobe at 1 place it is inlined at (net/ipv4/ip_input.c:[0-9]*)' <<<'$out' &&
	grep -qE '^  0 +ip_local_deliver\+[0-9]+ +0x[0-9a-f]+ +net/ipv4/ip_input.c\$' <<<'$out' &&
	grep -qE '^  skb +struct sk_buff \* +%[a-z0-9]+ +ctx\+[0-9]+\$' <<<'$out'"
bf --kretprobe ip_local_deliver_finish -k "$vmlinux" > /dev/null 2> "$work/err"
ktap_check "... it has no kretprobe, saying so" grep -q "ip_local_deliver_finish is inlined everywhere in $vmlinux: it does not return, there is no kretprobe" "$work/err"
out=$(bf --kprobe dst_discard -k "$vmlinux")
ktap_expect "a static inline with several out-of-line copies: listed (exit 0)" 0 $?
ktap_check "... each copy with its file, skb in di at all of them" bash -c "
	grep -q '^dst_discard: kprobe at 4 out-of-line copies (include/net/dst.h:[0-9]*)' <<<'$out' &&
	for f in net/core/dst.c net/ipv4/route.c net/ipv6/route.c net/ipv6/exthdrs.c; do
		grep -qE \"^  [0-3] +dst_discard\\+0 +0x[0-9a-f]+ +\$f\\\$\" <<<'$out' || exit 1; done &&
	grep -qE '^  skb +struct sk_buff \* +%di +ctx\+112\$' <<<'$out'"
bf --kprobe dst_discard -k "$vmlinux" --json > "$work/copies.json"
ktap_check "... --json: the points, their files and the locations at each" python3 - "$work/copies.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))['probe']
assert len(p['points']) == 4 and len({x['address'] for x in p['points']}) == 4, p
assert all(x['locations'] == ['%di'] and not x['inlined'] for x in p['points']), p
assert p['args'][0]['ctx_offset'] == 112 and p['args'][0]['differs'] is False, p
PY
bf --kprobe dst_discard -k "$vmlinux" --gen-header - | grep -qP '^#define ARG_skb\t112\t'
ktap_expect "... --gen-header: ARG_skb, the same for every copy" 0 $?
bf --kprobe no_such_function -k "$vmlinux" > /dev/null 2> "$work/err"
ktap_check "a function that does not exist says so, not 'use --vmlinux'" \
	grep -q "^no_such_function: no such function in the DWARF of $vmlinux\$" "$work/err"
bf --event net:nosuch -k "$vmlinux" > /dev/null 2> "$work/err"
ktap_expect "--event net:nosuch fails" 1 $?
ktap_check "... saying the tracepoint does not exist" \
	grep -q "^tracepoint net:nosuch does not exist in $vmlinux: it has no __traceiter_nosuch\$" "$work/err"
bf --kprobe consume_skb --vmlinux "$work/nonexistent" > /dev/null 2> "$work/err"
ktap_check "a missing --vmlinux says so" grep -q "cannot read $work/nonexistent" "$work/err"
bf --kprobe consume_skb --vmlinux "$ex/filter_ex1.bpf" > /dev/null 2> "$work/err"
ktap_check "a file without DWARF says so" grep -q "no DWARF in $ex/filter_ex1.bpf: give -k a vmlinux built with CONFIG_DEBUG_INFO" "$work/err"

# --- --gen-header, used by a filter written as an instruction array ------
bf --event net:netif_receive_skb --vmlinux "$vmlinux" --member sk_buff.dev \
	--gen-header "$work/offsets.h" > /dev/null
ktap_check "--gen-header defines ARG_skb and OFF_sk_buff__dev" bash -c "
	grep -qP '^#define ARG_skb\t104\t' '$work/offsets.h' &&
	grep -qP '^#define OFF_sk_buff__dev\t$(json "j['members'][0]['offset']" "$work/m.json")\$' '$work/offsets.h'"
cat > "$work/lo.c" <<'EOF'
/* filter_ex1 of the RFC with the offsets of this kernel: print lo's packets */
#include <unistd.h>
#include <linux/bpf64.h>
#include "offsets.h"
static const struct bpf64_insn insns[] = {
	BPF64_ST_MEM(BPF64_W, BPF64_FP, -20, 'l' | 'o' << 8),
	BPF64_LDX_MEM(BPF64_DW, BPF64_R6, BPF64_R1, ARG_skb),
	BPF64_MOV_REG(BPF64_R1, BPF64_R6),
	BPF64_ALU_IMM(BPF64_ADD, BPF64_R1, OFF_sk_buff__dev),
	BPF64_CALL_HELPER(1),			/* bpf_load_pointer */
	BPF64_MOV_REG(BPF64_R7, BPF64_R0),
	BPF64_MOV_IMM(BPF64_R3, 2),
	BPF64_MOV_REG(BPF64_R2, BPF64_FP),
	BPF64_ALU_IMM(BPF64_ADD, BPF64_R2, -20),
	BPF64_MOV_REG(BPF64_R1, BPF64_R7),
	BPF64_CALL_HELPER(18),			/* bpf_memcmp */
	BPF64_RET_R0(),
};
static const char strtab[] = "\0bpf_load_pointer\0bpf_memcmp";
int main(void)
{
	struct bpf64_image_header h = { .magic = BPF64_IMAGE_MAGIC,
		.insn_bytes = sizeof(insns), .strtab_bytes = sizeof(strtab) };
	return write(1, &h, sizeof(h)) != sizeof(h) ||
	       write(1, insns, sizeof(insns)) != sizeof(insns) ||
	       write(1, strtab, sizeof(strtab)) != sizeof(strtab);
}
EOF
if command -v gcc > /dev/null; then
	ktap_check "a filter compiles with the header" \
		gcc -Wall -Werror -I "$uapi" -I "$work" -o "$work/lo" "$work/lo.c"
	"$work/lo" > "$work/lo.bpf"
	ktap_check "... and the checker accepts it" bf --check "$work/lo.bpf"
	ktap_check "... reading skb and skb->dev where DWARF says" bash -c "
		bf() { '$perf' bpf-filter \"\$@\"; }
		out=\$(bf --disasm '$work/lo.bpf')
		grep -q 'r6 = \*(u64 \*)(r1 +104).*ctx->si' <<<\"\$out\" &&
		grep -q 'r1 += $(json "j['members'][0]['offset']" "$work/m.json")\$' <<<\"\$out\""
else
	ktap_skip "a filter compiles with the header (no gcc)"
	ktap_skip "... and the checker accepts it"
	ktap_skip "... reading skb and skb->dev where DWARF says"
fi

# --- tables: decoding, sorting, histograms, JSON -------------------------
cat > "$work/tables" <<'EOF'
table 0 type hash key_size 8 elem_size 8 max_entries 4096 entries 4
key 0100000000000000 value 0500000000000000
key 0300000000000000 value 0a00000000000000
key 4000000000000000 value 0100000000000000
key 0000000000000000 value 0200000000000000
table 1 type hash key_size 16 elem_size 4 max_entries 16 entries 1
key 6c6f0000000000000000000000000000 value feffffff
EOF
out=$(bf --tables-file "$work/tables")
ktap_check "tables are shown as hex bytes by default" bash -c "
	grep -qE '^ +0300000000000000 +0a00000000000000\$' <<<'$out' &&
	grep -qE '^ +6c6f0000000000000000000000000000 +feffffff\$' <<<'$out'"
out=$(bf --tables-file "$work/tables" --table 0:key=u64,value=u64 --table 1:key=str,value=s32 --sort value)
ktap_check "--table decodes, --sort value puts the largest first" bash -c "
	grep -A2 '^table 0:' <<<'$out' | tail -1 | grep -qE '^ +3 +10\$' &&
	grep -qE '^ +lo +-2\$' <<<'$out'"
bf --tables-file "$work/tables" --table 0:key=u64,value=u64 --hist 0 --json > "$work/t.json"
ktap_expect "--json of the tables parses, with decoded numbers" "[1, 3, 64, 0] [5, 10, 1, 2]" \
	"$(json '[e["key"] for e in j["tables"][0]["entries"]], [e["value"] for e in j["tables"][0]["entries"]]' "$work/t.json")"
ktap_expect "--hist 0 counts each key as many times as its value" \
	"[('[0]', 2), ('[1]', 5), ('[2, 4)', 10), ('[4, 8)', 0), ('[8, 16)', 0), ('[16, 32)', 0), ('[32, 64)', 0), ('[64, 128)', 1)]" \
	"$(json '[(b["label"], b["count"]) for b in j["tables"][0]["hist"]["buckets"]]' "$work/t.json")"
out=$(bf --tables-file "$work/tables" --table 0:key=u64,value=u64 --hist 0)
ktap_check "--hist draws perf ftrace latency's histogram" bash -c "
	grep -qE '^# +KEY \| +COUNT \| GRAPH +\|\$' <<<'$out' &&
	grep -qE '^ +2 - 4 +\| +10 \| #{25} +\|\$' <<<'$out' &&
	grep -qE '^ +64 - 128 +\| +1 \| ## +\|\$' <<<'$out' && ! grep -q '128 - 256' <<<'$out'"
sed -e 's/entries 4$/entries 4 shared perf_bpf_filter_1_start full 3555/' \
	-e 's/entries 1$/entries 1 busy 2/' "$work/tables" > "$work/refused"
bf --tables-file "$work/refused" > "$work/refused.out"
ktap_check "what a table could not count is said: inserts refused when full, with why; busy refusals" bash -c "
	grep -q '^# table 0: 3555 inserts refused, the table was full: every slot held a live element;\$' '$work/refused.out' &&
	grep -q '^#   give it more entries (at most 65536)\$' '$work/refused.out' &&
	grep -q '^# table 1: 2 updates or deletes refused: they interrupted another on the same CPU\$' '$work/refused.out'"
bf --tables-file "$work/refused" --json > "$work/r.json"
ktap_expect "... and in --json: refused_full, refused_busy" "3555 0 0 2" \
	"$(json '" ".join(str(t[f]) for t in j["tables"] for f in ("refused_full", "refused_busy"))' "$work/r.json")"
bf --tables-file "$work/tables" --table 0:key=u9 > /dev/null 2> "$work/err"
ktap_check "an unknown --table type is refused" grep -q "unknown type 'u9'" "$work/err"

# A tuple key, as bpftrace's @[pid, comm, n]: u32 at 0, str:16 at 4, u64
# aligned to 24, as C lays out struct { u32; char[16]; u64; }.
cat > "$work/tuple" <<'EOF'
table 0 type hash key_size 32 elem_size 8 max_entries 16 entries 2
key 2a000000636174000000000000000000000000000000000007000000000000ff value 0300000000000000
key 2b000000ff0000000000000000000000000000000000000009000000000000ff value 0100000000000000
EOF
bf --tables-file "$work/tuple" --table 0:key=u32+str:16+u64,value=u64 --sort value > "$work/tuple.out"
ktap_check "--table key=u32+str:16+u64: a tuple, fields at C's offsets (the u64 at 24), shown a, b, c" \
	bash -c "grep -qE '^table 0: hash, 2 of 16 entries, key u32\+str:16\+u64 \(32 bytes\)' '$work/tuple.out' &&
		 grep -A1 KEY '$work/tuple.out' | tail -1 | grep -qE '^ +42, cat, 18374686479671623687 +3\$' &&
		 grep -qF ' 43, \\xff, 18374686479671623689 ' '$work/tuple.out'"
bf --tables-file "$work/tuple" --table 0:key=u32+str:16+hex:8,value=u64 --json > "$work/tuple.json"
ktap_expect "... in --json: the key an array of its fields, key_type the tuple (hex:8 aligned to 24)" \
	"u32+str:16+hex:8 [42 'cat' '0xff00000000000007']" \
	"$(json 'j["tables"][0]["key_type"], j["tables"][0]["entries"][0]["key"]' "$work/tuple.json" | tr -d '(),')"
# A tuple ending with a log2 bucket: a histogram per value of the rest,
# as bpftrace's @ns[comm] = hist().
cat > "$work/groups" <<'EOF'
table 0 type hash key_size 24 elem_size 8 max_entries 16 entries 3
key 646400000000000000000000000000000004000000000000 value 0500000000000000
key 636174000000000000000000000000000004000000000000 value 0100000000000000
key 646400000000000000000000000000000008000000000000 value 0200000000000000
EOF
bf --tables-file "$work/groups" --table 0:key=str:16+log2,value=u64 --hist 0 > "$work/groups.out"
bf --tables-file "$work/groups" --table 0:key=str:16+log2,value=u64 --hist 0 --json > "$work/groups.json"
ktap_check "--hist on a tuple key ending with log2: a histogram per process name (dd: 5 in [1K, 2K), 2 in [2K, 4K); cat: 1)" \
	bash -c "grep -q '^table 0\[dd\], log2 histogram' '$work/groups.out' &&
		 grep -q '^table 0\[cat\], log2 histogram' '$work/groups.out' &&
		 [ \"\$(grep -cE '^ +1 - 2 +K \| +5 \|' '$work/groups.out')\" = 1 ] &&
		 grep -qE '^ +2 - 4 +K \| +2 \|' '$work/groups.out'"
ktap_expect "... in --json: hists, one per group, the group an array" \
	"[(['dd'], [('[1K, 2K)', 5), ('[2K, 4K)', 2)]), (['cat'], [('[1K, 2K)', 1)])]" \
	"$(json '[(g["group"], [(b["label"], b["count"]) for b in g["hist"]["buckets"]]) for g in j["tables"][0]["hists"]]' "$work/groups.json")"
bf --tables-file "$work/tuple" --table 0:key=str+u32 > /dev/null 2> "$work/err"
rc=$?
bf --tables-file "$work/tables" --table 0:key=u64+u64 > "$work/short.out" 2> "$work/err2"
ktap_check "a string field but the last needs its size; a tuple larger than the key is shown as bytes" \
	bash -c "[ $rc -ne 0 ] && grep -qF \"tuple field 'str' needs its size (str:SIZE) unless it is the last\" '$work/err' &&
		 grep -qF 'fewer than the fields of u64+u64; shown as bytes' '$work/err2' &&
		 grep -qE '^ +0300000000000000 +' '$work/short.out'"

# --- JSON: valid for a parser, every table type, UTF-8 as it is ----------
python3 - "$work" <<'PY'
import struct, sys
out = []
def table(tid, ks, vs, entries):
    out.append("table %d type hash key_size %d elem_size %d max_entries 64 entries %d"
               % (tid, ks, vs, len(entries)))
    out.extend("key %s value %s" % (k.hex(), v.hex()) for k, v in entries)
q = lambda f, *v: struct.pack('<' + f, *v)
table(0, 1, 1, [(q('B', 200), q('b', -3))])                      # u8, s8
table(1, 2, 2, [(q('H', 60000), q('h', -300))])                  # u16, s16
table(2, 4, 4, [(q('I', 4000000000), q('i', -70000))])           # u32, s32
table(3, 8, 8, [(q('Q', 2**64 - 1), q('q', -2**63))])            # u64, s64
table(4, 8, 4, [(q('Q', 0xdeadbeef), q('I', 0xff))])             # hex, hex
table(5, 8, 8, [(q('Q', 0xffffffff81000000), bytes(range(8)))])  # ptr, bytes
s16 = lambda b: b.ljust(16, b'\0')[:16]
table(6, 16, 16, [(s16('été 日本'.encode()), s16(b'a\x01\x1f\x7f"\\\n\tz')),
                  (s16(b'\xff\xc3(x\xed\xa0\x80'), s16(b''))])    # str, str
open(sys.argv[1] + '/types', 'w').write('\n'.join(out) + '\n')
PY
bf --tables-file "$work/types" --json --table 0:key=u8,value=s8 --table 1:key=u16,value=s16 \
	--table 2:key=u32,value=s32 --table 3:key=u64,value=s64 --table 4:key=hex,value=hex \
	--table 5:key=ptr,value=bytes --table 6:key=str,value=str > "$work/types.json"
ktap_expect "--json of every table type: exit 0" 0 $?
ktap_check "... a strict JSON parser reads it, with the values of each type" python3 - "$work/types.json" <<'PY'
import json, sys
raw = open(sys.argv[1], 'rb').read()
raw.decode('utf-8')                         # valid UTF-8
j = json.loads(raw, strict=True)            # no raw control characters
e = {t['id']: t['entries'][0] for t in j['tables']}
assert (e[0]['key'], e[0]['value']) == (200, -3), e[0]
assert (e[1]['key'], e[1]['value']) == (60000, -300), e[1]
assert (e[2]['key'], e[2]['value']) == (4000000000, -70000), e[2]
assert (e[3]['key'], e[3]['value']) == (2**64 - 1, -2**63), e[3]
assert (e[4]['key'], e[4]['value']) == ('0xdeadbeef', '0xff'), e[4]
assert isinstance(e[5]['key'], str) and e[5]['key'], e[5]          # symbol+off
assert e[5]['value'] == '0001020304050607', e[5]
t6 = [t for t in j['tables'] if t['id'] == 6][0]['entries']
assert t6[0]['key'] == 'été 日本', t6[0]                          # UTF-8 passes
assert t6[0]['value'] == 'a\x01\x1f\x7f"\\\n\tz', t6[0]           # controls escaped
assert t6[1]['key'] == '\u00ff\u00c3(x\u00ed\u00a0\u0080', t6[1]  # not UTF-8: bytes
PY
ktap_check "... control characters are escaped, UTF-8 is not" bash -c "
	grep -qF '\"value\":\"a\\u0001\\u001f\\u007f\\\"\\\\\\n\\tz\"' '$work/types.json' &&
	grep -qF '\"key\":\"été 日本\"' '$work/types.json'"
out=$(bf --tables-file "$work/types" --table 6:key=str,value=str)
ktap_check "text output: UTF-8 as it is, other bytes as \\xNN" bash -c "
	grep -qF 'été 日本' <<<'$out' && grep -qF '\\xff\\xc3(x' <<<'$out'"

# --- perf's conventions: options, privileges, messages -------------------
help=$("$perf" bpf-filter -h 2>&1)
ktap_check "-k is --vmlinux, as in perf probe" grep -qE '^ +-k, --vmlinux <file>' <<<"$help"
d_unused_m_buffer() {
	! grep -qE '^ +-d, ' <<<"$help" && grep -qE '^ +-m, --buffer-size <SIZE>' <<<"$help"
}
ktap_check "-d is not used (perf probe's --del), -m is --buffer-size (perf ftrace's)" \
	d_unused_m_buffer
bf --tables-file "$work/tables" -d 1 > /dev/null 2> "$work/err"
ktap_expect "the old -d is refused" 129 $?
in_ms() {
	grep -qE -- '-I, --interval <n> +print the tables every this many milliseconds' <<<"$help" &&
	grep -qE -- '--timeout <n> +stop after this many milliseconds' <<<"$help"
}
ktap_check "-I and --timeout are in milliseconds, as in perf stat" in_ms
bf --event net:netif_receive_skb "$ex/filter_ex1.bpf" -I 5 > /dev/null 2> "$work/err"
ktap_check "-I below 10 ms is refused, as by perf stat" grep -q -- "--interval must be >= 10 ms" "$work/err"
bf --event net:netif_receive_skb "$ex/filter_ex1.bpf" --timeout 9 > /dev/null 2> "$work/err"
ktap_check "... and --timeout below 10 ms" grep -q -- "--timeout must be >= 10 ms" "$work/err"
bf --tables-file "$work/tables" --sort none > /dev/null
ktap_expect "--sort none is accepted (documented)" 0 $?
bf --tables-file "$work/tables" --table 1:value=u64 > /dev/null 2> "$work/err"
ktap_check "a value that does not fit its --table type is warned about" grep -q "table 1: the value is 4 bytes" "$work/err"
bf --tables-file "$work/tables" --table 1:value=u64 -q > /dev/null 2> "$work/err"
ktap_check "-q silences warnings (perf_quiet_option())" bash -c "[ ! -s '$work/err' ]"
chmod 755 "$work"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all env HOME=/ "$perf" bpf-filter "$@"; }
if command -v setpriv > /dev/null; then
	nobody --event net:netif_receive_skb "$work/nonexistent.bpf" > /dev/null 2> "$work/err"
	ktap_check "without privileges: a missing image is reported, not the privileges" bash -c "
		grep -q 'cannot use image .*nonexistent.bpf: No such file or directory' '$work/err' &&
		! grep -q CAP_ '$work/err'"
	nobody --event net:netif_receive_skb "$work/text.bpf" > /dev/null 2> "$work/err"
	ktap_check "... a file that is not an image too" bash -c "
		grep -q 'not a BPF64 image' '$work/err' && ! grep -q CAP_ '$work/err'"
	nobody --event net:netif_receive_skb "$work/misaligned.bpf" > /dev/null 2> "$work/err"
	ktap_expect "... and an image the checker rejects: exit 1" 1 $?
	ktap_check "... with the checker's reason, not the privileges" bash -c "
		grep -q 'insn 1: .*invalid ctx access off=105' '$work/err' &&
		grep -q 'misaligned.bpf: rejected: unsafe program (EACCES)' '$work/err' && ! grep -q CAP_ '$work/err'"
	nobody --event net:netif_receive_skb "$ex/filter_ex1.bpf" > /dev/null 2> "$work/err"
	ktap_check "a good image: CAP_PERFMON or CAP_SYS_ADMIN, as perf ftrace says" \
		grep -q "^attaching a filter needs the CAP_PERFMON or CAP_SYS_ADMIN capability: it writes the event's filter in tracefs.\$" "$work/err"
	nobody --readback net:netif_receive_skb > /dev/null 2> "$work/err"
	ktap_check "--readback reads: its message does not say it changes tracefs" bash -c "
		grep -q '^--readback needs the CAP_PERFMON or CAP_SYS_ADMIN capability: filter_image files are readable only with it.\$' '$work/err' &&
		! grep -q 'changes' '$work/err'"
else
	for i in 1 2 3 4 5 6; do ktap_skip "no setpriv"; done
fi
if command -v clang > /dev/null; then
	bf -k "$vmlinux" --check "$exc/filter_ex2.c" > /dev/null 2> "$work/err"
	ktap_check "a C filter reading ARG_skb without --event: a hint after clang's error" bash -c "
		grep -q \"use of undeclared identifier 'ARG_skb'\" '$work/err' &&
		grep -q '^hint: .*filter_ex2.c reads arguments (BPF64_ARG(), ARG_<name>): their offsets are those of the event;\$' '$work/err' &&
		grep -q -- '--event SYS:EVENT, --kprobe FUNC or --kretprobe FUNC' '$work/err'"
	out=$(bf -k "$vmlinux" --event net:netif_receive_skb --check "$exc/filter_ex2.c" 2>&1)
	ktap_check "... with --event it compiles, through perf's llvm-utils" \
		grep -q "filter_ex2.c: accepted: " <<<"$out"
	printf '[llvm]\n\tclang-path = no-such-clang\n' > "$work/perfconfig"
	PERF_CONFIG="$work/perfconfig" "$perf" bpf-filter -k "$vmlinux" --event net:netif_receive_skb \
		--check "$exc/filter_ex2.c" > /dev/null 2> "$work/err"
	ktap_check "perf config llvm.clang-path is the clang it runs" \
		grep -q "unable to find clang" "$work/err"
else
	for i in 1 2 3; do ktap_skip "no clang"; done
fi

# --- the command ---------------------------------------------------------
out=$("$perf" bpf-filter --list-opts)
ktap_check "bash completion lists the options" bash -c "
	for o in --event --kprobe --kretprobe --check --disasm --readback --member --gen-header --table --hist --json --timeout --interval --vmlinux --clang-path --clang-opt; do
		grep -q -- \"\$o \" <<<'$out' || exit 1; done"
ktap_check "perf bpf-filter -h shows every option" bash -c "
	'$perf' bpf-filter -h 2>&1 | grep -q -- '--gen-header <FILE>'"
ktap_check "perf help bpf-filter works" bash -c "'$perf' help bpf-filter 2>&1 | grep -q -- '--kprobe'"
# perf probe's fastpath (the CU of a function's one symbol) finds what the
# scan of every CU finds: FUNC@FILE takes the scan.  8 functions spread over
# the symbol table, then one defined in a file another CU includes.
fastpath() { # FUNC: the points and arguments both ways; "fast" when it was taken
	local decl

	bf -v -k "$vmlinux" --kprobe "$1" --json > "$work/fast.json" 2> "$work/fast.err" ||
		return 0
	grep -q "^$1: only in the CU of its symbol" "$work/fast.err" && echo fast
	decl=$(json 'j["probe"]["decl"].split(":")[0]' "$work/fast.json")
	bf -v -k "$vmlinux" --kprobe "$1@$decl" --json > "$work/scan.json" 2> "$work/scan.err"
	grep -q "only in the CU of its symbol" "$work/scan.err" && echo "$1@$decl: no scan"
	python3 -c 'import json, sys
f, s = (json.load(open(p))["probe"] for p in sys.argv[2:4])
print("%s: same" % sys.argv[1] if f == s else "%s: differ\n%s\n%s" % (sys.argv[1], f, s))' \
		"$1" "$work/fast.json" "$work/scan.json"
}
sample=$(nm "$vmlinux" | awk '$2 ~ /^[Tt]$/ && $3 ~ /^[a-z_][a-z0-9_]*$/ { print $3 }' |
	sort | uniq -u | awk 'NR % 3000 == 1' | head -8)
for f in $sample; do fastpath "$f"; done > "$work/fastpath"
sed 's/^/# /' "$work/fastpath"
# Functions of a .c file another CU includes (sched's build_policy.c, the
# trace event headers) take the scan, by design: how many of the 8 do
# depends on the configuration; at least half take the fastpath.
ktap_check "perf probe's fastpath: taken for at least 4 of 8 functions, the same points and arguments as the scan" \
	bash -c "! grep -v -e ': same\$' -e '^fast\$' '$work/fastpath' &&
		[ \$(grep -c '^fast\$' '$work/fastpath') -ge 4 ] &&
		[ \$(grep -c ': same\$' '$work/fastpath') -ge 6 ]"
# enqueue_task_rt is in kernel/sched/rt.c, which build_policy.c includes;
# include/trace/events/net.h defines the external __traceiter_netif_receive_skb
fastpath enqueue_task_rt > "$work/fastpath"
fastpath __traceiter_netif_receive_skb > "$work/fastpath.tp"
ktap_check "... not taken for a function of a .c file another CU includes; taken for an external function of a header" \
	bash -c "grep -qx 'enqueue_task_rt: same' '$work/fastpath' && ! grep -q '^fast\$' '$work/fastpath' &&
		[ \"\$(cat '$work/fastpath.tp')\" = 'fast
__traceiter_netif_receive_skb: same' ]"
ktap_finished
