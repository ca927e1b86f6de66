// SPDX-License-Identifier: GPL-2.0
/*
 * reader N: N read()s of 512 bytes from /dev/zero, timed with
 * CLOCK_MONOTONIC around the loop: "ns T reads N".  Under QEMU's -icount a
 * guest ns is a guest instruction, so T counts the instructions the whole
 * guest executed meanwhile, the tracing tools' work included.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include "now_ns.h"
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1000;
	char buf[512];
	long long t;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0 || n < 1) {
		perror("reader: /dev/zero");
		return 1;
	}
	t = now_ns();
	for (i = 0; i < n; i++) {
		if (read(fd, buf, sizeof(buf)) != sizeof(buf)) {
			perror("reader: read");
			return 1;
		}
	}
	t = now_ns() - t;
	printf("ns %lld reads %ld\n", t, n);
	return 0;
}
