# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the tests that run perf: glibc's malloc checks
# (libc_malloc_debug, check=3) for perf and whatever the test runs after
# this (LD_PRELOAD is inherited).  A double free or a free() of a bad
# pointer then aborts at once; without the checks it aborts only when the
# freed chunk is still in glibc's cache, so a test would fail now and then.
if ldconfig -p 2> /dev/null | grep -q 'libc_malloc_debug\.so\.0 '; then
	export LD_PRELOAD=libc_malloc_debug.so.0${LD_PRELOAD:+:$LD_PRELOAD}
	export GLIBC_TUNABLES=glibc.malloc.check=3${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}
fi
