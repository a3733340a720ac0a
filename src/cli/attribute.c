/* SPDX-License-Identifier: BSD-2-Clause */
/* attribute.c (cli): `probity attribute SAMPLES --store DIR` maps every
 * sample in BPF JIT code to the generation that owned that code at that
 * time, or to `unknown` with the reason; `probity attribute --window
 * T1..T2 --link L` lists the generations active on a link in a window
 * (src/attribute/attribution.c, src/attribute/itable*.c,
 * docs/attribution.md). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "attribute/attribution.h"
#include "attribute/itable.h"
#include "attribute/timespec.h"
#include "probity/receipts.h"
#include "receipts/lifelog.h"

#define MAX_STORES 8

struct attribute_args {
	const char *stores[MAX_STORES];
	int n_stores;
	const char *window, *link, *input;
	bool list;
};

static void attribute_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] attribute SAMPLES --store DIR [--list]\n"
		"       %s [-j] attribute --window T1..T2 --link L --store DIR\n"
		"\n"
		"Attribute execution evidence to BPF program generations recorded in a\n"
		"receipt store. SAMPLES is a 'probity sample' file, or the text of\n"
		"'perf script' from a 'perf record -k mono' session. Each sample in BPF\n"
		"JIT code gets the generation whose JIT image held that address at that\n"
		"time, or 'unknown' with the reason (no receipt for the program, kernel\n"
		"records lost, address range ambiguous); never the newest generation\n"
		"by default.\n"
		"\n"
		"Options:\n"
		"  -s, --store DIR      receipt store (repeatable: e.g. the optimizer's and\n"
		"                       the observer's; default $PROBITY_STORE, else\n"
		"                       ./probity-store)\n"
		"  -l, --list           also list every sample in BPF JIT code\n"
		"  -w, --window T1..T2  generations active on --link in this window, with\n"
		"                       the uncertainty of every boundary\n"
		"  -L, --link L         link id, or hook name of the activations\n"
		"  -h, --help           show this help\n"
		"\n"
		"TIME: NS or mono:NS (CLOCK_MONOTONIC ns), S.FRAC (CLOCK_MONOTONIC s), @S.FRAC (epoch\n"
		"seconds) or YYYY-MM-DDTHH:MM:SS[.FRAC]Z.\n"
		"\n"
		"Exit status: 0 ok; 1 (--window) a part of the window is unknown;\n"
		"2 usage error or unreadable input; 3 I/O failure.\n",
		bin_name, bin_name);
}

/* ---------------------------- SAMPLES: printing ---------------------------- */

static json_t *count_json(const struct attribution_count *c)
{
	json_t *progs = json_object(), *o;
	char p[16];
	size_t i;

	for (i = 0; i < c->n_progs; i++) {
		snprintf(p, sizeof(p), "%u", c->progs[i].prog_id);
		json_object_set_new(progs, p, json_integer((json_int_t)c->progs[i].samples));
	}
	o = json_pack("{s:I, s:o}", "samples", (json_int_t)c->samples, "progs", progs);
	if (o && c->example)
		json_object_set_new(o, "example", json_string(c->example));
	return o;
}

static json_t *counts_json(const struct attribution_count *c, size_t n)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_set_new(o, c[i].key, count_json(&c[i]));
	return o;
}

static json_t *sample_json(const struct attribution_sample *x)
{
	const struct attr_result *r = &x->r;
	char a[24];

	snprintf(a, sizeof(a), "0x%llx", (unsigned long long)x->ip);
	return json_pack("{s:I, s:I, s:I, s:I, s:s, s:s, s:o, s:I, s:b, s:o, s:o}",
		"time_mono_ns", (json_int_t)x->time_mono_ns, "cpu", (json_int_t)x->cpu, "pid", (json_int_t)x->pid,
		"tid", (json_int_t)x->tid, "ip", a,
		"status", r->status == ATTR_GENERATION ? "generation" : "unknown",
		"generation_id", r->generation_id ? json_string(r->generation_id) : json_null(),
		"prog_id", (json_int_t)r->prog_id, "definite", r->definite,
		"reason", r->status == ATTR_UNKNOWN ? json_string(attr_reason__name(r->reason)) : json_null(),
		"detail", r->status == ATTR_UNKNOWN ? json_string(r->detail) : json_null());
}

static void print_json(const struct attribute_args *o, const struct attribution *a, const struct attr_table *t)
{
	json_t *doc = json_pack("{s:s, s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:o, s:o, s:o}",
		"input", o->input, "format", a->format,
		"summary", "samples", (json_int_t)a->total, "in_bpf_jit", (json_int_t)a->in_jit,
		"kernel", (json_int_t)a->kernel, "user", (json_int_t)a->user,
		"lost_records", (json_int_t)a->lost, "lost_events", (json_int_t)a->lost_records,
		"generations", counts_json(a->gens, a->n_gens), "unknown", counts_json(a->unknown, a->n_unknown),
		"table", attr_table__stats(t));
	size_t i;

	if (doc && o->list) {
		json_t *list = json_array();

		for (i = 0; i < a->n_list; i++)
			json_array_append_new(list, sample_json(&a->list[i]));
		json_object_set_new(doc, "samples", list);
	}
	if (doc && a->sampler_stats)
		json_object_set(doc, "sampler", a->sampler_stats);
	json_print_and_free(doc);
}

static void print_summary(const char *input, const struct attribution *a)
{
	size_t i, j;

	printf("attribute: %s (%s)\n", input, a->format);
	printf("samples: %llu total (%llu kernel, %llu user), %llu in BPF JIT code, %llu kernel records lost\n",
	       (unsigned long long)a->total, (unsigned long long)a->kernel, (unsigned long long)a->user,
	       (unsigned long long)a->in_jit, (unsigned long long)a->lost);
	printf("  %-66s %8s  %s\n", "generation", "samples", "progs");
	for (i = 0; i < a->n_gens; i++) {
		printf("  %-66s %8lld ", a->gens[i].key, (long long)a->gens[i].samples);
		for (j = 0; j < a->gens[i].n_progs; j++)
			printf(" %u", a->gens[i].progs[j].prog_id);
		putchar('\n');
	}
	for (i = 0; i < a->n_unknown; i++) {
		char label[80];

		snprintf(label, sizeof(label), "unknown (%s)", a->unknown[i].key);
		printf("  %-66s %8lld  %s\n", label, (long long)a->unknown[i].samples, a->unknown[i].example ?: "");
	}
	for (i = 0; i < a->n_list; i++) {
		const struct attribution_sample *x = &a->list[i];

		printf("  %llu cpu %lld pid %lld 0x%llx -> %s%s%s\n", (unsigned long long)x->time_mono_ns,
		       (long long)x->cpu, (long long)x->pid, (unsigned long long)x->ip,
		       x->r.generation_id ?: "unknown", x->r.status == ATTR_UNKNOWN ? ": " : "",
		       x->r.status == ATTR_UNKNOWN ? x->r.detail : "");
	}
}

static int attribute_samples(const struct attribute_args *o, struct attr_table *t)
{
	struct attribution_opts ao = { .input = o->input, .list = o->list };
	struct pb_errtext err = { 0 };
	struct attribution a;
	int rc;

	rc = attribution__run(t, &ao, &a, &err);
	if (a.torn.msg[0])
		p_warn("%s: %s; attributing what came before it", o->input, a.torn.msg);
	if (rc) {
		p_err("%s", err.msg);
		return rc == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	if (json_output)
		print_json(o, &a, t);
	else
		print_summary(o->input, &a);
	attribution__clear(&a);
	return EXIT_OK;
}

/* Open each store, add its lifecycle log; 0 or an exit status. */
static int load_stores(const char **stores, int n, struct attr_table *t)
{
	struct pb_store_opts so = { .sz = sizeof(so), .no_create = true };
	int i, rc;

	for (i = 0; i < n; i++) {
		struct pb_store *s = NULL;
		json_t *entries = NULL;

		rc = pb_store__open(stores[i], &so, &s);
		if (rc) {
			p_err("cannot open receipt store '%s': %s", stores[i], strerror(-rc));
			return EXIT_USAGE;
		}
		rc = lifelog__read(s, &entries, NULL);
		if (rc > 0)
			p_warn("store '%s': the lifecycle log is damaged; using the entries that read (run '%s receipts verify')",
			       stores[i], bin_name);
		if (rc >= 0)
			rc = attr_table__add_lifelog(t, entries);
		json_decref(entries);
		pb_store__free(s);
		if (rc < 0) {
			p_err("store '%s': cannot read the lifecycle log: %s", stores[i], strerror(-rc));
			return EXIT_FAILURE_RT;
		}
	}
	return 0;
}

/* ------------------------------ --window: printing ------------------------------ */

static void print_segment(const struct attr_segment *g)
{
	printf("  %-8s %s", g->in_window, g->generation_id ?: "unknown");
	if (g->reason)
		printf(" (%s)", g->reason);
	printf("\n           prog %lld, from [%lld .. %lld]", (long long)g->prog_id, (long long)g->start_earliest,
	       (long long)g->start_latest);
	if (g->still_active)
		printf(" still active");
	else
		printf(" to [%lld .. %lld]", (long long)g->end_earliest, (long long)g->end_latest);
	if (g->image_until_known)
		printf(", its image alive until %lld", (long long)g->image_until);
	printf(" (%s)\n", g->source);
}

/* segs (attr_table__window's) printed; true when a part of the window is
 * unknown */
static bool print_window(const char *key, uint64_t t1, uint64_t t2, json_t *segs)
{
	struct attr_segment *g = calloc(json_array_size(segs) + 1, sizeof(*g));
	bool unknown = !json_array_size(segs);
	json_t *v;
	size_t i;

	json_array_foreach(segs, i, v) {
		if (!g || attr_segment__decode(v, &g[i], NULL)) {
			unknown = true;	/* not ours: nothing to print either */
			if (g)
				g[i] = (struct attr_segment){ .in_window = "?", .source = "?" };
			continue;
		}
		unknown |= !strcmp(g[i].status, "unknown");
	}
	if (json_output) {
		json_print_and_free(json_pack("{s:s, s:I, s:I, s:O, s:b}", "link", key, "from_mono_ns",
					      (json_int_t)t1, "to_mono_ns", (json_int_t)t2, "segments", segs,
					      "complete", !unknown));
		free(g);
		return unknown;
	}
	printf("window %llu .. %llu (CLOCK_MONOTONIC ns) on %s:\n", (unsigned long long)t1,
	       (unsigned long long)t2, key);
	if (!json_array_size(segs))
		printf("  no generation recorded as active in this window\n");
	for (i = 0; g && i < json_array_size(segs); i++)
		print_segment(&g[i]);
	free(g);
	return unknown;
}

/* the window's ends in CLOCK_MONOTONIC ns (t built); 0 or an exit status */
static int window_times(const struct attr_table *t, const struct pb_time *a, const struct pb_time *b,
			uint64_t *t1, uint64_t *t2)
{
	if (attribute__to_mono(t, a, t1) || attribute__to_mono(t, b, t2)) {
		p_err("cannot convert a wall-clock time: the store has no entry with both clocks");
		return EXIT_USAGE;
	}
	if (*t1 > *t2) {
		p_err("--window: T1 is after T2");
		return EXIT_USAGE;
	}
	return 0;
}

static int do_window(const char *win, const char *link, struct attr_table *t)
{
	struct pb_errtext err = { 0 };
	struct pb_time a, b;
	uint64_t t1, t2;
	char key[96];
	json_t *segs;
	bool unknown;
	int rc;

	if (pb_time__parse_window(win, &a, &b, &err)) {
		p_err("--window: %s", err.msg);
		return EXIT_USAGE;
	}
	if (!link) {
		p_err("--window needs --link L");
		return EXIT_USAGE;
	}
	if (attr_table__build(t)) {
		p_err("building the interval table failed");
		return EXIT_FAILURE_RT;
	}
	rc = window_times(t, &a, &b, &t1, &t2);
	if (rc)
		return rc;
	attr_table__link_key(link, key, sizeof(key));
	segs = attr_table__window(t, key, t1, t2);
	if (!segs) {
		json_t *links = attr_table__links(t);
		char *l = json_dumps(links, JSON_COMPACT);

		p_err("no recorded activity on %s (links with activity: %s)", key, l ?: "[]");
		free(l);
		json_decref(links);
		return EXIT_USAGE;
	}
	unknown = print_window(key, t1, t2, segs);
	json_decref(segs);
	return unknown ? EXIT_FINDINGS : EXIT_OK;
}

/* ---------------------------------- command ---------------------------------- */

/* Options into o: -1 to go on, else the exit status (help shown, or a
 * usage error printed). */
static int parse_attribute_args(int argc, char **argv, struct attribute_args *o)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "window", required_argument, NULL, 'w' },
		{ "link", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "s:lw:L:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 's':
			if (o->n_stores == MAX_STORES) {
				p_err("at most %d --store", MAX_STORES);
				return EXIT_USAGE;
			}
			o->stores[o->n_stores++] = optarg;
			break;
		case 'l': o->list = true; break;
		case 'w': o->window = optarg; break;
		case 'L': o->link = optarg; break;
		case 'h': attribute_help(stdout); return EXIT_OK;
		default: attribute_help(stderr); return EXIT_USAGE;
		}
	}
	if (!o->n_stores) {
		o->stores[0] = cli_default_store();
		o->n_stores = 1;
	}
	if (o->window ? optind != argc : optind != argc - 1) {
		p_err(o->window ? "--window takes no SAMPLES argument" :
				  "expected one SAMPLES file (see '%s attribute --help')", bin_name);
		return EXIT_USAGE;
	}
	if (!o->window && o->link) {
		p_err("--link goes with --window");
		return EXIT_USAGE;
	}
	o->input = o->window ? NULL : argv[optind];
	return -1;
}

int do_attribute(int argc, char **argv)
{
	struct attribute_args o = { 0 };
	struct attr_table *t;
	int ret;

	ret = parse_attribute_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	t = attr_table__new();
	if (!t)
		return EXIT_FAILURE_RT;
	ret = load_stores(o.stores, o.n_stores, t);
	if (!ret)
		ret = o.window ? do_window(o.window, o.link, t) : attribute_samples(&o, t);
	attr_table__free(t);
	return ret;
}
