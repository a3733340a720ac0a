/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_perfscript.c: libFuzzer entry point for the `perf script` text
 * parser (src/attribute/perfscript.c): any bytes must parse or fail with
 * an error naming a line, and every sample must look up in a small
 * interval table without a crash. Seeds: tests/fuzz/corpus/fuzz_perfscript. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/itable.h"
#include "attribute/perfscript.h"

static struct attr_table *table;

static int on_sample(void *ctx, const struct ps_sample *s)
{
	struct attr_result r;

	if (s->sym && !*s->sym)
		abort();	/* an empty symbol is reported as NULL */
	attr_table__lookup(table, s->time, s->ip, s->sym, &r);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pb_errtext err = { 0 };
	int rc;

	if (!table) {
		json_t *e = json_loads("[{\"kind\":\"loaded\",\"generation_id\":\"aa\",\"prog_id\":7,"
				       "\"prog_tag\":\"0123456789abcdef\",\"jit_ranges\":[{\"addr\":\"0xffffffffa0001000\","
				       "\"len\":256}],\"mono_ns\":1000,\"realtime_ns\":2000}]", 0, NULL);

		table = attr_table__new();
		if (!table || attr_table__add_lifelog(table, e) || attr_table__build(table))
			abort();
		json_decref(e);
	}
	rc = perfscript__parse((const char *)data, size, on_sample, NULL, &err);
	if (rc == -EBADMSG && strncmp(err.msg, "line ", 5))
		abort();	/* errors name their line */
	return 0;
}
