# SPDX-License-Identifier: BSD-2-Clause
# crosslayer-fixtures.mk: the good and the BROKEN build of the cross-layer
# fixture (tests/fixtures/crosslayer/xlayer.c) for tests/cli/crosslayer.sh.
# Plain flags (never ASan): they are probed targets.
XL_FIX_CC := $(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1

$(BUILD)/fixtures/xlayer: tests/fixtures/crosslayer/xlayer.c mk/crosslayer-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(XL_FIX_CC) -o $@ $< -lpthread

$(BUILD)/fixtures/xlayer_broken: tests/fixtures/crosslayer/xlayer.c mk/crosslayer-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(XL_FIX_CC) -DBROKEN -o $@ $< -lpthread

TEST_FIXTURES += $(BUILD)/fixtures/xlayer $(BUILD)/fixtures/xlayer_broken

# tests/cli/preempt.sh: a WAIT made long by preemption alone
$(BUILD)/fixtures/preempt: tests/fixtures/preempt/preempt.c mk/crosslayer-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(XL_FIX_CC) -o $@ $< -lpthread

TEST_FIXTURES += $(BUILD)/fixtures/preempt
