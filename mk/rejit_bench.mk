# rejit_bench.mk: the activation-overhead benchmark binary (bench/rejit.sh
# runs it; not part of `make test`).
$(BUILD)/bench/rejit_bench: bench/rejit_bench.c $(LIB) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS)
