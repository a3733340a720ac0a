/* SPDX-License-Identifier: BSD-2-Clause */
/* diagnose.c: analysis__finish -- per resource, its evidence
 * (diagnose_joins.c), the weight of its wait time, its diagnoses
 * (diagnose_findings.c); then the scores and their order. Formulas are
 * documented in docs/report.md ("How findings are computed").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/diagnose_int.h"

void an_fmt_ns(char *buf, size_t sz, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, sz, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, sz, "%.1f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, sz, "%.1f us", ns / 1e3);
	else
		snprintf(buf, sz, "%.0f ns", ns);
}

/* what every resource's diagnosis shares */
struct finish_ctx {
	uint64_t t_start, t_end;
	double dur_ns;
	bool any_wake_agg;	/* snapshots count wakeups from releasers */
	bool have_events;	/* --events records */
	bool desc_joins;	/* snapshots join WAIT descriptors to I/O and wakeups */
};

static void finish_ctx_init(struct analysis *a, struct finish_ctx *x)
{
	size_t r, i;

	memset(x, 0, sizeof(*x));
	x->t_start = a->c.first_ts;
	x->t_end = a->c.last_ts;
	if (a->win_start && (!x->t_start || a->win_start < x->t_start))
		x->t_start = a->win_start;
	if (a->win_end > x->t_end)
		x->t_end = a->win_end;
	x->dur_ns = x->t_end > x->t_start ? (double)(x->t_end - x->t_start) : 1e9;
	x->have_events = events_mode(a);
	for (r = 0; a->have_snap_res && r < a->m->n_resources; r++) {
		x->any_wake_agg |= a->snap_res[r].wakeups_from_release > 0;
		a->c.state_full += a->snap_res[r].state_full;
	}
	/* version 2 snapshots join WAIT descriptors to I/O and wakeups */
	for (i = 0; a->desc_snapshots && i < a->m->n_events; i++) {
		const struct pb_desc_stats *s = &a->snap_desc[i];

		x->desc_joins |= s->wakeups || s->io_spans || s->off_cpu_ns;
	}
}

/* The wait time of r that counts as contention (w_eff) and the share of
 * waits a releaser of r ended (*share, when *share_known). */
static double wait_weight(const struct analysis *a, const struct finish_ctx *x, size_t r,
			  struct res_ev *e, double *share, bool *share_known)
{
	double w_eff = 0;
	size_t d;

	*share = 0;
	*share_known = false;
	if (e->n_wait_spans && !a->wakeups.n && !a->ios.n)
		e->wd_known = false;	/* records without OS effects */
	if (e->wd_known) {
		/* per WAIT descriptor: spans that did block I/O are a slow
		 * path and not counted; the others weigh by the share of them
		 * a releaser woke */
		uint64_t nonio_all = 0, woken_all = 0;

		for (d = 0; d < a->m->n_events; d++) {
			const struct wait_desc_ev *w = &e->wd[d];
			uint64_t nonio = w->spans - w->io_spans;
			double sh = nonio ? clamp01((double)w->woken / (double)nonio) : 0;

			if (a->m->events[d].resource_idx != (int)r ||
			    a->m->events[d].kind != PB_EV_WAIT)
				continue;
			w_eff += (double)(w->ns - w->io_ns) * (0.25 + 0.75 * sh);
			nonio_all += nonio;
			woken_all += w->woken;
		}
		*share = nonio_all ? clamp01((double)woken_all / (double)nonio_all) : 0;
		*share_known = true;
		return w_eff;
	}
	if (e->n_wait_spans && a->wakeups.n) {
		*share = (double)e->waits_release_woken / (double)e->n_wait_spans;
		*share_known = true;
	} else if (x->any_wake_agg && e->waits) {
		*share = clamp01((double)a->snap_res[r].wakeups_from_release / (double)e->waits);
		*share_known = true;
	}
	return (double)e->wait_ns * (*share_known ? 0.25 + 0.75 * *share : 1.0);
}

/* record --budget windowed r (window statistics): the share of the run its
 * windows covered. */
static void an_window_cover(const struct analysis *a, const struct finish_ctx *x, size_t r,
			    struct res_ev *e)
{
	const struct an_res_win *rw = &a->rwin[r];
	uint64_t obs = rw->obs_ns;

	if (!a->windowed[r] || !rw->wins.n)
		return;
	if (rw->open_since && x->t_end > rw->open_since)
		obs += x->t_end - rw->open_since;	/* attached to the end */
	e->est = true;
	e->n_win = rw->wins.n;
	e->share = clamp01((double)obs / x->dur_ns);
	if (e->share <= 0)
		e->share = 1e-3;
}

/* Aggregated time of n holds seen in r's windows, scaled to the run at the
 * 95 % lower bound of their count (Poisson): two holds seen in 3 % of a
 * run are no evidence of 60; the holds seen count at least as themselves.
 * So that it compares with the always-on WAITs' wait time over the run. */
double an_window_run_ns(const struct res_ev *e, double n, double ns)
{
	double lo = an_poisson_low95(n);

	if (!e->est || !(n > 0))
		return ns;
	return lo > 0 && lo / n / e->share > 1 ? ns * lo / n / e->share : ns;
}

/* The holds r's closes cut at an age of at least the long-hold threshold
 * and under claimed_ns (older ones are a leak's, when its finding took
 * them: never seen to end, diagnose_windows.c), and those its opens cut
 * whose part in the window (open to RELEASE) is at least the threshold
 * (they ended: no leak's): long holds at their part in the window (lower
 * bounds: a cut hold is never seen whole), added to the aggregated long
 * holds, scaled to the run (an_window_run_ns). With both edges the long
 * holds' time inside the windows is whole, as the windows' wait is (a
 * WAIT counts in the window it ended in); with the closes' alone, the
 * holds in flight at each open were missing. */
static void an_window_long(const struct analysis *a, const struct finish_ctx *x, size_t r,
			   struct res_ev *e, double claimed_ns)
{
	const struct an_res_win *rw = &a->rwin[r];
	int i;

	if (!e->est)
		return;
	for (i = 0; i < PB_HIST_BUCKETS; i++)
		if ((double)(1ull << i) >= (double)a->o.long_hold_ns &&
		    (double)(1ull << i) < claimed_ns && rw->cut_hist[i]) {
			e->cut_long_n += rw->cut_hist[i];
			e->cut_long_ns += (double)(1ull << i) * (double)rw->cut_hist[i];
		}
	for (i = 0; i < PB_HIST_BUCKETS; i++)
		if ((double)(1ull << i) >= (double)a->o.long_hold_ns && rw->open_hist[i]) {
			e->open_long_n += rw->open_hist[i];
			e->open_long_ns += (double)(1ull << i) * (double)rw->open_hist[i];
		}
	if (x->have_events)
		return;	/* holds from RELEASE records: not scaled (docs/record.md) */
	e->long_n_agg += e->cut_long_n + e->open_long_n;
	e->long_ns_agg += e->cut_long_ns + e->open_long_ns;
	e->long_ns_win = e->long_ns_agg;
	e->long_ns_agg = an_window_run_ns(e, (double)e->long_n_agg, e->long_ns_agg);
}

/* The wait that long holds explain without --events (no span to join),
 * out of w_left. A windowed resource whose windows carry their WAITs
 * (PB_REC_WINDOW_STATS waits, wait_ns) compares figures of the same
 * stretches, nothing scaled: the long-hold time its windows saw against
 * the wait they saw (each long-hold ns held up at least one waiter, as
 * min(long, wait) below) and against their length (the waits a long hold
 * covers by chance alone: its share of the time); the larger share, at
 * most all, of the run's wait is explained. Otherwise (no window waits,
 * attached to the end, not windowed): the long-hold time scaled to the
 * run (an_window_run_ns), at most the wait. */
static double long_explained(const struct analysis *a, size_t r, const struct res_ev *e,
			     double w_left)
{
	const struct an_res_win *rw = &a->rwin[r];
	double f;

	if (!e->est || !rw->wins.n || rw->n_wait_win != rw->wins.n || rw->open_since ||
	    !rw->wait_ns || !rw->obs_ns || !(e->long_ns_win > 0))
		return e->long_ns_agg < w_left ? e->long_ns_agg : w_left;
	f = e->long_ns_win / (double)rw->wait_ns;
	if (e->long_ns_win / (double)rw->obs_ns > f)
		f = e->long_ns_win / (double)rw->obs_ns;
	return clamp01(f) * w_left;
}

/* A resource the governor stopped windowing (its probes attached to the
 * end since its last open): the snapshots from the first one after that
 * open on see every ACQUIRE and RELEASE, so their ACQUIRE - RELEASE trend
 * is a leak's evidence as without windows (at least 3 of them). */
static void leak_after_windows(struct analysis *a, const struct finish_ctx *x, size_t r,
			       struct res_ev *e)
{
	const struct an_vec *sv = &a->series[r];
	uint64_t since = a->rwin[r].open_since;
	size_t from = 0;

	if (!since)
		return;
	while (from < sv->n && AN_AT(sv, struct an_point_res, from)->ts <= since)
		from++;
	if (from && sv->n - from >= 3)
		an_finding_leak(a, r, e, x->dur_ns, x->t_start, from);
}

/* Resource r's evidence and findings; holds_r are its holds (by start).
 * A windowed resource's leak comes first: a leaked unit is a hold that
 * never ends, so the old holds its closes cut are the leak's evidence
 * (and the wait they explain is the leak's), not long holds. */
static void diagnose_resource(struct analysis *a, const struct finish_ctx *x, size_t r,
			      struct res_ev *e, const struct an_span *holds_r, size_t n_holds_r)
{
	double share, w_eff, explained = 0, leak_expl = 0, claimed = 1e300;
	bool share_known, hold_events, leak_win = false;

	e->wd_known = x->desc_joins;
	an_gather_aggregates(a, r, e);
	if (x->have_events) {
		an_join_waits(a, r, e, holds_r, n_holds_r);
		an_join_lives(a, r, e, x->t_end, x->t_start);
	}
	an_window_cover(a, x, r, e);
	an_probefx_correct(a, r, e);
	hold_events = e->n_hold_spans > 0;
	/* contention: wait time, discounted when the wakeups show that waits
	 * were not ended by releases of this resource */
	w_eff = wait_weight(a, x, r, e, &share, &share_known);
	/* windowed (record --budget): its ACQUIRE - RELEASE drift across
	 * window edges is unknown; only the growth inside windows, with its
	 * bound over the windows, is evidence (docs/record.md) */
	if (a->windowed[r])
		leak_win = an_finding_leak_windowed(a, r, e, x->dur_ns,
						    x->have_events ? 0 : w_eff, &claimed, &leak_expl);
	an_window_long(a, x, r, e, claimed);
	/* credit is consumed, not held: no long holds (as no leak) */
	if (a->m->resources[r].class != PB_CLASS_CREDIT &&
	    (hold_events ? e->long_n : e->long_n_agg)) {
		double w_left = w_eff - leak_expl;

		explained = hold_events ? (double)e->explained_ns *
				(share_known ? 0.25 + 0.75 * share : 1.0) :
				long_explained(a, r, e, w_left);
		if (explained > w_left)
			explained = w_left;
		if (explained < 0)
			explained = 0;
		an_finding_long_hold(a, r, e, x->dur_ns, explained, hold_events);
	}
	if (e->waits && !an_probefx_dominated(a, r))
		an_finding_contention(a, r, e, x->dur_ns, w_eff, share, share_known, explained,
				      leak_expl);
	if (!a->windowed[r])
		an_finding_leak(a, r, e, x->dur_ns, x->t_start, 0);
	else if (!leak_win && !x->have_events)
		leak_after_windows(a, x, r, e);
	an_finding_churn(a, r, e, x->dur_ns);
}

static int cmp_finding(const void *x, const void *y)
{
	const struct finding *a = x, *b = y;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return cmp_u64(a->diagnosis, b->diagnosis) ?: cmp_u64((uint64_t)a->resource,
							       (uint64_t)b->resource);
}

/* score = severity x certainty (at least 0.05); best first */
static void score_findings(struct analysis *a)
{
	size_t i;

	for (i = 0; i < a->n_findings; i++) {
		struct finding *f = &a->findings[i];

		if (f->certainty < 0.05)
			f->certainty = 0.05;
		f->score = f->severity * f->certainty;
		an_model_summary(a, f);
	}
	if (a->n_findings)
		qsort(a->findings, a->n_findings, sizeof(*a->findings), cmp_finding);
}

int analysis__finish(struct analysis *a)
{
	size_t n_wd, r, i = 0, hi;
	struct wait_desc_ev *wd;
	struct finish_ctx x;
	struct res_ev *e;
	int err = 0;

	if (!a)
		return -EINVAL;
	if (a->finished)
		return (int)a->n_findings;
	a->finished = true;
	a->c.state_full = a->res_state_full_rec;
	finish_ctx_init(a, &x);
	an_sort_evidence(a);
	n_wd = a->m->n_events ? a->m->n_events : 1;
	wd = calloc(n_wd, sizeof(*wd));
	if (!wd)
		return -ENOMEM;
	for (r = 0; r < a->m->n_resources; r++) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			err = -ENOMEM;
			goto out;
		}
		memset(wd, 0, n_wd * sizeof(*wd));
		e->wd = wd;
		/* holds of r: a contiguous run of the resource-sorted holds */
		while (i < a->holds.n && AN_AT(&a->holds, struct an_span, i)->resource < r)
			i++;
		for (hi = i; hi < a->holds.n && AN_AT(&a->holds, struct an_span, hi)->resource == r;)
			hi++;
		diagnose_resource(a, &x, r, e, a->holds.n ? AN_AT(&a->holds, struct an_span, i) : NULL,
				  hi - i);
		free(e);
		i = hi;
	}
	score_findings(a);
out:
	free(wd);
	return err ? err : (int)a->n_findings;
}
