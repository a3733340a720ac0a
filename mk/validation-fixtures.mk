# SPDX-License-Identifier: BSD-2-Clause
# validation-fixtures.mk: the builds of the runtime-validation fixtures
# (docs/validation.md): the owned and the borrowed build of one object
# pool (tests/fixtures/validation/objpool.c) for tests/cli/validation.sh,
# and the clean build plus one mutation per invariant of
# tests/fixtures/validation/mutants.c for tests/cli/mutations.sh and
# bench/mutations.sh. Plain flags (never ASan): they are probed targets.
VAL_FIX_CC := $(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1

$(BUILD)/fixtures/objpool: tests/fixtures/validation/objpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -o $@ $<

$(BUILD)/fixtures/objpool_borrowed: tests/fixtures/validation/objpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -DBORROWED -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/objpool $(BUILD)/fixtures/objpool_borrowed

# mutants_clean and one binary per mutation switch (mutants.c header)
MUTANTS := BORROWED DOUBLE_PUT STALE_HANDLE RECYCLE LATE_CLOSE BYTES

$(BUILD)/fixtures/mutants_clean: tests/fixtures/validation/mutants.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -o $@ $<

$(BUILD)/fixtures/mutants_%: tests/fixtures/validation/mutants.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -D$* -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/mutants_clean $(foreach m,$(MUTANTS),$(BUILD)/fixtures/mutants_$(m))

# two threads pinning one shared frame (tests/unit/test_engine.c)
$(BUILD)/fixtures/sharedpin: tests/fixtures/validation/sharedpin.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/sharedpin

# the connection-pool service of issue 14 (tests/fixtures/validation/
# connpool.c): the clean build and one binary per variant switch
CONNPOOL := STALE_USE LEAK WIDE FASTPATH HANDOFF

$(BUILD)/fixtures/connpool_clean: tests/fixtures/validation/connpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -o $@ $<

$(BUILD)/fixtures/connpool_%: tests/fixtures/validation/connpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -D$* -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/connpool_clean $(foreach m,$(CONNPOOL),$(BUILD)/fixtures/connpool_$(m))

# the seed's "I/O moved to another thread" mutation (tests/fixtures/
# validation/ioshift.c): the clean build and -DMOVED
$(BUILD)/fixtures/ioshift_clean: tests/fixtures/validation/ioshift.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -o $@ $<

$(BUILD)/fixtures/ioshift_MOVED: tests/fixtures/validation/ioshift.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -DMOVED -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/ioshift_clean $(BUILD)/fixtures/ioshift_MOVED

# the release test's shared, refcounted pool (tests/fixtures/relpool/
# relpool.c, tests/cli/relpool.sh): clean, a release path no probe sees
# (-DBYPASS) and a true leak (-DLEAK)
RELPOOL := BYPASS LEAK

$(BUILD)/fixtures/relpool_clean: tests/fixtures/relpool/relpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -o $@ $<

$(BUILD)/fixtures/relpool_%: tests/fixtures/relpool/relpool.c mk/validation-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(VAL_FIX_CC) -pthread -D$* -o $@ $<

TEST_FIXTURES += $(BUILD)/fixtures/relpool_clean $(foreach m,$(RELPOOL),$(BUILD)/fixtures/relpool_$(m))
