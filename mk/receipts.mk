# receipts.mk: the receipts benchmark binary (bench/receipts.sh runs it;
# not part of `make test`).
$(BUILD)/bench/receipts_bench: bench/receipts_bench.c $(LIB) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS)
