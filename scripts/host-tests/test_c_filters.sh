#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: filters in restricted C (the kernel's Documentation/bpf64/c-filters.rst): the
# translator on a corpus covering every construct, each image accepted by
# trace_filter_check and run next to the same C compiled natively (the
# interpreter, the JIT and the native code agree); -mcpu=v2/v3 objects;
# the error catalogue with source lines; DWARF and no-debug fallbacks; the
# C examples behave as the RFC's instruction versions
#
# CTEST_SEED=N fixes the seed of the contexts (default: a new one each run).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
TREE=${TREE:-$TOP/build/linux}
OUT=$TOP/build/tools/bpf64
cc=$TOP/build/bin/bpf64_cc
tfc=$TOP/build/bin/trace_filter_check
CT=$TREE/tools/bpf64/ctest
EX=$TREE/tools/bpf64/examples/c
corpus=("$CT"/corpus/*.c)
errors=("$CT"/errors/*.c)
examples=("$EX"/*.c)
ktap_plan $((${#corpus[@]} + ${#errors[@]} + 26))

skip_all() {
	local i
	for ((i = 0; i < KTAP_PLAN; i++)); do ktap_skip "$1"; done
	ktap_finished
}
command -v clang > /dev/null || skip_all "no clang"
[ -x "$cc" ] || skip_all "bpf64_cc not built (scripts/build-tools)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! make -s -C "$CT" O="$OUT/ctest" LIBBPF64="$OUT/lib/libbpf64.a" > "$work/make.log" 2>&1; then
	sed 's/^/# /' "$work/make.log" | tail -20
	skip_all "the native harness does not build"
fi
seed=${CTEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
ktap_print_msg "contexts from seed $seed (CTEST_SEED=$seed repeats them)"
BPF=(clang -O2 -g -target bpf -I"$TREE/tools/lib/bpf64")

# translate SRC IMAGE: bpf64_cc's .c path; the log in IMAGE.log
translate() {
	"$cc" -o "$2" "$1" > "$2.log" 2>&1
}

# differential NAME IMAGE [RUNS]: the corpus filter NAME natively against IMAGE
differential() {
	"$OUT/ctest/$1.native" "$2" -n "${3:-2000}" -s "$seed"
}

# ---- the corpus, -mcpu=v1 from C ----
for f in "${corpus[@]}"; do
	n=$(basename "$f" .c)
	ktap_check "corpus/$n.c: translates, trace_filter_check accepts it, interpreter, JIT and native agree" \
		bash -c "$(declare -f translate differential); cc=$cc OUT=$OUT seed=$seed
			translate '$f' '$work/$n.bpf' || { cat '$work/$n.bpf.log'; exit 1; }
			'$tfc' '$work/$n.bpf' > /dev/null || { '$tfc' '$work/$n.bpf'; exit 1; }
			differential '$n' '$work/$n.bpf'"
done

# ---- objects of -mcpu=v2 (JLT, JLE, JSLT, JSLE) and v3 (32-bit ALU, jmp32) ----
bad=
for f in "${corpus[@]}"; do
	n=$(basename "$f" .c)
	if ! "${BPF[@]}" -mcpu=v2 -c "$f" -o "$work/$n.v2.o" 2> /dev/null ||
	   ! "$cc" -o "$work/$n.v2.bpf" "$work/$n.v2.o" > "$work/$n.v2.log" 2>&1 ||
	   ! differential "$n" "$work/$n.v2.bpf" 1000 > "$work/$n.v2.out"; then
		bad+="$n "
	fi
done
ktap_check "-mcpu=v2 objects (.o input): all translate and agree natively${bad:+ (not: $bad)}" test -z "$bad"
bad= ok=0 refused=0
for f in "${corpus[@]}"; do
	n=$(basename "$f" .c)
	"${BPF[@]}" -mcpu=v3 -c "$f" -o "$work/$n.v3.o" 2> /dev/null || { bad+="$n(clang) "; continue; }
	if "$cc" -o "$work/$n.v3.bpf" "$work/$n.v3.o" > "$work/$n.v3.log" 2>&1; then
		differential "$n" "$work/$n.v3.bpf" 1000 > /dev/null && ok=$((ok + 1)) || bad+="$n "
	elif grep -q "error: 32-bit" "$work/$n.v3.log" &&
	     ! grep -v "error: 32-bit" "$work/$n.v3.log" | grep -q "error:"; then
		refused=$((refused + 1))
	else
		bad+="$n(message) "
	fi
done
ktap_print_msg "-mcpu=v3: $ok translate, $refused refused with a 32-bit message"
ktap_check "-mcpu=v3 objects: each translates and agrees, or is refused for its 32-bit operations${bad:+ (not: $bad)}" \
	test -z "$bad" -a "$ok" -gt 10

# ---- every BPF64 opcode the translator emits, every helper ----
for f in "$work"/*.bpf; do
	"$tfc" -d "$f" 2> /dev/null
done | sed -n 's/^[0-9]*: (\(..\)).*/\1/p' | sort -u > "$work/opcodes"
# Those clang 14 produces: no SUB, MOD, JSET, ST (it adds negatives, expands
# %, tests bits with AND, stores registers).
want="04 06 0c 0d 0e 15 1c 1d 24 25 2c 2d 34 35 3c 3d 44 4c 54 55 5c 5d 64 65 6c 6d
      74 75 7c 7d 85 8c a4 ac b4 bc c1 c3 c4 c9 cb cc d1 d3 d9 db dc e3 ec fb"
missing=$(for o in $want; do grep -qx "$o" "$work/opcodes" || echo -n "$o "; done)
ktap_check "the corpus's images (v1, v2) use every opcode clang's code translates to${missing:+ (missing: $missing)}" \
	test -z "$missing"
calls=$(for f in "${corpus[@]}"; do "$tfc" -d "$work/$(basename "$f" .c).bpf"; done 2> /dev/null |
	sed -n 's/.* call \(bpf_[a-z_]*\)$/\1/p' | sort -u | tr '\n' ' ')
helpers=$(sed -n 's/^[[:space:]]*FN(\([a-z_]*\),.*/bpf_\1/p' "$TREE/include/linux/bpf64_trace.h" |
	sort -u | tr '\n' ' ')
ktap_expect "the corpus calls every tracing helper (include/linux/bpf64_trace.h)" "$helpers" "$calls"

# ---- the error catalogue: message and source line ----
for f in "${errors[@]}"; do
	n=$(basename "$f" .c)
	cflags=$(sed -n 's|^// cflags: ||p' "$f")
	if [ -n "$cflags" ]; then
		"${BPF[@]}" $cflags -c "$f" -o "$work/$n.o" 2> /dev/null
		"$cc" -c "$work/$n.o" > "$work/$n.log" 2>&1
	else
		"$cc" -c "$f" > "$work/$n.log" 2>&1
	fi
	rc=$?
	fails=
	[ $rc -eq 1 ] || fails+="exit status $rc; "
	while IFS= read -r exp; do
		line=${exp%%: *} text=${exp#*: }
		if [[ $line =~ ^[0-9]+$ ]]; then
			grep -F "$n.c:$line:" "$work/$n.log" | grep -qF -- "$text" ||
				fails+="no '$n.c:$line:.*$text'; "
		else
			grep -qF -- "$exp" "$work/$n.log" || fails+="no '$exp'; "
		fi
	done < <(sed -n 's|^// expect\(-check\)\?: ||p' "$f")
	[ -z "$fails" ] || { echo "# $fails"; sed 's/^/# /' "$work/$n.log" | head -8; }
	ktap_check "errors/$n.c: $(sed -n '2s|^/\* \(.*\) \*/$|\1|p' "$f" | sed 's/^\(.\)/\L\1/')" test -z "$fails"
done

# ---- debug information ----
"${BPF[@]}" -mcpu=v1 -c "$CT/errors/loop.c" -o "$work/loop.o" 2> /dev/null
llvm-objcopy --remove-section=.BTF --remove-section=.BTF.ext "$work/loop.o" "$work/loop-dwarf.o"
"$cc" "$work/loop-dwarf.o" > "$work/loop-dwarf.log" 2>&1
ktap_check "without BTF, DWARF (libdw) gives the error its source line" \
	grep -q "loop.c:10:.*error: loop: this jumps back to line" "$work/loop-dwarf.log"
"${BPF[@]}" -mcpu=v1 -c "$CT/corpus/ret_char.c" -o "$work/ret_char.o" 2> /dev/null
llvm-objcopy --remove-section=.BTF --remove-section=.BTF.ext "$work/ret_char.o" "$work/ret_char-dwarf.o"
ktap_check "without BTF, DWARF gives the return type: a char verdict still agrees" \
	bash -c "'$cc' -o '$work/rc.bpf' '$work/ret_char-dwarf.o' && '$OUT/ctest/ret_char.native' '$work/rc.bpf' -n 1000"
clang -O2 -target bpf -mcpu=v1 -I"$TREE/tools/lib/bpf64" -c "$CT/corpus/void_print.c" -o "$work/vp.o"
"$cc" -o "$work/vp.bpf" "$work/vp.o" > "$work/vp.log" 2>&1
ktap_check "without debug information: a warning, a void filter recognised (R0 not set), and it agrees" \
	bash -c "grep -q 'warning: no BTF or DWARF line information' '$work/vp.log' &&
		 grep -q 'translated as a void filter (verdict 0)' '$work/vp.log' &&
		 '$OUT/ctest/void_print.native' '$work/vp.bpf' -n 1000"
clang -O2 -target bpf -mcpu=v1 -I"$TREE/tools/lib/bpf64" -c "$CT/errors/loop.c" -o "$work/l.o"
"$cc" "$work/l.o" > "$work/l.log" 2>&1
ktap_check "... and errors name the function and instruction" \
	grep -q "l.o: filter, insn [0-9]*: error: loop: this jumps back to insn" "$work/l.log"

# ---- the C examples ----
bad=
for f in "${examples[@]}"; do
	n=$(basename "$f" .c)
	if grep -q '^BPF64_EVENT' "$f"; then
		# a filter per function: build-tools checked them all
		[ -s "$OUT/examples/c/$n.checked" ] || bad+="$n "
	else
		"$tfc" "$OUT/examples/c/$n.bpf" > /dev/null 2>&1 || bad+="$n "
	fi
done
ktap_check "examples/c/*.bpf (built by build-tools) are accepted by trace_filter_check${bad:+ (not: $bad)}" \
	test -z "$bad"
for n in filter_ex1 filter_ex2; do
	ktap_check "$n.c behaves as the RFC's instruction version $n.bpf: both agree with the C natively (prints, tables, verdicts)" \
		bash -c "'$OUT/ctest/example_$n.native' '$OUT/examples/$n.bpf' -n 20000 -s $seed &&
			 '$OUT/ctest/example_$n.native' '$OUT/examples/c/$n.bpf' -n 20000 -s $seed"
done
bad=
for n in kprobe_arg_match task_calls; do
	"$OUT/ctest/example_$n.native" "$OUT/examples/c/$n.bpf" -n 5000 -s "$seed" > /dev/null || bad+="$n "
done
ktap_check "kprobe_arg_match.c and task_calls.c agree natively${bad:+ (not: $bad)}" test -z "$bad"
ktap_expect "bpf64_cc --members lists the structure members a filter names" \
	"sk_buff.dev net_device.name" "$("$cc" --members "$EX/filter_ex1.c" | tr '\n' ' ' | sed 's/ $//')"
ktap_check "bpf64_cc -d lists tables by their C names and instructions under source lines" \
	bash -c "'$cc' --include '$EX/offsets.h' -d '$EX/filter_ex2.c' > '$work/d.txt' &&
		 grep -q '^table 0: dev_packets: type hash key_size 8 elem_size 8 max_entries 4096' '$work/d.txt' &&
		 grep -q '^; .*filter_ex2.c:[0-9]*: .*bpf_table_lookup(ctx, &dev_packets, &key);' '$work/d.txt'"

# Files libbpf64 reads and writes for the tools: too large is said, not cut.
head -c $((16 * 1024 * 1024 + 1)) /dev/zero > "$work/big.o"
out=$("$cc" "$work/big.o" 2>&1)
ktap_expect "bpf64_cc: an object larger than 16 MiB exits 2" 2 $?
ktap_check "... saying so, not reading it cut short" grep -qx "bpf64_cc: $work/big.o: larger than 16 MiB" <<<"$out"
rm -f "$work/big.o"

printf '%s\n' '#include <bpf64_helpers.h>' \
	'long filter(struct pt_regs *ctx) { void *p = (void *)ctx->di; /* BPF64_CHAIN(p, x, y) */' \
	'  return BPF64_CHAIN(p, sk_buff, dev, name) + BPF64_CHAIN((char *)p + 8, path, dentry, d_name, name) +' \
	'         BPF64_CHAIN(p, sk_buff, dev, name) + BPF64_CHAIN(p, sk_buff, 1bad) + BPF64_CHAIN(p, sk_buff); }' \
	> "$work/chains.c"
ktap_expect "bpf64_cc --chains: each BPF64_CHAIN() once, its pointer skipped; comments and malformed ones ignored" \
	"sk_buff.dev.name path.dentry.d_name.name" "$("$cc" --chains "$work/chains.c" | tr '\n' ' ' | sed 's/ $//')"

# ---- several filters in a file, table types ----
ktap_expect "bpf64_cc --events lists the functions BPF64_EVENT() gives an event" \
	"read_entry kprobe:vfs_read read_return kretprobe:vfs_read" \
	"$("$cc" --events "$EX/read_latency.c" | tr '\n' ' ' | sed 's/ $//')"
"$cc" --share perf_1_ -e read_return -d "$EX/read_latency.c" > "$work/rl.txt" 2>&1
ktap_check "--share: every table shared under PREFIX<C name>; key and value types from BTF (a (comm, bpf64_log2_t) key is str:16+log2)" \
	bash -c "grep -q '^table 0: start: .* shared perf_1_start (key u64, value u64)\$' '$work/rl.txt' &&
		 grep -q '^table 1: ns: .* shared perf_1_ns (key str:16+log2, value u64)\$' '$work/rl.txt'"
"$cc" -d --include "$EX/offsets.h" "$EX/syscall_count.c" > "$work/sc.txt" 2>&1
"$cc" -d --include "$EX/offsets.h" "$EX/kstack_count.c" > "$work/ks.txt" 2>&1
ktap_check "types: a struct of a char array is str, long is s64, an array of pointers ptr; unshared without --share" \
	bash -c "grep -q '^table 0: syscalls: .*max_entries 1024 (key str, value u64)\$' '$work/sc.txt' &&
		 grep -q '^table 0: stacks: .* (key u64, value ptr)\$' '$work/ks.txt'"
cat > "$work/tuples.c" <<'CEOF'
#include <bpf64_helpers.h>
struct task_key { unsigned int pid; char comm[16]; unsigned long n; };
struct packed_key { char c; long n; } __attribute__((packed));
struct array_key { unsigned long a[2]; int b; };
BPF64_TABLE(tasks, BPF64_TABLE_HASH, struct task_key, unsigned long, 16);
BPF64_TABLE(packed, BPF64_TABLE_HASH, struct packed_key, unsigned long, 16);
BPF64_TABLE(arrays, BPF64_TABLE_HASH, struct array_key, unsigned long, 16);
int filter(struct pt_regs *ctx)
{
	struct task_key t = { 1 }; struct packed_key p = { 1 }; struct array_key a = { { 1 } };

	return bpf_table_lookup(ctx, &tasks, &t) != 0 && bpf_table_lookup(ctx, &packed, &p) != 0 &&
	       bpf_table_lookup(ctx, &arrays, &a) != 0;
}
CEOF
"$cc" -d --include "$EX/offsets.h" "$EX/opens.c" > "$work/op.txt" 2>&1
"$cc" -d "$work/tuples.c" > "$work/tu.txt" 2>&1
ktap_check "types: a struct of several scalars and strings is a tuple at C's offsets; packed or with an array of numbers it is bytes" \
	bash -c "grep -q '^table 0: opens: .* (key str:16+str:64, value u64)\$' '$work/op.txt' &&
		 grep -q '^table 0: tasks: .* (key u32+str:16+u64, value u64)\$' '$work/tu.txt' &&
		 grep -q '^table 1: packed: .* (key bytes, value u64)\$' '$work/tu.txt' &&
		 grep -q '^table 2: arrays: .* (key bytes, value u64)\$' '$work/tu.txt'"
"$cc" -o "$work/two.bpf" "$EX/read_latency.c" > "$work/two.log" 2>&1
rc=$?
"$cc" -o "$work/entry.bpf" -e read_entry "$EX/read_latency.c" > /dev/null 2>&1
rc1=$?
ktap_check "-o on a file of two filters: exit 2, 'choose it with -e'; with -e: the one" \
	bash -c "[ $rc -eq 2 ] && [ $rc1 -eq 0 ] && grep -q '2 filters (read_entry, read_return): -o takes one, choose it with -e' '$work/two.log' &&
		 '$tfc' '$work/entry.bpf' > /dev/null"

# ---- bad input ----
head -c 300 "$work/loop.o" > "$work/short.o"
"$cc" "$work/short.o" > "$work/short.log" 2>&1
rc=$?
ktap_check "a truncated object: exit 1, 'truncated ELF object'" \
	bash -c "[ $rc -eq 1 ] && grep -q 'error: truncated ELF object' '$work/short.log'"
"$cc" "$CT/corpus/alu64.c.nonexistent" > /dev/null 2>&1
rc1=$?
echo "not an object" > "$work/text.o"
"$cc" "$work/text.o" > "$work/text.log" 2>&1
rc=$?
ktap_check "a text file: exit 1, 'not an ELF object'; a missing file: exit 2" \
	bash -c "[ $rc -eq 1 ] && [ $rc1 -eq 2 ] && grep -q 'error: not an ELF object' '$work/text.log'"
printf 'int filter(void) { return 1; }\n' > "$work/x86.c"
cc -c "$work/x86.c" -o "$work/x86.o"
"$cc" "$work/x86.o" > "$work/x86.log" 2>&1
rc=$?
ktap_check "an x86-64 object: exit 1, 'not a BPF object'" \
	bash -c "[ $rc -eq 1 ] && grep -q 'error: not a BPF object' '$work/x86.log'"
"$cc" --clang /nonexistent/clang "$CT/corpus/alu64.c" > "$work/noclang.log" 2>&1
rc=$?
ktap_check "no clang: exit 2 and a message" \
	bash -c "[ $rc -eq 2 ] && grep -q 'cannot run /nonexistent/clang' '$work/noclang.log'"
ktap_finished
