/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope_watch.c: `record --envelope FILE` inside the recorder
 * (envelope_watch.h): load and bind before attaching, then check every
 * snapshot and record; warnings become trace notes and messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "contract/plan.h"
#include "record/envelope_watch.h"
#include "record/recorder_int.h"
#include "trace/trace.h"
#include "validate/envelope.h"

struct envelope_watch {
	char *path;
	struct pb_envelope *env;
	struct envelope_check *chk;
};

void envelope_binding__from_plan(const struct plan *p, struct envelope_binding *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	memcpy(b->manifest_sha256, p->manifest->digest, sizeof(b->manifest_sha256));
	for (i = 0; i < p->n_targets && i < ENVELOPE_MAX_TARGETS; i++)
		snprintf(b->build_id[i], sizeof(b->build_id[i]), "%s", p->targets[i].build_id_found);
	b->n_targets = i;
}

struct envelope_watch *envelope_watch__new(const char *path, const struct plan *p,
					   recorder_message_fn msg, void *ctx)
{
	struct envelope_watch *ew;
	struct envelope_binding b;
	struct pb_errtext why = { 0 };
	int err;

	ew = calloc(1, sizeof(*ew));
	if (!ew || !(ew->path = strdup(path))) {
		recorder_say(msg, ctx, PB_LOG_ERROR, "out of memory");
		err = -ENOMEM;
		goto fail;
	}
	ew->env = envelope__load(path, &why);
	if (!ew->env) {
		err = errno == ENOMEM ? -ENOMEM : -EINVAL;
		recorder_say(msg, ctx, PB_LOG_ERROR, "--envelope: %s", why.msg);
		goto fail;
	}
	envelope_binding__from_plan(p, &b);
	if (envelope__check_binding(ew->env, p->manifest, &b, &why)) {
		err = -EINVAL;
		recorder_say(msg, ctx, PB_LOG_ERROR, "--envelope %s: refused: %s", path, why.msg);
		goto fail;
	}
	ew->chk = envelope_check__new(ew->env, p->manifest);
	if (!ew->chk) {
		err = errno == ENOMEM ? -ENOMEM : -EIO;
		recorder_say(msg, ctx, PB_LOG_ERROR, "--envelope %s: %s", path, strerror(errno));
		goto fail;
	}
	return ew;
fail:
	envelope_watch__free(ew);
	errno = -err;
	return NULL;
}

void envelope_watch__record(struct envelope_watch *ew, const void *rec, size_t len)
{
	if (ew)
		envelope_check__record(ew->chk, rec, len);
}

void envelope_watch__snapshot(struct envelope_watch *ew, uint64_t ts_ns,
			      const struct pb_desc_stats *desc, size_t n_desc,
			      struct trace_writer *w, recorder_message_fn msg, void *ctx)
{
	const struct envelope_warning *ws;
	char note[512];
	size_t n, i;
	int raised;

	if (!ew)
		return;
	raised = envelope_check__snapshot(ew->chk, ts_ns, desc, n_desc);
	if (raised <= 0)
		return;
	ws = envelope_check__warnings(ew->chk, &n);
	for (i = n - (size_t)raised; i < n; i++) {
		snprintf(note, sizeof(note), "envelope: %s", ws[i].text);
		if (w)
			trace_writer__note(w, note);	/* as the other notes: best effort */
		recorder_say(msg, ctx, PB_LOG_WARN, "%s", note);
	}
}

void envelope_watch__finish(struct envelope_watch *ew, struct trace_writer *w)
{
	char note[512];
	size_t n;

	if (!ew)
		return;
	envelope_check__warnings(ew->chk, &n);
	snprintf(note, sizeof(note), "envelope: %zu of %zu metric(s) left the envelope %s over %llu "
		 "window(s)%s (warning evidence only, no confidence change)", n,
		 envelope_check__n_metrics(ew->chk), ew->path,
		 (unsigned long long)envelope_check__windows(ew->chk),
		 envelope__has_key_metrics(ew->env) ? "" : "; no key metrics (trained without --events)");
	if (w)
		trace_writer__note(w, note);
}

size_t envelope_watch__n_warnings(const struct envelope_watch *ew)
{
	size_t n = 0;

	if (ew)
		envelope_check__warnings(ew->chk, &n);
	return n;
}

json_t *envelope_watch__json(const struct envelope_watch *ew)
{
	json_t *o;

	if (!ew)
		return NULL;
	o = envelope_check__to_json(ew->chk);
	if (o)
		json_object_set_new(o, "file", json_string(ew->path));
	return o;
}

void envelope_watch__print(const struct envelope_watch *ew, FILE *out)
{
	const struct envelope_warning *ws;
	size_t n, i;

	if (!ew)
		return;
	ws = envelope_check__warnings(ew->chk, &n);
	fprintf(out, "envelope %s: %zu metric(s) checked over %llu window(s), %zu outside "
		"(warnings only; confidence and exit status unchanged)\n", ew->path,
		envelope_check__n_metrics(ew->chk),
		(unsigned long long)envelope_check__windows(ew->chk), n);
	for (i = 0; i < n; i++)
		fprintf(out, "  %s: %llu of %llu windows outside [%.4g, %.4g], first %.4g\n",
			ws[i].metric, (unsigned long long)ws[i].windows_outside,
			(unsigned long long)ws[i].windows_checked, ws[i].lo, ws[i].hi, ws[i].value);
}

void envelope_watch__free(struct envelope_watch *ew)
{
	if (!ew)
		return;
	envelope_check__free(ew->chk);
	envelope__free(ew->env);
	free(ew->path);
	free(ew);
}
