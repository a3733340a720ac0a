# fake_lwlock: stand-in for PostgreSQL's LWLock functions and USDT probes,
# used by tests/cli/postgres_example.sh when postgres is not installed.
$(BUILD)/fixtures/fake_lwlock: tests/fixtures/fake_lwlock.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1 -o $@ $<
TEST_FIXTURES += $(BUILD)/fixtures/fake_lwlock
