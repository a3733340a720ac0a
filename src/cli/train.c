/* train.c (cli): `probity train`: write a distribution envelope
 * (src/validate/envelope.h, docs/validation.md) from clean runs:
 *
 *   probity train -m MANIFEST -o ENVELOPE [--runs N] [-d SECS] [--events] -- CMD...
 *       runs `probity record` N times (this binary, as a child) into
 *       temporary traces, then trains on them;
 *   probity train [-m MANIFEST] -o ENVELOPE --from TRACE...
 *       trains on traces recorded before.
 *
 * Every trace must carry the same manifest digest and build-ids (the
 * envelope is bound to them) and be clean: a run whose descriptor went
 * suspect or stale is refused.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cli/cli.h"
#include "common/digest.h"
#include "trace/trace.h"
#include "validate/confidence.h"
#include "validate/envelope.h"

#define MAX_RUNS	100

struct train_args {
	const char *manifest;
	const char *output;
	const char *keep;		/* --keep-traces DIR */
	const char *duration;		/* passed to record as is */
	const char *interval;
	int runs;
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
	char *end;
	long v;
	int opt;

	memset(a, 0, sizeof(*a));
	a->runs = 3;
	while ((opt = getopt_long(argc, argv, "+m:o:n:d:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'm': a->manifest = optarg; break;
		case 'o': a->output = optarg; break;
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > MAX_RUNS) {
				p_err("--runs: expected 1..%d, found '%s'", MAX_RUNS, optarg);
				return -EINVAL;
			}
			a->runs = (int)v;
			break;
		case 'd': a->duration = optarg; break;
		case OPT_EVENTS: a->events = true; break;
		case OPT_INTERVAL: a->interval = optarg; break;
		case OPT_KEEP: a->keep = optarg; break;
		case OPT_FROM: a->from = true; break;
		case 'h': train_help(stdout); return 1;
		default: train_help(stderr); return -EINVAL;
		}
	}
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
	if (a->from && (a->duration || a->events || a->interval || a->keep)) {
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

/* ---- training on traces ---- */

struct trainer {
	struct manifest *m;		/* the first trace's embedded manifest */
	struct envelope_binding b;
	struct pb_envelope *env;
	const char *first;
	size_t events;
};

static void binding_from_header(const struct trace_header *h, size_t n_targets,
				struct envelope_binding *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	memcpy(b->manifest_sha256, h->manifest_sha256, sizeof(b->manifest_sha256));
	for (i = 0; i < n_targets && i < h->n_targets && i < ENVELOPE_MAX_TARGETS; i++) {
		uint32_t len = h->build_ids[i].len > sizeof(h->build_ids[i].id) ?
			       (uint32_t)sizeof(h->build_ids[i].id) : h->build_ids[i].len;

		pb_hex(h->build_ids[i].id, len, b->build_id[i]);
	}
	b->n_targets = n_targets < ENVELOPE_MAX_TARGETS ? n_targets : ENVELOPE_MAX_TARGETS;
}

/* The first trace fixes the manifest and the binding; the others must match. */
static int bind_trace(struct trainer *t, struct trace_reader *r, const char *path)
{
	struct envelope_binding b;
	struct diags *d;
	const void *mb;
	size_t ml, i;
	int err;

	if (!t->m) {
		mb = trace_reader__manifest(r, &ml);
		d = diags__new();
		if (!d)
			return EXIT_FAILURE_RT;
		err = manifest__parse("embedded manifest", mb, ml, &t->m, d);
		diags__free(d);
		if (err) {
			p_err("%s: the embedded manifest does not parse", path);
			return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
		}
		if (t->m->n_targets > ENVELOPE_MAX_TARGETS) {
			p_err("%s: more than %d targets", path, ENVELOPE_MAX_TARGETS);
			return EXIT_USAGE;
		}
		binding_from_header(trace_reader__header(r), t->m->n_targets, &t->b);
		t->first = path;
		return EXIT_OK;
	}
	binding_from_header(trace_reader__header(r), t->m->n_targets, &b);
	if (memcmp(b.manifest_sha256, t->b.manifest_sha256, 32)) {
		p_err("%s: recorded with another manifest than %s: an envelope is bound to one "
		      "manifest", path, t->first);
		return EXIT_USAGE;
	}
	for (i = 0; i < b.n_targets; i++)
		if (strcmp(b.build_id[i], t->b.build_id[i])) {
			p_err("%s: target '%s' has build-id %s, %s had %s: an envelope is bound to "
			      "one build", path, t->m->targets[i].id, b.build_id[i], t->first,
			      t->b.build_id[i]);
			return EXIT_USAGE;
		}
	return EXIT_OK;
}

/* Replay the run through the confidence controller too: only a clean run
 * (no descriptor suspect or stale) may define "normal". */
static int train_trace(struct trainer *t, const char *path)
{
	struct trace_reader *r = trace_reader__open(path);
	struct confidence *conf = NULL;
	struct confidence_opts co = { 0 };
	enum pb_confidence *init = NULL;
	const struct trace_plan_desc *pd;
	const struct confidence_change *ch;
	struct trace_item it;
	size_t n_desc, i, windows0, n_ch;
	int ret = EXIT_FAILURE_RT, rc;

	if (!r) {
		p_err("%s: %s", path, errno == EBADMSG ? "not a probity trace, or its header is corrupt" :
		      errno == EPROTONOSUPPORT ? "trace written by a newer probity" : strerror(errno));
		return errno == ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	ret = bind_trace(t, r, path);
	if (ret != EXIT_OK)
		goto out;
	ret = EXIT_FAILURE_RT;
	pd = trace_reader__descriptors(r, &n_desc);
	if (n_desc != t->m->n_events) {
		p_err("%s: %zu descriptors for %zu manifest events", path, n_desc, t->m->n_events);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!t->env) {
		t->env = envelope__new(t->m, &t->b);
		if (!t->env) {
			p_err("envelope: %s", strerror(errno));
			goto out;
		}
	}
	init = calloc(n_desc + 1, sizeof(*init));
	if (!init)
		goto out;
	for (i = 0; i < n_desc; i++)
		init[i] = pd[i].confidence <= PB_CONF_DEGRADED ? (enum pb_confidence)pd[i].confidence :
			  PB_CONF_CANDIDATE;
	if (!(trace_reader__header(r)->flags & TRACE_F_SPAWNED))
		co.grace_ns = CONFIDENCE_ATTACH_GRACE_NS;
	conf = confidence__new(n_desc, init, &co);
	if (!conf)
		goto out;
	windows0 = envelope__n_windows(t->env);
	if (envelope__begin_run(t->env, trace_reader__header(r)->flags & TRACE_F_EVENTS))
		goto out;
	while ((rc = trace_reader__next(r, &it)) > 0) {
		if (it.type == TRACE_ITEM_RECORD) {
			if (it.rec->type == PB_REC_VIOLATION)
				confidence__sample(conf, (const void *)it.rec, it.rec_len);
			else
				envelope__record(t->env, it.rec, it.rec_len);
		} else if (it.type == TRACE_ITEM_SNAPSHOT) {
			if (confidence__snapshot(conf, it.snap.ts_ns, it.snap.desc, it.snap.n_desc) == -ENOMEM ||
			    envelope__snapshot(t->env, it.snap.ts_ns, it.snap.desc, it.snap.n_desc) == -ENOMEM)
				goto out;
			for (i = 0, t->events = 0; i < it.snap.n_desc; i++)
				t->events += it.snap.desc[i].events;
		}
	}
	if (rc < 0) {
		p_err("%s: %s", path, strerror(-rc));
		goto out;
	}
	/* a descriptor that went suspect even once (and recovered) is not clean */
	ch = confidence__changes(conf, &n_ch);
	for (i = 0; i < n_ch; i++) {
		uint32_t ev = ch[i].descriptor < n_desc ? pd[ch[i].descriptor].event : 0;

		if (ch[i].to != PB_CONF_SUSPECT && ch[i].to != PB_CONF_STALE)
			continue;
		p_err("%s: not a clean run: %s went %s (%s); no envelope is trained on it",
		      path, ev < t->m->n_events ? t->m->events[ev].id : "?",
		      pb_confidence_str(ch[i].to), ch[i].reason);
		ret = EXIT_FINDINGS;
		goto out;
	}
	if (trace_reader__cut_reason(r))
		p_warn("%s: %s; trained on what it holds", path, trace_reader__cut_reason(r));
	fprintf(stderr, "%s: train: %s: %zu window(s), %zu events%s\n", bin_name, path,
		envelope__n_windows(t->env) - windows0, t->events,
		trace_reader__header(r)->flags & TRACE_F_EVENTS ? ", with records" : "");
	ret = EXIT_OK;
out:
	confidence__free(conf);
	free(init);
	trace_reader__free(r);
	return ret;
}

/* ---- recording runs ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(p);
	return 0;
}

/* `probity record ... -o trace -- CMD` as a child; its exit status */
static int record_run(const struct train_args *a, const char *trace)
{
	const char *argv[64 + 1];
	char self[PATH_MAX];
	ssize_t sl;
	int n = 0, i, status;
	pid_t pid;
	char **full;

	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		p_err("cannot find this binary (/proc/self/exe): %s", strerror(errno));
		return EXIT_FAILURE_RT;
	}
	self[sl] = 0;
	argv[n++] = self;
	argv[n++] = "record";
	argv[n++] = "-m";
	argv[n++] = a->manifest;
	argv[n++] = "-o";
	argv[n++] = trace;
	if (a->duration) {
		argv[n++] = "-d";
		argv[n++] = a->duration;
	}
	if (a->interval) {
		argv[n++] = "--interval";
		argv[n++] = a->interval;
	}
	if (a->events)
		argv[n++] = "--events";
	for (i = 0; i < verbose && i < 2; i++)
		argv[n++] = "-v";
	argv[n++] = "--";
	full = calloc((size_t)(n + a->n_rest + 1), sizeof(*full));
	if (!full)
		return EXIT_FAILURE_RT;
	for (i = 0; i < n; i++)
		full[i] = (char *)argv[i];
	for (i = 0; i < a->n_rest; i++)
		full[n + i] = a->rest[i];
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(full);
		p_err("fork: %s", strerror(errno));
		return EXIT_FAILURE_RT;
	}
	if (pid == 0) {
		/* record's summary and the command's output are progress: stderr */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		cli_stop_restore();
		execv(self, full);
		_exit(127);
	}
	free(full);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return EXIT_FAILURE_RT;
		if (cli_stop_signal)	/* Ctrl-C reached the child too; a TERM may not have */
			kill(pid, SIGTERM);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return EXIT_FAILURE_RT;
}

static int train_from_runs(const struct train_args *a, struct trainer *t)
{
	char dir[PATH_MAX], trace[PATH_MAX + 32];
	bool tmp = !a->keep;
	int k, rc, ret = EXIT_OK, done = 0;

	if (a->keep) {
		if (mkdir(a->keep, 0700) && errno != EEXIST) {
			p_err("--keep-traces %s: %s", a->keep, strerror(errno));
			return EXIT_USAGE;
		}
		snprintf(dir, sizeof(dir), "%s", a->keep);
	} else {
		const char *base = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/probity-train.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(dir)) {
			p_err("cannot create a directory for the runs' traces (%s): %s", dir,
			      strerror(errno));
			return EXIT_FAILURE_RT;
		}
	}
	cli_stop_install();
	for (k = 1; k <= a->runs && !cli_stop_signal; k++) {
		snprintf(trace, sizeof(trace), "%s/run-%d.trace", dir, k);
		fprintf(stderr, "%s: train: run %d/%d: recording %s -> %s\n", bin_name, k, a->runs,
			a->rest[0], trace);
		rc = record_run(a, trace);
		if (rc == 4) {
			p_err("run %d: a descriptor went stale: not a clean run, no envelope written "
			      "(see '%s health %s')", k, bin_name, trace);
			ret = EXIT_FINDINGS;
			break;
		}
		if (rc != EXIT_OK) {
			p_err("run %d: 'record' exited %d; no envelope written", k, rc);
			ret = rc == 127 ? EXIT_FAILURE_RT : rc;
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
	char sha[PB_DIGEST_HEX_LEN];
	size_t i;

	pb_hex(t->b.manifest_sha256, 32, sha);
	if (json_output) {
		json_t *targets = json_array();

		for (i = 0; i < t->b.n_targets; i++)
			json_array_append_new(targets, json_pack("{s:s, s:s}", "id", t->m->targets[i].id,
								 "build_id", t->b.build_id[i]));
		json_print_and_free(json_pack("{s:s, s:I, s:I, s:I, s:I, s:b, s:s, s:s, s:o}",
			"file", a->output, "runs", (json_int_t)envelope__n_runs(t->env),
			"windows", (json_int_t)envelope__n_windows(t->env),
			"metrics", (json_int_t)envelope__n_metrics(t->env),
			"untrained", (json_int_t)envelope__n_untrained(t->env),
			"key_metrics", envelope__has_key_metrics(t->env),
			"manifest", t->m->name ? t->m->name : "", "manifest_sha256", sha,
			"targets", targets));
		return;
	}
	printf("envelope %s: %zu metric(s) from %zu run(s), %zu window(s)%s; bound to manifest %s "
	       "(sha256 %.16s...)", a->output, envelope__n_metrics(t->env), envelope__n_runs(t->env),
	       envelope__n_windows(t->env),
	       envelope__has_key_metrics(t->env) ? ", key metrics included" : "",
	       t->m->name ? t->m->name : "?", sha);
	for (i = 0; i < t->b.n_targets; i++)
		printf(", %s build-id %s", t->m->targets[i].id, t->b.build_id[i]);
	printf("\n");
	if (envelope__n_untrained(t->env))
		printf("%zu metric(s) had fewer than %d windows of evidence and are not in the envelope\n",
		       envelope__n_untrained(t->env), ENVELOPE_MIN_WINDOWS);
}

int do_train(int argc, char **argv)
{
	struct trainer t = {};
	struct train_args a;
	struct manifest *given = NULL;
	struct diags *d = NULL;
	int i, err, ret = EXIT_OK;

	err = parse_args(argc, argv, &a);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	if (a.manifest) {
		d = diags__new();
		if (!d)
			return EXIT_FAILURE_RT;
		err = manifest__load(a.manifest, &given, d);
		if (err) {
			diags__print(d, stderr);
			p_err("%s: %s manifest", a.manifest, err == -EINVAL ? "invalid" : "unreadable");
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (a.from) {
		for (i = 0; i < a.n_rest && ret == EXIT_OK; i++)
			ret = train_trace(&t, a.rest[i]);
	} else {
		ret = train_from_runs(&a, &t);
	}
	if (ret != EXIT_OK)
		goto out;
	if (given && memcmp(given->digest, t.b.manifest_sha256, 32)) {
		p_err("%s was recorded with another manifest than %s (digests differ)", t.first,
		      a.manifest);
		ret = EXIT_USAGE;
		goto out;
	}
	err = envelope__finish(t.env);
	if (err == -ENODATA) {
		p_err("too little evidence: no metric was seen in %d windows of %llu ms; record "
		      "longer (-d) or more runs (--runs)", ENVELOPE_MIN_WINDOWS,
		      ENVELOPE_WINDOW_NS / 1000000ull);
		ret = EXIT_FINDINGS;
		goto out;
	}
	if (err) {
		p_err("envelope: %s", strerror(-err));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	err = envelope__write(t.env, a.output);
	if (err) {
		p_err("cannot write %s: %s", a.output, strerror(-err));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	print_result(&a, &t);
out:
	envelope__free(t.env);
	manifest__free(t.m);
	manifest__free(given);
	diags__free(d);
	return ret;
}
