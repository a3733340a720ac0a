/* SPDX-License-Identifier: BSD-2-Clause */
/* attribution_bench.c: attribution throughput on a synthetic store and
 * sample file (bench/attribution.sh).
 *
 *   attribution_bench STORE SAMPLES N_SAMPLES N_GENS
 *
 * Writes a lifecycle log with N_GENS generations swapped on link 1, each
 * JIT image at one of 8 addresses (reused after unregistration, same
 * symbol name), the sample file with the matching ksymbol/bpf_event
 * records, 16 unrelated programs alive at start, and N_SAMPLES samples,
 * half in the JIT image of the generation running then (ground truth
 * known), half elsewhere. Then times the attribution as `probity
 * attribute` does it (store read, pass 1: table, build; pass 2: every
 * sample looked up) and prints JSON with the rates and the number of
 * wrong attributions (must be 0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "attribute/itable.h"
#include "attribute/samples.h"
#include "probity/receipts.h"
#include "receipts/lifelog.h"

#define GEN_NS	 1000000000ull	/* each generation active 1 s */
#define T0	 1000000000000ull
#define BASE	 0xffffffffa0000000ull

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t addr_of(int g)
{
	return BASE + (uint64_t)(g % 8) * 0x1000;
}

static void gen_id(int g, char out[65])
{
	snprintf(out, 65, "%064x", g + 1);
}

static int write_store(const char *dir, int n)
{
	struct pb_store *s;
	char id[65], prev[65], a[24];
	int g, err;

	err = pb_store__open(dir, NULL, &s);
	if (err)
		return err;
	for (g = 0; g < n && !err; g++) {
		uint64_t t = T0 + g * GEN_NS;
		json_t *e;

		gen_id(g, id);
		snprintf(a, sizeof(a), "0x%llx", (unsigned long long)addr_of(g));
		e = json_pack("{s:s, s:I, s:s, s:[{s:s, s:I}], s:I, s:I, s:s, s:{s:I, s:I}}", "generation_id", id,
			      "prog_id", (json_int_t)(1000 + g), "prog_tag", "0123456789abcdef", "jit_ranges",
			      "addr", a, "len", (json_int_t)2048, "mono_ns", (json_int_t)(t - 1000000),
			      "realtime_ns", (json_int_t)(t + 5000000000000ull), "source", "library", "timing",
			      "load_ns", (json_int_t)100000, "capture_ns", (json_int_t)100000);
		err = lifelog__append(s, LIFE_LOADED, e, NULL);
		json_decref(e);
		if (err)
			break;
		if (g)
			gen_id(g - 1, prev);
		e = json_pack("{s:s, s:I, s:{s:I, s:I}, s:I, s:I, s:I, s:o}", "generation_id", id, "prog_id",
			      (json_int_t)(1000 + g), "link", "id", (json_int_t)1, "type", (json_int_t)2,
			      "swap_begin_mono_ns", (json_int_t)t, "swap_end_mono_ns", (json_int_t)(t + 20000),
			      "mono_ns", (json_int_t)(t + 20000), "replaces", g ? json_string(prev) : json_null());
		err = lifelog__append(s, LIFE_ACTIVATED, e, NULL);
		json_decref(e);
		if (err || !g)
			continue;
		/* the previous generation: unloaded 100 ms after the swap */
		e = json_pack("{s:s, s:I, s:I}", "generation_id", prev, "prog_id", (json_int_t)(1000 + g - 1),
			      "mono_ns", (json_int_t)(t + 100000000));
		err = lifelog__append(s, LIFE_UNLOADED, e, NULL);
		json_decref(e);
	}
	pb_store__free(s);
	return err;
}

static int write_samples(const char *path, int n_gens, long n)
{
	struct samples_writer *w;
	uint8_t tag[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	json_t *hdr = json_pack("{s:s, s:s}", "format", "probity-samples", "clock", "CLOCK_MONOTONIC");
	json_t *snap = json_pack("{s:I, s:[]}", "mono_ns", (json_int_t)(T0 - 1), "progs");
	uint64_t span = (uint64_t)n_gens * GEN_NS, next_gen = 0;
	char a[24];
	long i;
	int g, err;

	for (g = 0; g < 16; g++) {	/* unrelated programs, no receipts */
		snprintf(a, sizeof(a), "0x%llx", (unsigned long long)(BASE + 0x100000 + g * 0x1000));
		json_array_append_new(json_object_get(snap, "progs"),
				      json_pack("{s:I, s:s, s:[{s:s, s:I}]}", "id", (json_int_t)(10 + g), "tag",
						"fedcba9876543210", "jit_ranges", "addr", a, "len", (json_int_t)1024));
	}
	err = samples_writer__create(path, hdr, &w);
	if (!err)
		err = samples_writer__snapshot(w, snap);
	for (i = 0; i < n && !err; i++) {
		uint64_t t = T0 + (uint64_t)((double)i / n * span);
		int cur = (int)((t - T0) / GEN_NS);

		/* side-band records in time order: load of the next generation
		 * 1 ms before its swap, unregister of the one before 100 ms after */
		while ((int)next_gen < n_gens && T0 + next_gen * GEN_NS - 1000000 <= t) {
			uint64_t tl = T0 + next_gen * GEN_NS - 2000000;

			err = samples_writer__ksymbol(w, 0, tl, tl, addr_of((int)next_gen), 2048, 1, 0,
						      "bpf_prog_0123456789abcdef_bench");
			if (!err)
				err = samples_writer__bpf_event(w, 0, tl + 100, tl + 100, 1, 1000 + (uint32_t)next_gen, tag);
			next_gen++;
		}
		if (cur >= 1 && t >= T0 + cur * GEN_NS + 100000000 - 1000 && t < T0 + cur * GEN_NS + 100000000 + span / n * 2) {
			uint64_t tu = T0 + cur * GEN_NS + 99999000;

			err = samples_writer__ksymbol(w, 1, tu, tu, addr_of(cur - 1), 2048, 1, 1,
						      "bpf_prog_0123456789abcdef_bench");
		}
		if (err)
			break;
		if (i & 1)	/* elsewhere in the kernel */
			err = samples_writer__sample(w, i & 3 ? 1 : 0, t, 0xffffffff81000000ull + (i % 4096) * 16, 1, 1,
						     SF_MODE_KERNEL);
		else		/* in the running generation's image */
			err = samples_writer__sample(w, 0, t, addr_of(cur) + (uint64_t)(i % 2000), 1, 1, SF_MODE_KERNEL);
	}
	if (!err)
		err = samples_writer__close(w, NULL);
	json_decref(hdr);
	json_decref(snap);
	return err;
}

struct run {
	struct attr_table *t;
	long total, in_jit, right, wrong, unknown;
};

static int p1_snap(void *c, const json_t *j) { return attr_table__add_snapshot(((struct run *)c)->t, j); }
static int p1_rec(void *c, const struct sf_record *r) { return attr_table__add_record(((struct run *)c)->t, r); }

static int p2_rec(void *c, const struct sf_record *r)
{
	struct run *x = c;
	struct attr_result res;
	char want[65];

	if (r->type != SF_REC_SAMPLE)
		return 0;
	x->total++;
	attr_table__lookup(x->t, r->time, r->sample.ip, NULL, &res);
	if (res.status == ATTR_NOT_BPF)
		return 0;
	x->in_jit++;
	if (res.status == ATTR_UNKNOWN) {
		x->unknown++;
		return 0;
	}
	gen_id((int)((r->time - T0) / GEN_NS), want);
	if (strcmp(want, res.generation_id))
		x->wrong++;
	else
		x->right++;
	return 0;
}

int main(int argc, char **argv)
{
	struct run x = { 0 };
	struct samples_read_cb c1 = { .snapshot = p1_snap, .record = p1_rec, .ctx = &x };
	struct samples_read_cb c2 = { .record = p2_rec, .ctx = &x };
	struct pb_store_opts so = { .sz = sizeof(so), .no_create = true };
	struct pb_store *s;
	json_t *entries = NULL;
	uint64_t t0, t1, t2, t3;
	struct pb_errtext err = { 0 };
	long n;
	int gens, rc;

	if (argc != 5) {
		fprintf(stderr, "usage: %s STORE SAMPLES N_SAMPLES N_GENS\n", argv[0]);
		return 2;
	}
	n = atol(argv[3]);
	gens = atoi(argv[4]);
	if (n <= 0 || gens <= 1)
		return 2;
	t0 = now();
	if ((rc = write_store(argv[1], gens)) || (rc = write_samples(argv[2], gens, n))) {
		fprintf(stderr, "writing the inputs: %s\n", strerror(-rc));
		return 1;
	}
	t1 = now();
	x.t = attr_table__new();
	if (pb_store__open(argv[1], &so, &s) || lifelog__read(s, &entries, NULL) < 0 ||
	    attr_table__add_lifelog(x.t, entries) || samples__read(argv[2], &c1, &err) ||
	    attr_table__build(x.t)) {
		fprintf(stderr, "table: %s\n", err.msg);
		return 1;
	}
	t2 = now();
	if (samples__read(argv[2], &c2, &err)) {
		fprintf(stderr, "pass 2: %s\n", err.msg);
		return 1;
	}
	t3 = now();
	printf("{\"samples\": %ld, \"generations\": %d, \"in_bpf_jit\": %ld, \"attributed_right\": %ld, "
	       "\"attributed_wrong\": %ld, \"unknown\": %ld, \"write_inputs_s\": %.3f, "
	       "\"table_build_s\": %.3f, \"lookup_pass_s\": %.3f, \"samples_per_s_lookup_pass\": %.0f, "
	       "\"samples_per_s_total\": %.0f, \"table\": %s}\n",
	       x.total, gens, x.in_jit, x.right, x.wrong, x.unknown, (t1 - t0) / 1e9, (t2 - t1) / 1e9,
	       (t3 - t2) / 1e9, x.total / ((t3 - t2) / 1e9), x.total / ((t3 - t1) / 1e9),
	       json_dumps(attr_table__stats(x.t), JSON_COMPACT));
	json_decref(entries);
	pb_store__free(s);
	attr_table__free(x.t);
	return x.wrong ? 1 : 0;
}
