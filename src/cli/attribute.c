/* attribute.c (cli): `probity attribute SAMPLES --store DIR` maps every
 * sample in BPF JIT code to the generation that owned that code at that
 * time, or to `unknown` with the reason; `probity attribute --window
 * T1..T2 --link L` lists the generations active on a link in a window
 * (src/attribute/itable.c, docs/attribution.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "attribute/itable.h"
#include "attribute/perfscript.h"
#include "attribute/samples.h"
#include "attribute/timespec.h"
#include "receipts/receipts_int.h"

#define MAX_STORES 8

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

struct tally {
	const struct attr_table *t;
	json_t *gens;		/* gen -> {samples, progs{}} */
	json_t *unknown;	/* reason -> {samples, progs{}} */
	json_t *list;		/* per sample, with --list */
	uint64_t total, in_jit, kernel, user, lost, lost_records;
	json_t *end;		/* the sample file's end chunk */
	json_t *hdr;
};

static void bump(json_t *obj, const char *key, uint32_t prog, const char *detail)
{
	json_t *o = json_object_get(obj, key), *progs;
	char p[16];

	if (!o) {
		o = json_pack("{s:I, s:{}}", "samples", (json_int_t)0, "progs");
		json_object_set_new(obj, key, o);
		if (detail)
			json_object_set_new(o, "example", json_string(detail));
	}
	json_object_set_new(o, "samples", json_integer(json_integer_value(json_object_get(o, "samples")) + 1));
	if (prog) {
		progs = json_object_get(o, "progs");
		snprintf(p, sizeof(p), "%u", prog);
		json_object_set_new(progs, p, json_integer(json_integer_value(json_object_get(progs, p)) + 1));
	}
}

static void count_sample(struct tally *y, uint64_t time, uint64_t ip, uint32_t cpu, uint32_t pid,
			 uint32_t tid, const char *sym)
{
	struct attr_result r;
	char a[24];

	y->total++;
	attr_table__lookup(y->t, time, ip, sym, &r);
	if (r.status == ATTR_NOT_BPF)
		return;
	y->in_jit++;
	if (r.status == ATTR_GENERATION)
		bump(y->gens, r.generation_id, r.prog_id, NULL);
	else
		bump(y->unknown, attr_reason__name(r.reason), r.prog_id, r.detail);
	if (!y->list)
		return;
	snprintf(a, sizeof(a), "0x%llx", (unsigned long long)ip);
	json_array_append_new(y->list, json_pack("{s:I, s:I, s:I, s:I, s:s, s:s, s:o, s:I, s:b, s:o, s:o}",
		"time_mono_ns", (json_int_t)time, "cpu", (json_int_t)cpu, "pid", (json_int_t)pid,
		"tid", (json_int_t)tid, "ip", a,
		"status", r.status == ATTR_GENERATION ? "generation" : "unknown",
		"generation_id", r.generation_id ? json_string(r.generation_id) : json_null(),
		"prog_id", (json_int_t)r.prog_id, "definite", r.definite,
		"reason", r.status == ATTR_UNKNOWN ? json_string(attr_reason__name(r.reason)) : json_null(),
		"detail", r.status == ATTR_UNKNOWN ? json_string(r.detail) : json_null()));
}

/* ---- sample files: pass 1 builds the table, pass 2 attributes ---- */

static int p1_snapshot(void *ctx, const json_t *snap)
{
	return attr_table__add_snapshot(ctx, snap);
}

static int p1_record(void *ctx, const struct sf_record *r)
{
	return attr_table__add_record(ctx, r);
}

static int p2_header(void *ctx, const json_t *hdr)
{
	struct tally *y = ctx;

	json_decref(y->hdr);
	y->hdr = json_deep_copy(hdr);
	return 0;
}

static int p2_record(void *ctx, const struct sf_record *r)
{
	struct tally *y = ctx;

	if (r->type == SF_REC_LOST) {
		y->lost += r->lost.lost;
		y->lost_records++;
	}
	if (r->type != SF_REC_SAMPLE)
		return 0;
	if (r->sample.mode == SF_MODE_KERNEL)
		y->kernel++;
	else if (r->sample.mode == SF_MODE_USER)
		y->user++;
	count_sample(y, r->time, r->sample.ip, r->cpu, r->sample.pid, r->sample.tid, NULL);
	return 0;
}

static int p2_end(void *ctx, const json_t *end)
{
	struct tally *y = ctx;

	json_decref(y->end);
	y->end = json_deep_copy(end);
	return 0;
}

static int attribute_sample_file(const char *path, struct attr_table *t, struct tally *y)
{
	struct samples_read_cb p1 = { .snapshot = p1_snapshot, .record = p1_record, .ctx = t };
	struct samples_read_cb p2 = { .header = p2_header, .record = p2_record, .end = p2_end, .ctx = y };
	struct attr_errtext err = { "" };
	int rc;

	rc = samples__read(path, &p1, &err);
	if (rc < 0) {
		p_err("%s: %s", path, err.msg[0] ? err.msg : strerror(-rc));
		return EXIT_USAGE;
	}
	if (rc == 1)
		p_warn("%s: %s; attributing what came before it", path, err.msg);
	rc = attr_table__build(t);
	if (rc) {
		p_err("building the interval table: %s", strerror(-rc));
		return EXIT_FAILURE_RT;
	}
	rc = samples__read(path, &p2, &err);
	if (rc < 0) {
		p_err("%s: %s", path, err.msg[0] ? err.msg : strerror(-rc));
		return EXIT_USAGE;
	}
	return -1;
}

static int ps_sample(void *ctx, const struct ps_sample *s)
{
	struct tally *y = ctx;

	if (s->ip >= 0xffff800000000000ull)
		y->kernel++;
	else
		y->user++;
	count_sample(y, s->time, s->ip, s->cpu, s->pid, s->tid, s->sym);
	return 0;
}

static int attribute_perf_script(const char *path, struct attr_table *t, struct tally *y)
{
	struct attr_errtext err = { "" };
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		p_err("%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	for (;;) {
		if (len == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 1 << 20);

			if (!nb) {
				close(fd);
				free(buf);
				p_err("%s: out of memory", path);
				return EXIT_FAILURE_RT;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 20;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (n < 0) {
		free(buf);
		p_err("%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	if (len >= 8 && !memcmp(buf, "PERFILE2", 8)) {
		free(buf);
		p_err("%s: this is a perf.data file; give the text of 'perf script -i %s -F time,cpu,pid,tid,ip,sym --ns'",
		      path, path);
		return EXIT_USAGE;
	}
	rc = attr_table__build(t);
	if (!rc)
		rc = perfscript__parse(buf, len, ps_sample, y, &err);
	free(buf);
	if (rc == -EBADMSG) {
		p_err("%s: %s (expected perf script text or a probity sample file)", path, err.msg);
		return EXIT_USAGE;
	}
	if (rc) {
		p_err("%s: %s", path, strerror(-rc));
		return EXIT_FAILURE_RT;
	}
	return -1;
}

static void print_summary(const char *input, const char *format, struct tally *y)
{
	const char *k;
	json_t *v, *pv;

	printf("attribute: %s (%s)\n", input, format);
	printf("samples: %llu total (%llu kernel, %llu user), %llu in BPF JIT code, %llu kernel records lost\n",
	       (unsigned long long)y->total, (unsigned long long)y->kernel, (unsigned long long)y->user,
	       (unsigned long long)y->in_jit, (unsigned long long)y->lost);
	printf("  %-66s %8s  %s\n", "generation", "samples", "progs");
	json_object_foreach(y->gens, k, v) {
		const char *pk;

		printf("  %-66s %8lld ", k, json_integer_value(json_object_get(v, "samples")));
		json_object_foreach(json_object_get(v, "progs"), pk, pv)
			printf(" %s", pk);
		putchar('\n');
	}
	json_object_foreach(y->unknown, k, v) {
		char label[80];

		snprintf(label, sizeof(label), "unknown (%s)", k);
		printf("  %-66s %8lld  %s\n", label, json_integer_value(json_object_get(v, "samples")),
		       json_string_value(json_object_get(v, "example")) ?: "");
	}
	if (y->list) {
		size_t i;

		json_array_foreach(y->list, i, v) {
			printf("  %llu cpu %lld pid %lld %s -> %s%s%s\n",
			       (unsigned long long)json_integer_value(json_object_get(v, "time_mono_ns")),
			       json_integer_value(json_object_get(v, "cpu")),
			       json_integer_value(json_object_get(v, "pid")),
			       json_string_value(json_object_get(v, "ip")),
			       json_string_value(json_object_get(v, "generation_id")) ?: "unknown",
			       json_is_string(json_object_get(v, "reason")) ? ": " : "",
			       json_string_value(json_object_get(v, "detail")) ?: "");
		}
	}
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

static int do_window(const char *win, const char *link, struct attr_table *t)
{
	struct pb_time a, b;
	uint64_t t1, t2;
	struct attr_errtext err = { "" };
	char key[96];
	json_t *segs, *v;
	size_t i;
	int unknown = 0;

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
	if (attribute__to_mono(t, &a, &t1) || attribute__to_mono(t, &b, &t2)) {
		p_err("cannot convert a wall-clock time: the store has no entry with both clocks");
		return EXIT_USAGE;
	}
	if (t1 > t2) {
		p_err("--window: T1 is after T2");
		return EXIT_USAGE;
	}
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
	json_array_foreach(segs, i, v)
		unknown |= !strcmp(json_string_value(json_object_get(v, "status")), "unknown");
	if (!json_array_size(segs))
		unknown = 1;
	if (json_output) {
		json_print_and_free(json_pack("{s:s, s:I, s:I, s:o, s:b}", "link", key, "from_mono_ns",
					      (json_int_t)t1, "to_mono_ns", (json_int_t)t2, "segments", segs,
					      "complete", !unknown));
		return unknown ? EXIT_FINDINGS : EXIT_OK;
	}
	printf("window %llu .. %llu (CLOCK_MONOTONIC ns) on %s:\n", (unsigned long long)t1,
	       (unsigned long long)t2, key);
	if (!json_array_size(segs))
		printf("  no generation recorded as active in this window\n");
	json_array_foreach(segs, i, v) {
		const json_t *s = json_object_get(v, "start"), *e = json_object_get(v, "end");
		const json_t *until = json_object_get(v, "old_image_alive_until");

		printf("  %-8s %s", json_string_value(json_object_get(v, "in_window")),
		       json_string_value(json_object_get(v, "generation_id")) ?: "unknown");
		if (json_is_string(json_object_get(v, "reason")))
			printf(" (%s)", json_string_value(json_object_get(v, "reason")));
		printf("\n           prog %lld, from [%lld .. %lld]", json_integer_value(json_object_get(v, "prog_id")),
		       json_integer_value(json_object_get(s, "earliest")), json_integer_value(json_object_get(s, "latest")));
		if (json_is_null(json_object_get(e, "latest")))
			printf(" still active");
		else
			printf(" to [%lld .. %lld]", json_integer_value(json_object_get(e, "earliest")),
			       json_integer_value(json_object_get(e, "latest")));
		if (json_is_integer(until))
			printf(", its image alive until %lld", json_integer_value(until));
		printf(" (%s)\n", json_string_value(json_object_get(v, "source")));
	}
	json_decref(segs);
	return unknown ? EXIT_FINDINGS : EXIT_OK;
}

int do_attribute(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "window", required_argument, NULL, 'w' },
		{ "link", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *stores[MAX_STORES], *window = NULL, *link = NULL, *input, *format;
	struct tally y = { 0 };
	struct attr_table *t = NULL;
	int n_stores = 0, opt, rc, ret = EXIT_USAGE;
	bool list = false;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "s:lw:L:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 's':
			if (n_stores == MAX_STORES) {
				p_err("at most %d --store", MAX_STORES);
				return EXIT_USAGE;
			}
			stores[n_stores++] = optarg;
			break;
		case 'l': list = true; break;
		case 'w': window = optarg; break;
		case 'L': link = optarg; break;
		case 'h': attribute_help(stdout); return EXIT_OK;
		default: attribute_help(stderr); return EXIT_USAGE;
		}
	}
	if (!n_stores) {
		stores[0] = cli_default_store();
		n_stores = 1;
	}
	if (window ? optind != argc : optind != argc - 1) {
		p_err(window ? "--window takes no SAMPLES argument" :
			       "expected one SAMPLES file (see '%s attribute --help')", bin_name);
		return EXIT_USAGE;
	}
	if (!window && link) {
		p_err("--link goes with --window");
		return EXIT_USAGE;
	}
	t = attr_table__new();
	if (!t)
		return EXIT_FAILURE_RT;
	rc = load_stores(stores, n_stores, t);
	if (rc) {
		ret = rc;
		goto out;
	}
	if (window) {
		ret = do_window(window, link, t);
		goto out;
	}
	input = argv[optind];
	y.t = t;
	y.gens = json_object();
	y.unknown = json_object();
	y.list = list ? json_array() : NULL;
	if (samples__is_sample_file(input)) {
		format = "probity sample file";
		rc = attribute_sample_file(input, t, &y);
	} else {
		struct stat st;

		if (stat(input, &st)) {
			p_err("%s: %s", input, strerror(errno));
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			p_err("%s: not a regular file (expected a sample file or perf script text)", input);
			goto out;
		}
		format = "perf script text";
		rc = attribute_perf_script(input, t, &y);
	}
	if (rc >= 0) {
		ret = rc;
		goto out;
	}
	if (json_output) {
		json_t *doc = json_pack("{s:s, s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:O, s:O, s:o}",
			"input", input, "format", format,
			"summary", "samples", (json_int_t)y.total, "in_bpf_jit", (json_int_t)y.in_jit,
			"kernel", (json_int_t)y.kernel, "user", (json_int_t)y.user,
			"lost_records", (json_int_t)y.lost, "lost_events", (json_int_t)y.lost_records,
			"generations", y.gens, "unknown", y.unknown, "table", attr_table__stats(t));

		if (y.list)
			json_object_set(doc, "samples", y.list);
		if (y.end)
			json_object_set(doc, "sampler", json_object_get(y.end, "stats"));
		json_print_and_free(doc);
	} else {
		print_summary(input, format, &y);
	}
	ret = EXIT_OK;
out:
	json_decref(y.gens);
	json_decref(y.unknown);
	json_decref(y.list);
	json_decref(y.end);
	json_decref(y.hdr);
	attr_table__free(t);
	return ret;
}
