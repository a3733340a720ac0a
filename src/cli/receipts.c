/* receipts.c (cli): `probity receipts log | show GEN | verify | diff GEN
 * GEN | gc` over a receipt store (src/receipts/, docs/receipts.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "receipts/receipts_int.h"
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

struct ropts {
	const char *store;
	const char *generation;
	long min_age;
	bool dry_run;
	const char *at;
	const char *link;
};

/* Parse the options shared by every receipts command; returns the index
 * of the first positional argument or -1 (usage error) / -2 (help). */
static int parse_opts(int argc, char **argv, struct ropts *o)
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

static int open_store(const struct ropts *o, struct pb_store **s)
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
	int rc = parse_opts(argc, argv, o);

	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (rc != argc) {
		p_err("'receipts %s' takes no arguments", cmd);
		return EXIT_USAGE;
	}
	if (open_store(o, s))
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

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static json_int_t jint(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Entries without the reader's private fields, "_hash" kept as "hash". */
static json_t *public_entry(json_t *e)
{
	json_t *c = json_deep_copy(e);

	json_object_set(c, "hash", json_object_get(c, "_hash"));
	json_object_del(c, "_hash");
	json_object_del(c, "_offset");
	return c;
}

static int resolve(struct pb_store *s, const char *what, char gen[PB_DIGEST_HEX_LEN],
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

static void print_entry_line(const json_t *e)
{
	char t[40], gen[16] = "-";
	const char *k = jstr(e, "kind") ?: "?";
	const json_t *link = json_object_get(e, "link");

	fmt_time(jint(e, "realtime_ns"), t, sizeof(t));
	if (jstr(e, "generation_id"))
		snprintf(gen, sizeof(gen), "%.12s", jstr(e, "generation_id"));
	printf("#%-4lld %s %-12s %-12s", (long long)jint(e, "seq"), t, k, gen);
	if (!strcmp(k, "loaded"))
		printf(" prog %lld tag %s (%s)", (long long)jint(e, "prog_id"), jstr(e, "prog_tag") ?: "?",
		       jstr(e, "source") ?: "?");
	else if (!strcmp(k, "activated"))
		printf(" prog %lld link %lld, swap %lld ns%s%.12s", (long long)jint(e, "prog_id"),
		       (long long)jint(link, "id"),
		       (long long)(jint(e, "swap_end_mono_ns") - jint(e, "swap_begin_mono_ns")),
		       jstr(e, "replaces") ? ", replaces " : "", jstr(e, "replaces") ?: "");
	else if (!strcmp(k, "retired"))
		printf(" reason: %s", jstr(e, "reason") ?: "");
	else if (!strcmp(k, "unloaded"))
		printf(" prog %lld", (long long)jint(e, "prog_id"));
	else if (!strcmp(k, "link-updated"))
		printf(" link %lld: prog %lld -> %lld", (long long)jint(e, "link_id"),
		       (long long)jint(e, "old_prog_id"), (long long)jint(e, "new_prog_id"));
	else if (!strcmp(k, "observer"))
		printf(" %s", jstr(e, "event") ?: "");
	putchar('\n');
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
	if (o.generation && resolve(s, o.generation, gen, rec))
		goto out;
	rc = lifelog__read(s, &entries, NULL);
	if (rc < 0) {
		p_err("cannot read the lifecycle log: %s", strerror(-rc));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	out = json_array();
	json_array_foreach(entries, i, e) {
		if (gen[0] && strcmp(jstr(e, "generation_id") ?: "", gen))
			continue;
		if (json_output)
			json_array_append_new(out, public_entry(e));
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

/* ancestors, root first, each {generation_id, receipt|null} */
static json_t *lineage(struct pb_store *s, const json_t *pred)
{
	json_t *arr = json_array(), *cur = json_incref((json_t *)pred), *rec;
	char gen[PB_DIGEST_HEX_LEN], r[PB_DIGEST_HEX_LEN];
	int depth = 0;

	json_array_insert_new(arr, 0, json_pack("{s:O}", "generation_id", json_object_get(pred, "generation_id")));
	while (cur && jstr(cur, "parent_generation_id") && depth++ < 10000) {
		const char *par = jstr(cur, "parent_generation_id");

		if (receipts__find_generation(s, par, gen, r) || store__get_json(s, r, &rec)) {
			json_array_insert_new(arr, 0, json_pack("{s:s, s:n}", "generation_id", par,
								"receipt"));
			break;
		}
		json_array_insert_new(arr, 0, json_pack("{s:s, s:s}", "generation_id", gen, "receipt", r));
		json_decref(cur);
		cur = json_incref(json_object_get(rec, "predicate"));
		json_decref(rec);
	}
	json_decref(cur);
	return arr;
}

/* activation intervals of gen: from each 'activated' (the swapper's
 * record) or observed 'link-updated' installing it, to the next
 * 'retired'/'unloaded' of it or observed update replacing it, or open */
static json_t *intervals(json_t *entries, const char *gen)
{
	json_t *arr = json_array(), *e, *open_iv = NULL, *last_iv = NULL;
	size_t i;

	json_array_foreach(entries, i, e) {
		const char *k = jstr(e, "kind") ?: "";
		bool mine = !strcmp(jstr(e, "generation_id") ?: "", gen);
		bool lu = !strcmp(k, "link-updated");
		/* observer entries carry syscall times in CLOCK_MONOTONIC only:
		 * map them to wall time with the entry's own clock pair */
		json_int_t off = jint(e, "realtime_ns") - jint(e, "mono_ns");

		if (mine && !strcmp(k, "activated")) {
			open_iv = json_pack("{s:s, s:O, s:O, s:I, s:I, s:I, s:I, s:O, s:n, s:n, s:n}",
					    "source", "swapper",
					    "link", json_object_get(e, "link"),
					    "jit_ranges", json_object_get(e, "jit_ranges"),
					    "start_mono_ns", jint(e, "swap_begin_mono_ns"),
					    "start_mono_ns_latest", jint(e, "swap_end_mono_ns"),
					    "start_realtime_ns", jint(e, "swap_begin_realtime_ns"),
					    "start_realtime_ns_latest", jint(e, "swap_end_realtime_ns"),
					    "prog_id", json_object_get(e, "prog_id"),
					    "end_mono_ns", "end_realtime_ns", "end_reason");
			json_array_append_new(arr, open_iv);
			last_iv = open_iv;
		} else if (lu && !strcmp(jstr(e, "new_generation_id") ?: "", gen)) {
			open_iv = json_pack("{s:s, s:{s:O, s:O, s:O}, s:[], s:I, s:I, s:I, s:I, s:O, s:n, s:n, s:n}",
					    "source", "observer",
					    "link", "id", json_object_get(e, "link_id"),
					    "type", json_object_get(e, "link_type"),
					    "ifindex", json_object_get(e, "ifindex") ?: json_null(),
					    "jit_ranges",
					    "start_mono_ns", jint(e, "syscall_enter_mono_ns"),
					    "start_mono_ns_latest", jint(e, "syscall_exit_mono_ns"),
					    "start_realtime_ns", jint(e, "syscall_enter_mono_ns") + off,
					    "start_realtime_ns_latest", jint(e, "syscall_exit_mono_ns") + off,
					    "prog_id", json_object_get(e, "new_prog_id"),
					    "end_mono_ns", "end_realtime_ns", "end_reason");
			json_array_append_new(arr, open_iv);
			last_iv = open_iv;
		} else if (last_iv && lu && !strcmp(jstr(e, "old_generation_id") ?: "", gen) &&
			   (open_iv || (!strcmp(jstr(last_iv, "end_reason") ?: "", "unloaded") &&
					jint(e, "syscall_exit_mono_ns") < jint(last_iv, "end_mono_ns")))) {
			/* the observer's two sources may log the unload before
			 * the update that retired the program: the update ends it */
			json_object_set_new(last_iv, "end_mono_ns", json_integer(jint(e, "syscall_exit_mono_ns")));
			json_object_set_new(last_iv, "end_realtime_ns",
					    json_integer(jint(e, "syscall_exit_mono_ns") + off));
			json_object_set_new(last_iv, "end_reason", json_string("replaced (observed link update)"));
			open_iv = NULL;
		} else if (open_iv && mine && (!strcmp(k, "retired") || !strcmp(k, "unloaded"))) {
			json_object_set(open_iv, "end_mono_ns", json_object_get(e, "mono_ns"));
			json_object_set(open_iv, "end_realtime_ns", json_object_get(e, "realtime_ns"));
			json_object_set_new(open_iv, "end_reason",
					    json_string(!strcmp(k, "retired") ? jstr(e, "reason") ?: "retired"
									       : "unloaded"));
			open_iv = NULL;
		}
	}
	return arr;
}

static void print_steps(const char *label, const json_t *arr)
{
	const json_t *v;
	size_t i;

	if (!json_array_size(arr))
		printf("  %-18s (none)\n", label);
	json_array_foreach(arr, i, v) {
		printf("  %-18s %s: %s", label, jstr(v, "id") ?: "?", jstr(v, "description") ?: "");
		if (jstr(v, "evidence"))
			printf(" [evidence %.16s]", jstr(v, "evidence"));
		putchar('\n');
	}
}

static void print_show(struct pb_store *s, const char *rec, const json_t *stmt, const json_t *lin,
		       const json_t *life, const json_t *ivs)
{
	const json_t *p = json_object_get(stmt, "predicate"), *body = json_object_get(p, "generation");
	const json_t *opt = json_object_get(body, "optimizer"), *tgt = json_object_get(body, "target");
	const json_t *ver = json_object_get(p, "verifier"), *jit = json_object_get(p, "jit"), *v;
	char t0[40], t1[40];
	void *buf;
	size_t len, i;

	printf("generation %s\n", jstr(p, "generation_id"));
	printf("  receipt %s (in-toto Statement v1, %s)\n", rec, PB_RECEIPT_PREDICATE_TYPE);
	printf("source:\n");
	printf("  %-18s %s\n", "source build id", jstr(p, "source_build_id") ?: "(unknown)");
	printf("  %-18s %s\n", "original bpf tag", jstr(p, "original_bpf_tag") ?: "?");
	printf("  %-18s", "lineage");
	json_array_foreach(lin, i, v)
		printf("%s%.12s%s", i ? " -> " : " ", jstr(v, "generation_id"),
		       json_is_null(json_object_get(v, "receipt")) ? " (no receipt here)" : "");
	printf("\nrewrite:\n");
	printf("  %-18s %s %s (build %s)\n", "optimizer", jstr(opt, "name"), jstr(opt, "version"),
	       jstr(opt, "build_id"));
	printf("  %-18s %s\n", "provenance", jstr(body, "provenance"));
	print_steps("transform", json_object_get(body, "transforms"));
	print_steps("assumption", json_object_get(body, "assumptions"));
	printf("  %-18s %s (%s)\n", "specialized insns", jstr(body, "specialized_insns_digest"),
	       jstr(body, "specialized_insns_source"));
	printf("verifier:\n");
	printf("  %-18s %s, %lld insns processed, log level %lld\n", "result",
	       json_is_true(json_object_get(ver, "accepted")) ? "accepted" : "rejected",
	       (long long)jint(ver, "verified_insns"), (long long)jint(ver, "log_level"));
	printf("  %-18s %s\n", "result digest", jstr(p, "verifier_result_digest"));
	if (jstr(ver, "log") && !pb_store__get(s, jstr(ver, "log"), &buf, &len)) {
		char *line, *save = NULL;

		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("  | %s\n", line);
		free(buf);
	}
	printf("kernel/JIT:\n");
	printf("  %-18s %s build-id %s\n", "kernel", jstr(tgt, "kernel_release"), jstr(p, "kernel_build_id"));
	printf("  %-18s %s (bpf_jit_enable %lld, bpf_jit_harden %lld, bpf_jit_kallsyms %lld)\n",
	       "jit backend", jstr(p, "jit_backend"), (long long)jint(tgt, "bpf_jit_enable"),
	       (long long)jint(tgt, "bpf_jit_harden"), (long long)jint(tgt, "bpf_jit_kallsyms"));
	printf("  %-18s %s type %lld, tag %s\n", "program",
	       jstr(json_object_get(body, "program"), "name"),
	       (long long)jint(json_object_get(body, "program"), "type"), jstr(p, "specialized_bpf_tag"));
	printf("  %-18s %s\n", "xlated insns", jstr(p, "xlated_insns_digest"));
	printf("  %-18s %s (%lld bytes, %s, %lld operands masked)\n", "native image",
	       jstr(p, "native_image_digest"), (long long)jint(jit, "image_len"),
	       jstr(jit, "normalization"), (long long)jint(jit, "masked_operands"));
	printf("  %-18s %s\n", "line mapping", jstr(p, "line_mapping_digest"));
	printf("lifecycle:\n");
	json_array_foreach(life, i, v) {
		printf("  ");
		print_entry_line(v);
	}
	printf("activation intervals:\n");
	if (!json_array_size(ivs))
		printf("  (never activated through a recorded swap)\n");
	json_array_foreach(ivs, i, v) {
		const json_t *link = json_object_get(v, "link"), *r0 = json_array_get(json_object_get(v, "jit_ranges"), 0);

		fmt_time(jint(v, "start_realtime_ns"), t0, sizeof(t0));
		fmt_time(jint(v, "end_realtime_ns"), t1, sizeof(t1));
		printf("  [%s .. %s) %s, prog %lld", t0, json_is_null(json_object_get(v, "end_realtime_ns")) ?
		       "still active" : t1, jstr(v, "source"), (long long)jint(v, "prog_id"));
		if (json_is_object(link))
			printf(" link %lld (type %lld, ifindex %lld)", (long long)jint(link, "id"),
			       (long long)jint(link, "type"), (long long)jint(link, "ifindex"));
		if (r0)
			printf(" JIT %s+%lld", jstr(r0, "addr"), (long long)jint(r0, "len"));
		if (jstr(v, "end_reason"))
			printf(", ended: %s", jstr(v, "end_reason"));
		printf("\n    mono [%lld .. %lld]\n", (long long)jint(v, "start_mono_ns"),
		       (long long)jint(v, "end_mono_ns"));
	}
}

/* --at TIME --link L: the generation active on L at TIME through the
 * interval table (src/attribute/itable.c). 0 with gen/rec and *at set,
 * EXIT_FINDINGS when unknown (printed), EXIT_USAGE on bad input. */
static int resolve_at(struct pb_store *s, const struct ropts *o, char gen[PB_DIGEST_HEX_LEN],
		      char rec[PB_DIGEST_HEX_LEN], json_t **at)
{
	struct attr_table *t = NULL;
	struct attr_result r;
	struct pb_time tm;
	json_t *entries = NULL, *segs = NULL;
	struct attr_errtext err = { "" };
	char key[96];
	uint64_t mono;
	int rc, ret = EXIT_USAGE;

	*at = NULL;
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
				printf("  candidate %s prog %lld, from [%lld .. %lld]\n",
				       jstr(v, "generation_id") ?: "unknown", (long long)jint(v, "prog_id"),
				       (long long)jint(json_object_get(v, "start"), "earliest"),
				       (long long)jint(json_object_get(v, "start"), "latest"));
		}
		ret = EXIT_FINDINGS;
		goto out;
	}
	if (receipts__find_generation(s, r.generation_id, gen, rec)) {
		p_err("generation %s is active at that time but has no receipt in this store", r.generation_id);
		ret = EXIT_FINDINGS;
		goto out;
	}
	*at = json_pack("{s:s, s:s, s:I, s:b, s:O}", "at", o->at, "link", key, "time_mono_ns",
			(json_int_t)mono, "definite", r.definite, "segments", segs);
	ret = 0;
out:
	json_decref(segs);
	json_decref(entries);
	attr_table__free(t);
	return ret;
}

static int cmd_show(int argc, char **argv)
{
	char gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN];
	struct pb_store *s = NULL;
	json_t *stmt = NULL, *entries = NULL, *life = NULL, *ivs = NULL, *lin = NULL, *e, *at = NULL;
	struct ropts o;
	size_t i;
	int rc, ret = EXIT_USAGE;

	rc = parse_opts(argc, argv, &o);
	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (o.at ? rc != argc : rc != argc - 1) {
		p_err(o.at ? "--at takes no generation argument" :
			     "expected one generation (see '%s receipts --help')", bin_name);
		return EXIT_USAGE;
	}
	if (!o.at && o.link) {
		p_err("--link goes with --at");
		return EXIT_USAGE;
	}
	if (open_store(&o, &s))
		return EXIT_USAGE;
	if (o.at) {
		rc = resolve_at(s, &o, gen, rec, &at);
		if (rc) {
			ret = rc;
			goto out;
		}
	} else if (resolve(s, argv[rc], gen, rec)) {
		goto out;
	}
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
		if (!strcmp(jstr(e, "generation_id") ?: "", gen))
			json_array_append_new(life, public_entry(e));
	ivs = intervals(entries, gen);
	lin = lineage(s, json_object_get(stmt, "predicate"));
	if (json_output) {
		json_t *doc = json_pack("{s:s, s:s, s:O, s:O, s:O, s:O}", "generation_id", gen,
					"receipt", rec, "statement", stmt, "lineage", lin,
					"lifecycle", life, "intervals", ivs);

		if (at)
			json_object_set(doc, "at", at);
		json_print_and_free(doc);
	} else {
		if (at)
			printf("at %s on %s: generation %s (%s)\n", o.at, jstr(at, "link"), gen,
			       json_is_true(json_object_get(at, "definite")) ? "active for certain" :
			       "the only candidate, inside a boundary's uncertainty");
		print_show(s, rec, stmt, lin, life, ivs);
	}
	ret = EXIT_OK;
out:
	json_decref(stmt);
	json_decref(entries);
	json_decref(life);
	json_decref(ivs);
	json_decref(lin);
	json_decref(at);
	pb_store__free(s);
	return ret;
}

static int cmd_verify(int argc, char **argv)
{
	struct verify_result r;
	struct pb_store *s = NULL;
	struct ropts o;
	json_t *v;
	size_t i;
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
		json_array_foreach(r.problems, i, v)
			printf("PROBLEM %s: %s\n", jstr(v, "where"), jstr(v, "what"));
		json_array_foreach(r.notes, i, v)
			printf("note    %s: %s\n", jstr(v, "where"), jstr(v, "what"));
		printf("verify: %zu objects, %zu receipts, %zu log entries: %s\n", r.n_objects,
		       r.n_receipts, r.n_entries, ok ? "OK" : "FAILED");
	}
	verify_result__clear(&r);
	return ok ? EXIT_OK : EXIT_FINDINGS;
}

/* ---- diff ---- */

static json_t *field_diff(const json_t *a, const json_t *b, const char *prefix, json_t *out)
{
	const char *k;
	json_t *v;
	char path[512];

	json_object_foreach((json_t *)a, k, v) {
		json_t *w = json_object_get(b, k);

		snprintf(path, sizeof(path), "%s%s", prefix, k);
		if (!strcmp(k, "transforms") || !strcmp(k, "assumptions"))
			continue;
		if (json_is_object(v) && json_is_object(w)) {
			char sub[520];

			snprintf(sub, sizeof(sub), "%s.", path);
			field_diff(v, w, sub, out);
		} else if (!w || !json_equal(v, w)) {
			json_object_set_new(out, path, json_pack("{s:O, s:o}", "a", v, "b", w ? json_incref(w) : json_null()));
		}
	}
	json_object_foreach((json_t *)b, k, v) {
		snprintf(path, sizeof(path), "%s%s", prefix, k);
		if (!json_object_get(a, k))
			json_object_set_new(out, path, json_pack("{s:n, s:O}", "a", "b", v));
	}
	return out;
}

static json_t *step_diff(const json_t *a, const json_t *b)
{
	json_t *added = json_array(), *removed = json_array(), *v, *w;
	size_t i, j;

	json_array_foreach(a, i, v) {
		int found = 0;

		json_array_foreach(b, j, w)
			found |= json_equal(v, w);
		if (!found)
			json_array_append(removed, v);
	}
	json_array_foreach(b, i, v) {
		int found = 0;

		json_array_foreach(a, j, w)
			found |= json_equal(v, w);
		if (!found)
			json_array_append(added, v);
	}
	return json_pack("{s:o, s:o}", "added", added, "removed", removed);
}

static void insn_text(const struct bpf_insn *in, char *buf, size_t sz)
{
	snprintf(buf, sz, "code=0x%02x dst=r%u src=r%u off=%d imm=%d (0x%x)", in->code, in->dst_reg,
		 in->src_reg, in->off, in->imm, (unsigned)in->imm);
}

/* LCS over instructions (8-byte records); edits as {op, a_index, b_index, insn} */
static json_t *insn_diff(const void *ab, size_t alen, const void *bb, size_t blen)
{
	const struct bpf_insn *a = ab, *b = bb;
	size_t n = alen / 8, m = blen / 8, i, j;
	json_t *edits = json_array(), *tmp;
	uint32_t *dp;
	char t[128];

	if (n * m > 4000000 || !(dp = calloc((n + 1) * (m + 1), sizeof(*dp)))) {
		json_array_append_new(edits, json_pack("{s:s}", "op", "too large to diff"));
		return edits;
	}
#define DP(x, y) dp[(x) * (m + 1) + (y)]
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			DP(i, j) = !memcmp(&a[i], &b[j], 8) ? DP(i + 1, j + 1) + 1 :
				   (DP(i + 1, j) > DP(i, j + 1) ? DP(i + 1, j) : DP(i, j + 1));
	i = j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && !memcmp(&a[i], &b[j], 8)) {
			i++, j++;
		} else if (j < m && (i == n || DP(i, j + 1) > DP(i + 1, j))) {
			insn_text(&b[j], t, sizeof(t));
			json_array_append_new(edits, json_pack("{s:s, s:I, s:s}", "op", "+", "b_index",
							       (json_int_t)j, "insn", t));
			j++;
		} else {
			insn_text(&a[i], t, sizeof(t));
			json_array_append_new(edits, json_pack("{s:s, s:I, s:s}", "op", "-", "a_index",
							       (json_int_t)i, "insn", t));
			i++;
		}
	}
#undef DP
	free(dp);
	tmp = edits;
	return tmp;
}

static const char *insns_artifact(const json_t *p)
{
	const json_t *art = json_object_get(p, "artifacts");

	return jstr(art, "submitted_insns") ?: jstr(art, "xlated_insns");
}

static int cmd_diff(int argc, char **argv)
{
	char ga[PB_DIGEST_HEX_LEN], gb[PB_DIGEST_HEX_LEN], ra[PB_DIGEST_HEX_LEN], rb[PB_DIGEST_HEX_LEN];
	struct pb_store *s = NULL;
	json_t *sa = NULL, *sb = NULL, *fields = NULL, *tr = NULL, *as = NULL, *ins = NULL;
	const json_t *pa, *pb;
	void *ba = NULL, *bb = NULL;
	size_t la = 0, lb = 0, i;
	struct ropts o;
	json_t *v;
	int rc, ret = EXIT_USAGE, differ;

	rc = parse_opts(argc, argv, &o);
	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (rc != argc - 2) {
		p_err("expected two generations (see '%s receipts --help')", bin_name);
		return EXIT_USAGE;
	}
	if (open_store(&o, &s))
		return EXIT_USAGE;
	if (resolve(s, argv[rc], ga, ra) || resolve(s, argv[rc + 1], gb, rb))
		goto out;
	if (store__get_json(s, ra, &sa) || store__get_json(s, rb, &sb)) {
		p_err("a receipt is missing or unreadable; run '%s receipts verify'", bin_name);
		ret = EXIT_FINDINGS;
		goto out;
	}
	pa = json_object_get(sa, "predicate");
	pb = json_object_get(sb, "predicate");
	fields = field_diff(json_object_get(pa, "generation"), json_object_get(pb, "generation"),
			    "", json_object());
	tr = step_diff(json_object_get(json_object_get(pa, "generation"), "transforms"),
		       json_object_get(json_object_get(pb, "generation"), "transforms"));
	as = step_diff(json_object_get(json_object_get(pa, "generation"), "assumptions"),
		       json_object_get(json_object_get(pb, "generation"), "assumptions"));
	if (insns_artifact(pa) && insns_artifact(pb) && !pb_store__get(s, insns_artifact(pa), &ba, &la) &&
	    !pb_store__get(s, insns_artifact(pb), &bb, &lb))
		ins = insn_diff(ba, la, bb, lb);
	else
		ins = json_array();
	differ = strcmp(ga, gb) != 0;
	if (json_output) {
		json_print_and_free(json_pack("{s:s, s:s, s:b, s:O, s:O, s:O, s:{s:I, s:I, s:O}, s:{s:O, s:O}}",
			"a", ga, "b", gb, "differ", differ, "generation_fields", fields,
			"transforms", tr, "assumptions", as,
			"insns", "a_count", (json_int_t)(la / 8), "b_count", (json_int_t)(lb / 8), "edits", ins,
			"native_image_digest", "a", json_object_get(pa, "native_image_digest"),
			"b", json_object_get(pb, "native_image_digest")));
	} else {
		const char *k;

		printf("a %s\nb %s\n", ga, gb);
		json_object_foreach(fields, k, v) {
			char *x = json_dumps(json_object_get(v, "a"), JSON_ENCODE_ANY | JSON_COMPACT);
			char *y = json_dumps(json_object_get(v, "b"), JSON_ENCODE_ANY | JSON_COMPACT);

			printf("  %-34s %s -> %s\n", k, x, y);
			free(x);
			free(y);
		}
		json_array_foreach(json_object_get(tr, "removed"), i, v)
			printf("  - transform  %s: %s\n", jstr(v, "id"), jstr(v, "description"));
		json_array_foreach(json_object_get(tr, "added"), i, v)
			printf("  + transform  %s: %s\n", jstr(v, "id"), jstr(v, "description"));
		json_array_foreach(json_object_get(as, "removed"), i, v)
			printf("  - assumption %s: %s\n", jstr(v, "id"), jstr(v, "description"));
		json_array_foreach(json_object_get(as, "added"), i, v)
			printf("  + assumption %s: %s\n", jstr(v, "id"), jstr(v, "description"));
		printf("  instructions: %zu -> %zu\n", la / 8, lb / 8);
		json_array_foreach(ins, i, v) {
			if (!strcmp(jstr(v, "op"), "-"))
				printf("    - [%lld] %s\n", (long long)jint(v, "a_index"), jstr(v, "insn"));
			else if (!strcmp(jstr(v, "op"), "+"))
				printf("    + [%lld] %s\n", (long long)jint(v, "b_index"), jstr(v, "insn"));
			else
				printf("    (%s)\n", jstr(v, "op"));
		}
		printf("  native image: %s -> %s\n", jstr(pa, "native_image_digest"),
		       jstr(pb, "native_image_digest"));
		if (!differ)
			printf("  (same generation)\n");
	}
	ret = differ ? EXIT_FINDINGS : EXIT_OK;
out:
	free(ba);
	free(bb);
	json_decref(sa);
	json_decref(sb);
	json_decref(fields);
	json_decref(tr);
	json_decref(as);
	json_decref(ins);
	pb_store__free(s);
	return ret;
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
	{ "diff", cmd_diff, "what two generations differ in" },
	{ "gc", cmd_gc, "remove unreachable objects" },
	{ 0 },
};

int do_receipts(int argc, char **argv)
{
	return cmd_select(receipts_cmds, argc - 1, argv + 1, "receipts", receipts_help);
}
