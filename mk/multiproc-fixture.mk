# SPDX-License-Identifier: BSD-2-Clause
# forker: a process tree (fork without exec, as a server forks workers)
# with its manifest, for tests/cli/multiproc.sh (record --all, --cgroup,
# -- CMD following forks, scope: shared, exits).
$(BUILD)/fixtures/multiproc/forker: tests/fixtures/multiproc/forker.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1 -o $@ $<
$(BUILD)/fixtures/multiproc/forker.yaml: tests/fixtures/multiproc/forker.yaml $(BUILD)/fixtures/multiproc/forker
	scripts/fill-build-id.sh $< $(BUILD)/fixtures/multiproc/forker $@
TEST_FIXTURES += $(BUILD)/fixtures/multiproc/forker $(BUILD)/fixtures/multiproc/forker.yaml
