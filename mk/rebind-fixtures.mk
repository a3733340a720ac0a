# SPDX-License-Identifier: BSD-2-Clause
# rebind-fixtures.mk: the builds of tests/fixtures/rebind/rbpool.c for
# tests/cli/rebind.sh (record --rebind, manifest rebind): the manifest's
# own build, the same semantics laid out differently, and a build whose
# semantics changed; and the manifest filled with rbpool_v1's build-id.
# Plain flags (never ASan): they are probed targets.
RB_FIX := $(BUILD)/fixtures/rebind
RB_FIX_CC := $(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1

$(RB_FIX)/rbpool_v1: tests/fixtures/rebind/rbpool.c mk/rebind-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(RB_FIX_CC) -o $@ $<

$(RB_FIX)/rbpool_v2: tests/fixtures/rebind/rbpool.c mk/rebind-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(RB_FIX_CC) -DLAYOUT_B -falign-functions=64 -o $@ $<

$(RB_FIX)/rbpool_changed: tests/fixtures/rebind/rbpool.c mk/rebind-fixtures.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(RB_FIX_CC) -DCHANGED -o $@ $<

$(RB_FIX)/rbpool.manifest.yaml: tests/fixtures/rebind/rbpool.manifest.yaml $(RB_FIX)/rbpool_v1 scripts/fill-build-id.sh
	scripts/fill-build-id.sh $< $(RB_FIX)/rbpool_v1 $@

TEST_FIXTURES += $(RB_FIX)/rbpool_v1 $(RB_FIX)/rbpool_v2 $(RB_FIX)/rbpool_changed \
		 $(RB_FIX)/rbpool.manifest.yaml
