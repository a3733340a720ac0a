/* record_envelope.c (cli): `probity record --envelope FILE`, kept apart
 * from record.c's flow. The envelope (src/validate/envelope.h) is loaded
 * and its binding checked before anything is attached; every snapshot
 * and record of the run is then checked against it. A metric that leaves
 * its band for ENVELOPE_SUSTAIN consecutive windows becomes a warning:
 * a trace note "envelope: ...", a line on stderr, and the `envelope`
 * section of the summary. Warnings never touch a descriptor's confidence
 * or the exit status: distributions are weak evidence.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "contract/plan.h"
#include "trace/trace.h"
#include "validate/envelope.h"

struct record_envelope {
	char *path;
	struct pb_envelope *env;
	struct envelope_check *chk;
	uint64_t write_errors;
};

void envelope_binding_from_plan(const struct plan *p, struct envelope_binding *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	memcpy(b->manifest_sha256, p->manifest->digest, sizeof(b->manifest_sha256));
	for (i = 0; i < p->n_targets && i < ENVELOPE_MAX_TARGETS; i++)
		snprintf(b->build_id[i], sizeof(b->build_id[i]), "%s", p->targets[i].build_id_found);
	b->n_targets = i;
}

int record_envelope__open(struct record_envelope **out, const char *path, const struct plan *p)
{
	struct record_envelope *re;
	struct envelope_binding b;
	char err[ENVELOPE_ERR_MAX];

	*out = NULL;
	re = calloc(1, sizeof(*re));
	if (!re || !(re->path = strdup(path))) {
		free(re);
		p_err("out of memory");
		return EXIT_FAILURE_RT;
	}
	re->env = envelope__load(path, err, sizeof(err));
	if (!re->env) {
		p_err("--envelope: %s", err);
		record_envelope__free(re);
		return errno == ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	envelope_binding_from_plan(p, &b);
	if (envelope__check_binding(re->env, p->manifest, &b, err, sizeof(err))) {
		p_err("--envelope %s: refused: %s", path, err);
		record_envelope__free(re);
		return EXIT_USAGE;
	}
	re->chk = envelope_check__new(re->env, p->manifest);
	if (!re->chk) {
		p_err("--envelope %s: %s", path, strerror(errno));
		record_envelope__free(re);
		return EXIT_FAILURE_RT;
	}
	*out = re;
	return EXIT_OK;
}

void record_envelope__record(struct record_envelope *re, const void *rec, size_t len)
{
	if (re)
		envelope_check__record(re->chk, rec, len);
}

void record_envelope__snapshot(struct record_envelope *re, uint64_t ts_ns,
			       const struct pb_desc_stats *desc, size_t n_desc,
			       struct trace_writer *w, bool tty)
{
	const struct envelope_warning *ws;
	char note[512];
	size_t n, i;
	int raised;

	if (!re)
		return;
	raised = envelope_check__snapshot(re->chk, ts_ns, desc, n_desc);
	if (raised <= 0)
		return;
	ws = envelope_check__warnings(re->chk, &n);
	for (i = n - (size_t)raised; i < n; i++) {
		snprintf(note, sizeof(note), "envelope: %s", ws[i].text);
		if (w && trace_writer__note(w, note))
			re->write_errors++;
		if (tty)
			fprintf(stderr, "\r\033[K");
		p_warn("%s", note);
	}
}

/* One closing note: what was checked and what left. */
void record_envelope__finish(struct record_envelope *re, struct trace_writer *w)
{
	char note[512];
	size_t n;

	if (!re)
		return;
	envelope_check__warnings(re->chk, &n);
	snprintf(note, sizeof(note), "envelope: %zu of %zu metric(s) left the envelope %s over %llu "
		 "window(s)%s (warning evidence only, no confidence change)", n,
		 envelope_check__n_metrics(re->chk), re->path,
		 (unsigned long long)envelope_check__windows(re->chk),
		 envelope__has_key_metrics(re->env) ? "" : "; no key metrics (trained without --events)");
	if (w && trace_writer__note(w, note))
		re->write_errors++;
}

json_t *record_envelope__json(const struct record_envelope *re)
{
	json_t *o;

	if (!re)
		return NULL;
	o = envelope_check__to_json(re->chk);
	if (o)
		json_object_set_new(o, "file", json_string(re->path));
	return o;
}

void record_envelope__print(const struct record_envelope *re)
{
	const struct envelope_warning *ws;
	size_t n, i;

	if (!re)
		return;
	ws = envelope_check__warnings(re->chk, &n);
	printf("envelope %s: %zu metric(s) checked over %llu window(s), %zu outside "
	       "(warnings only; confidence and exit status unchanged)\n", re->path,
	       envelope_check__n_metrics(re->chk),
	       (unsigned long long)envelope_check__windows(re->chk), n);
	for (i = 0; i < n; i++)
		printf("  %s: %llu of %llu windows outside [%.4g, %.4g], first %.4g\n", ws[i].metric,
		       (unsigned long long)ws[i].windows_outside,
		       (unsigned long long)ws[i].windows_checked, ws[i].lo, ws[i].hi, ws[i].value);
}

void record_envelope__free(struct record_envelope *re)
{
	if (!re)
		return;
	envelope_check__free(re->chk);
	envelope__free(re->env);
	free(re->path);
	free(re);
}
