/* SPDX-License-Identifier: BSD-2-Clause */
/* revalidate.c: a trace's runtime evidence per descriptor for `manifest
 * rebind --from-trace` (revalidate.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/digest.h"
#include "trace/trace.h"
#include "validate/confidence.h"
#include "validate/revalidate.h"

/* Every violation sample and snapshot through the controller. */
static int replay(struct trace_reader *rd, struct confidence *conf)
{
	struct trace_item it;
	int ret;

	while ((ret = trace_reader__next(rd, &it)) > 0) {
		if (it.type == TRACE_ITEM_RECORD && it.rec_len >= sizeof(*it.rec) &&
		    it.rec->type == PB_REC_VIOLATION)
			confidence__sample(conf, (const void *)it.rec, it.rec_len);
		else if (it.type == TRACE_ITEM_SNAPSHOT) {
			ret = confidence__snapshot(conf, it.snap.ts_ns, it.snap.desc, it.snap.n_desc);
			if (ret == -ENOMEM)
				return ret;
		}
	}
	return ret;
}

static void fill_header(struct rebind_trace *t, const struct trace_header *h)
{
	time_t secs = (time_t)(h->start_real_ns / 1000000000ull);
	struct tm tm;
	size_t i;

	memcpy(t->manifest_sha256, h->manifest_sha256, sizeof(t->manifest_sha256));
	gmtime_r(&secs, &tm);
	strftime(t->date, sizeof(t->date), "%Y-%m-%d", &tm);
	t->n_targets = h->n_targets < 8 ? h->n_targets : 8;
	for (i = 0; i < t->n_targets; i++) {
		uint32_t len = h->build_ids[i].len < PB_BUILD_ID_MAX ? h->build_ids[i].len : PB_BUILD_ID_MAX;

		pb_hex(h->build_ids[i].id, len, t->build_ids[i]);
	}
}

/* One descriptor's evidence, by manifest event index. */
static void fill_event(struct rebind_evidence *e, const struct confidence *conf, uint32_t di)
{
	struct confidence_evidence ev;
	const char *why = confidence__reason(conf, di);

	confidence__evidence(conf, di, &ev);
	e->judged = true;
	e->initial = confidence__initial(conf, di);
	e->state = confidence__state(conf, di);
	e->windows = ev.promoted_windows;
	e->events = ev.promoted_events;
	e->checked = ev.promoted_checked;
	e->total_events = confidence__events(conf, di);
	snprintf(e->reason, sizeof(e->reason), "%s", why ? why : "");
}

int revalidate__load_trace(const char *path, struct rebind_trace **out, struct diags *diags)
{
	struct confidence_opts co = { 0 };
	const struct trace_plan_desc *pd;
	struct trace_reader *rd;
	struct confidence *conf = NULL;
	enum pb_confidence *init = NULL;
	struct rebind_trace *t = NULL;
	size_t n = 0, i;
	int err;

	*out = NULL;
	rd = trace_reader__open(path);
	if (!rd) {
		err = -errno;
		diags__add(diags, DIAG_ERROR, path, 0, 0, NULL, "%s",
			   err == -EBADMSG ? "not a probity trace, or its header is corrupt" :
			   err == -EPROTONOSUPPORT ? "trace written by a newer probity" : strerror(-err));
		return err == -ENOMEM ? err : -EINVAL;
	}
	pd = trace_reader__descriptors(rd, &n);
	t = calloc(1, sizeof(*t));
	init = calloc(n + 1, sizeof(*init));
	if (t)
		t->events = calloc(n + 1, sizeof(*t->events));
	err = -ENOMEM;
	if (!t || !init || !t->events)
		goto out;
	t->name = path;
	t->n_events = n;
	fill_header(t, trace_reader__header(rd));
	for (i = 0; i < n; i++)
		init[i] = pd[i].confidence <= PB_CONF_DEGRADED ? (enum pb_confidence)pd[i].confidence :
			  PB_CONF_CANDIDATE;
	if (!(trace_reader__header(rd)->flags & TRACE_F_SPAWNED))
		co.grace_ns = CONFIDENCE_ATTACH_GRACE_NS;	/* as record judged it */
	conf = confidence__new(n, init, &co);
	if (!conf)
		goto out;
	err = replay(rd, conf);
	if (err < 0) {
		diags__add(diags, DIAG_ERROR, path, 0, 0, NULL, "reading the trace: %s", strerror(-err));
		goto out;
	}
	for (i = 0; i < n; i++)
		if (pd[i].event < n)
			fill_event(&t->events[pd[i].event], conf, (uint32_t)i);
	*out = t;
	t = NULL;
	err = 0;
out:
	revalidate__free_trace(t);
	confidence__free(conf);
	free(init);
	trace_reader__free(rd);
	return err;
}

void revalidate__free_trace(struct rebind_trace *t)
{
	if (!t)
		return;
	free(t->events);
	free(t);
}

int revalidate__rebind(const char *manifest_path, const char *trace_path,
		       const struct rebind_opts *o, struct rebind_result **out,
		       struct diags *diags)
{
	struct rebind_opts ro = *o;
	struct rebind_trace *t = NULL;
	int err;

	*out = NULL;
	if (trace_path) {
		err = revalidate__load_trace(trace_path, &t, diags);
		if (err)
			return err;
	}
	ro.trace = t;
	err = manifest_rebind__build(manifest_path, &ro, out, diags);
	revalidate__free_trace(t);
	return err;
}
