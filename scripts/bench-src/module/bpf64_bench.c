// SPDX-License-Identifier: GPL-2.0
/*
 * bpf64_bench: the synthetic benchmark of the RFC "tracing filters with BPF"
 * (December 2013): N times netdev_alloc_skb(loopback, 128) + kfree_skb(),
 * timed with ktime.  Every kfree_skb() hits the skb:kfree_skb tracepoint
 * and the kfree_skb_reason() function, where the benchmark attaches what it
 * compares.
 *
 *   echo 200000 > /sys/kernel/debug/bpf64_bench/run	# runs the loop
 *   cat /sys/kernel/debug/bpf64_bench/run
 *   iterations 200000 ns 432874512 cpu 0
 *
 * The loop runs in the writer's context with preemption disabled, so on one
 * CPU from the first to the last timestamp; interrupts stay enabled, as in
 * the RFC's run, so netdev_alloc_skb() takes its usual path.  Under QEMU's
 * -icount the guest's ns are guest instructions.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#define BPF64_BENCH_MAX_ITERS	100000000ULL

static DEFINE_MUTEX(bpf64_bench_mutex);
static u64 bpf64_bench_iters;
static u64 bpf64_bench_ns;
static int bpf64_bench_cpu = -1;
static struct dentry *bpf64_bench_dir;

static int bpf64_bench_loop(u64 iters)
{
	struct net_device *dev = init_net.loopback_dev;
	struct sk_buff *skb;
	u64 i, start, end;
	int ret = 0;

	preempt_disable();
	start = ktime_get_ns();
	for (i = 0; i < iters; i++) {
		skb = netdev_alloc_skb(dev, 128);
		if (unlikely(!skb)) {
			ret = -ENOMEM;
			break;
		}
		kfree_skb(skb);
	}
	end = ktime_get_ns();
	bpf64_bench_cpu = smp_processor_id();
	preempt_enable();

	bpf64_bench_iters = i;
	bpf64_bench_ns = end - start;
	return ret;
}

static ssize_t bpf64_bench_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	u64 iters;
	int ret;

	ret = kstrtou64_from_user(ubuf, count, 0, &iters);
	if (ret)
		return ret;
	if (!iters || iters > BPF64_BENCH_MAX_ITERS)
		return -EINVAL;

	mutex_lock(&bpf64_bench_mutex);
	ret = bpf64_bench_loop(iters);
	mutex_unlock(&bpf64_bench_mutex);
	return ret ?: count;
}

static ssize_t bpf64_bench_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char buf[96];
	int len;

	mutex_lock(&bpf64_bench_mutex);
	len = scnprintf(buf, sizeof(buf), "iterations %llu ns %llu cpu %d\n",
			bpf64_bench_iters, bpf64_bench_ns, bpf64_bench_cpu);
	mutex_unlock(&bpf64_bench_mutex);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations bpf64_bench_fops = {
	.owner	= THIS_MODULE,
	.read	= bpf64_bench_read,
	.write	= bpf64_bench_write,
	.llseek	= default_llseek,
};

static int __init bpf64_bench_init(void)
{
	if (!init_net.loopback_dev)
		return -ENODEV;
	bpf64_bench_dir = debugfs_create_dir("bpf64_bench", NULL);
	debugfs_create_file("run", 0600, bpf64_bench_dir, NULL,
			    &bpf64_bench_fops);
	return 0;
}

static void __exit bpf64_bench_exit(void)
{
	debugfs_remove_recursive(bpf64_bench_dir);
}

module_init(bpf64_bench_init);
module_exit(bpf64_bench_exit);
MODULE_DESCRIPTION("The RFC's skb alloc/free benchmark for tracing filters");
MODULE_LICENSE("GPL");
