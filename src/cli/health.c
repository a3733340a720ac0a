/* health.c (cli): `probity health TRACE`: per-descriptor confidence of a
 * recording (validated / candidate / degraded / suspect / stale) with the
 * invariant counts and the reasons of every change, replayed from the
 * trace's snapshots and violation samples by the confidence controller
 * (src/validate/, docs/validation.md). Live mode against a running
 * `record` is not implemented: run it on the trace file (readable while
 * being written, up to its last complete chunk).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "analyze/trace_load.h"

static void health_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] health TRACE\n"
		"\n"
		"Show each descriptor's runtime confidence in a trace written by 'probity\n"
		"record': its state (validated, candidate, degraded, suspect, stale), the\n"
		"events and invariant violations counted in the kernel (acquire_active,\n"
		"release_not_active, use_not_acquired, generation_overlap,\n"
		"prediction_failed), the cross-layer predictions checked, failed and\n"
		"unjudged per effect, and why every state change happened, with the\n"
		"first violation samples. The manifest is never edited. docs/validation.md documents invariants and thresholds.\n"
		"A trace still being written is read up to its last complete chunk.\n"
		"\n"
		"Options:\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 no descriptor suspect or stale; 1 some descriptor suspect\n"
		"or stale; 2 usage error, unreadable or corrupt trace.\n",
		bin_name);
}

static const char *desc_id(const struct loaded_trace *lt, uint32_t i)
{
	uint32_t ev = lt->descs[i].event;

	return ev < lt->manifest->n_events ? lt->manifest->events[ev].id : "?";
}

/* the event of descriptor i predicts effect fx */
static bool predicts(const struct loaded_trace *lt, uint32_t i, int fx)
{
	uint32_t ev = lt->descs[i].event;
	const struct pb_event *e;
	size_t k;

	if (ev >= lt->manifest->n_events)
		return false;
	e = &lt->manifest->events[ev];
	for (k = 0; k < e->n_predicts; k++)
		if ((int)e->predicts[k].effect == fx)
			return true;
	return false;
}

/* {"block_io": {"checked", "failed", "unjudged"}, ...} for the predicted
 * effects (and any effect with counts) */
json_t *health_predictions_json(const struct loaded_trace *lt, uint32_t i)
{
	json_t *o = json_object();
	uint64_t chk, fail, unj;
	int fx;

	for (fx = 0; o && fx < PB_FX__COUNT; fx++) {
		confidence__predictions(lt->conf, i, fx, &chk, &fail, &unj);
		if (!predicts(lt, i, fx) && !chk && !unj)
			continue;
		json_object_set_new(o, pb_effect_str(fx), json_pack("{s:I, s:I, s:I}",
			"checked", (json_int_t)chk, "failed", (json_int_t)fail,
			"unjudged", (json_int_t)unj));
	}
	return o;
}

/* "block_io 2493 checked, 0 failed, 0 unjudged; off_cpu ..." or "" */
void health_predictions_text(const struct loaded_trace *lt, uint32_t i, char *buf, size_t sz)
{
	uint64_t chk, fail, unj;
	size_t o = 0;
	int fx;

	buf[0] = '\0';
	for (fx = 0; fx < PB_FX__COUNT && o < sz; fx++) {
		confidence__predictions(lt->conf, i, fx, &chk, &fail, &unj);
		if (!predicts(lt, i, fx) && !chk && !unj)
			continue;
		o += (size_t)snprintf(buf + o, sz - o, "%s%s %llu checked, %llu failed, %llu unjudged",
				      o ? "; " : "", pb_effect_str(fx), (unsigned long long)chk,
				      (unsigned long long)fail, (unsigned long long)unj);
	}
}

static json_t *health_json(const struct loaded_trace *lt)
{
	const struct confidence_change *ch;
	json_t *o = json_object(), *descs = json_array(), *changes = json_array();
	size_t n, i;
	int k;

	for (i = 0; i < lt->n_descs; i++) {
		json_t *viol = json_object(), *samples = json_array();
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
		for (k = 0; k < PB_INV__COUNT; k++)
			json_object_set_new(viol, pb_invariant_str(k),
				json_integer((json_int_t)confidence__violations(lt->conf, (uint32_t)i, k)));
		json_array_append_new(descs, json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:s?}",
			"id", desc_id(lt, (uint32_t)i),
			"initial", pb_confidence_str(confidence__initial(lt->conf, (uint32_t)i)),
			"state", pb_confidence_str(confidence__state(lt->conf, (uint32_t)i)),
			"events", (json_int_t)confidence__events(lt->conf, (uint32_t)i),
			"violations", viol,
			"predictions", health_predictions_json(lt, (uint32_t)i),
			"samples", samples, "reason", why));
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
	return o;
}

static void health_print(const struct loaded_trace *lt, const char *path)
{
	const struct confidence_change *ch;
	char pred[512];
	size_t n, i;
	int k;

	printf("health of %s%s\n", path, lt->ended ? "" : " (cut short or still being written)");
	printf("  %-24s %-10s %-10s %10s  violations\n", "descriptor", "initial", "state", "events");
	for (i = 0; i < lt->n_descs; i++) {
		uint32_t d = (uint32_t)i;
		bool any = false;

		printf("  %-24s %-10s %-10s %10llu  ", desc_id(lt, d),
		       pb_confidence_str(confidence__initial(lt->conf, d)),
		       pb_confidence_str(confidence__state(lt->conf, d)),
		       (unsigned long long)confidence__events(lt->conf, d));
		for (k = 0; k < PB_INV__COUNT; k++) {
			uint64_t v = confidence__violations(lt->conf, d, k);

			if (v) {
				printf("%s%s %llu", any ? ", " : "", pb_invariant_str(k),
				       (unsigned long long)v);
				any = true;
			}
		}
		printf("%s\n", any ? "" : "none");
		health_predictions_text(lt, d, pred, sizeof(pred));
		if (pred[0])
			printf("    predictions: %s\n", pred);
	}
	ch = confidence__changes(lt->conf, &n);
	if (n)
		printf("changes:\n");
	for (i = 0; i < n; i++)
		printf("  %s: %s -> %s: %s\n", desc_id(lt, ch[i].descriptor),
		       pb_confidence_str(ch[i].from), pb_confidence_str(ch[i].to), ch[i].reason);
}

int do_health(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct analysis_opts ao = { .sz = sizeof(ao) };
	struct loaded_trace lt;
	int opt, err, ret = EXIT_OK;
	size_t i;

	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'h': health_help(stdout); return EXIT_OK;
		default: health_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		p_err("expected one TRACE (see '%s health --help')", bin_name);
		return EXIT_USAGE;
	}
	err = loaded_trace__load(&lt, argv[optind], &ao);
	if (err) {
		p_err("%s", lt.error[0] ? lt.error : strerror(-err));
		loaded_trace__free(&lt);
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	for (i = 0; i < lt.n_descs; i++) {
		enum pb_confidence st = confidence__state(lt.conf, (uint32_t)i);

		if (st == PB_CONF_SUSPECT || st == PB_CONF_STALE)
			ret = EXIT_FINDINGS;
	}
	if (json_output)
		json_print_and_free(health_json(&lt));
	else
		health_print(&lt, argv[optind]);
	loaded_trace__free(&lt);
	return ret;
}
