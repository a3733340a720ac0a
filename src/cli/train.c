/* SPDX-License-Identifier: BSD-2-Clause */
/* train.c (cli): `probity train`: write a distribution envelope
 * (src/validate/envelope.h, docs/validation.md) from clean runs:
 *
 *   probity train -m MANIFEST -o ENVELOPE [--runs N] [-d SECS] [--events] -- CMD...
 *       records CMD N times in-process (src/record/recorder.h) into
 *       temporary traces, then trains on them;
 *   probity train [-m MANIFEST] -o ENVELOPE --from TRACE...
 *       trains on traces recorded before.
 *
 * The training itself (binding, clean-run check, windows) is
 * src/validate/train.h; this file parses, records the runs and prints.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "common/diag.h"
#include "common/digest.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "record/recorder.h"
#include "validate/train.h"

#define MAX_RUNS	100
#define EXIT_STALE	4	/* as record: recorded, some descriptor went stale */

struct train_args {
	const char *manifest;
	const char *output;
	const char *keep;		/* --keep-traces DIR */
	uint64_t duration_ns;		/* 0: each run until CMD exits */
	uint64_t interval_ns;		/* 0: record's default */
	uint64_t runs;
	bool events;
	bool from;
	char **rest;			/* traces (--from) or CMD */
	int n_rest;
};

static void train_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] train -m MANIFEST -o ENVELOPE [--runs N] [-d SECONDS] [--events]\n"
		"              [--interval MS] [--keep-traces DIR] -- CMD [ARGS]...\n"
		"       %s [-j] train [-m MANIFEST] -o ENVELOPE --from TRACE...\n"
		"\n"
		"Record clean runs (or read clean traces) and write a distribution envelope:\n"
		"per window of 1 s, each descriptor's share of the events, hit-rate ratios\n"
		"between the descriptors of a resource (USE/ACQUIRE, RELEASE/ACQUIRE,\n"
		"WAIT/ACQUIRE), guard pass and new-generation rates, mean decoded units, the\n"
		"median WAIT/hold time bucket and, from --events traces, instance-key\n"
		"properties; each with a tolerance band from the spread over the training\n"
		"windows. The envelope is bound to the manifest digest and to every\n"
		"target's build-id. 'probity record --envelope FILE' warns when a run\n"
		"leaves it: warning evidence only, never a confidence change.\n"
		"\n"
		"Options:\n"
		"  -m, --manifest FILE  the manifest (required with CMD; with --from, the\n"
		"                       traces must have been recorded with it)\n"
		"  -o, --output FILE    the envelope to write (JSON)\n"
		"  -n, --runs N         record CMD N times (default 3, at most %d)\n"
		"  -d, --duration SECS  stop each run after SECS seconds (as 'record -d')\n"
		"      --events         record with --events: also train key metrics\n"
		"      --interval MS    snapshot interval of the runs (as 'record --interval')\n"
		"      --keep-traces DIR  keep the runs' traces in DIR (run-1.trace, ...)\n"
		"      --from           the arguments are traces to train on, not a command\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 envelope written; 1 a run was not clean (a descriptor went\n"
		"suspect or stale) or too little evidence (no metric seen in %d windows);\n"
		"2 usage error, unreadable input, traces of different manifests or builds;\n"
		"3 runtime failure (as 'record').\n",
		bin_name, bin_name, MAX_RUNS, ENVELOPE_MIN_WINDOWS);
}

/* --from trains on traces: no recording option; a command needs -m */
static int check_args(int argc, char **argv, struct train_args *a)
{
	a->rest = &argv[optind];
	a->n_rest = argc - optind;
	if (!a->output) {
		p_err("-o ENVELOPE is required (see '%s train --help')", bin_name);
		return -EINVAL;
	}
	if (!a->n_rest) {
		p_err("expected -- CMD [ARGS]... or --from TRACE... (see '%s train --help')", bin_name);
		return -EINVAL;
	}
	if (a->from && (a->duration_ns || a->events || a->interval_ns || a->keep)) {
		p_err("--from trains on existing traces: -d, --events, --interval and "
		      "--keep-traces belong to recording a command");
		return -EINVAL;
	}
	if (!a->from && !a->manifest) {
		p_err("-m MANIFEST is required to record a command");
		return -EINVAL;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct train_args *a)
{
	enum { OPT_EVENTS = 256, OPT_INTERVAL, OPT_KEEP, OPT_FROM };
	static const struct option opts[] = {
		{ "manifest", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "runs", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "events", no_argument, NULL, OPT_EVENTS },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "keep-traces", required_argument, NULL, OPT_KEEP },
		{ "from", no_argument, NULL, OPT_FROM },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v = 0;
	int opt, err = 0;

	memset(a, 0, sizeof(*a));
	a->runs = 3;
	while (!err && (opt = getopt_long(argc, argv, "+m:o:n:d:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'm': a->manifest = optarg; break;
		case 'o': a->output = optarg; break;
		case 'n': err = cli_parse_count("--runs", optarg, false, MAX_RUNS, &a->runs); break;
		case 'd':	/* as record -d */
			err = cli_parse_duration("--duration", optarg, false, 1e7, &a->duration_ns);
			break;
		case OPT_EVENTS: a->events = true; break;
		case OPT_INTERVAL:	/* as record --interval */
			err = cli_parse_count("--interval", optarg, false, 1000, &v);
			if (!err && v < 100) {
				p_err("--interval: expected 100..1000 (ms), found '%s'", optarg);
				err = -EINVAL;
			}
			a->interval_ns = v * 1000000ull;
			break;
		case OPT_KEEP: a->keep = optarg; break;
		case OPT_FROM: a->from = true; break;
		case 'h': train_help(stdout); return 1;
		default: train_help(stderr); return -EINVAL;
		}
	}
	return err ? -EINVAL : check_args(argc, argv, a);
}

/* ---- training on traces ---- */

static void on_message(enum pb_log_level level, const char *msg, void *ctx)
{
	bool tty = ctx && *(const bool *)ctx;

	if (tty)	/* over a run's status line */
		fprintf(stderr, "\r\033[K");
	if (level == PB_LOG_ERROR)
		p_err("%s", msg);
	else
		p_warn("%s", msg);
}

/* Train on one trace; an exit code. */
static int train_trace(struct trainer *t, const char *path)
{
	struct trainer_trace_stats st;
	int err = trainer__add_trace(t, path, &st);

	switch (err) {
	case 0: break;
	case -EINVAL: return EXIT_USAGE;
	case -EUCLEAN: return EXIT_FINDINGS;
	default: return EXIT_FAILURE_RT;
	}
	if (st.cut_reason)
		p_warn("%s: %s; trained on what it holds", path, st.cut_reason);
	fprintf(stderr, "%s: train: %s: %zu window(s), %zu events%s\n", bin_name, path,
		st.windows, st.events, st.records ? ", with records" : "");
	return EXIT_OK;
}

/* ---- recording runs ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(p);
	return 0;
}

static void on_progress(const struct recorder_progress *p, void *ctx)
{
	char line[512];

	if (!*(const bool *)ctx)
		return;
	recorder_progress__format(p, line, sizeof(line));
	fprintf(stderr, "\r\033[K%s", line);
}

static bool should_stop(void *ctx)
{
	return cli_stop_signal != 0;
}

static void warn_line(const char *msg, void *ctx)
{
	p_warn("%s", msg);
}

/* A run that did not record: what `record` would have said; its exit code. */
static int run_failed(const struct recorder *r, int err)
{
	const struct plan *p = recorder__plan(r);

	switch (recorder__failure(r)) {
	case RECORDER_FAILED_MANIFEST:
		diags__print(recorder__diags(r), stderr);
		return EXIT_USAGE;
	case RECORDER_FAILED_PLAN:
		diags__print(recorder__diags(r), stderr);
		p_err("no plan: %s", strerror(-err));
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_FINDINGS;
	case RECORDER_FAILED_REFUSED:
		diags__print(p->notes, stderr);
		p_err("%zu descriptor(s) refused; not recording (see '%s plan')", p->n_refused,
		      bin_name);
		return EXIT_FINDINGS;
	case RECORDER_FAILED_INPUT:
		return EXIT_USAGE;
	default:
		return EXIT_FAILURE_RT;
	}
}

/* `record ... -o trace -- CMD`, in-process; record's exit code. The run's
 * messages, its summary and the command's output are progress: text on
 * stderr, whatever -j says. */
static int record_run(const struct train_args *a, const char *trace)
{
	bool tty = isatty(STDERR_FILENO), json = json_output;
	struct recorder_opts ro = {
		.manifest = a->manifest, .output = trace, .cmd = a->rest,
		.cmd_stdout_to_stderr = true, .duration_ns = a->duration_ns,
		.interval_ns = a->interval_ns, .events = a->events,
		.message = on_message, .progress = on_progress, .should_stop = should_stop,
		.ctx = &tty,
	};
	const struct recorder_result *res;
	struct recorder *r;
	int err, ret;

	json_output = false;
	fflush(NULL);
	r = recorder__new(&ro);
	if (!r) {
		p_err("cannot record: %s", strerror(errno));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	err = recorder__run(r);
	if (err) {
		ret = run_failed(r, err);
		goto out;
	}
	res = recorder__result(r);
	if (tty)
		fprintf(stderr, "\r\033[K");
	recorder__summary_print(r, stderr);
	recorder__summary_warnings(r, warn_line, NULL);
	if (res->any_stale)
		p_warn("the manifest's model no longer holds for a stale descriptor; "
		       "findings resting on it read 'model stale' (see '%s health')", bin_name);
	ret = res->stopped_by == TRACE_STOP_ERROR ? EXIT_FAILURE_RT :
	      res->any_stale ? EXIT_STALE : EXIT_OK;
out:
	recorder__free(r);
	json_output = json;
	return ret;
}

/* A directory for the runs' traces: --keep-traces DIR, or a temporary one
 * (tmp set: remove it after). An exit code. */
static int runs_dir(const struct train_args *a, char *dir, size_t sz, bool *tmp)
{
	const char *base = getenv("TMPDIR");

	*tmp = !a->keep;
	if (a->keep) {
		if (mkdir(a->keep, 0700) && errno != EEXIST) {
			p_err("--keep-traces %s: %s", a->keep, strerror(errno));
			return EXIT_USAGE;
		}
		snprintf(dir, sz, "%s", a->keep);
		return EXIT_OK;
	}
	snprintf(dir, sz, "%s/probity-train.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir)) {
		p_err("cannot create a directory for the runs' traces (%s): %s", dir, strerror(errno));
		return EXIT_FAILURE_RT;
	}
	return EXIT_OK;
}

static int train_from_runs(const struct train_args *a, struct trainer *t)
{
	char dir[PATH_MAX], trace[PATH_MAX + 32];
	int k, rc, ret, done = 0;
	bool tmp;

	ret = runs_dir(a, dir, sizeof(dir), &tmp);
	if (ret != EXIT_OK)
		return ret;
	cli_stop_install();
	for (k = 1; k <= (int)a->runs && !cli_stop_signal; k++) {
		snprintf(trace, sizeof(trace), "%s/run-%d.trace", dir, k);
		fprintf(stderr, "%s: train: run %d/%d: recording %s -> %s\n", bin_name, k,
			(int)a->runs, a->rest[0], trace);
		rc = record_run(a, trace);
		if (rc == EXIT_STALE) {
			p_err("run %d: a descriptor went stale: not a clean run, no envelope written "
			      "(see '%s health %s')", k, bin_name, trace);
			ret = EXIT_FINDINGS;
			break;
		}
		if (rc != EXIT_OK) {
			p_err("run %d: 'record' exited %d; no envelope written", k, rc);
			ret = rc;
			break;
		}
		ret = train_trace(t, trace);
		if (ret != EXIT_OK)
			break;
		done++;
	}
	if (ret == EXIT_OK && cli_stop_signal)
		fprintf(stderr, "%s: train: stopped after %d run(s); training on them\n", bin_name, done);
	cli_stop_restore();
	if (tmp)
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	if (ret == EXIT_OK && !done) {
		p_err("no complete run to train on");
		ret = EXIT_FINDINGS;
	}
	return ret;
}

/* ---- output ---- */

static void print_result(const struct train_args *a, const struct trainer *t)
{
	const struct envelope_binding *b = trainer__binding(t);
	const struct pb_envelope *env = trainer__envelope(t);
	const struct manifest *m = trainer__manifest(t);
	char sha[PB_DIGEST_HEX_LEN];
	size_t i;

	pb_hex(b->manifest_sha256, 32, sha);
	if (json_output) {
		json_t *targets = json_array();

		for (i = 0; i < b->n_targets; i++)
			json_array_append_new(targets, json_pack("{s:s, s:s}", "id", m->targets[i].id,
								 "build_id", b->build_id[i]));
		json_print_and_free(json_pack("{s:s, s:I, s:I, s:I, s:I, s:b, s:s, s:s, s:o}",
			"file", a->output, "runs", (json_int_t)envelope__n_runs(env),
			"windows", (json_int_t)envelope__n_windows(env),
			"metrics", (json_int_t)envelope__n_metrics(env),
			"untrained", (json_int_t)envelope__n_untrained(env),
			"key_metrics", envelope__has_key_metrics(env),
			"manifest", m->name ? m->name : "", "manifest_sha256", sha,
			"targets", targets));
		return;
	}
	printf("envelope %s: %zu metric(s) from %zu run(s), %zu window(s)%s; bound to manifest %s "
	       "(sha256 %.16s...)", a->output, envelope__n_metrics(env), envelope__n_runs(env),
	       envelope__n_windows(env),
	       envelope__has_key_metrics(env) ? ", key metrics included" : "",
	       m->name ? m->name : "?", sha);
	for (i = 0; i < b->n_targets; i++)
		printf(", %s build-id %s", m->targets[i].id, b->build_id[i]);
	printf("\n");
	if (envelope__n_untrained(env))
		printf("%zu metric(s) had fewer than %d windows of evidence and are not in the envelope\n",
		       envelope__n_untrained(env), ENVELOPE_MIN_WINDOWS);
}

/* -m MANIFEST given: loaded to compare digests (and to record with) */
static int load_given(const char *path, struct manifest **out)
{
	struct diags *d = diags__new();
	int err;

	if (!d)
		return EXIT_FAILURE_RT;
	err = manifest__load(path, out, d);
	if (err) {
		diags__print(d, stderr);
		p_err("%s: %s manifest", path, err == -EINVAL ? "invalid" : "unreadable");
	}
	diags__free(d);
	return err ? EXIT_USAGE : EXIT_OK;
}

/* The envelope from the trained runs, written to a->output. */
static int write_envelope(const struct train_args *a, struct trainer *t)
{
	int err = trainer__finish(t);

	if (err == -ENODATA) {
		p_err("too little evidence: no metric was seen in %d windows of %llu ms; record "
		      "longer (-d) or more runs (--runs)", ENVELOPE_MIN_WINDOWS,
		      ENVELOPE_WINDOW_NS / 1000000ull);
		return EXIT_FINDINGS;
	}
	if (err) {
		p_err("envelope: %s", strerror(-err));
		return EXIT_FAILURE_RT;
	}
	err = envelope__write(trainer__envelope(t), a->output);
	if (err) {
		p_err("cannot write %s: %s", a->output, strerror(-err));
		return EXIT_FAILURE_RT;
	}
	return EXIT_OK;
}

int do_train(int argc, char **argv)
{
	struct trainer_opts to = { .message = on_message };
	struct manifest *given = NULL;
	struct trainer *t = NULL;
	struct train_args a;
	int i, err, ret;

	err = parse_args(argc, argv, &a);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	ret = a.manifest ? load_given(a.manifest, &given) : EXIT_OK;
	if (ret != EXIT_OK)
		goto out;
	t = trainer__new(&to);
	if (!t) {
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	if (a.from) {
		for (i = 0; i < a.n_rest && ret == EXIT_OK; i++)
			ret = train_trace(t, a.rest[i]);
	} else {
		ret = train_from_runs(&a, t);
	}
	if (ret != EXIT_OK)
		goto out;
	if (given && memcmp(given->digest, trainer__binding(t)->manifest_sha256, 32)) {
		p_err("%s was recorded with another manifest than %s (digests differ)",
		      trainer__first(t), a.manifest);
		ret = EXIT_USAGE;
		goto out;
	}
	ret = write_envelope(&a, t);
	if (ret == EXIT_OK)
		print_result(&a, t);
out:
	trainer__free(t);
	manifest__free(given);
	return ret;
}
