/* SPDX-License-Identifier: BSD-2-Clause */
/* health.c (cli): `probity health TRACE [--follow] [--interval MS]`:
 * per-descriptor confidence of a recording (validated / candidate /
 * degraded / suspect / stale) with the invariant counts and the reasons of
 * every change, replayed from the trace's snapshots and violation samples
 * by the confidence controller (src/validate/, docs/validation.md), and
 * the envelope warnings `record --envelope` wrote.
 *
 * Live: `record` writes a snapshot chunk every --interval and holds a lock
 * on the trace while it records (trace_live__hold); health reads the trace
 * up to its last complete chunk and asks who holds the lock, so a trace
 * being written reads "recording in progress (pid N)". --follow re-reads
 * it every --interval until the recording ends (or Ctrl-C); under -j each
 * refresh is one JSON line.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "analyze/predictions.h"
#include "analyze/trace_load.h"

#define ENVELOPE_NOTE	"envelope: "
#define DEFAULT_FOLLOW_MS	1000
#define FOLLOW_WAIT_MS		10000	/* --follow: wait this long for TRACE to appear */

/* what the lock says about the file being written */
struct live_state {
	bool in_progress;
	int pid;		/* the recorder, 0 unknown */
	unsigned refresh;	/* 0-based, under --follow */
};

static void health_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] health TRACE [--follow] [--interval MS]\n"
		"\n"
		"Show each descriptor's runtime confidence in a trace written by 'probity\n"
		"record': its state (validated, candidate, degraded, suspect, stale), the\n"
		"events and invariant violations counted in the kernel (acquire_active,\n"
		"release_not_active, use_not_acquired, generation_overlap, expect_timeout,\n"
		"over_capacity, prediction_failed) and in user space (acquire_bypassed,\n"
		"release_missing), the release test of each RELEASE descriptor (held units\n"
		"left idle: leak candidates; busy and growing: RELEASEs the model does\n"
		"not see), the cross-layer predictions checked, failed and unjudged per\n"
		"effect, and why every state change happened, with the first violation\n"
		"samples. The manifest is never edited.\n"
		"docs/validation.md documents invariants and thresholds.\n"
		"A trace still being written by 'record' is read up to its last complete\n"
		"chunk (a snapshot every record --interval) and shown as a recording in\n"
		"progress, with the recorder's pid. Envelope warnings ('record --envelope')\n"
		"are listed as warning evidence; they never change a state.\n"
		"\n"
		"Options:\n"
		"  -f, --follow         refresh until the recording ends (or Ctrl-C); with -j\n"
		"                       one JSON document per line per refresh\n"
		"      --interval MS    refresh interval for --follow, 100..60000 (default %d)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 no descriptor suspect or stale; 1 some descriptor suspect\n"
		"or stale (the last state shown); 2 usage error, unreadable or corrupt trace.\n",
		bin_name, DEFAULT_FOLLOW_MS);
}

static const char *desc_id(const struct loaded_trace *lt, uint32_t i)
{
	uint32_t ev = lt->descs[i].event;

	return ev < lt->manifest->n_events ? lt->manifest->events[ev].id : "?";
}

static bool is_envelope_note(const char *n)
{
	return !strncmp(n, ENVELOPE_NOTE, strlen(ENVELOPE_NOTE));
}

static json_t *health_json(const struct loaded_trace *lt, const struct live_state *ls)
{
	json_t *env = json_array();
	const struct confidence_change *ch;
	json_t *o = json_object(), *descs = json_array(), *changes = json_array();
	size_t n, i;
	int k;

	for (i = 0; i < lt->n_descs; i++) {
		json_t *viol = json_object(), *samples = json_array(), *dj;
		struct confidence_release rt;
		const char *why = confidence__reason(lt->conf, (uint32_t)i);
		const struct pb_rec_violation *sv;
		size_t ns, j;

		sv = confidence__samples(lt->conf, (uint32_t)i, &ns);
		for (j = 0; j < ns; j++)
			json_array_append_new(samples, json_pack("{s:s, s:I, s:i, s:I, s:I, s:I, s:i, s:i, s:[I,I,I]}",
				"invariant", pb_invariant_str(sv[j].invariant),
				"ts_ns", (json_int_t)sv[j].hdr.ts_ns, "tid", (int)sv[j].hdr.tid,
				"instance", (json_int_t)sv[j].instance,
				"generation", (json_int_t)sv[j].generation,
				"new_generation", (json_int_t)sv[j].new_generation,
				"owner_tid", (int)sv[j].owner_tid, "detail", (int)sv[j].detail,
				"args", (json_int_t)sv[j].args[0], (json_int_t)sv[j].args[1],
				(json_int_t)sv[j].args[2]));
		for (k = 0; k < CONFIDENCE_INV_SLOTS; k++)
			json_object_set_new(viol, pb_invariant_str(k),
				json_integer((json_int_t)confidence__violations(lt->conf, (uint32_t)i, k)));
		dj = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:s?}",
			"id", desc_id(lt, (uint32_t)i),
			"initial", pb_confidence_str(confidence__initial(lt->conf, (uint32_t)i)),
			"state", pb_confidence_str(confidence__state(lt->conf, (uint32_t)i)),
			"events", (json_int_t)confidence__events(lt->conf, (uint32_t)i),
			"inferred_events",
			(json_int_t)confidence__inferred_events(lt->conf, (uint32_t)i),
			"violations", viol,
			"predictions", predictions__json(lt, (uint32_t)i),
			"samples", samples, "reason", why);
		if (dj && confidence__release(lt->conf, (uint32_t)i, &rt))
			json_object_set_new(dj, "release_test", json_pack(
				"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
				"tested", (json_int_t)rt.tested, "untested", (json_int_t)rt.untested,
				"charged", (json_int_t)rt.charged,
				"charged_units", (json_int_t)rt.charged_units,
				"baseline_units", (json_int_t)rt.baseline_units,
				"held_units", (json_int_t)rt.held_units,
				"idle_units", (json_int_t)rt.idle_units,
				"busy_units", (json_int_t)rt.busy_units,
				"threshold_ns", (json_int_t)rt.threshold_ns,
				"age_ns", (json_int_t)rt.age_ns));
		json_array_append_new(descs, dj);
	}
	ch = confidence__changes(lt->conf, &n);
	for (i = 0; i < n; i++)
		json_array_append_new(changes, json_pack("{s:s, s:I, s:s, s:s, s:s?, s:I, s:I, s:I, s:I, s:s}",
			"id", desc_id(lt, ch[i].descriptor), "ts_ns", (json_int_t)ch[i].ts_ns,
			"from", pb_confidence_str(ch[i].from), "to", pb_confidence_str(ch[i].to),
			"invariant", ch[i].invariant >= 0 ? pb_invariant_str(ch[i].invariant) : NULL,
			"window_events", (json_int_t)ch[i].window_events,
			"window_violations", (json_int_t)ch[i].window_violations,
			"window_checked", (json_int_t)ch[i].window_checked,
			"window_failed", (json_int_t)ch[i].window_failed,
			"reason", ch[i].reason));
	json_object_set_new(o, "descriptors", descs);
	json_object_set_new(o, "changes", changes);
	json_object_set_new(o, "complete", json_boolean(lt->ended));
	json_object_set_new(o, "in_progress", json_boolean(ls->in_progress));
	json_object_set_new(o, "recorder_pid", ls->in_progress && ls->pid ? json_integer(ls->pid) :
			    json_null());
	json_object_set_new(o, "target_pid", json_integer(lt->header.pid));
	for (i = 0; i < lt->n_notes; i++)
		if (is_envelope_note(lt->notes[i]))
			json_array_append_new(env, json_string(lt->notes[i] + strlen(ENVELOPE_NOTE)));
	json_object_set_new(o, "envelope", env);
	json_object_set_new(o, "notes_dropped", json_integer((json_int_t)lt->notes_dropped));
	return o;
}

static void health_print(const struct loaded_trace *lt, const char *path,
			 const struct live_state *ls)
{
	const struct confidence_change *ch;
	struct confidence_release rt;
	char pred[512];
	size_t n, i;
	int k;

	if (ls->refresh)
		printf("\n");
	if (ls->in_progress) {
		char when[32] = "";
		time_t now = time(NULL);
		struct tm tm;

		if (localtime_r(&now, &tm))
			strftime(when, sizeof(when), "%H:%M:%S", &tm);
		printf("health of %s: recording in progress (pid %d, target pid %u), read at %s\n",
		       path, ls->pid, lt->header.pid, when);
	} else {
		printf("health of %s%s\n", path, lt->ended ? "" : " (cut short: no recorder holds it)");
	}
	printf("  %-24s %-10s %-10s %10s  violations\n", "descriptor", "initial", "state", "events");
	for (i = 0; i < lt->n_descs; i++) {
		uint32_t d = (uint32_t)i;
		bool any = false;

		printf("  %-24s %-10s %-10s %10llu  ", desc_id(lt, d),
		       pb_confidence_str(confidence__initial(lt->conf, d)),
		       pb_confidence_str(confidence__state(lt->conf, d)),
		       (unsigned long long)confidence__events(lt->conf, d));
		for (k = 0; k < CONFIDENCE_INV_SLOTS; k++) {
			uint64_t v = confidence__violations(lt->conf, d, k);

			if (v) {
				printf("%s%s %llu", any ? ", " : "", pb_invariant_str(k),
				       (unsigned long long)v);
				any = true;
			}
		}
		printf("%s\n", any ? "" : "none");
		if (confidence__release(lt->conf, d, &rt) && (rt.tested || rt.untested))
			printf("    release test: %llu missing RELEASEs charged (%llu units); latest: of "
			       "%lld units held %.0f ms before, %lld idle since (leak candidates), %lld "
			       "released or touched (%lld at the first test); %llu snapshots tested, "
			       "%llu untested\n",
			       (unsigned long long)rt.charged, (unsigned long long)rt.charged_units,
			       (long long)rt.held_units, (double)rt.age_ns / 1e6,
			       (long long)rt.idle_units, (long long)rt.busy_units,
			       (long long)rt.baseline_units,
			       (unsigned long long)rt.tested, (unsigned long long)rt.untested);
		predictions__text(lt, d, pred, sizeof(pred));
		if (pred[0])
			printf("    predictions: %s\n", pred);
	}
	ch = confidence__changes(lt->conf, &n);
	if (n)
		printf("changes:\n");
	for (i = 0; i < n; i++)
		printf("  %s: %s -> %s: %s\n", desc_id(lt, ch[i].descriptor),
		       pb_confidence_str(ch[i].from), pb_confidence_str(ch[i].to), ch[i].reason);
	for (i = 0, k = 0; i < lt->n_notes; i++) {
		if (!is_envelope_note(lt->notes[i]))
			continue;
		if (!k++)
			printf("envelope (warning evidence only; states above are unaffected):\n");
		printf("  %s\n", lt->notes[i] + strlen(ENVELOPE_NOTE));
	}
	if (lt->notes_dropped)
		printf("(%zu more trace note(s) not read: at most %d are kept)\n", lt->notes_dropped,
		       TRACE_LOAD_MAX_NOTES);
	fflush(stdout);
}

/* Read the trace once and show it; the exit code for that state. The lock
 * is asked first: when nobody holds it, what is read is final. */
static int health_once(const char *path, struct live_state *ls, bool *again)
{
	struct analysis_opts ao = { 0 };
	struct loaded_trace lt;
	int err, ret = EXIT_OK, pid = 0;
	size_t i;

	err = trace_live__holder(path, &pid);
	ls->in_progress = err > 0;
	ls->pid = pid;
	*again = ls->in_progress;
	err = loaded_trace__load(&lt, path, &ao);
	if (err) {
		/* a recording that has not written its plan yet: wait for it */
		if (ls->in_progress && err == -EBADMSG) {
			loaded_trace__free(&lt);
			if (json_output)
				json_print_and_free(json_pack("{s:[], s:[], s:b, s:b, s:o, s:[]}",
					"descriptors", "changes", "complete", 0, "in_progress", 1,
					"recorder_pid", pid ? json_integer(pid) : json_null(), "envelope"));
			else
				printf("health of %s: recording in progress (pid %d), nothing readable "
				       "yet\n", path, pid);
			fflush(stdout);
			ls->refresh++;
			return EXIT_OK;
		}
		p_err("%s", lt.error[0] ? lt.error : strerror(-err));
		loaded_trace__free(&lt);
		*again = false;
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	if (lt.ended) {
		/* written to its end: final, even while the recorder is still
		 * closing (and holding the lock); --follow stops here, or it
		 * printed the final document twice */
		ls->in_progress = false;
		*again = false;
	}
	for (i = 0; i < lt.n_descs; i++) {
		enum pb_confidence st = confidence__state(lt.conf, (uint32_t)i);

		if (st == PB_CONF_SUSPECT || st == PB_CONF_STALE)
			ret = EXIT_FINDINGS;
	}
	if (json_output)
		json_print_and_free(health_json(&lt, ls));
	else
		health_print(&lt, path, ls);
	loaded_trace__free(&lt);
	ls->refresh++;
	return ret;
}

int do_health(int argc, char **argv)
{
	enum { OPT_INTERVAL = 256 };
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct live_state ls = {};
	long interval_ms = DEFAULT_FOLLOW_MS;
	bool follow = false, again;
	int opt, ret, waited;
	char *end;

	while ((opt = getopt_long(argc, argv, "+fh", opts, NULL)) >= 0) {
		switch (opt) {
		case 'f': follow = true; json_lines = true; break;	/* -j: JSON Lines */
		case OPT_INTERVAL:
			errno = 0;
			interval_ms = strtol(optarg, &end, 10);
			if (errno || *end || interval_ms < 100 || interval_ms > 60000) {
				p_err("--interval: expected 100..60000 (ms), found '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': health_help(stdout); return EXIT_OK;
		default: health_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		p_err("expected one TRACE (see '%s health --help')", bin_name);
		return EXIT_USAGE;
	}
	if (!follow)
		return health_once(argv[optind], &ls, &again);
	pretty_output = false;	/* JSON lines */
	cli_stop_install();
	/* record creates the trace once every probe is attached: give a
	 * recording just started FOLLOW_WAIT_MS to create it */
	for (waited = 0; access(argv[optind], F_OK) && errno == ENOENT && !cli_stop_signal &&
			 waited < FOLLOW_WAIT_MS; waited += 100)
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	for (;;) {
		struct timespec nap = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };

		ret = health_once(argv[optind], &ls, &again);
		if (!again || cli_stop_signal)
			break;
		while (nanosleep(&nap, &nap) && errno == EINTR && !cli_stop_signal)
			;
		if (cli_stop_signal)
			break;
	}
	cli_stop_restore();
	return ret;
}
