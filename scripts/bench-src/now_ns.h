/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_MONOTONIC in ns, for the bench jobs' programs: under -icount a guest
 * ns is a guest instruction.
 */
#ifndef BENCH_NOW_NS_H
#define BENCH_NOW_NS_H
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#endif
