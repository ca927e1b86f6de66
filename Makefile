# SPDX-License-Identifier: GPL-2.0
#
# BPF64 tracing filters: build, test and demo driver.  See README.md.
#
#   make demo            set up everything, boot the guest, show the main job
#   make test            set up everything, run host tests and guest selftests
#   make bench           benchmark (ratios), see Documentation/benchmark.md
#   make bench-baseline  build the unpatched kernel bench compares the fast path with
#   make fuzz [FUZZ_SECONDS=N]  fuzz the BPF64 loader and checker (clang, libFuzzer)
#   make test-debug      selftests and stress tests on a KASAN/lockdep/kmemleak kernel
#   make deb             Debian packages: the kernel with Debian's config, perf and tools
#   make test-distro     those packages unpacked and booted in QEMU (4 vCPUs): every selftest, the demo
#   make bench-distro    make bench on that kernel
#   make export-patches  regenerate the patch series from build/linux commits
#   make check-series    build the series patch by patch
#   make vm-shell        interactive shell in the guest
#   make vm-run CMD='...'  run one command in the guest

TOP    := $(CURDIR)
BUILD  := $(TOP)/build
TREE   := $(BUILD)/linux
KBUILD := $(BUILD)/kbuild
PERF   := $(BUILD)/perf/perf
BZIMAGE := $(KBUILD)/arch/x86/boot/bzImage
VM_RUN := $(TOP)/scripts/vm-run

export TOP BUILD TREE

.PHONY: all deps tree kernel perf tools setup setup-kernel setup-perf setup-tools test host-test guest-test \
	demo bench bench-baseline fuzz fuzz-long test-debug deb test-distro bench-distro export-patches tree-status vm-shell vm-run checkpatch \
	check-series peer-test \
	check-distro-config clean distclean

all: setup

deps:
	@scripts/install-deps

tree: deps
	@scripts/kernel-tree apply

# Each build runs its own make -jN: no jobserver is passed down.
BUILD_KERNEL := env -u MAKEFLAGS -u MFLAGS scripts/build-kernel $(KBUILD) vm-config/base.config
BUILD_PERF   := env -u MAKEFLAGS -u MFLAGS scripts/build-perf $(BUILD)/perf
BUILD_TOOLS  := env -u MAKEFLAGS -u MFLAGS scripts/build-tools $(BUILD)

kernel: tree
	@$(BUILD_KERNEL)

perf: tree
	@$(BUILD_PERF)

tools: tree
	@$(BUILD_TOOLS)

# The three side by side: alone, each leaves a core idle in its serial
# steps (configuring, feature checks, linking, BTF).
setup: tree
	@$(MAKE) --no-print-directory -j3 setup-kernel setup-perf setup-tools

setup-kernel:
	@$(BUILD_KERNEL)
setup-perf:
	@$(BUILD_PERF)
setup-tools:
	@$(BUILD_TOOLS)

test: setup
	@scripts/run-tests

host-test: tools
	@scripts/run-tests --host-only

guest-test: setup
	@scripts/run-tests --guest-only

demo: setup
	@scripts/demo

bench: setup
	@scripts/bench

bench-baseline: tree
	@scripts/bench baseline

test-debug: perf tools
	@scripts/test-debug

# make deb: the modules its localmodconfig keeps beside those this machine
# has loaded.  The guest: virtio (PCI, console, rng), the 9p root, overlay
# for /etc and /lib, pvpanic; the tests: test_bpf64, dummy (a module's
# function to probe), trace-events-sample (a module's tracepoints);
# bpftrace's tools: a virtio disk, loop, xfs, ext4, md.
DEB_MODULES := virtio_pci virtio_console virtio_rng 9pnet_virtio 9p overlay pvpanic_pci \
	test_bpf64 dummy trace-events-sample \
	virtio_blk loop xfs ext4 md_mod raid1

deb: tree tools
	@DEB_MODULES="$(DEB_MODULES)" scripts/build-deb

test-distro: deb
	@scripts/test-distro

bench-distro: deb
	@scripts/bench --distro

fuzz: tools
	@$(MAKE) -s -C $(TREE)/tools/bpf64/fuzz O=$(BUILD)/fuzz \
		EXAMPLES=$(BUILD)/tools/bpf64/examples run FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60)

# >= 10 M inputs (FUZZ_RUNS), the corpus under the sanitizers, coverage
fuzz-long: tools
	@$(MAKE) -s -C $(TREE)/tools/bpf64/fuzz O=$(BUILD)/fuzz \
		EXAMPLES=$(BUILD)/tools/bpf64/examples long FUZZ_RUNS=$(or $(FUZZ_RUNS),10000000)

export-patches:
	@scripts/kernel-tree export

tree-status:
	@scripts/kernel-tree status

checkpatch: tree
	@scripts/checkpatch-series

# every patch of the series builds on its own (not in make test: long)
check-series: tree
	@scripts/check-series

# ftracetest and perf test on our kernel and perf and on the unpatched ones
peer-test: setup
	@scripts/peer-test

check-distro-config: tree
	@scripts/check-distro-config

vm-shell: setup
	@$(VM_RUN) --shell

vm-run: setup
	@$(VM_RUN) -- '$(CMD)'

clean:
	rm -rf $(BUILD)/kbuild $(BUILD)/perf $(BUILD)/tools $(BUILD)/vm

distclean:
	rm -rf $(BUILD)
