# attribution.mk: the attribution benchmark binary (bench/attribution.sh
# runs it; not part of `make test`).
$(BUILD)/bench/attribution_bench: bench/attribution_bench.c $(LIB) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS)
