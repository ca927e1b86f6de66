// SPDX-License-Identifier: GPL-2.0
/*
 * The RFC's filter as upstream eBPF programs, for the benchmark's
 * comparison (scripts/bench): read skb->dev, read the first 4 bytes of
 * dev->name, compare them with "eth5" and keep the event only on a match,
 * which never happens on loopback.  The same work as the BPF64 filter:
 * one pointer load and one 4-byte compare through the nofault copies.
 *
 *   clang -O2 -g -target bpf -DSKB_DEV_OFF=16 [-DMATCH_LO] -c ebpf_bench.bpf.c
 *
 * SKB_DEV_OFF is offsetof(struct sk_buff, dev) of the kernel benchmarked
 * (scripts/bench takes it from DWARF); dev->name is at offset 0.  With
 * MATCH_LO the programs look for "lo" instead: the positive control, whose
 * every event matches; each match is counted in matched, which the loader
 * reports, so that a program that reads the wrong thing shows.
 *
 * The tp_btf, fentry and fexit programs read skb->dev->name with direct loads,
 * which the verifier allows from BTF types and the JIT guards (as BPF64's
 * JIT guards its inline bpf_load_pointer()); the others read through
 * bpf_probe_read_kernel(), the idiom of 2014-2019.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#ifndef SKB_DEV_OFF
#error "SKB_DEV_OFF (offsetof(struct sk_buff, dev)) is needed"
#endif

/* the first 4 bytes of dev->name, as a u32: "eth5", or "lo\0\0" */
#ifdef MATCH_LO
#define TARGET	(('l') | ('o' << 8))
#else
#define TARGET	(('e') | ('t' << 8) | ('h' << 16) | ('5' << 24))
#endif

__u64 matched;

static __always_inline int match(__u32 name)
{
	if (name != TARGET)
		return 0;
	__sync_fetch_and_add(&matched, 1);
	return 1;
}

static __always_inline int keep_eth5(const void *skb)
{
	const void *dev;
	__u32 name;

	if (bpf_probe_read_kernel(&dev, sizeof(dev), skb + SKB_DEV_OFF))
		return 0;
	if (bpf_probe_read_kernel(&name, sizeof(name), dev))
		return 0;
	return match(name);
}

/* For the direct loads: the kernel's types, relocated by libbpf (CO-RE). */
/* aligned like the kernel's: dev->name is read as one u32 */
struct net_device {
	char name[16];
} __attribute__((preserve_access_index, aligned(8)));

struct sk_buff {
	struct net_device *dev;
} __attribute__((preserve_access_index));

static __always_inline int keep_eth5_btf(struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;

	return match(*(__u32 *)dev->name);
}

/* skb:kfree_skb with BTF: the arguments typed, the loads guarded */
SEC("tp_btf/kfree_skb")
int BPF_PROG(bench_tp_btf, struct sk_buff *skb)
{
	return keep_eth5_btf(skb);
}

/* kfree_skb_reason()'s entry through its BPF trampoline (returns 0) */
SEC("fentry/kfree_skb_reason")
int BPF_PROG(bench_fentry, struct sk_buff *skb)
{
	keep_eth5_btf(skb);
	return 0;
}

/* skb:kfree_skb as a raw tracepoint: args[0] is the skb */
SEC("raw_tracepoint/kfree_skb")
int bench_raw_tp(struct bpf_raw_tracepoint_args *ctx)
{
	return keep_eth5((const void *)ctx->args[0]);
}

/* For the breakdown of the cost: nothing, then one read. */
SEC("raw_tracepoint/kfree_skb")
int bench_raw_tp_ret0(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}

SEC("raw_tracepoint/kfree_skb")
int bench_raw_tp_load(struct bpf_raw_tracepoint_args *ctx)
{
	const void *dev;

	bpf_probe_read_kernel(&dev, sizeof(dev), (const void *)ctx->args[0] + SKB_DEV_OFF);
	return dev == 0;
}

/* skb:kfree_skb as a perf-event tracepoint: the event's record */
struct kfree_skb_record {
	__u64 common;		/* common_type, common_flags, ... */
	const void *skbaddr;
	const void *location;
	__u16 protocol;
	__u32 reason;
};

SEC("tracepoint/skb/kfree_skb")
int bench_tracepoint(struct kfree_skb_record *ctx)
{
	return keep_eth5(ctx->skbaddr);
}

/* kfree_skb_reason(skb, reason): kfree_skb() is an inline wrapper */
SEC("kprobe/kfree_skb_reason")
int bench_kprobe(struct pt_regs *ctx)
{
	return keep_eth5((const void *)ctx->rdi);
}

/* The floor of the kprobe path: the same kprobe, an empty program */
SEC("kprobe/kfree_skb_reason")
int bench_kprobe_ret0(struct pt_regs *ctx)
{
	return 0;
}

/*
 * The same work on a return value: the skb __netdev_alloc_skb() returns,
 * its dev already set (loopback).  fexit sees it through the trampoline
 * that calls the function; the kretprobe program in the return's pt_regs.
 */
SEC("fexit/__netdev_alloc_skb")
int BPF_PROG(bench_fexit, void *dev, unsigned int len, unsigned int gfp,
	     struct sk_buff *skb)
{
	if (skb)
		keep_eth5_btf(skb);
	return 0;
}

SEC("kretprobe/__netdev_alloc_skb")
int bench_kretprobe(struct pt_regs *ctx)
{
	return keep_eth5((const void *)ctx->rax);
}

char LICENSE[] SEC("license") = "GPL";
