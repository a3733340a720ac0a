# SPDX-License-Identifier: BSD-2-Clause
# bench.mk: benchmark binaries (bench/run.sh and bench/*.sh build and run
# them; not part of `make test`). See bench/README.md.
#
# Every bench/X.c is one program linked with the library: build/bench/X
# (engine_bench, rejit_bench, receipts_bench, attribution_bench).
$(BUILD)/bench/%: bench/%.c $(LIB) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(BENCH_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# engine_bench probes its own target functions (written in assembly, so
# their first instructions are fixed: `push %rbp` or one 5-byte nop); its
# manifest names it by build-id.
$(BUILD)/bench/engine_bench: private BENCH_LDFLAGS = -Wl,--build-id=sha1
$(BUILD)/bench/engine_bench: mk/bench.mk

BENCH_SITES ?= 1000

$(BUILD)/bench/bench.manifest.yaml: bench/bench.manifest.yaml $(BUILD)/bench/engine_bench scripts/fill-build-id.sh
	scripts/fill-build-id.sh bench/bench.manifest.yaml $(BUILD)/bench/engine_bench $@

# BENCH_SITES distinct functions (-fno-ipa-icf: none folded into another)
$(BUILD)/bench/sites$(BENCH_SITES).c: bench/gen_sites.sh
	@mkdir -p $(@D)
	bench/gen_sites.sh $(BENCH_SITES) $@

$(BUILD)/bench/sites$(BENCH_SITES): $(BUILD)/bench/sites$(BENCH_SITES).c
	$(CC) -O2 -g -fno-ipa-icf -Wl,--build-id=sha1 -o $@ $<

.PHONY: bench-bins
bench-bins: $(BUILD)/bench/engine_bench $(BUILD)/bench/bench.manifest.yaml $(BUILD)/bench/sites$(BENCH_SITES)
