/* SPDX-License-Identifier: BSD-2-Clause */
/* summary.c: what a recording recorded (recorder.h): the result struct,
 * the `record -j` summary and the lines of the text summary.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest.h"
#include "contract/plan.h"
#include "record/envelope_watch.h"
#include "record/recorder_int.h"
#include "validate/confidence.h"

uint64_t recorder_total_events(const struct engine_snapshot *s)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < s->n_desc; i++)
		n += s->desc[i].events;
	return n;
}

int recorder_top_wait(const struct recorder *r, uint64_t *ns)
{
	uint64_t best = 0, per[PB_MAX_RESOURCES] = { 0 };
	int top = -1;
	uint32_t i;

	for (i = 0; i < r->snap.n_desc; i++) {
		const struct pb_event *ev = &r->m->events[r->p->descriptors[i].event];

		if (ev->kind == PB_EV_WAIT && ev->resource_idx >= 0 &&
		    ev->resource_idx < PB_MAX_RESOURCES)
			per[ev->resource_idx] += r->snap.desc[i].total_ns;
	}
	for (i = 0; i < r->snap.n_res && i < PB_MAX_RESOURCES; i++)
		if (per[i] > best) {
			best = per[i];
			top = (int)i;
		}
	*ns = best;
	return top;
}

/* descriptors whose confidence left their initial state */
static int fill_confidence(struct recorder *r)
{
	uint32_t i;

	r->changed = calloc(r->p->n_descriptors + 1, sizeof(*r->changed));
	if (!r->changed)
		return -ENOMEM;
	for (i = 0; i < r->p->n_descriptors; i++) {
		enum pb_confidence st = confidence__state(r->conf, i);

		if (st == confidence__initial(r->conf, i))
			continue;
		r->changed[r->res.n_confidence++] = (struct recorder_confidence){
			.id = r->m->events[r->p->descriptors[i].event].id,
			.state = st,
			.reason = confidence__reason(r->conf, i),
		};
	}
	r->res.confidence = r->changed;
	r->res.any_stale = confidence__any_stale(r->conf);
	return 0;
}

int recorder_fill_result(struct recorder *r, enum trace_stop_reason why)
{
	struct recorder_result *res = &r->res;
	int top;

	res->stopped_by = why;
	res->pid = (int)(r->child ? r->child : r->o.pid);
	res->target_status = r->child_reaped ? r->child_status : -1;
	res->duration_ns = r->snap.ts_ns - r->start_ns;
	res->events = recorder_total_events(&r->snap);
	res->snapshots = r->snapshots;
	res->write_errors = r->write_errors;
	res->engine = r->snap.engine;
	top = recorder_top_wait(r, &res->top_wait_ns);
	res->top_wait = top >= 0 ? r->m->resources[top].name : NULL;
	res->envelope_warnings = envelope_watch__n_warnings(r->env);
	return fill_confidence(r);
}

static const char *stop_str(enum trace_stop_reason why)
{
	switch (why) {
	case TRACE_STOP_SIGNAL: return "signal";
	case TRACE_STOP_DURATION: return "duration";
	case TRACE_STOP_TARGET_EXIT: return "target exited";
	default: return "error";
	}
}

/* descriptors whose confidence changed: {id: {state, reason}} */
static json_t *confidence_json(const struct recorder_result *res)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; o && i < res->n_confidence; i++)
		json_object_set_new(o, res->confidence[i].id,
			json_pack("{s:s, s:s?}", "state", pb_confidence_str(res->confidence[i].state),
				  "reason", res->confidence[i].reason));
	return o;
}

json_t *recorder__summary_json(const struct recorder *r)
{
	const struct recorder_result *res = &r->res;
	const struct pb_engine_stats *es = &res->engine;
	json_t *o;

	o = json_pack("{s:s, s:i, s:f, s:I, s:I, s:I, s:I, s:s, s:s?, s:I, s:o}",
		"file", r->o.output, "pid", res->pid,
		"duration_s", (double)res->duration_ns / 1e9, "events", (json_int_t)res->events,
		"records", (json_int_t)res->records,
		"drops", (json_int_t)es->ringbuf_drops,
		"snapshots", (json_int_t)res->snapshots, "stopped_by", stop_str(res->stopped_by),
		"top_wait_resource", res->top_wait,
		"bytes", (json_int_t)res->bytes,
		"lost", json_pack("{s:I, s:I, s:I, s:I, s:I}",
			"instance_map_full", (json_int_t)es->instance_map_full,
			"thread_map_full", (json_int_t)es->thread_map_full,
			"span_overflow", (json_int_t)es->span_overflow,
			"return_without_entry", (json_int_t)es->stash_missing,
			"write_errors", (json_int_t)res->write_errors));
	if (o)
		json_object_set_new(o, "confidence", confidence_json(res));
	if (o && r->env)
		json_object_set_new(o, "envelope", envelope_watch__json(r->env));
	return o;
}

void recorder__summary_print(const struct recorder *r, FILE *out)
{
	const struct recorder_result *res = &r->res;
	size_t i;

	fprintf(out, "recorded %llu events in %.2f s from pid %d (stopped by %s): %llu records, "
		"%llu snapshots, %llu drops -> %s\n",
		(unsigned long long)res->events, (double)res->duration_ns / 1e9, res->pid,
		stop_str(res->stopped_by), (unsigned long long)res->records,
		(unsigned long long)res->snapshots, (unsigned long long)res->engine.ringbuf_drops,
		r->o.output);
	if (res->top_wait)
		fprintf(out, "top wait: %s (%.1f ms in WAIT spans)\n", res->top_wait,
			(double)res->top_wait_ns / 1e6);
	for (i = 0; i < res->n_confidence; i++)
		fprintf(out, "confidence: %s is %s (%s)\n", res->confidence[i].id,
			pb_confidence_str(res->confidence[i].state),
			res->confidence[i].reason ? res->confidence[i].reason : "");
	envelope_watch__print(r->env, out);
}

void recorder__summary_warnings(const struct recorder *r,
				void (*fn)(const char *msg, void *ctx), void *ctx)
{
	const struct pb_engine_stats *es = &r->res.engine;
	char msg[512];

	if (es->ringbuf_drops) {
		snprintf(msg, sizeof(msg), "%llu records were dropped (ring buffer full): the trace's "
			 "event stream is incomplete; the aggregate counters are complete (try "
			 "--ringbuf-kib)", (unsigned long long)es->ringbuf_drops);
		fn(msg, ctx);
	}
	if (es->instance_map_full || es->thread_map_full || es->span_overflow ||
	    es->stash_missing) {
		snprintf(msg, sizeof(msg), "lost evidence: instance map full %llu, thread map full "
			 "%llu, span overflow %llu, return without entry %llu",
			 (unsigned long long)es->instance_map_full,
			 (unsigned long long)es->thread_map_full,
			 (unsigned long long)es->span_overflow,
			 (unsigned long long)es->stash_missing);
		fn(msg, ctx);
	}
	if (r->res.write_errors) {
		snprintf(msg, sizeof(msg), "%llu trace writes failed",
			 (unsigned long long)r->res.write_errors);
		fn(msg, ctx);
	}
}

void recorder_progress__format(const struct recorder_progress *p, char *buf, size_t sz)
{
	int n;

	n = snprintf(buf, sz, "recording %.1fs: %.0f events/s, %llu records, %llu drops",
		     (double)p->elapsed_ns / 1e9, p->events_per_s, (unsigned long long)p->records,
		     (unsigned long long)p->drops);
	if (p->top_wait && n >= 0 && (size_t)n < sz)
		snprintf(buf + n, sz - (size_t)n, ", top wait: %s (%.1f ms)", p->top_wait,
			 (double)p->top_wait_ns / 1e6);
}
