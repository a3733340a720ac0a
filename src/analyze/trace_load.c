/* SPDX-License-Identifier: BSD-2-Clause */
/* trace_load.c: a trace file into an analysis (see trace_load.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/trace_load.h"

/* Keep the cost model; the analysis corrects span durations with it from
 * the first one on (written before any record). 0 or -ENOMEM. */
static int loaded_trace_cost(struct loaded_trace *lt, const struct trace_item *it)
{
	struct trace_cost_desc *d = malloc(((size_t)it->cost.n_desc + 1) * sizeof(*d));

	if (!d)
		return -ENOMEM;
	memcpy(d, it->cost_desc, (size_t)it->cost.n_desc * sizeof(*d));
	free(lt->cost_desc);
	lt->cost_desc = d;
	lt->cost = it->cost;
	memcpy(lt->cost_classes, it->cost_classes, sizeof(lt->cost_classes));
	lt->has_cost = true;
	return analysis__set_probe_cost(lt->analysis, lt->cost_classes, lt->cost.n_classes,
					lt->cost_desc, lt->cost.n_desc,
					lt->cost.flags & TRACE_COST_CALIBRATED);
}

static int load_items(struct loaded_trace *lt)
{
	struct trace_item it;
	int ret;

	while ((ret = trace_reader__next(lt->reader, &it)) > 0) {
		switch (it.type) {
		case TRACE_ITEM_RECORD:
			if (it.rec_len >= sizeof(*it.rec) && it.rec->type == PB_REC_VIOLATION) {
				confidence__sample(lt->conf, (const void *)it.rec, it.rec_len);
				break;
			}
			confidence__window(lt->conf, it.rec, it.rec_len);
			/* stacks and the RELEASEs that end their holds (stacks.h) */
			if (stack_set__add_record(lt->stacks, it.rec, it.rec_len))
				return -ENOMEM;
			/* unknown or malformed records are counted by the analysis */
			analysis__add_record(lt->analysis, it.rec, it.rec_len);
			break;
		case TRACE_ITEM_MAPS:
			ret = stack_set__add_maps(lt->stacks, it.maps, it.n_maps);
			if (ret)
				return ret;
			break;
		case TRACE_ITEM_SNAPSHOT:
			ret = confidence__snapshot_res(lt->conf, it.snap.ts_ns, it.snap.desc,
						       it.snap.n_desc, it.snap.res, it.snap.n_res);
			if (ret == -ENOMEM)
				return ret;
			ret = analysis__add_snapshot(lt->analysis, it.snap.ts_ns, it.snap.desc,
						     it.snap.n_desc, it.snap.res, it.snap.n_res,
						     &it.snap.engine);
			if (ret == -ENOMEM)
				return ret;
			break;
		case TRACE_ITEM_NOTE:
			if (lt->n_notes < TRACE_LOAD_MAX_NOTES) {
				lt->notes[lt->n_notes] = strdup(it.note ? it.note : "");
				if (!lt->notes[lt->n_notes])
					return -ENOMEM;
				lt->n_notes++;
			} else {
				lt->notes_dropped++;
			}
			break;
		case TRACE_ITEM_PROCS:
			free(lt->procs);
			lt->n_procs = 0;
			lt->procs = malloc((it.n_procs + 1) * sizeof(*lt->procs));
			if (!lt->procs)
				return -ENOMEM;
			memcpy(lt->procs, it.procs, it.n_procs * sizeof(*lt->procs));
			lt->n_procs = it.n_procs;
			break;
		case TRACE_ITEM_COST:
			ret = loaded_trace_cost(lt, &it);
			if (ret)
				return ret;
			break;
		case TRACE_ITEM_END:
			lt->ended = true;
			lt->end = it.end;
			break;
		}
	}
	return ret;
}

/* The controller starts from the plan's effective confidence; an attach to
 * a running process gets record's grace (instances may predate it). */
static int start_confidence(struct loaded_trace *lt)
{
	struct confidence_opts co = { 0 };
	enum pb_confidence *init;
	uint32_t *ev;
	size_t i;

	init = calloc(lt->n_descs ? lt->n_descs : 1, sizeof(*init));
	ev = calloc(lt->n_descs ? lt->n_descs : 1, sizeof(*ev));
	if (!init || !ev) {
		free(init);
		free(ev);
		return -ENOMEM;
	}
	for (i = 0; i < lt->n_descs; i++) {
		init[i] = lt->descs[i].confidence <= PB_CONF_DEGRADED ?
			  (enum pb_confidence)lt->descs[i].confidence : PB_CONF_CANDIDATE;
		ev[i] = lt->descs[i].event;
	}
	co.manifest = lt->manifest;	/* the leak hypothesis */
	co.desc_event = ev;
	if (!(lt->header.flags & TRACE_F_SPAWNED))
		co.grace_ns = CONFIDENCE_ATTACH_GRACE_NS;
	lt->conf = confidence__new(lt->n_descs, init, &co);
	free(init);
	free(ev);
	return lt->conf ? 0 : -errno;
}

/* Open the trace and parse the manifest embedded in it. */
static int open_with_manifest(struct loaded_trace *lt, const char *path)
{
	struct diags *diags;
	const void *mbytes;
	size_t mlen;
	int err;

	lt->reader = trace_reader__open(path);
	if (!lt->reader) {
		err = -errno;
		snprintf(lt->error, sizeof(lt->error), "%s: %s", path,
			 err == -EBADMSG ? "not a probity trace, or its header is corrupt" :
			 err == -EPROTONOSUPPORT ? "trace written by a newer probity" : strerror(-err));
		return err;
	}
	lt->header = *trace_reader__header(lt->reader);
	mbytes = trace_reader__manifest(lt->reader, &mlen);
	diags = diags__new();
	if (!diags)
		return -ENOMEM;
	err = mbytes ? manifest__parse("embedded manifest", mbytes, mlen, &lt->manifest, diags) : -EINVAL;
	diags__free(diags);
	if (err) {
		snprintf(lt->error, sizeof(lt->error), "%s: the embedded manifest does not parse", path);
		return err == -ENOMEM ? err : -EBADMSG;
	}
	return 0;
}

int loaded_trace__load(struct loaded_trace *lt, const char *path,
		       const struct analysis_opts *opts)
{
	const struct trace_plan_desc *pd;
	struct analysis_opts ao;
	size_t n, i;
	int err;

	memset(lt, 0, sizeof(*lt));
	lt->stacks = stack_set__new();
	if (!lt->stacks) {
		snprintf(lt->error, sizeof(lt->error), "stacks: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = open_with_manifest(lt, path);
	if (err)
		return err;
	ao = opts ? *opts : (struct analysis_opts){ 0 };
	ao.counters_from_zero = lt->header.flags & TRACE_F_SPAWNED;
	lt->analysis = analysis__new(lt->manifest, &ao);
	if (!lt->analysis) {
		err = -errno;
		snprintf(lt->error, sizeof(lt->error), "analysis: %s", strerror(-err));
		return err;
	}
	/* the plan's effective confidence (e.g. degraded by --rebind) */
	pd = trace_reader__descriptors(lt->reader, &n);
	lt->descs = pd;
	lt->n_descs = pd ? n : 0;
	for (i = 0; pd && i < n; i++)
		if (pd[i].event < lt->manifest->n_events && pd[i].confidence <= PB_CONF_DEGRADED)
			analysis__set_confidence(lt->analysis, pd[i].event, pd[i].confidence);
	err = start_confidence(lt);
	if (err) {
		snprintf(lt->error, sizeof(lt->error), "confidence: %s", strerror(-err));
		return err;
	}
	err = load_items(lt);
	if (err < 0) {
		snprintf(lt->error, sizeof(lt->error), "%s: %s", path, strerror(-err));
		return err;
	}
	/* what the run showed overrides what the plan believed */
	for (i = 0; i < lt->n_descs; i++) {
		enum pb_confidence st = confidence__state(lt->conf, (uint32_t)i);
		struct confidence_leak lk;

		if (pd[i].event < lt->manifest->n_events && st != confidence__initial(lt->conf, (uint32_t)i))
			analysis__set_confidence(lt->analysis, pd[i].event, st);
		if (pd[i].event < lt->manifest->n_events &&
		    confidence__leak(lt->conf, (uint32_t)i, &lk))
			analysis__set_leak(lt->analysis, pd[i].event, &lk);
	}
	if (!trace_reader__ended_cleanly(lt->reader)) {
		const char *why = trace_reader__cut_reason(lt->reader);

		lt->cut_reason = strdup(why ? why : "no end chunk: the recording was cut short");
	}
	/* the end chunk's drop count is final; the last snapshot may predate it */
	if (lt->ended && lt->end.ringbuf_drops > analysis__counts(lt->analysis)->ringbuf_drops) {
		const struct analysis_counts *c = analysis__counts(lt->analysis);
		struct pb_engine_stats eng = {
			.ringbuf_drops = lt->end.ringbuf_drops, .instance_map_full = c->instance_map_full,
			.thread_map_full = c->thread_map_full, .span_overflow = c->span_overflow,
			.records = lt->end.records > c->engine_records ? lt->end.records : c->engine_records,
			.stacks = c->stacks, .stacks_rate_limited = c->stacks_rate_limited,
			.stacks_lost = c->stacks_lost, .stacks_failed = c->stacks_failed,
			.stacks_truncated = c->stacks_truncated,
		};

		analysis__add_snapshot(lt->analysis, lt->end.end_mono_ns, NULL, 0, NULL, 0, &eng);
	}
	analysis__set_window(lt->analysis, lt->header.start_mono_ns, lt->ended ? lt->end.end_mono_ns : 0);
	analysis__set_procs(lt->analysis, lt->procs, lt->n_procs);
	err = analysis__finish(lt->analysis);
	if (err < 0) {
		snprintf(lt->error, sizeof(lt->error), "analysis: %s", strerror(-err));
		return err;
	}
	return 0;
}

void loaded_trace__free(struct loaded_trace *lt)
{
	size_t i;

	if (!lt)
		return;
	analysis__free(lt->analysis);
	confidence__free(lt->conf);
	manifest__free(lt->manifest);
	trace_reader__free(lt->reader);
	free(lt->cut_reason);
	free(lt->procs);
	stack_set__free(lt->stacks);
	free(lt->cost_desc);
	for (i = 0; i < lt->n_notes; i++)
		free(lt->notes[i]);
	memset(lt, 0, sizeof(*lt));
}

const struct trace_proc *loaded_trace__proc(const struct loaded_trace *lt, uint32_t pid)
{
	size_t i;

	for (i = 0; lt && i < lt->n_procs; i++)
		if (lt->procs[i].pid == pid && lt->procs[i].tid == pid)
			return &lt->procs[i];
	return NULL;
}

const char *loaded_trace__comm(const struct loaded_trace *lt, uint32_t pid, uint32_t tid)
{
	const struct trace_proc *p;
	size_t i;

	for (i = 0; lt && i < lt->n_procs; i++)
		if (lt->procs[i].pid == pid && lt->procs[i].tid == tid && lt->procs[i].comm[0])
			return lt->procs[i].comm;
	p = loaded_trace__proc(lt, pid);
	return p && p->comm[0] ? p->comm : NULL;
}

int loaded_trace__fold(const struct loaded_trace *lt, enum stack_value what, uint64_t min_ns,
		       struct stack_folds *out)
{
	const char **names;
	size_t i;
	int err;

	err = stack_set__set_parents(lt->stacks, lt->procs, lt->n_procs);
	if (err)
		return err;
	names = calloc(lt->n_descs + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (i = 0; i < lt->n_descs; i++)
		if (lt->manifest && lt->descs[i].event < lt->manifest->n_events)
			names[i] = lt->manifest->events[lt->descs[i].event].id;
	err = stack_set__fold(lt->stacks, what, min_ns, names, lt->n_descs, out);
	free(names);
	return err;
}
