# validation-fixtures.mk: the owned and the borrowed build of one object
# pool (tests/fixtures/validation/objpool.c) for tests/cli/validation.sh.
# Plain flags (never ASan): they are probed targets.
VAL_FIX_CC := $(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1

$(BUILD)/fixtures/objpool: tests/fixtures/validation/objpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -o $@ $<

$(BUILD)/fixtures/objpool_borrowed: tests/fixtures/validation/objpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -DBORROWED -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/objpool $(BUILD)/fixtures/objpool_borrowed
