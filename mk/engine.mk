# SPDX-License-Identifier: BSD-2-Clause
# engine: the BPF engine needs atomic fetch-and-add results (generation
# counters, shared-instance holder counts): BPF ISA v3 (kernel >= 5.12).
$(BUILD)/bpf/engine.bpf.o: BPF_CFLAGS += -mcpu=v3

# addr_reuse: the same address acquired, released, re-acquired (test_engine.c)
$(BUILD)/fixtures/addr_reuse: tests/fixtures/addr_reuse.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wl,--build-id=sha1 -o $@ $<
TEST_FIXTURES += $(BUILD)/fixtures/addr_reuse
