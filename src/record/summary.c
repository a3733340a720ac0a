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
	res->procs = r->procs;
	res->n_procs = r->n_procs;
	for (uint32_t i = 0; i < r->snap.n_res; i++) {
		res->exit_ended += r->snap.res[i].exit_ended;
		res->exit_outlived += r->snap.res[i].exit_outlived;
	}
	res->max_instances = r->mem.max_instances;
	res->peak_live = r->peak_live > 0 ? (uint64_t)r->peak_live : 0;
	res->instance_map_bytes = r->mem.instance_bytes;
	res->maps_bytes = r->mem.maps_bytes;
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

/* processes recorded (threads are in the trace): [{pid, comm, events, ...}] */
static json_t *procs_json(const struct recorder_result *res)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < res->n_procs; i++) {
		const struct trace_proc *p = &res->procs[i];

		if (p->tid != p->pid)
			continue;
		json_array_append_new(a, json_pack("{s:i, s:s, s:I, s:i, s:b, s:I}",
			"pid", (int)p->pid, "comm", p->comm, "events", (json_int_t)p->events,
			"ppid", (int)p->ppid, "exited", (p->flags & PB_PROC_EXITED) != 0,
			"held_at_exit", (json_int_t)p->held_at_exit));
	}
	return a;
}

/* instance-map size and the memory the kernel charges for the maps */
static json_t *memory_json(const struct recorder_result *res)
{
	return json_pack("{s:I, s:I, s:I, s:f, s:I}",
		"max_instances", (json_int_t)res->max_instances,
		"peak_live_instances", (json_int_t)res->peak_live,
		"instance_map_bytes", (json_int_t)res->instance_map_bytes,
		"bytes_per_instance", res->max_instances ?
			(double)res->instance_map_bytes / (double)res->max_instances : 0.0,
		"maps_bytes", (json_int_t)res->maps_bytes);
}

/* processes, exits, memory: added to the summary object o */
static void multi_json(json_t *o, const struct recorder_result *res)
{
	const struct pb_engine_stats *es = &res->engine;

	json_object_set_new(o, "processes", procs_json(res));
	json_object_set_new(o, "exits", json_pack("{s:I, s:I, s:I}",
		"processes_exited", (json_int_t)es->procs_exited,
		"instances_ended_by_exit", (json_int_t)res->exit_ended,
		"shared_outlived_process", (json_int_t)res->exit_outlived));
	json_object_set_new(o, "memory", memory_json(res));
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
		"lost", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"instance_map_full", (json_int_t)es->instance_map_full,
			"process_map_full", (json_int_t)es->proc_map_full,
			"processes_outside_cgroup", (json_int_t)es->procs_excluded,
			"not_active_unjudged", (json_int_t)es->lost_unjudged,
			"thread_map_full", (json_int_t)es->thread_map_full,
			"span_overflow", (json_int_t)es->span_overflow,
			"return_without_entry", (json_int_t)es->stash_missing,
			"write_errors", (json_int_t)res->write_errors));
	if (o)
		json_object_set_new(o, "confidence", confidence_json(res));
	if (o)
		json_object_set_new(o, "stacks", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
			"per_second", (json_int_t)r->o.stacks_per_sec,
			"recorded", (json_int_t)es->stacks,
			"rate_limited", (json_int_t)es->stacks_rate_limited,
			"lost", (json_int_t)es->stacks_lost, "failed", (json_int_t)es->stacks_failed,
			"truncated", (json_int_t)es->stacks_truncated));
	if (o)
		multi_json(o, res);
	if (o && r->env)
		json_object_set_new(o, "envelope", envelope_watch__json(r->env));
	if (o && r->gov) {
		json_t *g = governor__report_json(r->gov);

		if (g) {
			json_object_set_new(g, "window_unjudged", json_integer((json_int_t)
					    es->window_unjudged));
			json_object_set_new(g, "hold_window", governor__hold_json(r->gov));
		}
		json_object_set_new(o, "budget", g);
	}
	if (o)
		json_object_set_new(o, "cost", recorder_cost_json(r));
	return o;
}

#define SUMMARY_PROCS	8	/* processes listed in the text summary */

/* "processes: 3 (1 exited): 4211 postgres 1200 events, ..." */
static void print_procs(const struct recorder_result *res, FILE *out)
{
	size_t i, n = 0, shown = 0, exited = 0;

	for (i = 0; i < res->n_procs; i++)
		if (res->procs[i].tid == res->procs[i].pid) {
			n++;
			exited += (res->procs[i].flags & PB_PROC_EXITED) != 0;
		}
	if (!n)
		return;
	fprintf(out, "processes: %zu (%zu exited)", n, exited);
	for (i = 0; i < res->n_procs && shown < SUMMARY_PROCS; i++) {
		const struct trace_proc *p = &res->procs[i];

		if (p->tid != p->pid)
			continue;
		fprintf(out, "%s %u %s %llu events%s", shown ? "," : ":", p->pid,
			p->comm[0] ? p->comm : "?", (unsigned long long)p->events,
			p->flags & PB_PROC_EXITED ? " (exited)" : "");
		shown++;
	}
	fprintf(out, "%s\n", shown < n ? ", ..." : "");
	if (res->exit_ended || res->exit_outlived)
		fprintf(out, "exits: %llu instances ended with their process (not leaks); %llu "
			"shared instances outlived the process that acquired them (leak "
			"candidates)\n", (unsigned long long)res->exit_ended,
			(unsigned long long)res->exit_outlived);
}

void recorder__summary_print(const struct recorder *r, FILE *out)
{
	const struct recorder_result *res = &r->res;
	size_t i;

	char from[48];
	size_t k, np = 0;

	for (k = 0; k < res->n_procs; k++)
		np += res->procs[k].pid == res->procs[k].tid;
	if (res->pid && np <= 1)
		snprintf(from, sizeof(from), "pid %d", res->pid);
	else
		snprintf(from, sizeof(from), "%zu process%s", np, np == 1 ? "" : "es");
	fprintf(out, "recorded %llu events in %.2f s from %s (stopped by %s): %llu records, "
		"%llu snapshots, %llu drops -> %s\n",
		(unsigned long long)res->events, (double)res->duration_ns / 1e9, from,
		stop_str(res->stopped_by), (unsigned long long)res->records,
		(unsigned long long)res->snapshots, (unsigned long long)res->engine.ringbuf_drops,
		r->o.output);
	if (res->top_wait)
		fprintf(out, "top wait: %s (%.1f ms in WAIT spans)\n", res->top_wait,
			(double)res->top_wait_ns / 1e6);
	print_procs(res, out);
	if (r->o.stacks_per_sec)
		fprintf(out, "stacks: %llu recorded; not taken: %llu over --stacks %u/s, %llu lost "
			"(ring buffer full), %llu without a user stack\n",
			(unsigned long long)res->engine.stacks,
			(unsigned long long)res->engine.stacks_rate_limited, r->o.stacks_per_sec,
			(unsigned long long)res->engine.stacks_lost,
			(unsigned long long)res->engine.stacks_failed);
	fprintf(out, "instance map: %llu entries, %.1f MiB locked (%.0f B per tracked instance); "
		"all maps %.1f MiB\n", (unsigned long long)res->max_instances,
		(double)res->instance_map_bytes / (1 << 20),
		res->max_instances ? (double)res->instance_map_bytes / (double)res->max_instances : 0,
		(double)res->maps_bytes / (1 << 20));
	recorder_cost_print(r, out);
	for (i = 0; i < res->n_confidence; i++)
		fprintf(out, "confidence: %s is %s (%s)\n", res->confidence[i].id,
			pb_confidence_str(res->confidence[i].state),
			res->confidence[i].reason ? res->confidence[i].reason : "");
	envelope_watch__print(r->env, out);
	if (r->gov) {
		governor__report_print(r->gov, out);
		if (res->engine.window_unjudged)
			fprintf(out, "  %llu USE/RELEASE whose ACQUIRE, or expectations whose next "
				"event, may have fallen between windows: unknown, not violations\n",
				(unsigned long long)res->engine.window_unjudged);
	}
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
	if (es->instance_map_full) {
		snprintf(msg, sizeof(msg), "lost identities: the instance map (%llu entries) was "
			 "full (or an entry raced) %llu times: those events are counted but not "
			 "tracked (try "
			 "--max-instances); %llu USE/RELEASE of instances not active were not "
			 "judged (maybe a lost ACQUIRE's)", (unsigned long long)r->res.max_instances,
			 (unsigned long long)es->instance_map_full,
			 (unsigned long long)es->lost_unjudged);
		fn(msg, ctx);
	}
	if (es->proc_map_full) {
		snprintf(msg, sizeof(msg), "lost evidence: %llu processes could not be tracked "
			 "(process map full): their OS effects and exits are not joined",
			 (unsigned long long)es->proc_map_full);
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
