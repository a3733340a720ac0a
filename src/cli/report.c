/* SPDX-License-Identifier: BSD-2-Clause */
/* report.c (cli): `probity report TRACE [--top N] [--long-hold MS]
 * [--html FILE] [--fail-on SCORE] [--folded[=waits|holds]]`: read a
 * trace, diagnose it (src/analyze/) and print the ranked findings, their
 * histograms and series, or write them as one HTML page; or print its
 * user stacks folded for flame graphs (analyze/stacks.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/cli.h"
#include "analyze/html.h"
#include "analyze/pictures.h"
#include "analyze/predictions.h"
#include "analyze/trace_load.h"
#include "common/digest.h"

static void report_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] report TRACE [--top N] [--long-hold MS] [--html FILE]\n"
		"                          [--fail-on SCORE] [--no-pictures]\n"
		"                          [--folded[=waits|holds]]\n"
		"\n"
		"Diagnose a trace written by 'probity record': per resource, contention\n"
		"(wait time, waiters, holders, wakeup sources), leak / unbounded growth\n"
		"(ACQUIRE - RELEASE over time, generations never released), churn\n"
		"(acquire/release cycles without USE) and long holds that made others\n"
		"wait. Findings are ranked by score (severity x certainty), top first;\n"
		"each cites its evidence and the confidence of the descriptors it rests\n"
		"on. A descriptor's confidence is the plan's, lowered to suspect or stale\n"
		"when its runtime invariants broke during the recording (see 'health',\n"
		"docs/validation.md); a finding on a suspect or stale descriptor reads\n"
		"'model suspect' or 'model stale', never leak or contention.\n"
		"docs/report.md explains the scores.\n"
		"\n"
		"Options:\n"
		"  -n, --top N          show only the first N findings (default: all)\n"
		"      --long-hold MS   a hold at least this long is a long hold (default 50)\n"
		"      --html FILE      also write a self-contained HTML report to FILE\n"
		"                       (findings, histograms, series, confidence timeline)\n"
		"      --fail-on SCORE  exit 1 when a finding scores SCORE or more (0-100),\n"
		"                       for cron and CI\n"
		"      --no-pictures    text: leave out the histograms and sparklines\n"
		"      --folded[=waits|holds]  print the recorded user stacks (record\n"
		"                       --stacks) folded for flamegraph.pl / speedscope\n"
		"                       instead of the report: 'frame;...;[wait:EVENT] NS',\n"
		"                       NS the WAIT time under that stack (default), or\n"
		"                       the hold time of the ACQUIREs taken there (holds:\n"
		"                       needs record --events; with --long-hold only the\n"
		"                       holds at least that long)\n"
		"  -h, --help           show this help\n"
		"\n"
		"A trace cut short (recorder killed) is read up to its last complete\n"
		"chunk, and the report says so.\n"
		"\n"
		"Exit status: 0 report printed (with or without findings); 1 a finding\n"
		"reached --fail-on SCORE; 2 usage error, unreadable or corrupt trace;\n"
		"3 internal failure or the HTML file could not be written.\n",
		bin_name);
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-')
		return false;
	*out = v;
	return true;
}

static double trace_duration_s(const struct loaded_trace *lt)
{
	const struct analysis_counts *c = analysis__counts(lt->analysis);
	uint64_t start = lt->header.start_mono_ns ? lt->header.start_mono_ns : c->first_ts;
	uint64_t end = lt->ended && lt->end.end_mono_ns ? lt->end.end_mono_ns : c->last_ts;

	return end > start ? (double)(end - start) / 1e9 : 0;
}

static const char *stop_reason_str(uint32_t r)
{
	switch (r) {
	case TRACE_STOP_SIGNAL: return "signal";
	case TRACE_STOP_DURATION: return "duration";
	case TRACE_STOP_TARGET_EXIT: return "target exit";
	case TRACE_STOP_ERROR: return "error";
	default: return "unknown";
	}
}

static json_t *trace_facts_json(const struct loaded_trace *lt, const char *path)
{
	const struct analysis_counts *c = analysis__counts(lt->analysis);
	json_t *o = json_object(), *notes = json_array();
	char sha[PB_DIGEST_HEX_LEN];
	size_t i;

	for (i = 0; i < 32; i++)
		sprintf(sha + 2 * i, "%02x", lt->header.manifest_sha256[i]);
	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(o, "manifest", json_string(lt->manifest->name ? lt->manifest->name : ""));
	json_object_set_new(o, "manifest_sha256", json_string(sha));
	json_object_set_new(o, "pid", json_integer(lt->header.pid));
	json_object_set_new(o, "start_real_ns", json_integer((json_int_t)lt->header.start_real_ns));
	json_object_set_new(o, "duration_s", json_real(trace_duration_s(lt)));
	json_object_set_new(o, "events_mode", json_boolean(lt->header.flags & TRACE_F_EVENTS));
	json_object_set_new(o, "complete", json_boolean(lt->ended));
	json_object_set_new(o, "cut_reason", lt->cut_reason ? json_string(lt->cut_reason) : json_null());
	json_object_set_new(o, "stop_reason", lt->ended ? json_string(stop_reason_str(lt->end.stop_reason)) :
			    json_null());
	json_object_set_new(o, "records", json_integer((json_int_t)c->records));
	json_object_set_new(o, "ringbuf_drops", json_integer((json_int_t)c->ringbuf_drops));
	for (i = 0; i < lt->n_notes; i++)
		json_array_append_new(notes, json_string(lt->notes[i]));
	json_object_set_new(o, "notes", notes);
	return o;
}

/* "processes: 5 (2 exited): 120 postgres 1200 events, ..." (record --all) */
static void print_procs(const struct loaded_trace *lt, FILE *out)
{
	size_t i, n = 0, shown = 0;

	for (i = 0; i < lt->n_procs; i++)
		n += lt->procs[i].pid == lt->procs[i].tid;
	if (!n)
		return;
	fprintf(out, "processes: %zu", n);
	for (i = 0; i < lt->n_procs && shown < 8; i++) {
		const struct trace_proc *p = &lt->procs[i];

		if (p->pid != p->tid)
			continue;
		fprintf(out, "%s %u %s %" PRIu64 " events%s", shown++ ? "," : ":", p->pid,
			p->comm[0] ? p->comm : "?", p->events,
			p->flags & PB_PROC_EXITED ? " (exited)" : "");
	}
	fprintf(out, "%s\n", shown < n ? ", ..." : "");
}

static void print_trace_facts(const struct loaded_trace *lt, const char *path, FILE *out)
{
	const struct analysis_counts *c = analysis__counts(lt->analysis);
	char when[64] = "?";
	time_t t = (time_t)(lt->header.start_real_ns / 1000000000ull);
	struct tm tm;
	size_t i;

	if (lt->header.start_real_ns && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "trace %s: manifest %s, target pid %u, started %s, %.2f s, %s\n", path,
		lt->manifest->name ? lt->manifest->name : "?", lt->header.pid, when,
		trace_duration_s(lt),
		lt->header.flags & TRACE_F_EVENTS ? "per-event records (--events)" : "aggregates only");
	fprintf(out, "evidence: %" PRIu64 " records (%" PRIu64 " resource events, %" PRIu64
		" sched, %" PRIu64 " wakeups, %" PRIu64 " block I/O, %" PRIu64 " faults), %" PRIu64
		" snapshots, %" PRIu64 " ring-buffer drops\n",
		c->records, c->by_type[PB_REC_RESOURCE], c->by_type[PB_REC_SCHED_SWITCH],
		c->by_type[PB_REC_WAKEUP], c->by_type[PB_REC_BLOCK_IO], c->by_type[PB_REC_FAULT],
		c->snapshots, c->ringbuf_drops);
	print_procs(lt, out);
	if (lt->cut_reason)
		fprintf(out, "INCOMPLETE trace: %s; read up to the last complete chunk\n", lt->cut_reason);
	else
		fprintf(out, "complete trace (stopped by %s)\n", stop_reason_str(lt->end.stop_reason));
	for (i = 0; i < lt->n_notes; i++)
		fprintf(out, "note: %s\n", lt->notes[i]);
}

static const char *desc_id(const struct loaded_trace *lt, uint32_t i)
{
	uint32_t ev = lt->descs[i].event;

	return ev < lt->manifest->n_events ? lt->manifest->events[ev].id : "?";
}

static uint64_t desc_violations(const struct loaded_trace *lt, uint32_t i)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < CONFIDENCE_INV_SLOTS; k++)
		n += confidence__violations(lt->conf, i, k);
	return n;
}

/* runtime confidence per descriptor (docs/validation.md), as replayed from
 * the trace: every descriptor, with the reason of its last change */
static json_t *confidence_json(const struct loaded_trace *lt)
{
	json_t *a = json_array();
	uint32_t i;

	for (i = 0; a && i < lt->n_descs; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I, s:o, s:s?}",
			"id", desc_id(lt, i),
			"initial", pb_confidence_str(confidence__initial(lt->conf, i)),
			"state", pb_confidence_str(confidence__state(lt->conf, i)),
			"violations", (json_int_t)desc_violations(lt, i),
			"predictions", predictions__json(lt, i),
			"reason", confidence__reason(lt->conf, i)));
	return a;
}

/* `record --envelope` warnings (trace notes "envelope: ..."): weak
 * evidence, listed apart from the findings, never a confidence change */
static json_t *envelope_json(const struct loaded_trace *lt)
{
	static const char pfx[] = "envelope: ";
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < lt->n_notes; i++)
		if (!strncmp(lt->notes[i], pfx, sizeof(pfx) - 1))
			json_array_append_new(a, json_string(lt->notes[i] + sizeof(pfx) - 1));
	return a;
}

/* only what changed or broke an invariant; silence means all held */
static void print_confidence(const struct loaded_trace *lt, FILE *out)
{
	uint32_t i, shown = 0;
	char pred[512];

	for (i = 0; i < lt->n_descs; i++) {
		enum pb_confidence st = confidence__state(lt->conf, i);
		uint64_t v = desc_violations(lt, i);
		const char *why = confidence__reason(lt->conf, i);

		/* cross-layer predictions: always shown, held or not */
		predictions__text(lt, i, pred, sizeof(pred));
		if (pred[0])
			fprintf(out, "predictions: %s: %s\n", desc_id(lt, i), pred);

		if (st == confidence__initial(lt->conf, i) && !v)
			continue;
		fprintf(out, "confidence: %s %s -> %s, %" PRIu64 " violation(s)%s%s\n", desc_id(lt, i),
			pb_confidence_str(confidence__initial(lt->conf, i)), pb_confidence_str(st), v,
			why ? ": " : "", why ? why : "");
		shown++;
	}
	if (!shown)
		fprintf(out, "confidence: every descriptor kept its confidence (no invariant broke)\n");
}

struct report_args {
	struct analysis_opts aopts;
	uint64_t top;
	const char *html;	/* --html FILE */
	double fail_on;		/* --fail-on SCORE; < 0: off */
	bool no_pictures;
	int folded;		/* --folded: 1 + enum stack_value, 0 = off */
	const char *trace;
};

/* -1 to go on, else the exit status (help shown or usage error printed) */
static int parse_report_args(int argc, char **argv, struct report_args *ra)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "long-hold", required_argument, NULL, 'L' },
		{ "html", required_argument, NULL, 'H' },
		{ "fail-on", required_argument, NULL, 'F' },
		{ "no-pictures", no_argument, NULL, 'P' },
		{ "folded", optional_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	char *end;
	int opt;

	memset(ra, 0, sizeof(*ra));
	ra->fail_on = -1;
	while ((opt = getopt_long(argc, argv, "n:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'n':
			if (!parse_u64(optarg, &ra->top) || !ra->top) {
				p_err("--top: expected a positive number, found '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L':
			if (!parse_u64(optarg, &v) || !v || v > 3600000) {
				p_err("--long-hold: expected milliseconds (1..3600000), found '%s'", optarg);
				return EXIT_USAGE;
			}
			ra->aopts.long_hold_ns = v * 1000000ull;
			break;
		case 'H': ra->html = optarg; break;
		case 'F':
			errno = 0;
			ra->fail_on = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(ra->fail_on >= 0 && ra->fail_on <= 100)) {
				p_err("--fail-on: expected a score from 0 to 100, found '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'P': ra->no_pictures = true; break;
		case 'S':
			if (!optarg || !strcmp(optarg, "waits")) {
				ra->folded = 1 + STACK_WAITS;
			} else if (!strcmp(optarg, "holds")) {
				ra->folded = 1 + STACK_HOLDS;
			} else {
				p_err("--folded: expected waits or holds, found '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': report_help(stdout); return EXIT_OK;
		default: report_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		p_err("expected exactly one TRACE argument (see '%s report --help')", bin_name);
		return EXIT_USAGE;
	}
	ra->trace = argv[optind];
	return -1;
}

/* the top score, and whether it reaches --fail-on */
static bool fails(const struct loaded_trace *lt, const struct report_args *ra, double *top)
{
	size_t n;
	const struct finding *f = analysis__findings(lt->analysis, &n);

	/* the score as -j shows it (2 decimals), so the line a user reads off
	 * a report is the line the exit status draws */
	*top = n ? (double)(long long)(f[0].score * 100 + 0.5) / 100 : 0;
	return ra->fail_on >= 0 && n && *top >= ra->fail_on;
}

static int write_html(const struct loaded_trace *lt, const struct report_args *ra)
{
	FILE *out = fopen(ra->html, "w");
	int err;

	if (!out) {
		p_err("%s: %s", ra->html, strerror(errno));
		return EXIT_FAILURE_RT;
	}
	err = report_html__write(lt, ra->trace, out);
	if (fclose(out) && !err)
		err = -EIO;
	if (err) {
		p_err("%s: %s", ra->html, strerror(-err));
		return EXIT_FAILURE_RT;
	}
	if (!json_output)
		fprintf(stderr, "wrote %s\n", ra->html);
	return EXIT_OK;
}

static int print_json(const struct loaded_trace *lt, const struct report_args *ra, bool failed,
		      double top)
{
	json_t *doc = analysis__to_json_top(lt->analysis, (size_t)ra->top);

	if (!doc) {
		p_err("out of memory");
		return EXIT_FAILURE_RT;
	}
	json_object_set_new(doc, "trace", trace_facts_json(lt, ra->trace));
	json_object_set_new(doc, "confidence", confidence_json(lt));
	json_object_set_new(doc, "envelope", envelope_json(lt));
	json_object_set_new(doc, "pictures", pictures__json(lt->analysis));
	if (ra->html)
		json_object_set_new(doc, "html", json_string(ra->html));
	if (ra->fail_on >= 0)
		json_object_set_new(doc, "fail_on", json_pack("{s:f, s:f, s:b}", "score", ra->fail_on,
							     "top_score", top, "failed", failed));
	json_print_and_free(doc);
	return EXIT_OK;
}

/* --folded: the stacks instead of the report; what could not be named is
 * counted on stderr (text) or in the document (-j). */
static int print_folded(const struct loaded_trace *lt, const struct report_args *ra)
{
	struct stack_folds f;
	/* holds: only those at least --long-hold long, when it is given */
	int err = loaded_trace__fold(lt, (enum stack_value)(ra->folded - 1),
				     ra->aopts.long_hold_ns, &f);

	if (err) {
		p_err("folding stacks: %s", strerror(-err));
		return EXIT_FAILURE_RT;
	}
	if (json_output) {
		json_t *doc = stack_folds__json(&f);

		stack_folds__release(&f);
		if (!doc) {
			p_err("out of memory");
			return EXIT_FAILURE_RT;
		}
		json_print_and_free(doc);
		return EXIT_OK;
	}
	stack_folds__print(&f, stdout);
	stack_folds__summary(&f, analysis__counts(lt->analysis), stderr);
	stack_folds__release(&f);
	return EXIT_OK;
}

int do_report(int argc, char **argv)
{
	struct report_args ra;
	struct loaded_trace lt;
	bool failed;
	double top;
	int err, ret;

	ret = parse_report_args(argc, argv, &ra);
	if (ret >= 0)
		return ret;
	err = loaded_trace__load(&lt, ra.trace, &ra.aopts);
	if (err) {
		p_err("%s", lt.error[0] ? lt.error : strerror(-err));
		ret = err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
		goto out;
	}
	if (ra.folded) {
		ret = print_folded(&lt, &ra);
		goto out;
	}
	failed = fails(&lt, &ra, &top);
	ret = ra.html ? write_html(&lt, &ra) : EXIT_OK;
	if (ret != EXIT_OK)
		goto out;
	if (json_output) {
		ret = print_json(&lt, &ra, failed, top);
		if (ret != EXIT_OK)
			goto out;
	} else {
		print_trace_facts(&lt, ra.trace, stdout);
		print_confidence(&lt, stdout);
		analysis__print(lt.analysis, stdout, (size_t)ra.top);
		if (!ra.no_pictures)
			pictures__print(lt.analysis, stdout);
		if (failed)
			printf("\nfail-on: the top finding scores %.1f >= %.1f: exit 1\n", top, ra.fail_on);
	}
	ret = failed ? EXIT_FINDINGS : EXIT_OK;
out:
	loaded_trace__free(&lt);
	return ret;
}
