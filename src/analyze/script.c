/* SPDX-License-Identifier: BSD-2-Clause */
/* script.c: `probity script` (script.h). Each item becomes one JSON object
 * whose keys are in a fixed order; the text form prints the same object as
 * "SECONDS PID/TID [CPU] TYPE key=value ...", so the two never disagree. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/script.h"
#include "common/diag.h"
#include "contract/manifest.h"
#include "trace/trace.h"
#include "validate/confidence.h"

struct script {
	const struct trace_script_opts *o;
	const struct manifest *m;
	FILE *out;
	struct trace_script_stats *st;
};

static const size_t rec_need[PB_REC__MAX] = {
	[PB_REC_RESOURCE] = sizeof(struct pb_rec_resource),
	[PB_REC_SCHED_SWITCH] = sizeof(struct pb_rec_sched),
	[PB_REC_WAKEUP] = sizeof(struct pb_rec_wakeup),
	[PB_REC_BLOCK_IO] = sizeof(struct pb_rec_block),
	[PB_REC_FAULT] = sizeof(struct pb_rec_fault),
	[PB_REC_EXIT] = sizeof(struct pb_rec_exit),
	[PB_REC_VIOLATION] = sizeof(struct pb_rec_violation),
	[PB_REC_STACK] = sizeof(struct pb_rec_stack),
	[PB_REC_WINDOW] = sizeof(struct pb_rec_window),
	[PB_REC_WINDOW_STATS] = PB_REC_WINDOW_STATS_MIN,	/* + waits (appended) */
};

static const char *const rec_name[PB_REC__MAX] = {
	[PB_REC_RESOURCE] = "resource", [PB_REC_SCHED_SWITCH] = "sched",
	[PB_REC_WAKEUP] = "wakeup", [PB_REC_BLOCK_IO] = "block_io",
	[PB_REC_FAULT] = "fault", [PB_REC_EXIT] = "exit", [PB_REC_VIOLATION] = "violation",
	[PB_REC_STACK] = "stack",
	[PB_REC_WINDOW] = "window", [PB_REC_WINDOW_STATS] = "window_stats",
};

static json_t *hex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* "key=value ..." of o after its first `skip` keys */
static void print_text(struct script *s, json_t *o, size_t skip)
{
	const char *k;
	json_t *v;
	size_t i = 0;

	json_object_foreach(o, k, v) {
		if (i++ < skip)
			continue;
		if (json_is_string(v) && !strpbrk(json_string_value(v), " \t\"="))
			fprintf(s->out, " %s=%s", k, json_string_value(v));
		else {
			char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

			fprintf(s->out, " %s=%s", k, d ? d : "?");
			free(d);
		}
	}
	fputc('\n', s->out);
}

/* one item out: o's first key is "type"; a record's (h != NULL) next
 * four are ts_ns, pid, tid, cpu, which the text form puts first as perf
 * script does */
static void emit(struct script *s, json_t *o, const char *type, const struct pb_rec_hdr *h)
{
	s->st->items++;
	if (!o)
		return;
	if (s->o->json) {
		json_dumpf(o, s->out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', s->out);
	} else if (h) {
		fprintf(s->out, "%" PRIu64 ".%09" PRIu64 " %" PRIu32 "/%" PRIu32 " [%" PRIu32 "] %s",
			(uint64_t)h->ts_ns / 1000000000u, (uint64_t)h->ts_ns % 1000000000u, h->pid, h->tid,
			h->cpu, type);
		print_text(s, o, 5);	/* type ts_ns pid tid cpu; comm stays as comm=NAME */
	} else {
		fputs(type, s->out);
		print_text(s, o, 1);
	}
	json_decref(o);
}

static json_t *lead(struct script *s, const char *type, const struct pb_rec_hdr *h)
{
	json_t *o = json_object();
	const char *comm;

	json_object_set_new(o, "type", json_string(type));
	set_u64(o, "ts_ns", h->ts_ns);
	set_u64(o, "pid", h->pid);
	set_u64(o, "tid", h->tid);
	set_u64(o, "cpu", h->cpu);
	comm = s->o->comm ? s->o->comm(s->o->comm_ctx, h->pid, h->tid) : NULL;
	if (comm)
		json_object_set_new(o, "comm", json_string(comm));
	return o;
}

static const char *event_id(const struct script *s, uint32_t d)
{
	return d < s->m->n_events ? s->m->events[d].id : "?";
}

static const char *resource_name(const struct script *s, uint32_t r)
{
	return r < s->m->n_resources ? s->m->resources[r].name : "?";
}

static void resource_fields(struct script *s, json_t *o, const struct pb_rec_resource *r)
{
	json_object_set_new(o, "kind", json_string(pb_event_kind_str((enum pb_event_kind)r->kind)));
	json_object_set_new(o, "descriptor", json_string(event_id(s, r->descriptor)));
	json_object_set_new(o, "resource", json_string(resource_name(s, r->resource)));
	json_object_set_new(o, "instance", hex(r->instance));
	set_u64(o, "generation", r->generation);
	set_u64(o, "units", r->units);
	if (r->kind == PB_EV_USE)
		json_object_set_new(o, "target", hex(r->target));
	if (r->duration_ns)
		set_u64(o, "duration_ns", r->duration_ns);
	if (r->owner_tid)
		set_u64(o, "owner_tid", r->owner_tid);
	json_object_set_new(o, "flags", hex(r->flags));
}

static void violation_fields(struct script *s, json_t *o, const struct pb_rec_violation *v)
{
	json_object_set_new(o, "invariant", json_string(pb_invariant_str(v->invariant)));
	json_object_set_new(o, "descriptor", json_string(event_id(s, v->descriptor)));
	json_object_set_new(o, "resource", json_string(resource_name(s, v->resource)));
	json_object_set_new(o, "kind", json_string(pb_event_kind_str((enum pb_event_kind)v->kind)));
	json_object_set_new(o, "instance", hex(v->instance));
	set_u64(o, "generation", v->generation);
	set_u64(o, "new_generation", v->new_generation);
	set_u64(o, "owner_tid", v->owner_tid);
	set_u64(o, "detail", v->detail);
}

/* A stack record: its event and the raw user return addresses (report
 * --folded symbolizes them). */
static void stack_fields(json_t *o, const struct pb_rec_stack *k)
{
	json_t *ips = json_array();
	unsigned int i, n = k->n_frames < PB_STACK_DEPTH ? k->n_frames : PB_STACK_DEPTH;

	set_u64(o, "descriptor", k->descriptor);
	set_u64(o, "event_kind", k->kind);
	json_object_set_new(o, "instance", hex(k->instance));
	set_u64(o, "generation", k->generation);
	set_u64(o, "duration_ns", k->duration_ns);
	for (i = 0; i < n; i++)
		json_array_append_new(ips, hex(k->ips[i]));
	json_object_set_new(o, "ips", ips);
}

/* Over 80 lines because it is one flat switch over every record type. */
static void emit_record(struct script *s, const struct pb_rec_hdr *rec, size_t len)
{
	union pb_rec_any u;
	json_t *o;

	s->st->records++;
	memset(&u, 0, sizeof(u));
	memcpy(&u.h, rec, len < sizeof(u.h) ? len : sizeof(u.h));
	if (len < sizeof(u.h) || !u.h.type || u.h.type >= PB_REC__MAX || !rec_name[u.h.type] ||
	    !u.h.version || u.h.version > PB_EVENTS_VERSION) {
		s->st->unknown_records++;
		o = lead(s, "unknown_record", &u.h);
		set_u64(o, "record_type", u.h.type);
		set_u64(o, "version", u.h.version);
		set_u64(o, "size", len);
		emit(s, o, "unknown_record", &u.h);
		return;
	}
	if (len < rec_need[u.h.type]) {
		s->st->short_records++;
		o = lead(s, "short_record", &u.h);
		json_object_set_new(o, "record_type", json_string(rec_name[u.h.type]));
		set_u64(o, "size", len);
		set_u64(o, "need", rec_need[u.h.type]);
		emit(s, o, "short_record", &u.h);
		return;
	}
	memcpy(&u, rec, rec_need[u.h.type]);
	if (u.h.type == PB_REC_WINDOW_STATS) {	/* the appended fields, or 0 */
		size_t full = sizeof(u.wst), have = len < full ? len : full;

		memset((char *)&u + have, 0, full - have);
		memcpy((char *)&u + rec_need[u.h.type], (const char *)rec + rec_need[u.h.type],
		       have - rec_need[u.h.type]);
	}
	s->st->by_type[u.h.type]++;
	o = lead(s, rec_name[u.h.type], &u.h);
	switch (u.h.type) {
	case PB_REC_RESOURCE:
		resource_fields(s, o, &u.r);
		break;
	case PB_REC_SCHED_SWITCH:
		json_object_set_new(o, "switch", json_string(u.s.in ? "in" : "out"));
		if (u.s.in)
			set_u64(o, "off_cpu_ns", u.s.off_cpu_ns);
		else
			set_u64(o, "prev_state", u.s.prev_state);
		break;
	case PB_REC_WAKEUP:
		set_u64(o, "wakee_pid", u.w.wakee_pid);
		set_u64(o, "wakee_tid", u.w.wakee_tid);
		break;
	case PB_REC_BLOCK_IO:
		json_object_set_new(o, "phase", json_string(u.b.complete ? "complete" : "issue"));
		json_object_set_new(o, "op", json_string(u.b.write ? "write" : "read"));
		set_u64(o, "sector", u.b.sector);
		set_u64(o, "bytes", u.b.bytes);
		set_u64(o, "dev", u.b.dev);
		if (u.b.complete)
			set_u64(o, "latency_ns", u.b.latency_ns);
		break;
	case PB_REC_FAULT:
		json_object_set_new(o, "address", hex(u.f.address));
		json_object_set_new(o, "ip", hex(u.f.ip));
		set_u64(o, "error_code", u.f.error_code);
		break;
	case PB_REC_EXIT:
		set_u64(o, "exit_code", u.e.exit_code);
		json_object_set_new(o, "group_dead", json_boolean(u.e.group_dead));
		break;
	case PB_REC_VIOLATION:
		violation_fields(s, o, &u.v);
		break;
	case PB_REC_STACK:
		stack_fields(o, &u.k);
		break;
	case PB_REC_WINDOW:	/* record --budget: a window boundary */
		set_u64(o, "resource_index", u.win.resource);
		if (u.win.resource < s->m->n_resources)
			json_object_set_new(o, "resource",
					    json_string(s->m->resources[u.win.resource].name));
		json_object_set_new(o, "edge", json_string(u.win.open ? "open" : "close"));
		set_u64(o, "descriptors", u.win.n_desc);
		set_u64(o, "duty_ppm", u.win.duty_ppm);
		break;
	case PB_REC_WINDOW_STATS:	/* record --budget: what a closed window saw */
		set_u64(o, "resource_index", u.wst.resource);
		if (u.wst.resource < s->m->n_resources)
			json_object_set_new(o, "resource",
					    json_string(s->m->resources[u.wst.resource].name));
		set_u64(o, "open_ns", u.wst.open_ns);
		set_u64(o, "detached_ns", u.wst.detached_ns);
		set_u64(o, "acquires", u.wst.acquires);
		set_u64(o, "releases", u.wst.releases);
		set_u64(o, "cut_lives", u.wst.cut_lives);
		set_u64(o, "cut_holders", u.wst.cut_holders);
		set_u64(o, "cut_age_max_ns", u.wst.cut_age_max_ns);
		set_u64(o, "waits", u.wst.waits);
		set_u64(o, "wait_ns", u.wst.wait_ns);
		set_u64(o, "open_cuts", u.wst.open_cuts);
		set_u64(o, "open_cut_max_ns", u.wst.open_cut_max_ns);
		break;
	}
	emit(s, o, rec_name[u.h.type], &u.h);
}

static void emit_snapshot(struct script *s, const struct trace_snapshot *sn)
{
	json_t *o = json_object(), *res = json_array();
	uint32_t i;

	s->st->snapshots++;
	json_object_set_new(o, "type", json_string("snapshot"));
	set_u64(o, "ts_ns", sn->ts_ns);
	set_u64(o, "descriptors", sn->n_desc);
	for (i = 0; i < sn->n_res; i++)
		json_array_append_new(res, json_pack("{s:s, s:I, s:I}", "resource", resource_name(s, i),
						     "live_instances", (json_int_t)sn->res[i].live_instances,
						     "outstanding_units",
						     (json_int_t)sn->res[i].outstanding_units));
	json_object_set_new(o, "resources", res);
	set_u64(o, "engine_records", sn->engine.records);
	set_u64(o, "ringbuf_drops", sn->engine.ringbuf_drops);
	set_u64(o, "instance_map_full", sn->engine.instance_map_full);
	set_u64(o, "thread_map_full", sn->engine.thread_map_full);
	emit(s, o, "snapshot", NULL);
}

static void emit_header(struct script *s, const struct trace_reader *r)
{
	const struct trace_header *h = trace_reader__header(r);
	const struct trace_plan_desc *d;
	char sha[65];
	size_t n, i;
	json_t *o = json_object();

	for (i = 0; i < 32; i++)
		snprintf(sha + 2 * i, 3, "%02x", h->manifest_sha256[i]);
	json_object_set_new(o, "type", json_string("header"));
	json_object_set_new(o, "manifest", json_string(s->m->name ? s->m->name : ""));
	json_object_set_new(o, "manifest_sha256", json_string(sha));
	set_u64(o, "pid", h->pid);
	set_u64(o, "start_mono_ns", h->start_mono_ns);
	set_u64(o, "start_real_ns", h->start_real_ns);
	json_object_set_new(o, "events_mode", json_boolean(h->flags & TRACE_F_EVENTS));
	json_object_set_new(o, "spawned", json_boolean(h->flags & TRACE_F_SPAWNED));
	set_u64(o, "events_version", h->events_version);
	emit(s, o, "header", NULL);
	d = trace_reader__descriptors(r, &n);
	for (i = 0; d && i < n; i++) {
		o = json_object();
		json_object_set_new(o, "type", json_string("descriptor"));
		set_u64(o, "index", i);
		json_object_set_new(o, "id", json_string(event_id(s, d[i].event)));
		json_object_set_new(o, "kind", json_string(d[i].event < s->m->n_events ?
			pb_event_kind_str(s->m->events[d[i].event].kind) : "?"));
		json_object_set_new(o, "confidence", json_string(pb_confidence_str(
			d[i].confidence <= PB_CONF_DEGRADED ? d[i].confidence : PB_CONF_CANDIDATE)));
		json_object_set_new(o, "refused", json_boolean(d[i].status));
		set_u64(o, "sites", d[i].n_sites);
		emit(s, o, "descriptor", NULL);
	}
}

/* the recorder's process table: one line per process or thread it followed */
static void emit_procs(struct script *s, const struct trace_proc *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char comm[sizeof(p[i].comm) + 1];

		memcpy(comm, p[i].comm, sizeof(p[i].comm));
		comm[sizeof(p[i].comm)] = 0;
		emit(s, json_pack("{s:s, s:I, s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:i}", "type", "process",
				  "pid", (json_int_t)p[i].pid, "tid", (json_int_t)p[i].tid,
				  "ppid", (json_int_t)p[i].ppid, "comm", comm,
				  "first_ns", (json_int_t)p[i].first_ts, "exit_ns", (json_int_t)p[i].exit_ts,
				  "events", (json_int_t)p[i].events, "held_at_exit", (json_int_t)p[i].held_at_exit,
				  "exit_code", (int)p[i].exit_code), "process", NULL);
	}
}

/* One line per executable mapping (TRACE_CHUNK_MAPS, record --stacks). */
static void emit_maps(struct script *s, const struct trace_map *m, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		char bid[2 * sizeof(m[i].build_id) + 1] = "";

		for (j = 0; j < m[i].build_id_len && j < sizeof(m[i].build_id); j++)
			sprintf(bid + 2 * j, "%02x", m[i].build_id[j]);
		emit(s, json_pack("{s:s, s:I, s:o, s:o, s:o, s:s, s:s}", "type", "mapping",
				  "pid", (json_int_t)m[i].pid, "start", hex(m[i].start),
				  "end", hex(m[i].end), "offset", hex(m[i].offset),
				  "build_id", bid, "path", m[i].path), "mapping", NULL);
	}
}

static void emit_item(struct script *s, const struct trace_item *it)
{
	json_t *o;

	switch (it->type) {
	case TRACE_ITEM_RECORD:
		emit_record(s, it->rec, it->rec_len);
		break;
	case TRACE_ITEM_SNAPSHOT:
		emit_snapshot(s, &it->snap);
		break;
	case TRACE_ITEM_NOTE:
		s->st->notes++;
		emit(s, json_pack("{s:s, s:s}", "type", "note", "text", it->note ? it->note : ""), "note", NULL);
		break;
	case TRACE_ITEM_PROCS:
		emit_procs(s, it->procs, it->n_procs);
		break;
	case TRACE_ITEM_MAPS:
		emit_maps(s, it->maps, it->n_maps);
		break;
	case TRACE_ITEM_COST:	/* the cost model: 'report' shows it */
		break;
	case TRACE_ITEM_END:
		s->st->ended = true;
		o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:i, s:i}", "type", "end",
			      "end_mono_ns", (json_int_t)it->end.end_mono_ns,
			      "records", (json_int_t)it->end.records,
			      "ringbuf_drops", (json_int_t)it->end.ringbuf_drops,
			      "snapshots", (json_int_t)it->end.snapshots,
			      "stop_reason", (int)it->end.stop_reason,
			      "target_status", (int)it->end.target_status);
		emit(s, o, "end", NULL);
		break;
	}
}

/* what the reader skipped or where it stopped, as items of their own */
static void emit_tail(struct script *s, const struct trace_reader *r)
{
	const uint32_t *types;
	const char *cut;
	size_t n, i;
	json_t *arr;

	s->st->unknown_chunks = trace_reader__unknown_chunks(r, &types, &n);
	if (s->st->unknown_chunks) {
		arr = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(arr, json_integer(types[i]));
		emit(s, json_pack("{s:s, s:I, s:o}", "type", "unknown_chunks", "count",
				  (json_int_t)s->st->unknown_chunks, "chunk_types", arr), "unknown_chunks", NULL);
	}
	cut = trace_reader__ended_cleanly(r) ? NULL : trace_reader__cut_reason(r);
	if (!trace_reader__ended_cleanly(r)) {
		snprintf(s->st->cut_reason, sizeof(s->st->cut_reason), "%s",
			 cut ? cut : "no end chunk: the recording was cut short");
		emit(s, json_pack("{s:s, s:s}", "type", "cut", "reason", s->st->cut_reason), "cut", NULL);
	}
}

static struct manifest *embedded_manifest(const struct trace_reader *r)
{
	struct manifest *m = NULL;
	struct diags *d = diags__new();
	const void *bytes;
	size_t len;

	bytes = trace_reader__manifest(r, &len);
	if (d && bytes && manifest__parse("embedded manifest", bytes, len, &m, d))
		m = NULL;
	diags__free(d);
	return m;
}

int trace_script__run(const char *path, const struct trace_script_opts *o, FILE *out,
		      struct trace_script_stats *st, char *err, size_t err_sz)
{
	struct script s = { .o = o, .out = out, .st = st };
	struct trace_reader *r;
	struct trace_item it;
	int ret;

	memset(st, 0, sizeof(*st));
	r = trace_reader__open(path);
	if (!r) {
		ret = -errno;
		snprintf(err, err_sz, "%s: %s", path, ret == -EBADMSG ? "not a probity trace, or its "
			 "header is corrupt" : ret == -EPROTONOSUPPORT ? "trace written by a newer probity" :
			 strerror(-ret));
		return ret;
	}
	s.m = embedded_manifest(r);
	if (!s.m) {
		snprintf(err, err_sz, "%s: the embedded manifest does not parse", path);
		ret = -EBADMSG;
		goto out;
	}
	emit_header(&s, r);
	while ((ret = trace_reader__next(r, &it)) > 0)
		emit_item(&s, &it);
	if (ret < 0) {
		snprintf(err, err_sz, "%s: %s", path, strerror(-ret));
		goto out;
	}
	emit_tail(&s, r);
	ret = ferror(out) ? -EIO : 0;
	if (ret)
		snprintf(err, err_sz, "write: %s", strerror(EIO));
out:
	manifest__free((struct manifest *)s.m);
	trace_reader__free(r);
	return ret;
}
