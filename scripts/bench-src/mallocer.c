// SPDX-License-Identifier: GPL-2.0
/*
 * mallocer N: N malloc()s of 1 to 4096 bytes, each freed, timed with
 * CLOCK_MONOTONIC around the loop: "ns T mallocs N" (see reader.c: under
 * -icount T counts the instructions the whole guest executed meanwhile).
 */
#include <stdio.h>
#include <stdlib.h>
#include "now_ns.h"

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1000;
	void *volatile p;
	long long t;

	if (n < 1)
		return 1;
	t = now_ns();
	for (i = 0; i < n; i++) {
		p = malloc(1 + (i * 37) % 4096);
		free(p);
	}
	t = now_ns() - t;
	printf("ns %lld mallocs %ld\n", t, n);
	return 0;
}
