# SPDX-License-Identifier: GPL-2.0
# Included by each target's Makefile, like the kernel's selftests/lib.mk.
.PHONY: all emit_tests run_tests
all:
emit_tests:
	@for t in $(TEST_PROGS); do echo "$(or $(COLLECTION),$(notdir $(CURDIR))):$$t"; done
run_tests:
	@cd .. && ./run_kselftest.sh $(notdir $(CURDIR))
