/* SPDX-License-Identifier: BSD-2-Clause */
/* diagnose_windows.c: the leak of a resource record --budget windowed
 * (diagnose_int.h), estimated from what each window's close recorded
 * (PB_REC_WINDOW_STATS): the net growth while its ACQUIRE and RELEASE
 * probes were both on, and the holds the close cut with their ages.
 * Formulas are documented in docs/report.md ("Windowed resources").
 */
#include "analyze/diagnose_int.h"

/* one-sided 99 % Student t quantile for df degrees of freedom */
static double t99(size_t df)
{
	static const double t[] = { 0, 31.82, 6.96, 4.54, 3.75, 3.36, 3.14, 3.00, 2.90, 2.82, 2.76 };

	if (df < sizeof(t) / sizeof(t[0]))
		return t[df];
	return df < 15 ? 2.68 : df < 20 ? 2.60 : df < 30 ? 2.53 : df < 60 ? 2.46 : 2.39;
}

/* square root by Newton's method (the tree links without libm) */
double an_sqrt(double v)
{
	double x = v > 1 ? v : 1;

	if (!(v > 0))
		return 0;
	for (int i = 0; i < 64; i++)
		x = 0.5 * (x + v / x);
	return x;
}

/* The lower end of the 95 % interval of a Poisson mean, n observed
 * (Wilson-Hilferty: within 8 % of the exact chi-square bound from n = 2,
 * half of it at n = 1; n - 1.96 sqrt(n) is 0 up to n = 3 and 60 % of the
 * exact bound at n = 5). */
double an_poisson_low95(double n)
{
	double c;

	if (!(n > 0))
		return 0;
	c = 1.0 - 1.0 / (9.0 * n) - 1.96 / (3.0 * an_sqrt(n));
	return c > 0 ? n * c * c * c : 0;
}

/* The growth rate of a windowed resource: acquires - releases per second
 * inside its windows (a ratio estimate over the windows), its standard
 * error from the windows' spread, and the observed growth. False below
 * LEAK_WIN_MIN windows. */
static bool window_growth(const struct an_vec *v, double *g, double *se, double *sum_d,
			  double *sum_w)
{
	const struct an_win *w = v->v;
	double ss = 0;
	size_t i;

	*sum_d = *sum_w = 0;
	for (i = 0; i < v->n; i++) {
		*sum_d += w[i].growth;
		*sum_w += w[i].w_s;
	}
	if (v->n < LEAK_WIN_MIN || *sum_w <= 0)
		return false;
	*g = *sum_d / *sum_w;
	for (i = 0; i < v->n; i++)
		ss += (w[i].growth - *g * w[i].w_s) * (w[i].growth - *g * w[i].w_s);
	*se = an_sqrt(ss * (double)v->n / (double)(v->n - 1)) / *sum_w;
	return true;
}

/* The windows whose close cut a hold already older than any normal hold
 * of r: the leak age, or 16 x the p99.9 of r's holds seen whole (as the
 * leak hypothesis, docs/validation.md); *old = those holds, *old_ns their
 * ages. Ages are bucket lower bounds. */
static size_t old_cut_windows(const struct analysis *a, size_t r, const struct res_ev *e,
			      uint64_t *old, double *thr, double *old_ns)
{
	const struct an_vec *v = &a->rwin[r].wins;
	const struct an_win *w = v->v;
	size_t i, n = 0;
	int b;

	*thr = 16.0 * an_hist_quantile(e->hold_hist, 0.999);
	if (*thr < (double)a->o.leak_age_ns)
		*thr = (double)a->o.leak_age_ns;
	*old = 0;
	*old_ns = 0;
	for (i = 0; i < v->n; i++) {
		uint64_t k = 0;

		for (b = 0; b < PB_HIST_BUCKETS; b++)
			if ((double)(1ull << b) >= *thr) {
				k += w[i].cut_hist[b];
				*old_ns += (double)(1ull << b) * (double)w[i].cut_hist[b];
			}
		*old += k;
		n += k > 0;
	}
	return n;
}

/* A windowed resource (record --budget) leaks when, consistently across
 * its windows, ACQUIREs exceed RELEASEs inside them (both probes on: no
 * edge in between; at least LEAK_MIN_GROWTH counted) and their closes cut
 * holds older than any normal hold (in at least LEAK_WIN_MIN windows and
 * half of them). Holds in flight at a close also raise a window's growth,
 * but are young; a long hold is old, but is released, so the growth of
 * its windows averages zero. The growth over the run is the rate x the
 * run's length: an estimate, with its error over the windows. */
bool an_finding_leak_windowed(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			      double w_eff, double *claimed_ns, double *explained)
{
	const struct pb_resource *res = &a->m->resources[r];
	const struct an_res_win *rw = &a->rwin[r];
	double g = 0, se = 0, sum_d, sum_w, t, lo, growth, ref, thr, old_ns;
	uint64_t old;
	size_t n_old;
	struct finding *f;
	char t1[32];

	if (!e->has_acquire_desc || !e->has_release_desc || res->class == PB_CLASS_CREDIT ||
	    !window_growth(&rw->wins, &g, &se, &sum_d, &sum_w))
		return false;
	t = t99(rw->wins.n - 1);
	lo = g - t * se;
	n_old = old_cut_windows(a, r, e, &old, &thr, &old_ns);
	if (sum_d < LEAK_MIN_GROWTH || !(g > 0) || n_old < LEAK_WIN_MIN || 2 * n_old < rw->wins.n)
		return false;
	growth = g * dur_ns / 1e9;
	ref = res->has_capacity && res->capacity >= 8 ? (double)res->capacity : 64;
	f = an_new_finding(a, FINDING_LEAK, r);
	if (!f)
		return false;
	/* quality: the share of windows whose close found old holds; the
	 * leaked units are holds that never end: the old cut holds are its
	 * evidence, not long holds, and the wait they can explain (their
	 * time scaled to the run as long holds' is, at most the wait) is
	 * its, as it would be a long hold's (diagnose.c) */
	*claimed_ns = thr;
	old_ns = an_window_run_ns(e, (double)old, old_ns);
	*explained = old_ns < w_eff ? old_ns : w_eff;
	f->severity = 100.0 * clamp01(growth / ref) * (double)n_old / (double)rw->wins.n +
		      100.0 * clamp01(*explained / dur_ns);
	if (f->severity > 100)
		f->severity = 100;
	f->certainty = 0.8;	/* an estimate from windows */
	f->summary = an_xasprintf("leak / unbounded growth of %s (estimated from %zu windows covering "
			       "%.1f %%): ACQUIRE - RELEASE grew by %.0f in them, ≈ %.0f ± %.0f over "
			       "the run (%+.1f/s)", res->name, rw->wins.n, 100.0 * e->share, sum_d,
			       growth, 1.96 * se * dur_ns / 1e9, g);
	an_ev_add(f, "imbalance_growth", growth, "acquisitions",
	       "ACQUIRE - RELEASE grew by %.0f %s inside %zu windows (%.2f s, both probes on); "
	       "over the run ≈ %.0f ± %.0f (1.96 standard errors over the windows)", sum_d,
	       res->units ? res->units : "units", rw->wins.n, sum_w, growth,
	       1.96 * se * dur_ns / 1e9);
	an_ev_add(f, "slope_per_s", g, "acquisitions/s", "growth rate %+.1f/s ± %.1f (standard error "
	       "over the windows; %s 99 %% one-sided bound %+.1f/s)", g, se,
	       lo > 0 ? "positive" : "not yet positive at the", lo);
	an_ev_add(f, "old_cut_holds", (double)old, "holds",
	       "%zu of %zu window closes cut holds already held >= %.1f ms (%llu such holds; the leak "
	       "age or 16x the p99.9 of the holds seen whole); the oldest %.1f ms, %llu generations "
	       "(%llu holds) live at the closes in all", n_old, rw->wins.n, thr / 1e6,
	       (unsigned long long)old, (double)rw->cut_age_max_ns / 1e6,
	       (unsigned long long)rw->cut_lives, (unsigned long long)rw->cut_holders);
	if (*explained > 0) {
		an_fmt_ns(t1, sizeof(t1), *explained);
		an_ev_add(f, "caused_wait_ns", *explained, "ns",
		       "WAIT time these never-released holds can explain: %s (min of wait and their "
		       "time, cut ages scaled to the run)", t1);
	}
	if (res->has_capacity)
		an_ev_add(f, "capacity", (double)res->capacity, res->units ? res->units : "units",
		       "declared capacity %llu %s", (unsigned long long)res->capacity,
		       res->units ? res->units : "units");
	an_window_estimate(f, e);
	an_rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_RELEASE), NULL);
	an_lost_evidence(a, f, r, e->acquires, false);
	return true;
}
