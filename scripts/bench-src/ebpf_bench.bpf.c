// SPDX-License-Identifier: GPL-2.0
/*
 * The RFC's filter as upstream eBPF programs, for the benchmark's
 * comparison (scripts/bench): read skb->dev, read the first 4 bytes of
 * dev->name, compare them with "eth5" and keep the event only on a match,
 * which never happens on loopback.  The same work as the BPF64 filter:
 * one pointer load and one 4-byte compare through the nofault copies.
 *
 *   clang -O2 -g -target bpf -DSKB_DEV_OFF=16 -c ebpf_bench.bpf.c
 *
 * SKB_DEV_OFF is offsetof(struct sk_buff, dev) of the kernel benchmarked
 * (scripts/bench takes it from DWARF); dev->name is at offset 0.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#ifndef SKB_DEV_OFF
#error "SKB_DEV_OFF (offsetof(struct sk_buff, dev)) is needed"
#endif

/* "eth5" as the u32 the first 4 bytes of dev->name would read as */
#define ETH5	(('e') | ('t' << 8) | ('h' << 16) | ('5' << 24))

static __always_inline int keep_eth5(const void *skb)
{
	const void *dev;
	__u32 name;

	if (bpf_probe_read_kernel(&dev, sizeof(dev), skb + SKB_DEV_OFF))
		return 0;
	if (bpf_probe_read_kernel(&name, sizeof(name), dev))
		return 0;
	return name == ETH5;
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

char LICENSE[] SEC("license") = "GPL";
