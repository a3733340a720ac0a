/* SPDX-License-Identifier: BSD-2-Clause */
/* leak.c: the leak hypothesis of the confidence controller (leak_int.h,
 * docs/validation.md "Leak or broken model"). Pure bookkeeping over the
 * snapshots' counters: no BPF, no I/O. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "validate/leak_int.h"

struct held_window {
	uint64_t ts;		/* the snapshot that closed it */
	int64_t units;		/* units held then */
	uint64_t exit_ended;	/* the resource's exit_ended then */
	uint64_t v;		/* its over_capacity violations */
};

struct leak_desc {
	int res;		/* ACQUIRE of a resource with a capacity: its index, else -1 */
	int release_of;		/* RELEASE: its resource's index (hold times), else -1 */
	int kind_res;		/* its resource's index, -1 none */
	enum pb_event_kind kind;
	/* coupling (acquire_bypassed): the adjustments so far (cumulative) */
	uint64_t bypassed;	/* ACQUIRE: acquisitions inferred (not observed) */
	uint64_t excused_rna, excused_una;	/* RELEASE/USE: violations they explain */
	struct held_window q[LEAK_PENDING];
	uint32_t n;
	struct confidence_leak out;
	double missing;		/* RELEASE: missing RELEASEs charged to it (cumulative) */
};

/* One snapshot as the release test remembers it. */
struct rel_point {
	uint64_t ts;
	int64_t units;		/* outstanding units */
	uint64_t acq_units;	/* cumulative units ACQUIREd */
	int64_t exit_units;	/* units ended with their process (cumulative) */
};

struct leak_res {
	/* coupling: this snapshot's cumulative ACQUIREs, RELEASEs, RELEASEs
	 * not active, USEs not acquired */
	uint64_t d_acq, d_rel, d_rna, d_una;
	bool has_use;
	int first_acq;		/* its first ACQUIRE descriptor, -1 none */
	bool on;		/* declares a capacity and has an ACQUIRE */
	uint64_t capacity;
	uint64_t expect_ns;	/* longest `expect ... within` of its events */
	uint64_t holds[PB_HIST_BUCKETS];	/* completed hold times (its RELEASEs) */
	struct pb_res_stats now;
	/* the release test: on when it is shared, has an ACQUIRE and a
	 * RELEASE and is no credit (consumed by design) */
	bool has_rel, rt_on, rt_based;
	uint64_t acq_units, acq_events, rel_events;	/* this snapshot's cumulative */
	struct rel_point pts[PB_IDLE_SLOTS + 1];	/* newest first */
	uint32_t n_pts;
	int64_t high;		/* high-water mark of the busy units */
	int64_t level;		/* the latest level (min of LEAK_BUSY_RUN tests) */
	int64_t busy_prev[LEAK_BUSY_RUN - 1];	/* the previous tests' busy units */
	struct confidence_release rel;
};

struct leak_model {
	size_t n_desc, n_res;
	struct leak_desc *d;
	struct leak_res *r;
	uint64_t ts;
};

struct leak_model *leak_model__new(const struct manifest *m, const uint32_t *desc_event,
				   size_t n_desc)
{
	struct leak_model *lm;
	size_t i, k;

	if (!m)
		return NULL;
	lm = calloc(1, sizeof(*lm));
	if (!lm)
		return NULL;
	lm->n_desc = n_desc;
	lm->n_res = m->n_resources;
	lm->d = calloc(n_desc ? n_desc : 1, sizeof(*lm->d));
	lm->r = calloc(lm->n_res ? lm->n_res : 1, sizeof(*lm->r));
	if (!lm->d || !lm->r) {
		leak_model__free(lm);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n_desc; i++) {
		size_t e = desc_event ? desc_event[i] : i;
		const struct pb_event *ev = e < m->n_events ? &m->events[e] : NULL;
		struct leak_res *r;

		lm->d[i].res = lm->d[i].release_of = lm->d[i].kind_res = -1;
		if (!ev || ev->resource_idx < 0 || (size_t)ev->resource_idx >= lm->n_res)
			continue;
		r = &lm->r[ev->resource_idx];
		lm->d[i].kind_res = ev->resource_idx;
		lm->d[i].kind = ev->kind;
		if (ev->kind == PB_EV_USE)
			r->has_use = true;
		if (ev->kind == PB_EV_ACQUIRE && !r->first_acq)
			r->first_acq = (int)i + 1;	/* +1 until the end of the loop */
		if (ev->kind == PB_EV_RELEASE) {
			lm->d[i].release_of = ev->resource_idx;
			r->has_rel = true;
		}
		for (k = 0; k < ev->n_expect; k++)
			if (ev->expect[k].within_ns > r->expect_ns)
				r->expect_ns = ev->expect[k].within_ns;
		if (ev->kind != PB_EV_ACQUIRE || !m->resources[ev->resource_idx].has_capacity)
			continue;
		lm->d[i].res = ev->resource_idx;
		r->on = true;
		r->capacity = m->resources[ev->resource_idx].capacity;
	}
	for (i = 0; i < lm->n_res; i++) {
		lm->r[i].first_acq--;
		/* shared only: on an exclusive resource a RELEASE the model
		 * misses shows at the next ACQUIRE (acquire_active) */
		lm->r[i].rt_on = lm->r[i].first_acq >= 0 && lm->r[i].has_rel &&
				 m->resources[i].shared &&
				 m->resources[i].class != PB_CLASS_CREDIT;
	}
	return lm;
}

void leak_model__free(struct leak_model *lm)
{
	if (!lm)
		return;
	free(lm->d);
	free(lm->r);
	free(lm);
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

static void raise_to(uint64_t *x, double v)
{
	if (v > (double)*x)
		*x = (uint64_t)v;
}

/* A probed ACQUIRE that only some acquisitions pass (inlined, split):
 * RELEASEs of instances never acquired while the RELEASEs outnumber the
 * ACQUIREs, with USEs of instances never acquired when the resource has a
 * USE event (a double release has none). Over the run so far, B = the
 * least of the RELEASEs not active, the RELEASE excess and the USEs not
 * acquired; B is charged to the ACQUIRE descriptor as acquire_bypassed
 * (and counted among its events: acquisitions that happened unobserved),
 * and the same share of the RELEASE/USE violations is excused
 * (docs/validation.md "Mutation classes"). Cumulative, so a RELEASE
 * charged late (a swept tombstone) still pairs with its excess. */
static void coupling(struct leak_model *lm, const struct pb_desc_stats *desc, size_t n_desc)
{
	size_t i;

	for (i = 0; i < lm->n_res; i++)
		lm->r[i].d_acq = lm->r[i].d_rel = lm->r[i].d_rna = lm->r[i].d_una = 0;
	for (i = 0; i < n_desc && i < lm->n_desc; i++) {
		const struct leak_desc *d = &lm->d[i];
		struct leak_res *r = d->kind_res >= 0 ? &lm->r[d->kind_res] : NULL;

		if (r && d->kind == PB_EV_ACQUIRE) {
			r->d_acq += desc[i].events;
		} else if (r && d->kind == PB_EV_RELEASE) {
			r->d_rel += desc[i].events;
			r->d_rna += desc[i].violations[PB_INV_RELEASE_NOT_ACTIVE];
		} else if (r && d->kind == PB_EV_USE) {
			r->d_una += desc[i].violations[PB_INV_USE_NOT_ACQUIRED];
		}
	}
	for (i = 0; i < n_desc && i < lm->n_desc; i++) {
		struct leak_desc *d = &lm->d[i];
		struct leak_res *r = d->kind_res >= 0 ? &lm->r[d->kind_res] : NULL;
		double b, share;

		if (!r || r->first_acq < 0 || r->d_rel <= r->d_acq || !r->d_rna)
			continue;
		b = (double)min3(r->d_rna, r->d_rel - r->d_acq, r->has_use ? r->d_una : UINT64_MAX);
		share = b / (double)r->d_rna;
		if ((int)i == r->first_acq)
			raise_to(&d->bypassed, b);
		else if (d->kind == PB_EV_RELEASE)
			raise_to(&d->excused_rna,
				 share * (double)desc[i].violations[PB_INV_RELEASE_NOT_ACTIVE]);
		else if (d->kind == PB_EV_USE)
			raise_to(&d->excused_una,
				 share * (double)desc[i].violations[PB_INV_USE_NOT_ACQUIRED]);
	}
}

/* The leak threshold T of a resource (ns), and the hold-time edge it
 * comes from; 0 when its completed holds are too few to tell. */
static uint64_t threshold(const struct leak_res *r, uint64_t *edge)
{
	uint64_t n = 0, sum = 0, t;
	size_t b;

	for (b = 0; b < PB_HIST_BUCKETS; b++)
		n += r->holds[b];
	*edge = 0;
	if (n < LEAK_MIN_HOLDS)
		return 0;
	for (b = 0; b < PB_HIST_BUCKETS; b++) {
		sum += r->holds[b];
		if ((double)sum >= LEAK_QUANTILE * (double)n)
			break;
	}
	*edge = 1ull << (b + 1 < 62 ? b + 1 : 62);
	t = *edge << LEAK_FACTOR_LOG2;
	return t > r->expect_ns ? t : r->expect_ns;
}

/* The release test's sums of this snapshot: per resource, the cumulative
 * units and events of its ACQUIREs and the events of its RELEASEs. */
static void release_sums(struct leak_model *lm, const struct pb_desc_stats *desc, size_t n_desc)
{
	size_t i;

	for (i = 0; i < lm->n_res; i++)
		lm->r[i].acq_units = lm->r[i].acq_events = lm->r[i].rel_events = 0;
	for (i = 0; i < n_desc && i < lm->n_desc; i++) {
		const struct leak_desc *d = &lm->d[i];
		struct leak_res *r = d->kind_res >= 0 ? &lm->r[d->kind_res] : NULL;

		if (r && d->kind == PB_EV_ACQUIRE) {
			r->acq_units += desc[i].units;
			r->acq_events += desc[i].events;
		} else if (r && d->kind == PB_EV_RELEASE) {
			r->rel_events += desc[i].events;
		}
	}
}

/* Charge `events` missing RELEASEs of resource ri to its RELEASE
 * descriptors, in proportion to the RELEASEs each saw (the test cannot
 * tell which one misses them). */
static void release_charge(struct leak_model *lm, size_t ri, double events,
			   const struct pb_desc_stats *desc, size_t n_desc)
{
	const struct leak_res *r = &lm->r[ri];
	size_t i, n_rel = 0;

	for (i = 0; i < n_desc && i < lm->n_desc; i++)
		if (lm->d[i].kind_res == (int)ri && lm->d[i].kind == PB_EV_RELEASE)
			n_rel++;
	for (i = 0; i < n_desc && i < lm->n_desc; i++) {
		if (lm->d[i].kind_res != (int)ri || lm->d[i].kind != PB_EV_RELEASE)
			continue;
		lm->d[i].missing += r->rel_events ?
			events * (double)desc[i].events / (double)r->rel_events :
			events / (double)n_rel;
	}
}

/* The idle slot of the previous snapshot (-1: no idle data). The units
 * held are read after a snapshot's time: holdings that came in between
 * are not idle since that time even when they are leaks, so the test
 * takes the units held two snapshots back (all acquired before the
 * previous snapshot's time) against the holdings idle since the previous
 * one. */
static int release_lookback(const struct leak_res *r)
{
	int k;

	if (r->n_pts < 3)
		return -1;
	for (k = 0; k < PB_IDLE_SLOTS; k++)
		if (r->now.idle_ts[k] && r->now.idle_ts[k] == r->pts[1].ts)
			return k;
	return -1;
}

/* Whether the resource was in use before snapshot j: ACQUIREs in the
 * interval that ends there (since the one before it, or since the start).
 * The baseline busy level is taken only from such a snapshot: one taken
 * before the load starts reads 0 holds in flight, and the steady level
 * that follows would be charged as missing RELEASEs. */
static bool release_in_use(const struct leak_res *r, int j)
{
	uint64_t before = (uint32_t)j + 1 < r->n_pts ? r->pts[j + 1].acq_units : 0;

	return r->pts[j].acq_units > before;
}

/* One snapshot of the release test on resource ri (leak_int.h): of the
 * units held two snapshots back, those not idle since the previous one
 * (and not ended with their process) were released or touched since.
 * Holds in flight explain a bounded amount; a growth of it is RELEASEs
 * the model misses. */
static void release_test(struct leak_model *lm, size_t ri, const struct pb_desc_stats *desc,
			 size_t n_desc)
{
	struct leak_res *r = &lm->r[ri];
	uint64_t edge;
	int64_t held, idle, busy, level;
	int j, k, i;

	if (r->n_pts && (r->acq_units < r->pts[0].acq_units || lm->ts <= r->pts[0].ts)) {
		r->n_pts = 0;	/* counters restarted: start over */
		r->rt_based = false;
	}
	memmove(r->pts + 1, r->pts, PB_IDLE_SLOTS * sizeof(r->pts[0]));
	r->pts[0] = (struct rel_point){ lm->ts, r->now.outstanding_units, r->acq_units,
					r->now.exit_units };
	if (r->n_pts < PB_IDLE_SLOTS + 1)
		r->n_pts++;
	k = release_lookback(r);
	j = 2;
	if (k < 0 || (!r->rt_based && !release_in_use(r, j))) {
		r->rel.untested++;
		return;
	}
	held = r->pts[j].units > 0 ? r->pts[j].units : 0;
	idle = r->now.idle_units[k] > 0 ? r->now.idle_units[k] : 0;
	idle = idle < held ? idle : held;
	busy = held - idle - (r->now.exit_units - r->pts[j].exit_units);
	busy = busy > 0 ? busy : 0;
	r->rel.tested++;
	r->rel.held_units = held;
	r->rel.idle_units = idle;
	r->rel.busy_units = busy;
	r->rel.threshold_ns = threshold(r, &edge);
	r->rel.age_ns = lm->ts - r->pts[j].ts;
	r->rel.ts_ns = lm->ts;
	if (!r->rt_based) {
		r->rt_based = true;
		r->high = r->level = r->rel.baseline_units = busy;
		for (i = 0; i < LEAK_BUSY_RUN - 1; i++)
			r->busy_prev[i] = busy;
		return;
	}
	/* a level held at LEAK_BUSY_RUN tests in a row, not one snapshot's
	 * holds in flight */
	level = busy;
	for (i = 0; i < LEAK_BUSY_RUN - 1; i++)
		level = r->busy_prev[i] < level ? r->busy_prev[i] : level;
	memmove(r->busy_prev + 1, r->busy_prev, (LEAK_BUSY_RUN - 2) * sizeof(r->busy_prev[0]));
	r->busy_prev[0] = busy;
	busy = level;
	r->level = level;
	if (busy <= r->high)
		return;
	r->rel.charged_units += (uint64_t)(busy - r->high);
	release_charge(lm, ri, (double)(busy - r->high) *
		       (r->acq_units ? (double)r->acq_events / (double)r->acq_units : 1.0),
		       desc, n_desc);
	r->high = busy;
}

void leak_model__snapshot(struct leak_model *lm, uint64_t ts, const struct pb_desc_stats *desc,
			  size_t n_desc, const struct pb_res_stats *res, size_t n_res)
{
	size_t i, b;

	if (!lm)
		return;
	if (desc)
		coupling(lm, desc, n_desc);
	lm->ts = ts;
	for (i = 0; i < lm->n_res; i++) {
		memset(lm->r[i].holds, 0, sizeof(lm->r[i].holds));
		if (res && i < n_res)
			lm->r[i].now = res[i];
		else
			memset(&lm->r[i].now, 0, sizeof(lm->r[i].now));
	}
	for (i = 0; desc && i < n_desc && i < lm->n_desc; i++) {
		if (lm->d[i].release_of < 0)
			continue;
		for (b = 0; b < PB_HIST_BUCKETS; b++)
			lm->r[lm->d[i].release_of].holds[b] += desc[i].hist[b];
	}
	if (!desc || !res)
		return;	/* no gauges: the release test has nothing to look at */
	release_sums(lm, desc, n_desc);
	for (i = 0; i < lm->n_res && i < n_res; i++)
		if (lm->r[i].rt_on)
			release_test(lm, i, desc, n_desc);
}

enum settle { SETTLE_WAIT, SETTLE_LEAK, SETTLE_MODEL, SETTLE_GONE };

/* One held-back window of d, now. */
static enum settle settle(struct leak_model *lm, struct leak_desc *d, const struct held_window *h)
{
	const struct leak_res *r = &lm->r[d->res];
	uint64_t edge, t = threshold(r, &edge);
	int k;

	if (!t)
		return SETTLE_MODEL;
	for (k = 0; k < PB_IDLE_SLOTS; k++)
		if (r->now.idle_ts[k] == h->ts)
			break;
	if (k == PB_IDLE_SLOTS)	/* out of the engine's memory (or no idle data) */
		return h->ts + t <= lm->ts || !r->now.idle_ts[0] ||
		       r->now.idle_ts[PB_IDLE_SLOTS - 1] > h->ts ? SETTLE_MODEL : SETTLE_WAIT;
	if (lm->ts - h->ts < t)
		return SETTLE_WAIT;
	if (r->now.exit_ended > h->exit_ended)
		return SETTLE_GONE;	/* ended with their process: not testable */
	if (!r->now.idle_n[k] || h->units - r->now.idle_units[k] > (int64_t)r->capacity)
		return SETTLE_MODEL;
	d->out.windows++;
	d->out.violations += h->v;
	d->out.leaked = r->now.idle_n[k];
	d->out.leaked_units = (uint64_t)r->now.idle_units[k];
	d->out.units_held = h->units;
	d->out.capacity = r->capacity;
	d->out.threshold_ns = t;
	d->out.hold_edge_ns = edge;
	d->out.ts_ns = h->ts;
	return SETTLE_LEAK;
}

uint64_t leak_model__window(struct leak_model *lm, uint32_t di, uint64_t ts, uint64_t v,
			    uint64_t *held)
{
	struct leak_desc *d;
	uint64_t charge = 0, sum = 0;
	uint32_t i, j = 0;

	*held = 0;
	if (!lm || di >= lm->n_desc || lm->d[di].res < 0)
		return v;
	d = &lm->d[di];
	for (i = 0; i < d->n; i++) {
		enum settle s = settle(lm, d, &d->q[i]);

		if (s == SETTLE_MODEL) {
			charge += d->q[i].v;
			d->out.charged_windows++;
		} else if (s == SETTLE_WAIT) {
			d->q[j++] = d->q[i];
		} else if (s == SETTLE_GONE) {
			d->out.untested += d->q[i].v;
		}
	}
	d->n = j;
	if (v && d->n < LEAK_PENDING) {
		d->q[d->n++] = (struct held_window){ .ts = ts, .v = v,
			.units = lm->r[d->res].now.outstanding_units,
			.exit_ended = lm->r[d->res].now.exit_ended };
	} else if (v) {
		charge += v;
		d->out.charged_windows++;
	}
	for (i = 0; i < d->n; i++)
		sum += d->q[i].v;
	*held = d->out.held = sum;
	return charge;
}

bool leak_model__get(const struct leak_model *lm, uint32_t di, struct confidence_leak *out)
{
	memset(out, 0, sizeof(*out));
	if (!lm || di >= lm->n_desc)
		return false;
	*out = lm->d[di].out;
	return out->windows > 0;
}

void leak_model__adjust(const struct leak_model *lm, uint32_t di, uint64_t *events,
			uint64_t viol[CONFIDENCE_INV_SLOTS])
{
	const struct leak_desc *d;

	if (!lm || di >= lm->n_desc)
		return;
	d = &lm->d[di];
	*events += d->bypassed;
	viol[PB_INV_ACQUIRE_BYPASSED] += d->bypassed;
	viol[PB_INV_RELEASE_NOT_ACTIVE] -= d->excused_rna < viol[PB_INV_RELEASE_NOT_ACTIVE] ?
						   d->excused_rna : viol[PB_INV_RELEASE_NOT_ACTIVE];
	viol[PB_INV_USE_NOT_ACQUIRED] -= d->excused_una < viol[PB_INV_USE_NOT_ACQUIRED] ?
						 d->excused_una : viol[PB_INV_USE_NOT_ACQUIRED];
	/* RELEASEs that happened unobserved: events, and evidence */
	*events += (uint64_t)d->missing;
	viol[CONFIDENCE_INV_RELEASE_MISSING] += (uint64_t)d->missing;
}

void leak_model__windowed(struct leak_model *lm, uint32_t res)
{
	if (lm && res < lm->n_res)
		lm->r[res].rt_on = false;
}

bool leak_model__release(const struct leak_model *lm, uint32_t di,
			 struct confidence_release *out)
{
	const struct leak_desc *d;

	memset(out, 0, sizeof(*out));
	if (!lm || di >= lm->n_desc)
		return false;
	d = &lm->d[di];
	if (d->kind != PB_EV_RELEASE || d->kind_res < 0 || !lm->r[d->kind_res].rt_on)
		return false;
	*out = lm->r[d->kind_res].rel;
	out->charged = (uint64_t)d->missing;
	return true;
}

/* Missing RELEASEs charged to di whose growth has not come back: the busy
 * level still at its high-water mark. Holds in flight that swing up come
 * back down; RELEASEs the model never sees do not (once every instance is
 * held, the level stops growing and nothing more is charged, but nothing
 * is explained either). */
bool leak_model__release_outstanding(const struct leak_model *lm, uint32_t di)
{
	const struct leak_desc *d;
	const struct leak_res *r;

	if (!lm || di >= lm->n_desc)
		return false;
	d = &lm->d[di];
	if (d->kind != PB_EV_RELEASE || d->kind_res < 0 || d->missing < 1)
		return false;
	r = &lm->r[d->kind_res];
	return r->rt_on && r->rt_based && r->rel.charged_units && r->level >= r->high;
}
