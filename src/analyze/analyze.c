/* SPDX-License-Identifier: BSD-2-Clause */
/* analyze.c: ingest of records and snapshots into the analysis' state
 * (analyze_int.h). The time joins and the four diagnoses are in
 * diagnose*.c; docs/report.md explains every formula used; keep the two
 * in step.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "trace/trace.h"
#include "common/array.h"

#define DEF_LONG_HOLD_NS	(50ull * 1000 * 1000)
#define DEF_LEAK_AGE_NS		(100ull * 1000 * 1000)
#define DEF_WAKEUP_WINDOW_NS	(2ull * 1000 * 1000)
#define DEF_MAX_ITEMS		((size_t)4 << 20)

const char *finding_kind_str(enum finding_kind k)
{
	static const char *const n[] = {
		[FINDING_LONG_HOLD] = "long_hold", [FINDING_CONTENTION] = "contention",
		[FINDING_LEAK] = "leak", [FINDING_CHURN] = "churn",
		[FINDING_MODEL_SUSPECT] = "model_suspect", [FINDING_MODEL_STALE] = "model_stale",
	};
	return (unsigned)k < FINDING__COUNT ? n[k] : "?";
}

int an_vec_push(struct an_vec *v, const void *elem, size_t max, uint64_t *truncated)
{
	int err;

	if (v->n >= max) {
		(*truncated)++;
		return 0;
	}
	err = pb_array_grow(&v->v, &v->cap, v->n + 1, v->elem);
	if (err)
		return err;
	memcpy((char *)v->v + v->n * v->elem, elem, v->elem);
	v->n++;
	return 0;
}

/* ---- lifecycle ----------------------------------------------------------- */

struct analysis *analysis__new(const struct manifest *m, const struct analysis_opts *opts)
{
	struct analysis *a;
	size_t i, n_ev, n_res;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->m = m;
	if (opts)
		a->o = *opts;
	if (!a->o.long_hold_ns)
		a->o.long_hold_ns = DEF_LONG_HOLD_NS;
	if (!a->o.leak_age_ns)
		a->o.leak_age_ns = DEF_LEAK_AGE_NS;
	if (!a->o.wakeup_window_ns)
		a->o.wakeup_window_ns = DEF_WAKEUP_WINDOW_NS;
	if (!a->o.max_items)
		a->o.max_items = DEF_MAX_ITEMS;
	n_ev = m->n_events ? m->n_events : 1;
	n_res = m->n_resources ? m->n_resources : 1;
	a->conf = calloc(n_ev, sizeof(*a->conf));
	a->snap_desc = calloc(n_ev, sizeof(*a->snap_desc));
	a->ev_desc = calloc(n_ev, sizeof(*a->ev_desc));
	a->snap_res = calloc(n_res, sizeof(*a->snap_res));
	a->series = calloc(n_res, sizeof(*a->series));
	a->use_unmatched = calloc(n_res, sizeof(uint64_t));
	a->release_unmatched = calloc(n_res, sizeof(uint64_t));
	a->windowed = calloc(n_res, sizeof(bool));
	a->rwin = calloc(n_res, sizeof(*a->rwin));
	a->leak = calloc(n_res, sizeof(*a->leak));
	if (!a->conf || !a->snap_desc || !a->ev_desc || !a->snap_res || !a->series ||
	    !a->use_unmatched || !a->release_unmatched || !a->windowed || !a->rwin ||
	    !a->leak) {
		analysis__free(a);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < m->n_events; i++)
		a->conf[i] = m->events[i].confidence;
	for (i = 0; i < n_res; i++) {
		a->series[i].elem = sizeof(struct an_point_res);
		a->rwin[i].wins.elem = sizeof(struct an_win);
	}
	a->waits.elem = a->holds.elem = sizeof(struct an_span);
	a->uses.elem = a->releases.elem = a->wakeups.elem = sizeof(struct an_point);
	a->ios.elem = a->faults.elem = a->io_done.elem = sizeof(struct an_point);
	a->offcpu.elem = sizeof(struct an_offcpu);
	a->lives.elem = sizeof(struct an_life);
	return a;
}

static void free_findings(struct analysis *a)
{
	size_t i, j;

	for (i = 0; i < a->n_findings; i++) {
		struct finding *f = &a->findings[i];

		for (j = 0; j < f->n_evidence; j++) {
			free(f->evidence[j].key);
			free(f->evidence[j].unit);
			free(f->evidence[j].text);
		}
		free(f->evidence);
		free(f->descs);
		free(f->summary);
		free(f->label);
	}
	free(a->findings);
	a->findings = NULL;
	a->n_findings = 0;
}

void analysis__free(struct analysis *a)
{
	size_t i;

	if (!a)
		return;
	free_findings(a);
	if (a->series)
		for (i = 0; i < (a->m->n_resources ? a->m->n_resources : 1); i++)
			free(a->series[i].v);
	free(a->series);
	if (a->rwin)
		for (i = 0; i < (a->m->n_resources ? a->m->n_resources : 1); i++)
			free(a->rwin[i].wins.v);
	free(a->rwin);
	free(a->conf);
	free(a->leak);
	free(a->snap_desc);
	free(a->ev_desc);
	free(a->probe_cost_ns);
	free(a->probe_err_ns);
	free(a->probefx);
	free(a->snap_res);
	free(a->use_unmatched);
	free(a->release_unmatched);
	free(a->windowed);
	free(a->waits.v);
	free(a->holds.v);
	free(a->uses.v);
	free(a->releases.v);
	free(a->wakeups.v);
	free(a->io_done.v);
	free(a->ios.v);
	free(a->faults.v);
	free(a->offcpu.v);
	free(a->lives.v);
	free(a->life_hash);
	free(a);
}

void analysis__set_window(struct analysis *a, uint64_t start_ns, uint64_t end_ns)
{
	if (!a)
		return;
	a->win_start = start_ns;
	a->win_end = end_ns;
}

int analysis__set_confidence(struct analysis *a, uint32_t descriptor, enum pb_confidence c)
{
	if (!a || descriptor >= a->m->n_events || (unsigned)c > PB_CONF_DEGRADED)
		return -EINVAL;
	if (a->finished)
		return -EBUSY;
	a->conf[descriptor] = c;
	return 0;
}

int analysis__set_leak(struct analysis *a, uint32_t descriptor, const struct confidence_leak *l)
{
	int r;

	if (!a || !l || descriptor >= a->m->n_events)
		return -EINVAL;
	if (a->finished)
		return -EBUSY;
	r = a->m->events[descriptor].resource_idx;
	if (r < 0 || (size_t)r >= a->m->n_resources)
		return -EINVAL;
	if (l->windows >= a->leak[r].windows)
		a->leak[r] = *l;
	return 0;
}

const struct analysis_counts *analysis__counts(const struct analysis *a)
{
	return a ? &a->c : NULL;
}

const struct finding *analysis__findings(const struct analysis *a, size_t *n)
{
	if (n)
		*n = a ? a->n_findings : 0;
	return a ? a->findings : NULL;
}

/* ---- ingest: records ------------------------------------------------------ */

static void see_ts(struct analysis *a, uint64_t ts)
{
	if (!ts)
		return;
	if (!a->c.first_ts || ts < a->c.first_ts)
		a->c.first_ts = ts;
	if (ts > a->c.last_ts)
		a->c.last_ts = ts;
}

unsigned an_hist_bucket(uint64_t ns)
{
	unsigned b = 0;

	while (ns > 1 && b < PB_HIST_BUCKETS - 1) {
		ns >>= 1;
		b++;
	}
	return b;
}

static uint64_t life_hash_of(uint16_t res, uint64_t inst, uint64_t gen)
{
	uint64_t h = inst * 0x9e3779b97f4a7c15ull;

	h ^= (gen + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (uint64_t)res * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static int life_hash_grow(struct analysis *a)
{
	size_t cap = a->life_hash_cap ? a->life_hash_cap * 2 : 1024, i;
	size_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->lives.n; i++) {
		struct an_life *l = AN_AT(&a->lives, struct an_life, i);
		size_t j = life_hash_of(l->resource, l->instance, l->generation) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = i + 1;
	}
	free(a->life_hash);
	a->life_hash = h;
	a->life_hash_cap = cap;
	return 0;
}

void analysis__set_procs(struct analysis *a, const struct trace_proc *p, size_t n)
{
	a->procs = p;
	a->n_procs = n;
}

const char *an_who(const struct analysis *a, uint32_t tid, char *buf, size_t sz)
{
	const struct trace_proc *t = NULL, *proc = NULL;
	size_t i;

	buf[0] = 0;
	for (i = 0; i < a->n_procs; i++)
		if (a->procs[i].tid == tid)
			t = &a->procs[i];
	if (!t)
		return buf;
	for (i = 0; i < a->n_procs; i++)
		if (a->procs[i].pid == t->pid && a->procs[i].tid == t->pid)
			proc = &a->procs[i];
	snprintf(buf, sz, " (%s, pid %u)", t->comm[0] ? t->comm : proc && proc->comm[0] ?
		 proc->comm : "?", t->pid);
	return buf;
}

/* the process that names an instance of res: the event's (scope: process,
 * the default) or none (scope: shared) -- docs/manifest.md, SCOPE */
static uint32_t scope_pid(const struct analysis *a, uint16_t res, uint32_t pid)
{
	return res < a->m->n_resources && a->m->resources[res].scope == PB_SCOPE_SHARED ? 0 : pid;
}

/* the lifetime (res, instance, generation) of process spid, created when
 * `create` */
static struct an_life *life_get(struct analysis *a, uint16_t res, uint64_t inst, uint64_t gen,
				uint32_t spid, bool create)
{
	size_t j;

	if (a->life_hash_cap) {
		j = life_hash_of(res, inst, gen) & (a->life_hash_cap - 1);
		while (a->life_hash[j]) {
			struct an_life *l = AN_AT(&a->lives, struct an_life, a->life_hash[j] - 1);

			if (l->resource == res && l->instance == inst && l->generation == gen &&
			    l->spid == spid)
				return l;
			j = (j + 1) & (a->life_hash_cap - 1);
		}
	}
	if (!create || a->lives.n >= a->o.max_items) {
		if (create)
			a->c.truncated++;
		return NULL;
	}
	if ((a->lives.n + 1) * 2 > a->life_hash_cap && life_hash_grow(a))
		return NULL;
	{
		struct an_life l = { .instance = inst, .generation = gen, .resource = res,
				     .spid = spid };

		if (an_vec_push(&a->lives, &l, a->o.max_items, &a->c.truncated))
			return NULL;
	}
	j = life_hash_of(res, inst, gen) & (a->life_hash_cap - 1);
	while (a->life_hash[j])
		j = (j + 1) & (a->life_hash_cap - 1);
	a->life_hash[j] = a->lives.n;
	return AN_AT(&a->lives, struct an_life, a->lives.n - 1);
}

/* the descriptor's counters, as a snapshot would have them */
static void count_desc(struct analysis *a, struct pb_desc_stats *ds,
		       const struct pb_rec_resource *r)
{
	ds->hits++;
	ds->events++;
	ds->units += r->units;
	if (r->flags & PB_RF_NEW_GENERATION)
		ds->new_generations++;
	if (r->flags & PB_RF_NOT_ACTIVE)
		ds->not_active++;
	if (r->flags & PB_RF_DEREF_FAULT)
		ds->deref_faults++;
	if (r->flags & PB_RF_STATE_FULL)
		a->res_state_full_rec++;
}

/* a WAIT that ended: one span */
static int add_wait(struct analysis *a, struct pb_desc_stats *ds, const struct pb_rec_resource *r)
{
	uint64_t ts = r->hdr.ts_ns;
	struct an_span s = {
		.start = r->duration_ns <= ts ? ts - r->duration_ns : 0, .end = ts,
		.instance = r->instance, .generation = r->generation,
		.pid = r->hdr.pid, .tid = r->hdr.tid, .descriptor = r->descriptor,
		.resource = r->resource, .kind = PB_EV_WAIT,
	};

	if (!r->duration_ns && !(r->flags & PB_RF_SPAN_END))
		return 0;
	ds->total_ns += r->duration_ns;
	ds->hist[an_hist_bucket(r->duration_ns)]++;
	return an_vec_push(&a->waits, &s, a->o.max_items, &a->c.truncated);
}

/* an ACQUIRE opens (or pins again) the generation's lifetime */
static void add_acquire(struct analysis *a, const struct pb_rec_resource *r)
{
	struct an_life *l;

	if (r->flags & PB_RF_STATE_FULL)
		return;
	/* record --budget: between a close mark and the next open the
	 * resource's probes are being detached, in parallel (gov_window.c):
	 * a lifetime opened there would miss its USEs and RELEASE, so it is
	 * not opened (the window it belongs to is closed) */
	if (a->windowed[r->resource] && !a->rwin[r->resource].open_since) {
		a->c.window_unmatched++;
		return;
	}
	l = life_get(a, r->resource, r->instance, r->generation,
		     scope_pid(a, r->resource, r->hdr.pid), true);
	if (!l)
		return;
	if (!l->acquires) {
		l->t_first = r->hdr.ts_ns;
		l->pid = r->hdr.pid;
		l->tid = r->hdr.tid;
	}
	l->acquires++;
	if (!l->open) {
		l->open = true;
		l->t_open = r->hdr.ts_ns;
		l->uses_open = 0;
	}
	l->pins++;
}

static int add_use(struct analysis *a, const struct pb_rec_resource *r)
{
	struct an_point p = { .ts = r->hdr.ts_ns, .a = r->instance, .b = r->generation,
			      .pid = r->hdr.pid, .tid = r->hdr.tid, .extra = r->descriptor };
	struct an_life *l = life_get(a, r->resource, r->instance, r->generation,
				     scope_pid(a, r->resource, r->hdr.pid), false);

	if (l && l->open) {
		l->uses++;
		l->uses_open++;
	} else if (a->windowed[r->resource]) {
		a->c.window_unmatched++;	/* its ACQUIRE may be in a gap */
	} else {
		a->use_unmatched[r->resource]++;
	}
	return an_vec_push(&a->uses, &p, a->o.max_items, &a->c.truncated);
}

/* a RELEASE closes a hold (a span from the open period's start, or from
 * the record's own duration) and, at the last pin, the open period */
static int add_release(struct analysis *a, struct pb_desc_stats *ds,
		       const struct pb_rec_resource *r)
{
	uint64_t ts = r->hdr.ts_ns, start = 0;
	struct an_point p = { .ts = ts, .a = r->resource, .pid = r->hdr.pid, .tid = r->hdr.tid };
	struct an_life *l = life_get(a, r->resource, r->instance, r->generation,
				     scope_pid(a, r->resource, r->hdr.pid), false);
	int err = 0;

	if (l && l->open) {
		l->releases++;
		start = l->t_open;
		if (--l->pins == 0) {
			l->open = false;
			l->t_close = ts;
			l->closes++;
			if (!l->uses_open)
				l->churn_cycles++;
		}
	} else if (a->windowed[r->resource]) {
		a->c.window_unmatched++;
	} else {
		a->release_unmatched[r->resource]++;
	}
	if (r->duration_ns && r->duration_ns <= ts)
		start = ts - r->duration_ns;
	if (start > ts)		/* records out of order: an empty hold */
		start = ts;
	if (start) {
		struct an_span s = {
			.start = start, .end = ts, .instance = r->instance,
			.generation = r->generation, .pid = r->hdr.pid,
			.tid = r->owner_tid ? r->owner_tid : r->hdr.tid,
			.descriptor = r->descriptor, .resource = r->resource, .kind = PB_EV_ACQUIRE,
		};
		ds->total_ns += ts - start;
		ds->hist[an_hist_bucket(ts - start)]++;
		err = an_vec_push(&a->holds, &s, a->o.max_items, &a->c.truncated);
	}
	if (!err)
		err = an_vec_push(&a->releases, &p, a->o.max_items, &a->c.truncated);
	return err;
}

static int add_resource_rec(struct analysis *a, const struct pb_rec_resource *r)
{
	const struct pb_event *ev;
	struct pb_desc_stats *ds;

	if (r->descriptor >= a->m->n_events)
		return -EINVAL;
	ev = &a->m->events[r->descriptor];
	if (ev->resource_idx < 0 || (size_t)ev->resource_idx >= a->m->n_resources ||
	    r->resource != ev->resource_idx || r->kind != ev->kind)
		return -EINVAL;
	ds = &a->ev_desc[r->descriptor];
	count_desc(a, ds, r);
	switch (r->kind) {
	case PB_EV_WAIT:
		return add_wait(a, ds, r);
	case PB_EV_ACQUIRE:
		add_acquire(a, r);
		return 0;
	case PB_EV_USE:
		return add_use(a, r);
	case PB_EV_RELEASE:
		return add_release(a, ds, r);
	default:
		return -EINVAL;
	}
}

/* Copy a record out of its chunk (it may sit unaligned) once its header
 * says a type, version and size this analysis reads. -EINVAL (counted as
 * unknown or malformed) otherwise. */
static int copy_record(struct analysis *a, const struct pb_rec_hdr *rec, size_t len,
		       union pb_rec_any *u)
{
	static const size_t need[PB_REC__MAX] = {
		[PB_REC_RESOURCE] = sizeof(struct pb_rec_resource),
		[PB_REC_SCHED_SWITCH] = sizeof(struct pb_rec_sched),
		[PB_REC_WAKEUP] = sizeof(struct pb_rec_wakeup),
		[PB_REC_BLOCK_IO] = sizeof(struct pb_rec_block),
		[PB_REC_FAULT] = sizeof(struct pb_rec_fault),
		[PB_REC_EXIT] = sizeof(struct pb_rec_exit),
		/* counted only: the confidence controller reads these */
		[PB_REC_VIOLATION] = sizeof(struct pb_rec_violation),
		/* counted only: report --folded reads these (analyze/stacks.c) */
		[PB_REC_STACK] = sizeof(struct pb_rec_stack),
		[PB_REC_WINDOW] = sizeof(struct pb_rec_window),
		[PB_REC_WINDOW_STATS] = PB_REC_WINDOW_STATS_MIN,	/* + waits (appended) */
	};

	if (len < sizeof(struct pb_rec_hdr)) {
		a->c.malformed++;
		return -EINVAL;
	}
	memcpy(&u->h, rec, sizeof(u->h));
	if (u->h.type == 0 || u->h.type >= PB_REC__MAX || !need[u->h.type] || u->h.version < 1 ||
	    u->h.version > PB_EVENTS_VERSION) {
		/* versions 1 to 3 share every record layout (2 changed only
		 * snapshot counters, 3 added PB_REC_VIOLATION) */
		a->c.unknown_type++;
		return -EINVAL;
	}
	if (u->h.size < need[u->h.type] || u->h.size > len) {
		a->c.malformed++;
		return -EINVAL;
	}
	memcpy(u, rec, need[u->h.type]);
	if (u->h.type == PB_REC_WINDOW_STATS) {	/* the appended fields, or 0 */
		size_t full = sizeof(u->wst), have = u->h.size < full ? u->h.size : full;

		memset((char *)u + have, 0, full - have);
		memcpy((char *)u + need[u->h.type], (const char *)rec + need[u->h.type],
		       have - need[u->h.type]);
	}
	return 0;
}

/* A process exited: its open lifetimes of scope: process end with it
 * (not leaks: docs/record.md "Many processes"); shared ones stay open. */
static void end_process_lives(struct analysis *a, uint32_t pid, uint64_t ts)
{
	size_t i;

	for (i = 0; i < a->lives.n; i++) {
		struct an_life *l = AN_AT(&a->lives, struct an_life, i);

		if (!l->open || !l->spid || l->spid != pid)
			continue;
		l->open = false;
		l->pins = 0;
		l->t_close = ts;
		l->closes++;
		a->lives_ended_by_exit++;
	}
}

/* record --budget: a window of resource w->resource closed (its probes
 * detached): its open lifetimes end unknown, not leaked; any boundary
 * makes the resource windowed (unmatched USE/RELEASE are unknown) */
static void add_window(struct analysis *a, const struct pb_rec_window *w)
{
	size_t i;

	a->c.window_marks++;
	if (w->resource >= a->m->n_resources)
		return;
	a->windowed[w->resource] = true;
	a->rwin[w->resource].open_since = w->open ? w->hdr.ts_ns : 0;
	if (w->open)
		return;
	for (i = 0; i < a->lives.n; i++) {
		struct an_life *l = AN_AT(&a->lives, struct an_life, i);

		if (!l->open || l->resource != w->resource)
			continue;
		l->open = false;
		l->pins = 0;
		l->t_close = w->hdr.ts_ns;
		a->c.window_cut_lives++;
	}
}

/* record --budget (PB_REC_WINDOW_STATS): what a closed window of a resource saw: its
 * length and net growth (one sample of the leak estimate) and the
 * generations its close cut, with their ages (lower bounds of holds) */
static void add_window_stats(struct analysis *a, const struct pb_rec_window_stats *w)
{
	struct an_res_win *rw;
	struct an_win s;
	size_t i;

	if (w->resource >= a->m->n_resources || w->open_ns >= w->hdr.ts_ns)
		return;
	rw = &a->rwin[w->resource];
	a->windowed[w->resource] = true;
	s.w_s = (double)(w->hdr.ts_ns - w->open_ns) / 1e9;
	s.growth = (double)w->acquires - (double)w->releases;
	memcpy(s.cut_hist, w->cut_age_hist, sizeof(s.cut_hist));
	if (an_vec_push(&rw->wins, &s, a->o.max_items, &a->c.truncated))
		return;
	/* the counts of its probes ran until the detach completed */
	rw->obs_ns += (w->detached_ns > w->hdr.ts_ns ? w->detached_ns : w->hdr.ts_ns) - w->open_ns;
	rw->cut_lives += w->cut_lives;
	rw->cut_holders += w->cut_holders;
	if (w->cut_age_max_ns > rw->cut_age_max_ns)
		rw->cut_age_max_ns = w->cut_age_max_ns;
	for (i = 0; i < PB_HIST_BUCKETS; i++)
		rw->cut_hist[i] += w->cut_age_hist[i];
	for (i = 0; i < PB_HIST_BUCKETS; i++)	/* 0 in a shorter record */
		rw->open_hist[i] += w->open_cut_hist[i];
	if (w->hdr.size >= PB_REC_WINDOW_STATS_WAITS) {	/* a 424-byte record has no waits */
		rw->n_wait_win++;
		rw->waits += w->waits;
		rw->wait_ns += w->wait_ns;
	}
}

/* the OS records: off-CPU intervals, wakeups, block I/O, faults, exits */
static int add_os_rec(struct analysis *a, const union pb_rec_any *u)
{
	struct an_point p = { .ts = u->h.ts_ns, .pid = u->h.pid, .tid = u->h.tid };

	switch (u->h.type) {
	case PB_REC_SCHED_SWITCH:
		if (u->s.in && u->s.off_cpu_ns) {
			struct an_offcpu o = {
				.start = u->s.off_cpu_ns <= p.ts ? p.ts - u->s.off_cpu_ns : 0,
				.end = p.ts, .tid = p.tid, .pid = p.pid,
			};
			return an_vec_push(&a->offcpu, &o, a->o.max_items, &a->c.truncated);
		}
		return 0;
	case PB_REC_WAKEUP:
		p.a = u->w.wakee_tid;
		return an_vec_push(&a->wakeups, &p, a->o.max_items, &a->c.truncated);
	case PB_REC_BLOCK_IO:
		if (!u->b.complete) {
			p.a = u->b.bytes;
			return an_vec_push(&a->ios, &p, a->o.max_items, &a->c.truncated);
		}
		p.a = u->b.latency_ns;
		p.b = u->b.bytes;
		p.extra = u->b.write;
		return an_vec_push(&a->io_done, &p, a->o.max_items, &a->c.truncated);
	case PB_REC_FAULT:
		return an_vec_push(&a->faults, &p, a->o.max_items, &a->c.truncated);
	case PB_REC_EXIT:
		if (u->e.group_dead)
			end_process_lives(a, p.pid, p.ts);
		return 0;
	case PB_REC_WINDOW:
		add_window(a, &u->win);
		return 0;
	case PB_REC_WINDOW_STATS:
		add_window_stats(a, &u->wst);
		return 0;
	default:	/* PB_REC_VIOLATION: counted only */
		return 0;
	}
}

int analysis__add_record(struct analysis *a, const struct pb_rec_hdr *rec, size_t len)
{
	union pb_rec_any u;
	int err;

	if (!a || !rec)
		return -EINVAL;
	if (a->finished)
		return -EBUSY;
	err = copy_record(a, rec, len, &u);
	if (err)
		return err;
	if (u.h.type == PB_REC_RESOURCE) {
		err = add_resource_rec(a, &u.r);
		if (err == -EINVAL) {
			a->c.malformed++;
			return err;
		}
	} else {
		err = add_os_rec(a, &u);
	}
	if (err)
		return err;
	a->c.records++;
	a->c.by_type[u.h.type]++;
	see_ts(a, u.h.ts_ns);
	return 0;
}

/* ---- ingest: snapshots ---------------------------------------------------- */

int analysis__add_snapshot(struct analysis *a, uint64_t ts_ns,
			   const struct pb_desc_stats *per_desc, size_t n_desc,
			   const struct pb_res_stats *per_res, size_t n_res,
			   const struct pb_engine_stats *eng)
{
	size_t i;

	if (!a || (n_desc && !per_desc) || (n_res && !per_res))
		return -EINVAL;
	if (a->finished)
		return -EBUSY;
	if (n_desc > a->m->n_events)
		n_desc = a->m->n_events;
	if (n_res > a->m->n_resources)
		n_res = a->m->n_resources;
	if (n_desc) {
		memcpy(a->snap_desc, per_desc, n_desc * sizeof(*per_desc));
		a->desc_snapshots++;
	}
	if (n_res) {
		memcpy(a->snap_res, per_res, n_res * sizeof(*per_res));
		a->have_snap_res = true;
	}
	if (eng) {
		a->c.ringbuf_drops = eng->ringbuf_drops;
		a->c.instance_map_full = eng->instance_map_full;
		a->c.thread_map_full = eng->thread_map_full;
		a->c.span_overflow = eng->span_overflow;
		a->c.engine_records = eng->records;
		a->c.stacks = eng->stacks;
		a->c.stacks_rate_limited = eng->stacks_rate_limited;
		a->c.stacks_lost = eng->stacks_lost;
		a->c.stacks_failed = eng->stacks_failed;
		a->c.stacks_truncated = eng->stacks_truncated;
	}
	for (i = 0; (n_desc || n_res) && i < a->m->n_resources; i++) {
		struct an_point_res pt = { .ts = ts_ns };
		uint64_t acq = 0, rel = 0;	/* unsigned: hostile counts wrap, never overflow */
		size_t d;

		for (d = 0; d < n_desc; d++) {
			if (a->m->events[d].resource_idx != (int)i)
				continue;
			if (a->m->events[d].kind == PB_EV_ACQUIRE)
				acq += per_desc[d].events;
			else if (a->m->events[d].kind == PB_EV_RELEASE)
				rel += per_desc[d].events;
		}
		pt.imbalance = (int64_t)(acq - rel);
		if (i < n_res) {
			pt.live = per_res[i].live_instances;
			pt.units = per_res[i].outstanding_units;
		}
		if (an_vec_push(&a->series[i], &pt, a->o.max_items, &a->c.truncated))
			return -ENOMEM;
	}
	a->c.snapshots++;
	see_ts(a, ts_ns);
	return 0;
}
