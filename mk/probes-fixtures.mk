# SPDX-License-Identifier: BSD-2-Clause
# probes-fixtures.mk: binaries `probity probes` is tested on
# (tests/cli/probes.sh, tests/unit/test_probes.c).
#
#   probes/probes_fixture           -O2 -g: a nop5, a push and a rip-relative
#                                   first instruction, a static function, a
#                                   USDT probe, a struct with known offsets
#   probes/stripped/probes_fixture  the same stripped, with .gnu_debuglink to
#                                   probes_fixture.debug next to it (what
#                                   distributions ship as -dbgsym)
PROBES_FIX := $(BUILD)/fixtures/probes

$(PROBES_FIX)/probes_fixture: tests/fixtures/probes/probes_fixture.c mk/probes-fixtures.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1 -o $@ $<

$(PROBES_FIX)/stripped/probes_fixture: $(PROBES_FIX)/probes_fixture
	@mkdir -p $(@D)
	objcopy --only-keep-debug $< $(@D)/probes_fixture.debug
	objcopy --strip-all --add-gnu-debuglink=$(@D)/probes_fixture.debug $< $@

TEST_FIXTURES += $(PROBES_FIX)/probes_fixture $(PROBES_FIX)/stripped/probes_fixture
