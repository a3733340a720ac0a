/* SPDX-License-Identifier: BSD-2-Clause */
/* output.c: the analysis as JSON (probity -j report) and as text. The JSON
 * shape is documented in docs/report.md. */
#include <string.h>
#include "analyze/analyze_int.h"
#include "trace/trace.h"

/* rounded for stable JSON; no libm in the link */
static double round_to(double x, double scale)
{
	double y = x * scale;

	return (double)(long long)(y < 0 ? y - 0.5 : y + 0.5) / scale;
}

static json_t *finding_to_json(const struct finding *f)
{
	json_t *o = json_object(), *ev = json_array(), *ds = json_array();
	size_t i;

	if (!o || !ev || !ds) {
		json_decref(o);
		json_decref(ev);
		json_decref(ds);
		return NULL;
	}
	json_object_set_new(o, "kind", json_string(finding_kind_str(f->kind)));
	json_object_set_new(o, "diagnosis", json_string(finding_kind_str(f->diagnosis)));
	json_object_set_new(o, "resource", json_string(f->resource_name));
	json_object_set_new(o, "score", json_real(round_to(f->score, 100)));
	json_object_set_new(o, "severity", json_real(round_to(f->severity, 100)));
	json_object_set_new(o, "certainty", json_real(round_to(f->certainty, 1000)));
	json_object_set_new(o, "summary", json_string(f->summary ? f->summary : ""));
	json_object_set_new(o, "label", f->label ? json_string(f->label) : json_null());
	for (i = 0; i < f->n_evidence; i++) {
		const struct finding_evidence *e = &f->evidence[i];

		json_array_append_new(ev, json_pack("{s:s, s:f, s:s, s:s}", "key", e->key,
						    "value", e->value == e->value ? e->value : 0.0,
						    "unit", e->unit, "text", e->text));
	}
	json_object_set_new(o, "evidence", ev);
	for (i = 0; i < f->n_descs; i++) {
		const struct finding_desc *d = &f->descs[i];

		json_array_append_new(ds, json_pack("{s:i, s:s, s:s, s:s}", "descriptor",
						    (json_int_t)d->descriptor, "id", d->id ? d->id : "",
						    "kind", pb_event_kind_str(d->kind),
						    "confidence", pb_confidence_str(d->confidence)));
	}
	json_object_set_new(o, "descriptors", ds);
	return o;
}

json_t *analysis__to_json(const struct analysis *a)
{
	return analysis__to_json_top(a, 0);
}

json_t *analysis__to_json_top(const struct analysis *a, size_t max_findings)
{
	const struct analysis_counts *c;
	json_t *o, *arr, *cnt;
	size_t i, n;

	if (!a)
		return NULL;
	c = &a->c;
	o = json_object();
	arr = json_array();
	cnt = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"records", (json_int_t)c->records,
			"resource_events", (json_int_t)c->by_type[PB_REC_RESOURCE],
			"sched_records", (json_int_t)c->by_type[PB_REC_SCHED_SWITCH],
			"wakeups", (json_int_t)c->by_type[PB_REC_WAKEUP],
			"block_io", (json_int_t)c->by_type[PB_REC_BLOCK_IO],
			"faults", (json_int_t)c->by_type[PB_REC_FAULT],
			"unknown_type", (json_int_t)c->unknown_type,
			"malformed", (json_int_t)c->malformed,
			"truncated", (json_int_t)c->truncated,
			"snapshots", (json_int_t)c->snapshots,
			"ringbuf_drops", (json_int_t)c->ringbuf_drops,
			"instance_map_full", (json_int_t)c->instance_map_full,
			"thread_map_full", (json_int_t)c->thread_map_full,
			"state_full", (json_int_t)c->state_full);
	if (!o || !arr || !cnt) {
		json_decref(o);
		json_decref(arr);
		json_decref(cnt);
		return NULL;
	}
	n = max_findings && max_findings < a->n_findings ? max_findings : a->n_findings;
	for (i = 0; i < n; i++)
		json_array_append_new(arr, finding_to_json(&a->findings[i]));
	json_object_set_new(cnt, "stacks", json_pack("{s:I, s:I, s:I, s:I, s:I}",
		"recorded", (json_int_t)c->stacks, "rate_limited", (json_int_t)c->stacks_rate_limited,
		"lost", (json_int_t)c->stacks_lost, "failed", (json_int_t)c->stacks_failed,
		"truncated", (json_int_t)c->stacks_truncated));
	if (c->window_marks)	/* record --budget: what the windows left unknown */
		json_object_set_new(cnt, "windows", json_pack("{s:I, s:I, s:I}",
				    "marks", (json_int_t)c->window_marks,
				    "lifetimes_cut_unknown", (json_int_t)c->window_cut_lives,
				    "unmatched_unknown", (json_int_t)c->window_unmatched));
	json_object_set_new(o, "counts", cnt);
	json_object_set_new(o, "first_ts_ns", json_integer((json_int_t)c->first_ts));
	json_object_set_new(o, "last_ts_ns", json_integer((json_int_t)c->last_ts));
	json_object_set_new(o, "findings", arr);
	json_object_set_new(o, "probe_effect", an_probefx_json(a));
	return o;
}

void analysis__print(const struct analysis *a, FILE *out, size_t top)
{
	const struct analysis_counts *c = &a->c;
	size_t i, j, n = a->n_findings;

	if (c->ringbuf_drops || c->instance_map_full || c->thread_map_full || c->state_full ||
	    c->span_overflow)
		fprintf(out, "lost evidence: %llu ring-buffer drops, instance map full %llu, thread map full %llu, "
			"identity not tracked %llu, WAIT nesting overflow %llu\n",
			(unsigned long long)c->ringbuf_drops, (unsigned long long)c->instance_map_full,
			(unsigned long long)c->thread_map_full, (unsigned long long)c->state_full,
			(unsigned long long)c->span_overflow);
	if (c->stacks_rate_limited || c->stacks_lost || c->stacks_failed || c->stacks_truncated)
		fprintf(out, "stacks: %llu recorded, %llu over the rate limit (record --stacks), "
			"%llu lost (ring buffer full), %llu without a user stack, %llu cut at %d frames\n",
			(unsigned long long)c->stacks, (unsigned long long)c->stacks_rate_limited,
			(unsigned long long)c->stacks_lost, (unsigned long long)c->stacks_failed,
			(unsigned long long)c->stacks_truncated, PB_STACK_DEPTH);
	if (c->window_marks)
		fprintf(out, "windows (record --budget): %llu boundaries; %llu lifetimes cut by a "
			"window edge and %llu USE/RELEASE without their ACQUIRE are unknown (never "
			"leaks or violations); a windowed resource's findings are estimates from "
			"its windows\n",
			(unsigned long long)c->window_marks,
			(unsigned long long)c->window_cut_lives,
			(unsigned long long)c->window_unmatched);
	if (c->malformed || c->unknown_type || c->truncated)
		fprintf(out, "skipped: %llu malformed records, %llu of unknown type; %llu not kept (memory cap)\n",
			(unsigned long long)c->malformed, (unsigned long long)c->unknown_type,
			(unsigned long long)c->truncated);
	an_probefx_print(a, out);
	if (!n) {
		fprintf(out, "no findings\n");
		return;
	}
	if (top && top < n)
		n = top;
	for (i = 0; i < n; i++) {
		const struct finding *f = &a->findings[i];

		fprintf(out, "\n#%zu %s  %s  score %.1f (severity %.1f x certainty %.2f)\n", i + 1,
			finding_kind_str(f->kind), f->resource_name, f->score, f->severity, f->certainty);
		fprintf(out, "   %s\n", f->summary ? f->summary : "");
		if (f->label)
			fprintf(out, "   %s\n", f->label);
		for (j = 0; j < f->n_evidence; j++)
			fprintf(out, "   - %s\n", f->evidence[j].text);
		fprintf(out, "   descriptors:");
		for (j = 0; j < f->n_descs; j++)
			fprintf(out, "%s %s (%s, %s)", j ? "," : "", f->descs[j].id,
				pb_event_kind_str(f->descs[j].kind),
				pb_confidence_str(f->descs[j].confidence));
		fprintf(out, "\n");
	}
	if (n < a->n_findings)
		fprintf(out, "\n(%zu more findings; --top to show them)\n", a->n_findings - n);
}

void analysis__set_comm(struct analysis *a, analysis_comm_fn fn, void *ctx)
{
	if (!a)
		return;
	a->comm = fn;
	a->comm_ctx = ctx;
}

/* the trace's own process table (analysis__set_procs) names a thread, or
 * failing that its process */
static const char *procs_comm(const struct analysis *a, uint32_t pid, uint32_t tid)
{
	const char *by_pid = NULL;
	size_t i;

	for (i = 0; i < a->n_procs; i++) {
		const struct trace_proc *p = &a->procs[i];

		if (!p->comm[0])
			continue;
		if (p->tid == tid && (!pid || p->pid == pid))
			return p->comm;
		if (pid && p->pid == pid && p->tid == pid)
			by_pid = p->comm;
	}
	return by_pid;
}

const char *analysis__comm(const struct analysis *a, uint32_t pid, uint32_t tid)
{
	if (!a)
		return NULL;
	if (a->comm)
		return a->comm(a->comm_ctx, pid, tid);
	return procs_comm(a, pid, tid);
}

const char *an_tid_label(const struct analysis *a, uint32_t pid, uint32_t tid, char *buf, size_t sz)
{
	const char *comm = analysis__comm(a, pid, tid);

	if (comm)
		snprintf(buf, sz, "tid %u (%s)", tid, comm);
	else
		snprintf(buf, sz, "tid %u", tid);
	return buf;
}
