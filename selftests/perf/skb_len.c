// SPDX-License-Identifier: GPL-2.0
/*
 * Print the length of the skb of the probed function's argument skb, and
 * keep the event: the same filter on every copy of dst_discard (ARG_skb
 * is %di in each).
 */
#include <bpf64_helpers.h>

int filter(struct pt_regs *ctx)
{
	void *skb = (void *)BPF64_ARG(ctx, skb);
	char fmt[] = "len %d\n";

	bpf_trace_printk(fmt, sizeof(fmt), BPF64_READ(skb, sk_buff, len), 0, 0);
	return 1;
}
