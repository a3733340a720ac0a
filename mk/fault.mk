# SPDX-License-Identifier: BSD-2-Clause
# fault.mk: the LD_PRELOAD fault-injection shim of tests/cli/fault_*.sh
# (tests/fault/faultinj.c; docs/testing.md): fails or SIGKILLs at the Nth
# write/fsync/rename on a chosen file.
$(BUILD)/fixtures/faultinj.so: tests/fault/faultinj.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl
TEST_FIXTURES += $(BUILD)/fixtures/faultinj.so
