# SPDX-License-Identifier: BSD-2-Clause
# fake_lwlock: stand-in for PostgreSQL 15's LWLock functions and USDT
# probes, the target of docs/examples/postgres-lwlock.yaml in
# tests/unit/test_plan.c and tests/unit/test_engine.c (attached for real)
# and in tests/cli/plan_cli.sh (always; the installed postgres is planned
# too when its build-id matches the example's).
$(BUILD)/fixtures/fake_lwlock: tests/fixtures/fake_lwlock.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1 -o $@ $<
TEST_FIXTURES += $(BUILD)/fixtures/fake_lwlock
