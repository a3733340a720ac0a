/* SPDX-License-Identifier: BSD-2-Clause */
/* receipts.c (cli): `probity receipts log | show GEN | verify | diff GEN
 * GEN | gc | export | checkpoint` (diff: receipts_diff.c; the last two:
 * receipts_sign.c). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/receipts_int.h"
#include "receipts/lifelog.h"
#include "receipts/lineage.h"
#include "receipts/receipt.h"
#include "receipts/store.h"
#include "receipts/verify.h"
#include "attribute/itable.h"
#include "attribute/timespec.h"

static void receipts_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] receipts COMMAND [--store DIR] [ARGS]\n"
		"\n"
		"Execution receipts: which generation of a BPF program ran, and why it\n"
		"existed, long after it was unloaded.\n"
		"\n"
		"Commands:\n"
		"  log [--generation GEN]     the lifecycle log: loaded, activated, retired,\n"
		"                             unloaded, link-updated entries\n"
		"  show GEN                   one generation: source -> rewrite -> verifier ->\n"
		"                             kernel/JIT -> activation intervals\n"
		"  show --at TIME --link L    the generation active on link L at TIME (or\n"
		"                             unknown, with the candidates), then as above\n"
		"  verify                     recompute every digest and the log's hash chain;\n"
		"                             name what is missing or altered\n"
		"  diff GEN GEN               what two generations differ in (body, transforms,\n"
		"                             assumptions, instructions)\n"
		"  gc [--min-age S] [--dry-run]\n"
		"                             remove objects no log entry reaches, and\n"
		"                             interrupted writes, older than S seconds (3600)\n"
		"  export, checkpoint         signed receipts for auditors (export --help)\n"
		"\n"
		"Options:\n"
		"  -s, --store DIR      the receipt store (default $PROBITY_STORE, else\n"
		"                       ./probity-store)\n"
		"  -g, --generation GEN (log) only entries of this generation\n"
		"      --min-age S      (gc) keep unreachable objects younger than S seconds\n"
		"  -n, --dry-run        (gc) report, remove nothing\n"
		"      --at TIME        (show) the generation active at TIME: NS or mono:NS\n"
		"                       (CLOCK_MONOTONIC), @S.FRAC or YYYY-MM-DDTHH:MM:SSZ\n"
		"      --link L         (show --at) link id, or hook name of the activations\n"
		"  -h, --help           show this help\n"
		"\n"
		"GEN is a generation id, a receipt digest, or a unique prefix (>= 6 hex).\n"
		"\n"
		"Exit status: 0 ok; 1 verify found problems, or diff found differences;\n"
		"2 usage error, no such store or generation; 3 I/O failure.\n",
		bin_name);
}

/* Parse the options shared by every receipts command; returns the index
 * of the first positional argument or -1 (usage error) / -2 (help). */
int receipts_parse_opts(int argc, char **argv, struct ropts *o)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "generation", required_argument, NULL, 'g' },
		{ "min-age", required_argument, NULL, 'm' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "at", required_argument, NULL, 'a' },
		{ "link", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int opt;

	memset(o, 0, sizeof(*o));
	o->min_age = 3600;
	o->store = cli_default_store();
	optind = 0;
	while ((opt = getopt_long(argc, argv, "s:g:nh", opts, NULL)) >= 0) {
		switch (opt) {
		case 's': o->store = optarg; break;
		case 'g': o->generation = optarg; break;
		case 'm':
			errno = 0;
			o->min_age = strtol(optarg, &end, 10);
			if (errno || *end || o->min_age < 0) {
				p_err("--min-age: expected seconds, found '%s'", optarg);
				return -1;
			}
			break;
		case 'n': o->dry_run = true; break;
		case 'a': o->at = optarg; break;
		case 'L': o->link = optarg; break;
		case 'h': receipts_help(stdout); return -2;
		default: receipts_help(stderr); return -1;
		}
	}
	return optind;
}

int receipts_open_store(const struct ropts *o, struct pb_store **s)
{
	struct pb_store_opts so = { .sz = sizeof(so), .no_create = true };
	int err = pb_store__open(o->store, &so, s);

	if (err)
		p_err("cannot open receipt store '%s': %s", o->store, strerror(-err));
	return err;
}

/* The preamble of the subcommands that take options only: parse them,
 * refuse positional arguments, open the store. Returns -1 when the
 * command should go on, else the exit status to return now. */
static int start_no_args(int argc, char **argv, const char *cmd, struct ropts *o,
			 struct pb_store **s)
{
	int rc = receipts_parse_opts(argc, argv, o);

	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (rc != argc) {
		p_err("'receipts %s' takes no arguments", cmd);
		return EXIT_USAGE;
	}
	if (receipts_open_store(o, s))
		return EXIT_USAGE;
	return -1;
}

static void fmt_time(json_int_t ns, char *buf, size_t sz)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!ns) {
		snprintf(buf, sz, "-");
		return;
	}
	gmtime_r(&t, &tm);
	snprintf(buf, sz, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", (tm.tm_year + 1900) % 10000,
		 (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100, (unsigned)((ns % 1000000000) / 1000) % 1000000);
}

int receipts_resolve(struct pb_store *s, const char *what, char gen[PB_DIGEST_HEX_LEN],
		   char rec[PB_DIGEST_HEX_LEN])
{
	int err = receipts__find_generation(s, what, gen, rec);

	if (err == -ENOTUNIQ)
		p_err("'%s' names more than one generation; give more digits", what);
	else if (err == -EINVAL)
		p_err("'%s': expected a generation id or a prefix of at least 6 hex digits", what);
	else if (err)
		p_err("no generation '%s' in this store (%s)", what, strerror(-err));
	return err;
}

/* One lifecycle entry on one line; fields that do not decode print as
 * absent. */
static void print_entry_line(const json_t *j)
{
	struct lifelog_entry e;
	char t[40], gen[16] = "-";

	lifelog_entry__decode(j, &e, NULL);
	fmt_time((json_int_t)e.realtime_ns, t, sizeof(t));
	if (e.generation_id)
		snprintf(gen, sizeof(gen), "%.12s", e.generation_id);
	printf("#%-4lld %s %-12s %-12s", (long long)e.seq, t, e.kind_name ?: "?", gen);
	switch (e.kind) {
	case LIFE_LOADED:
		printf(" prog %lld tag %s (%s)", (long long)e.prog_id, e.prog_tag ?: "?", e.source ?: "?");
		break;
	case LIFE_ACTIVATED:
		printf(" prog %lld link %lld, swap %lld ns%s%.12s", (long long)e.prog_id,
		       (long long)e.link.id,
		       (long long)((int64_t)e.swap_end_mono_ns - (int64_t)e.swap_begin_mono_ns),
		       e.replaces ? ", replaces " : "", e.replaces ?: "");
		break;
	case LIFE_RETIRED:
		printf(" reason: %s", e.reason ?: "");
		break;
	case LIFE_UNLOADED:
		printf(" prog %lld", (long long)e.prog_id);
		break;
	case LIFE_LINK_UPDATED:
		printf(" link %lld: prog %lld -> %lld", (long long)e.link_id, (long long)e.old_prog_id,
		       (long long)e.new_prog_id);
		break;
	case LIFE_OBSERVER:
		printf(" %s", e.event ?: "");
		break;
	}
	putchar('\n');
}

static const char *entry_generation(const json_t *j)
{
	struct lifelog_entry e;

	lifelog_entry__decode(j, &e, NULL);
	return e.generation_id ?: "";
}

static int cmd_log(int argc, char **argv)
{
	char gen[PB_DIGEST_HEX_LEN] = "", rec[PB_DIGEST_HEX_LEN];
	struct pb_store *s = NULL;
	json_t *entries = NULL, *e, *out;
	struct ropts o;
	size_t i;
	int rc, ret = EXIT_USAGE;

	rc = start_no_args(argc, argv, "log", &o, &s);
	if (rc >= 0)
		return rc;
	if (o.generation && receipts_resolve(s, o.generation, gen, rec))
		goto out;
	rc = lifelog__read(s, &entries, NULL);
	if (rc < 0) {
		p_err("cannot read the lifecycle log: %s", strerror(-rc));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	out = json_array();
	json_array_foreach(entries, i, e) {
		if (gen[0] && strcmp(entry_generation(e), gen))
			continue;
		if (json_output)
			json_array_append_new(out, lifelog_entry__public(e));
		else
			print_entry_line(e);
	}
	if (json_output)
		json_print_and_free(json_pack("{s:o, s:b}", "entries", out, "log_intact", rc == 0));
	else
		json_decref(out);
	if (rc > 0)
		p_warn("the lifecycle log is damaged; run '%s receipts verify'", bin_name);
	ret = rc > 0 ? EXIT_FINDINGS : EXIT_OK;
out:
	json_decref(entries);
	pb_store__free(s);
	return ret;
}

/* ---- show ---- */

static void print_steps(const char *label, const json_t *arr)
{
	const json_t *v;
	size_t i;

	if (!json_array_size(arr))
		printf("  %-18s (none)\n", label);
	json_array_foreach(arr, i, v) {
		struct receipt_step st;

		receipt_step__decode(v, &st, NULL);
		printf("  %-18s %s: %s", label, st.id ?: "?", st.description ?: "");
		if (st.evidence)
			printf(" [evidence %.16s]", st.evidence);
		putchar('\n');
	}
}

static void print_source(const char *rec, const struct receipt_view *p, const struct lineage *lin)
{
	size_t i;

	printf("generation %s\n", p->generation_id);
	printf("  receipt %s (in-toto Statement v1, %s)\n", rec, PB_RECEIPT_PREDICATE_TYPE);
	printf("source:\n");
	printf("  %-18s %s\n", "source build id", p->source_build_id ?: "(unknown)");
	printf("  %-18s %s\n", "original bpf tag", p->original_bpf_tag ?: "?");
	printf("  %-18s", "lineage");
	for (i = 0; i < lin->n; i++)
		printf("%s%.12s%s", i ? " -> " : " ", lin->items[i].generation_id,
		       lin->items[i].kind == LINEAGE_MISSING ? " (no receipt here)" : "");
	printf("\nrewrite:\n");
	printf("  %-18s %s %s (build %s)\n", "optimizer", p->generation.optimizer.name,
	       p->generation.optimizer.version, p->generation.optimizer.build_id);
	printf("  %-18s %s\n", "provenance", p->generation.provenance);
	print_steps("transform", p->generation.transforms);
	print_steps("assumption", p->generation.assumptions);
	printf("  %-18s %s (%s)\n", "specialized insns", p->generation.specialized_insns_digest,
	       p->generation.specialized_insns_source);
}

static long long or_zero(int64_t v)
{
	return v < 0 ? 0 : (long long)v;	/* unknown (null) prints as 0 */
}

static void print_verifier_and_jit(struct pb_store *s, const struct receipt_view *p)
{
	const struct receipt_target *tgt = &p->generation.target;
	void *buf;
	size_t len;

	printf("verifier:\n");
	printf("  %-18s %s, %lld insns processed, log level %lld\n", "result",
	       p->verifier.accepted ? "accepted" : "rejected", (long long)p->verifier.verified_insns,
	       (long long)p->verifier.log_level);
	printf("  %-18s %s\n", "result digest", p->verifier_result_digest);
	if (p->verifier.log && !pb_store__get(s, p->verifier.log, &buf, &len)) {
		char *line, *save = NULL;

		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("  | %s\n", line);
		free(buf);
	}
	printf("kernel/JIT:\n");
	printf("  %-18s %s build-id %s\n", "kernel", tgt->kernel_release, p->kernel_build_id);
	printf("  %-18s %s (bpf_jit_enable %lld, bpf_jit_harden %lld, bpf_jit_kallsyms %lld)\n",
	       "jit backend", p->jit_backend, or_zero(tgt->bpf_jit_enable),
	       or_zero(tgt->bpf_jit_harden), or_zero(tgt->bpf_jit_kallsyms));
	printf("  %-18s %s type %lld, tag %s\n", "program", p->generation.program.name,
	       (long long)p->generation.program.type, p->specialized_bpf_tag);
	printf("  %-18s %s\n", "xlated insns", p->xlated_insns_digest);
	printf("  %-18s %s (%lld bytes, %s, %lld operands masked)\n", "native image",
	       p->native_image_digest, (long long)p->jit.image_len, p->jit.normalization,
	       (long long)p->jit.masked_operands);
	printf("  %-18s %s\n", "line mapping", p->line_mapping_digest);
}

static void print_intervals(const struct activation_intervals *ivs)
{
	char t0[40], t1[40];
	size_t i;

	printf("activation intervals:\n");
	if (!ivs->n)
		printf("  (never activated through a recorded swap)\n");
	for (i = 0; i < ivs->n; i++) {
		const struct activation_interval *v = &ivs->iv[i];
		struct lifelog_jit_range r0;

		fmt_time(v->start_realtime_ns, t0, sizeof(t0));
		fmt_time(v->ended ? v->end_realtime_ns : 0, t1, sizeof(t1));
		printf("  [%s .. %s) %s, prog %lld", t0, v->ended ? t1 : "still active",
		       v->observed ? "observer" : "swapper", (long long)v->prog_id);
		if (v->observed || json_is_object(v->link_json))
			printf(" link %lld (type %lld, ifindex %lld)", (long long)v->link.id,
			       (long long)v->link.type, or_zero(v->link.ifindex));
		if (json_array_size(v->jit_ranges) &&
		    !lifelog_jit_range__decode(json_array_get(v->jit_ranges, 0), &r0, NULL))
			printf(" JIT 0x%llx+%lld", (unsigned long long)r0.addr, (long long)r0.len);
		if (v->ended)
			printf(", ended: %s", v->end_reason);
		printf("\n    mono [%lld .. %lld]\n", (long long)v->start_mono_ns,
		       (long long)(v->ended ? v->end_mono_ns : 0));
	}
}

static void print_show(struct pb_store *s, const char *rec, const json_t *stmt,
		       const struct lineage *lin, const json_t *life,
		       const struct activation_intervals *ivs)
{
	struct receipt_view p;
	const json_t *v;
	size_t i;

	receipt__decode(stmt, &p, NULL);	/* what does not decode prints as absent */
	print_source(rec, &p, lin);
	print_verifier_and_jit(s, &p);
	printf("lifecycle:\n");
	json_array_foreach(life, i, v) {
		printf("  ");
		print_entry_line(v);
	}
	print_intervals(ivs);
}

/* What --at resolved to. */
struct at_result {
	char link[96];
	bool definite;
	json_t *doc;		/* {"at","link","time_mono_ns","definite","segments"} */
};

/* A candidate segment of attribution's answer: its generation, program
 * and start (attribute/itable.c writes these). */
static void print_candidate(const json_t *seg)
{
	struct attr_segment sg;

	if (attr_segment__decode(seg, &sg, NULL))
		memset(&sg, 0, sizeof(sg));
	printf("  candidate %s prog %lld, from [%lld .. %lld]\n", sg.generation_id ?: "unknown",
	       (long long)sg.prog_id, (long long)sg.start_earliest, (long long)sg.start_latest);
}

/* --at TIME --link L: the generation active on L at TIME through the
 * interval table (src/attribute/itable.c). 0 with gen/rec and *at set,
 * EXIT_FINDINGS when unknown (printed), EXIT_USAGE on bad input. */
static int resolve_at(struct pb_store *s, const struct ropts *o, char gen[PB_DIGEST_HEX_LEN],
		      char rec[PB_DIGEST_HEX_LEN], struct at_result *at)
{
	struct attr_table *t = NULL;
	struct attr_result r;
	struct pb_time tm;
	json_t *entries = NULL, *segs = NULL;
	struct pb_errtext err = { 0 };
	char key[96];
	uint64_t mono;
	int rc, ret = EXIT_USAGE;

	memset(at, 0, sizeof(*at));
	if (!o->link) {
		p_err("--at needs --link L");
		return EXIT_USAGE;
	}
	if (pb_time__parse(o->at, &tm, &err)) {
		p_err("--at: %s", err.msg);
		return EXIT_USAGE;
	}
	rc = lifelog__read(s, &entries, NULL);
	if (rc < 0) {
		p_err("cannot read the lifecycle log: %s", strerror(-rc));
		return EXIT_FAILURE_RT;
	}
	t = attr_table__new();
	if (!t || attr_table__add_lifelog(t, entries) || attr_table__build(t)) {
		p_err("cannot build the interval table");
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	if (attribute__to_mono(t, &tm, &mono)) {
		p_err("cannot convert a wall-clock time: the store has no entry with both clocks");
		goto out;
	}
	attr_table__link_key(o->link, key, sizeof(key));
	if (attr_table__at(t, key, mono, &r, &segs) == -ENOENT) {
		json_t *links = attr_table__links(t);
		char *l = json_dumps(links, JSON_COMPACT);

		p_err("no recorded activity on %s in this store (links with activity: %s)", key, l ?: "[]");
		free(l);
		json_decref(links);
		goto out;
	}
	if (r.status != ATTR_GENERATION) {
		if (json_output) {
			json_print_and_free(json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:O}", "status", "unknown",
						      "link", key, "time_mono_ns", (json_int_t)mono,
						      "reason", attr_reason__name(r.reason), "detail", r.detail,
						      "at", o->at, "segments", segs));
		} else {
			json_t *v;
			size_t i;

			printf("at %s on %s: unknown (%s): %s\n", o->at, key, attr_reason__name(r.reason),
			       r.detail);
			json_array_foreach(segs, i, v)
				print_candidate(v);
		}
		ret = EXIT_FINDINGS;
		goto out;
	}
	if (receipts__find_generation(s, r.generation_id, gen, rec)) {
		p_err("generation %s is active at that time but has no receipt in this store", r.generation_id);
		ret = EXIT_FINDINGS;
		goto out;
	}
	snprintf(at->link, sizeof(at->link), "%s", key);
	at->definite = r.definite;
	at->doc = json_pack("{s:s, s:s, s:I, s:b, s:O}", "at", o->at, "link", key, "time_mono_ns",
			    (json_int_t)mono, "definite", r.definite, "segments", segs);
	ret = 0;
out:
	json_decref(segs);
	json_decref(entries);
	attr_table__free(t);
	return ret;
}

/* Parse show's arguments, resolve the generation (by id or --at). 0 or
 * the exit status to return. */
static int show_resolve(int argc, char **argv, struct ropts *o, struct pb_store **s,
			char gen[PB_DIGEST_HEX_LEN], char rec[PB_DIGEST_HEX_LEN], struct at_result *at)
{
	int rc = receipts_parse_opts(argc, argv, o);

	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (o->at ? rc != argc : rc != argc - 1) {
		p_err(o->at ? "--at takes no generation argument" :
			      "expected one generation (see '%s receipts --help')", bin_name);
		return EXIT_USAGE;
	}
	if (!o->at && o->link) {
		p_err("--link goes with --at");
		return EXIT_USAGE;
	}
	if (receipts_open_store(o, s))
		return EXIT_USAGE;
	if (o->at)
		return resolve_at(*s, o, gen, rec, at);
	return receipts_resolve(*s, argv[rc], gen, rec) ? EXIT_USAGE : 0;
}

static void show_output(struct pb_store *s, const struct ropts *o, const char *gen, const char *rec,
			const json_t *stmt, const struct lineage *lin, const json_t *life,
			const struct activation_intervals *ivs, const struct at_result *at)
{
	if (json_output) {
		json_t *doc = json_pack("{s:s, s:s, s:O, s:o, s:O, s:o}", "generation_id", gen,
					"receipt", rec, "statement", stmt, "lineage", lineage__to_json(lin),
					"lifecycle", life, "intervals", activation_intervals__to_json(ivs));

		if (at->doc)
			json_object_set(doc, "at", at->doc);
		json_print_and_free(doc);
		return;
	}
	if (at->doc)
		printf("at %s on %s: generation %s (%s)\n", o->at, at->link, gen,
		       at->definite ? "active for certain" :
		       "the only candidate, inside a boundary's uncertainty");
	print_show(s, rec, stmt, lin, life, ivs);
}

static int cmd_show(int argc, char **argv)
{
	char gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN];
	struct activation_intervals ivs = { 0 };
	struct lineage lin = { 0 };
	struct at_result at = { .doc = NULL };
	struct pb_store *s = NULL;
	json_t *stmt = NULL, *entries = NULL, *life = NULL, *e;
	struct ropts o;
	size_t i;
	int rc, ret;

	ret = show_resolve(argc, argv, &o, &s, gen, rec, &at);
	if (ret || !s)
		goto out;
	rc = store__get_json(s, rec, &stmt);
	if (rc) {
		p_err("receipt %s of generation %s: %s", rec, gen,
		      rc == -ENOENT ? "missing from the store" : strerror(-rc));
		ret = EXIT_FINDINGS;
		goto out;
	}
	if (lifelog__read(s, &entries, NULL) < 0) {
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	life = json_array();
	json_array_foreach(entries, i, e)
		if (!strcmp(entry_generation(e), gen))
			json_array_append_new(life, lifelog_entry__public(e));
	if (activation_intervals__build(entries, gen, &ivs) || lineage__build(s, stmt, &lin)) {
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	show_output(s, &o, gen, rec, stmt, &lin, life, &ivs, &at);
	ret = EXIT_OK;
out:
	activation_intervals__clear(&ivs);
	lineage__clear(&lin);
	json_decref(stmt);
	json_decref(entries);
	json_decref(life);
	json_decref(at.doc);
	pb_store__free(s);
	return ret;
}

/* ---- verify ---- */

static void print_findings(const char *label, const json_t *arr)
{
	const json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		struct verify_finding f;

		verify_finding__decode(v, &f, NULL);
		printf("%s %s: %s\n", label, f.where, f.what);
	}
}

static int cmd_verify(int argc, char **argv)
{
	struct verify_result r;
	struct pb_store *s = NULL;
	struct ropts o;
	int rc, ok;

	rc = start_no_args(argc, argv, "verify", &o, &s);
	if (rc >= 0)
		return rc;
	rc = verify__store(s, &r);
	pb_store__free(s);
	if (rc) {
		p_err("verify failed to run: %s", strerror(-rc));
		verify_result__clear(&r);
		return EXIT_FAILURE_RT;
	}
	ok = json_array_size(r.problems) == 0;
	if (json_output) {
		json_print_and_free(json_pack("{s:b, s:I, s:I, s:I, s:O, s:O}", "ok", ok,
					      "objects", (json_int_t)r.n_objects,
					      "receipts", (json_int_t)r.n_receipts,
					      "log_entries", (json_int_t)r.n_entries,
					      "problems", r.problems, "notes", r.notes));
	} else {
		print_findings("PROBLEM", r.problems);
		print_findings("note   ", r.notes);
		printf("verify: %zu objects, %zu receipts, %zu log entries: %s\n", r.n_objects,
		       r.n_receipts, r.n_entries, ok ? "OK" : "FAILED");
	}
	verify_result__clear(&r);
	return ok ? EXIT_OK : EXIT_FINDINGS;
}

/* ---- gc ---- */

static int cmd_gc(int argc, char **argv)
{
	struct store_gc_result r;
	struct store_gc_opts go;
	struct pb_store *s = NULL;
	struct ropts o;
	int rc, ret = EXIT_OK;

	rc = start_no_args(argc, argv, "gc", &o, &s);
	if (rc >= 0)
		return rc;
	go.min_age = o.min_age;
	go.dry_run = o.dry_run;
	rc = store__gc(s, &go, &r);
	if (rc && r.failed == STORE_GC_LOCK) {
		p_err("cannot lock %s/%s: %s", o.store, PB_LIFELOG_LOCK, strerror(-rc));
		ret = EXIT_FAILURE_RT;
	} else if (rc && r.failed == STORE_GC_LOG) {
		p_err("the lifecycle log is %s; gc refuses to decide what is unreachable (run '%s receipts verify')",
		      rc == -EBADMSG ? "damaged" : "unreadable", bin_name);
		ret = EXIT_FINDINGS;
	} else if (rc) {
		p_err("gc failed: %s", strerror(-rc));
		ret = EXIT_FAILURE_RT;
	} else if (json_output) {
		json_print_and_free(json_pack("{s:b, s:I, s:I, s:I, s:I, s:O}", "dry_run", o.dry_run,
					      "reachable", (json_int_t)r.reachable,
					      "removed", (json_int_t)r.removed,
					      "bytes_removed", (json_int_t)r.bytes_removed,
					      "kept_young", (json_int_t)r.kept_young,
					      "removed_objects", r.removed_objects));
	} else {
		printf("gc: %zu reachable, %s %zu (%zu bytes), kept %zu younger than %lds\n",
		       r.reachable, o.dry_run ? "would remove" : "removed", r.removed, r.bytes_removed,
		       r.kept_young, o.min_age);
	}
	store_gc_result__clear(&r);
	pb_store__free(s);
	return ret;
}

static const struct cmd receipts_cmds[] = {
	{ "log", cmd_log, "the lifecycle log" },
	{ "show", cmd_show, "one generation, source to activation" },
	{ "verify", cmd_verify, "recompute every digest and the log chain" },
	{ "diff", cmd_receipts_diff, "what two generations differ in" },
	{ "gc", cmd_gc, "remove unreachable objects" },
	{ "export", cmd_receipts_export, "sign receipts" },
	{ "checkpoint", cmd_receipts_checkpoint, "sign the log" },
	{ 0 },
};

int do_receipts(int argc, char **argv)
{
	return cmd_select(receipts_cmds, argc - 1, argv + 1, "receipts", receipts_help);
}
