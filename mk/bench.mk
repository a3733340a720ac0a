# bench.mk: benchmark binaries (bench/run.sh builds and runs them; not part
# of `make test`). See bench/README.md.
BENCH_SITES ?= 1000

# engine_bench probes its own target functions (written in assembly, so
# their first instructions are fixed: `push %rbp` or one 5-byte nop).
$(BUILD)/bench/engine_bench: bench/engine_bench.c mk/bench.mk $(LIB) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wl,--build-id=sha1 \
		-o $@ bench/engine_bench.c $(LIB) $(LDLIBS)

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
