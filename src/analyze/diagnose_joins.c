/* SPDX-License-Identifier: BSD-2-Clause */
/* diagnose_joins.c: the evidence of one resource (diagnose_int.h):
 * aggregates from snapshots, and the time joins of --events records (WAIT
 * spans with holds, off-CPU intervals, wakeups and block I/O; lifetimes).
 * Formulas are documented in docs/report.md ("How findings are computed").
 */
#include <stdlib.h>
#include <string.h>
#include "analyze/diagnose_int.h"

/* ---- sorting and lookups -------------------------------------------------- */

static int cmp_u64p(const void *x, const void *y)
{
	return cmp_u64(*(const uint64_t *)x, *(const uint64_t *)y);
}

static int cmp_span_tid(const void *x, const void *y)
{
	const struct an_span *a = x, *b = y;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->start, b->start);
}

static int cmp_span_res(const void *x, const void *y)
{
	const struct an_span *a = x, *b = y;

	return cmp_u64(a->resource, b->resource) ?: cmp_u64(a->start, b->start) ?:
	       cmp_u64(a->tid, b->tid);
}

static int cmp_point_tid(const void *x, const void *y)
{
	const struct an_point *a = x, *b = y;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->ts, b->ts);
}

static int cmp_point_a(const void *x, const void *y)	/* wakeups: by wakee */
{
	const struct an_point *a = x, *b = y;

	return cmp_u64(a->a, b->a) ?: cmp_u64(a->ts, b->ts);
}

static int cmp_offcpu(const void *x, const void *y)
{
	const struct an_offcpu *a = x, *b = y;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->start, b->start);
}

/* first point with (key, ts) >= (tid, ts); key is tid, or wakee when by_a */
static size_t point_lb(const struct an_vec *v, uint64_t tid, uint64_t ts, bool by_a)
{
	const struct an_point *p = v->v;
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k = by_a ? p[mid].a : p[mid].tid;

		if (k < tid || (k == tid && p[mid].ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t count_points(const struct an_vec *v, uint32_t tid, uint64_t s, uint64_t e,
			   uint64_t *sum_a)
{
	const struct an_point *p = v->v;
	size_t i = point_lb(v, tid, s, false), n = 0;

	for (; i < v->n && p[i].tid == tid && p[i].ts <= e; i++) {
		n++;
		if (sum_a)
			*sum_a += p[i].a;
	}
	return n;
}

static uint64_t offcpu_overlap(const struct an_vec *v, uint32_t tid, uint64_t s, uint64_t e)
{
	const struct an_offcpu *o = v->v;
	size_t lo = 0, hi = v->n;
	uint64_t sum = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o[mid].tid < tid || (o[mid].tid == tid && o[mid].start < s))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && o[lo - 1].tid == tid)
		lo--;
	for (; lo < v->n && o[lo].tid == tid && o[lo].start < e; lo++) {
		uint64_t a = o[lo].start > s ? o[lo].start : s;
		uint64_t b = o[lo].end < e ? o[lo].end : e;

		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* did thread tid RELEASE resource res within [ts - window, ts]? */
static bool released_before(const struct analysis *a, uint32_t tid, uint16_t res, uint64_t ts)
{
	const struct an_point *p = a->releases.v;
	uint64_t from = ts > a->o.wakeup_window_ns ? ts - a->o.wakeup_window_ns : 0;
	size_t i = point_lb(&a->releases, tid, from, false);

	for (; i < a->releases.n && p[i].tid == tid && p[i].ts <= ts; i++)
		if (p[i].a == res)
			return true;
	return false;
}

static void tally(struct tid_ns *t, size_t *n, uint32_t tid, uint64_t ns)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (t[i].tid == tid) {
			t[i].ns += ns;
			return;
		}
	if (*n < TOP_N)
		t[(*n)++] = (struct tid_ns){ tid, ns };
}

static int cmp_tid_ns(const void *x, const void *y)
{
	const struct tid_ns *a = x, *b = y;

	return cmp_u64(b->ns, a->ns) ?: cmp_u64(a->tid, b->tid);
}

void an_sort_evidence(struct analysis *a)
{
	if (a->waits.n)
		qsort(a->waits.v, a->waits.n, sizeof(struct an_span), cmp_span_tid);
	if (a->holds.n)
		qsort(a->holds.v, a->holds.n, sizeof(struct an_span), cmp_span_res);
	if (a->releases.n)
		qsort(a->releases.v, a->releases.n, sizeof(struct an_point), cmp_point_tid);
	if (a->ios.n)
		qsort(a->ios.v, a->ios.n, sizeof(struct an_point), cmp_point_tid);
	if (a->faults.n)
		qsort(a->faults.v, a->faults.n, sizeof(struct an_point), cmp_point_tid);
	if (a->wakeups.n)
		qsort(a->wakeups.v, a->wakeups.n, sizeof(struct an_point), cmp_point_a);
	if (a->offcpu.n)
		qsort(a->offcpu.v, a->offcpu.n, sizeof(struct an_offcpu), cmp_offcpu);
}

/* ---- per-resource evidence ------------------------------------------------ */

static const struct pb_desc_stats *agg_desc(const struct analysis *a, size_t d)
{
	return a->desc_snapshots ? &a->snap_desc[d] : &a->ev_desc[d];
}

void an_gather_aggregates(const struct analysis *a, size_t r, struct res_ev *e)
{
	size_t d;
	int i;

	for (d = 0; d < a->m->n_events; d++) {
		const struct pb_event *ev = &a->m->events[d];
		const struct pb_desc_stats *s = agg_desc(a, d);

		if (ev->resource_idx != (int)r)
			continue;
		switch (ev->kind) {
		case PB_EV_WAIT: {
			struct wait_desc_ev *w = &e->wd[d];

			e->waits += s->events;
			e->wait_ns += s->total_ns;
			for (i = 0; i < PB_HIST_BUCKETS; i++)
				e->wait_hist[i] += s->hist[i];
			w->spans = s->events;
			w->ns = s->total_ns;
			memcpy(w->hist, s->hist, sizeof(w->hist));
			w->io_spans = s->io_spans;
			w->io_ns = s->io_span_ns < s->total_ns ? s->io_span_ns : s->total_ns;
			w->woken = s->release_woken_spans;
			w->wakeups = s->wakeups;
			w->io_wakeups = s->io_wakeups;
			w->release_wakeups = s->release_wakeups;
			w->off_cpu_ns = s->off_cpu_ns;
			break;
		}
		case PB_EV_ACQUIRE:
			e->has_acquire_desc = true;
			e->acquires += s->events;
			break;
		case PB_EV_USE:
			e->has_use_desc = true;
			e->uses += s->events;
			break;
		case PB_EV_RELEASE:
			e->has_release_desc = true;
			e->releases += s->events;
			e->hold_ns += s->total_ns;
			for (i = 0; i < PB_HIST_BUCKETS; i++) {
				e->hold_hist[i] += s->hist[i];
				e->holds += s->hist[i];
			}
			break;
		default:
			break;
		}
	}
	/* long holds from the hold histogram: buckets whose lower bound
	 * reaches the threshold, each hold estimated at its bucket midpoint,
	 * capped by the exact hold total */
	for (i = 0; i < PB_HIST_BUCKETS; i++)
		if ((double)(1ull << i) >= (double)a->o.long_hold_ns && e->hold_hist[i]) {
			e->long_n_agg += e->hold_hist[i];
			e->long_ns_agg += 1.5 * (double)(1ull << i) * (double)e->hold_hist[i];
		}
	if (e->long_ns_agg > (double)e->hold_ns && e->hold_ns)
		e->long_ns_agg = (double)e->hold_ns;
}

/* I/O and faults of a thread while it held r: each point once, however
 * many of r's holds it fell in (a thread holding several instances of a
 * shared resource at once, e.g. pinned buffers). The holds are merged
 * into one union of intervals per thread first; without memory for the
 * copy, each hold counts its own (an over-count, as before). */
static void join_hold_effects(const struct analysis *a, struct res_ev *e,
			      const struct an_span *holds_r, size_t n)
{
	struct an_span *c = n ? malloc(n * sizeof(*c)) : NULL;
	size_t i, j;

	if (c) {
		memcpy(c, holds_r, n * sizeof(*c));
		qsort(c, n, sizeof(*c), cmp_span_tid);
	}
	for (i = 0; i < n; i = j) {
		const struct an_span *h = c ? &c[i] : &holds_r[i];
		uint64_t end = h->end, sum = 0;

		j = i + 1;
		for (; c && j < n && c[j].tid == h->tid && c[j].start <= end; j++)
			if (c[j].end > end)
				end = c[j].end;
		e->io_holding += count_points(&a->ios, h->tid, h->start, end, &sum);
		e->io_bytes_holding += sum;
		e->faults_holding += count_points(&a->faults, h->tid, h->start, end, NULL);
	}
	free(c);
}

/* holds of r: I/O and faults while holding; the long ones (>= long_hold_ns)
 * counted and collected in longs (at most MAX_LONG_HOLDS); returns how many */
static size_t join_holds(const struct analysis *a, struct res_ev *e,
			 const struct an_span *holds_r, size_t n_holds_r,
			 const struct an_span **longs)
{
	size_t n_long = 0, j;

	join_hold_effects(a, e, holds_r, n_holds_r);
	for (j = 0; j < n_holds_r; j++) {
		uint64_t dur = holds_r[j].end - holds_r[j].start;

		e->n_hold_spans++;
		if (dur >= a->o.long_hold_ns) {
			e->long_n++;
			e->long_ns += dur;
			if (dur > e->long_max)
				e->long_max = dur;
			if (n_long < MAX_LONG_HOLDS)
				longs[n_long++] = &holds_r[j];
		}
	}
	return n_long;
}

/* wakeups of the thread inside WAIT span s; true when one came from a
 * thread that had just released r */
static bool join_wakeups(const struct analysis *a, size_t r, struct res_ev *e,
			 struct wait_desc_ev *wd, const struct an_span *s, bool io)
{
	const struct an_point *wk = a->wakeups.v;
	bool woken = false;
	size_t k;

	for (k = point_lb(&a->wakeups, s->tid, s->start, true);
	     k < a->wakeups.n && wk[k].a == s->tid && wk[k].ts <= s->end; k++) {
		e->wakeups_in_waits++;
		if (wd)
			wd->wakeups++;
		/* a span that issued block I/O is woken by its completion,
		 * which runs on whatever thread is current: not a release */
		if (io) {
			if (wd)
				wd->io_wakeups++;
			continue;
		}
		if (released_before(a, wk[k].tid, (uint16_t)r, wk[k].ts)) {
			e->wakeups_from_release++;
			if (wd)
				wd->release_wakeups++;
			woken = true;
		}
	}
	return woken;
}

/* the time of s a hold of another thread overlaps */
static uint64_t overlap(const struct an_span *h, const struct an_span *s)
{
	uint64_t a0 = h->start > s->start ? h->start : s->start;
	uint64_t b0 = h->end < s->end ? h->end : s->end;

	return b0 > a0 ? b0 - a0 : 0;
}

/* holders during WAIT span s: short holds that started shortly before the
 * span ends, then the long holds; returns the time of s the long holds
 * explain */
static uint64_t join_holders(const struct analysis *a, struct res_ev *e, const struct an_span *s,
			     const struct an_span *holds_r, size_t n_holds_r,
			     const struct an_span *const *longs, size_t n_long)
{
	size_t lo = 0, hi = n_holds_r, k;
	uint64_t expl = 0, ov;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (holds_r[mid].start < s->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k > 0 && lo - k < HOLDER_SCAN; k--) {
		const struct an_span *h = &holds_r[k - 1];

		if (h->tid == s->tid || h->end - h->start >= a->o.long_hold_ns)
			continue;
		ov = overlap(h, s);
		if (ov)
			tally(e->holders, &e->n_holders, h->tid, ov);
	}
	for (k = 0; k < n_long; k++) {
		const struct an_span *h = longs[k];

		if (h->tid == s->tid)
			continue;
		ov = overlap(h, s);
		if (ov) {
			tally(e->holders, &e->n_holders, h->tid, ov);
			expl += ov;
		}
	}
	return expl;
}

/* one WAIT span s of r: off-CPU time, I/O, wakeups, holders */
static void join_wait(const struct analysis *a, size_t r, struct res_ev *e,
		      const struct an_span *s, const struct an_span *holds_r, size_t n_holds_r,
		      const struct an_span *const *longs, size_t n_long)
{
	uint64_t len = s->end - s->start, expl, off;
	struct wait_desc_ev *wd = NULL;
	bool woken, io;
	size_t k;

	if (s->descriptor < a->m->n_events) {
		if (!e->wd_spans) {	/* records replace the snapshot's joins */
			memset(e->wd, 0, a->m->n_events * sizeof(*e->wd));
			e->wd_known = e->wd_spans = true;
		}
		wd = &e->wd[s->descriptor];
	}
	e->n_wait_spans++;
	off = offcpu_overlap(&a->offcpu, s->tid, s->start, s->end);
	e->off_cpu_wait_ns += off;
	k = count_points(&a->ios, s->tid, s->start, s->end, NULL);
	e->io_in_waits += k;
	e->waits_with_io += k > 0;
	io = k > 0;
	if (wd) {
		wd->spans++;
		wd->ns += len;
		wd->hist[an_hist_bucket(len)]++;
		wd->off_cpu_ns += off;
		if (io) {
			wd->io_spans++;
			wd->io_ns += len;
		}
	}
	woken = join_wakeups(a, r, e, wd, s, io);
	e->waits_release_woken += woken;
	if (wd && woken)
		wd->woken++;
	expl = join_holders(a, e, s, holds_r, n_holds_r, longs, n_long);
	if (!io)	/* an I/O span waited for its I/O, not for the holder */
		e->explained_ns += expl < len ? expl : len;
}

void an_join_waits(const struct analysis *a, size_t r, struct res_ev *e,
		   const struct an_span *holds_r, size_t n_holds_r)
{
	const struct an_span *w = a->waits.v;
	const struct an_span *longs[MAX_LONG_HOLDS];
	size_t n_long, i;

	n_long = join_holds(a, e, holds_r, n_holds_r, longs);
	for (i = 0; i < a->waits.n; i++)
		if (w[i].resource == r)
			join_wait(a, r, e, &w[i], holds_r, n_holds_r, longs, n_long);
	qsort(e->holders, e->n_holders, sizeof(e->holders[0]), cmp_tid_ns);
}

void an_join_lives(const struct analysis *a, size_t r, struct res_ev *e, uint64_t t_end,
		   uint64_t t_start)
{
	const struct an_life *l = a->lives.v;
	unsigned slices = 0;
	size_t i;

	for (i = 0; i < a->lives.n; i++) {
		if (l[i].resource != r)
			continue;
		e->lives++;
		e->churn_cycles += l[i].churn_cycles;
		e->cycles += l[i].closes;
		if (!l[i].open)
			e->lives_closed++;
		if (l[i].open && t_end - l[i].t_open >= a->o.leak_age_ns) {
			e->stuck_lives++;
			e->stuck_pins += l[i].pins;
			if (t_end > t_start && l[i].t_open >= t_start) {
				unsigned s = (unsigned)((double)(l[i].t_open - t_start) * 8 /
							(double)(t_end - t_start + 1));
				slices |= 1u << (s > 7 ? 7 : s);
			}
		}
	}
	e->stuck_slices = (unsigned)__builtin_popcount(slices);
	/* address reuse: instances with more than one lifetime (each counted apart) */
	{
		uint64_t *inst = malloc((e->lives ? e->lives : 1) * sizeof(*inst));
		size_t n = 0;

		if (!inst)
			return;
		for (i = 0; i < a->lives.n; i++)
			if (l[i].resource == r)
				inst[n++] = l[i].instance;
		qsort(inst, n, sizeof(*inst), cmp_u64p);
		for (i = 1; i < n; i++)
			if (inst[i] == inst[i - 1])
				e->reused_instances++;
		free(inst);
	}
}
