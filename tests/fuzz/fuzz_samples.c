/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_samples.c: libFuzzer entry point for the sample file reader
 * (src/attribute/samples.c over common/framing.c) and the generation
 * interval table built from what it reads (src/attribute/itable.c). Any
 * bytes must read or fail cleanly; what reads must build a table, and
 * every sample must look up, without a crash.
 * The first input byte picks how the bytes are used:
 *   'C' + file    the rest as a sample file, its framing made valid
 *                 (fuzz_frame.h: header length, every chunk's length and
 *                 CRC), so the fuzzer reaches the records
 *   'J' + JSON    the rest as a lifecycle log (array of entries): table,
 *                 lookups, link windows and --at queries
 *   otherwise     the input is the file as it is
 * Seeds: tests/fuzz/corpus/fuzz_samples (tests/fuzz/mk-attribute-seeds.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "attribute/itable.h"
#include "attribute/samples.h"
#include "fuzz_frame.h"

#define MAX_SAMPLES 256

struct ctx {
	struct attr_table *t;
	uint64_t time[MAX_SAMPLES], ip[MAX_SAMPLES];
	int n;
};

static int on_snapshot(void *c, const json_t *j)
{
	return attr_table__add_snapshot(((struct ctx *)c)->t, j);
}

static int on_record(void *c, const struct sf_record *r)
{
	struct ctx *x = c;

	if (r->type == SF_REC_SAMPLE && x->n < MAX_SAMPLES) {
		x->time[x->n] = r->time;
		x->ip[x->n++] = r->sample.ip;
	}
	if (r->type == SF_REC_KSYMBOL && strlen(r->ksym.name) > 255)
		abort();
	return attr_table__add_record(x->t, r);
}

static void query(struct ctx *x)
{
	struct attr_result r;
	json_t *segs, *links, *v;
	size_t i;
	int k;

	for (k = 0; k < x->n; k++) {
		attr_table__lookup(x->t, x->time[k], x->ip[k], NULL, &r);
		attr_table__lookup(x->t, x->time[k], x->ip[k], "bpf_prog_0123456789abcdef_x", &r);
		if (r.status == ATTR_GENERATION && !r.generation_id)
			abort();
	}
	links = attr_table__links(x->t);
	json_array_foreach(links, i, v) {
		const char *key = json_string_value(v);

		segs = attr_table__window(x->t, key, 0, UINT64_MAX);
		json_decref(segs);
		segs = NULL;
		attr_table__at(x->t, key, 1000, &r, &segs);
		json_decref(segs);
	}
	json_decref(links);
	json_decref(attr_table__stats(x->t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct ctx x = { 0 };
	struct samples_read_cb cb = { .snapshot = on_snapshot, .record = on_record, .ctx = &x };
	struct pb_errtext err;
	uint8_t *copy;
	FILE *f;

	x.t = attr_table__new();
	if (!x.t)
		return 0;
	if (size && data[0] == 'J') {
		json_t *j = json_loadb((const char *)data + 1, size - 1, 0, NULL);

		if (j && !attr_table__add_lifelog(x.t, j) && !attr_table__build(x.t)) {
			x.n = 2;
			x.time[0] = 250;
			x.ip[0] = 0x1010;
			x.time[1] = 500;
			x.ip[1] = 0xffffffffa0000010ull;
			query(&x);
		}
		json_decref(j);
		attr_table__free(x.t);
		return 0;
	}
	if (!path[0])
		snprintf(path, sizeof(path), "%s/fuzz_samples.%d",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
	copy = malloc(size ? size : 1);
	if (!copy) {
		attr_table__free(x.t);
		return 0;
	}
	memcpy(copy, data, size);
	if (size && copy[0] == 'C')
		fuzz_frame_fixup(copy + 1, size - 1, PB_SAMPLES_MAGIC);
	f = fopen(path, "wb");
	if (f) {
		if (size && copy[0] == 'C')
			fwrite(copy + 1, 1, size - 1, f);
		else
			fwrite(copy, 1, size, f);
		fclose(f);
		if (samples__read(path, &cb, &err) >= 0 && !attr_table__build(x.t))
			query(&x);
		unlink(path);
	}
	free(copy);
	attr_table__free(x.t);
	return 0;
}
