/* SPDX-License-Identifier: BSD-2-Clause */
/* gov_report.c: the governor's cost table, CPU-time sources, window
 * estimates and report (see governor.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record/governor.h"
#include "record/governor_int.h"
#include "contract/manifest.h"

/* THE PLACE CALIBRATION PLUGS IN (see governor.h): conservative figures
 * of this VM until src/engine/calib's per-class costs replace them. */
void gov_costs__default(struct gov_site_costs *c)
{
	c->entry_emulated_ns = GOV_DEFAULT_ENTRY_EMULATED_NS;
	c->entry_nop5_ns = GOV_DEFAULT_ENTRY_NOP5_NS;
	c->ret_extra_ns = GOV_DEFAULT_RET_EXTRA_NS;
	c->usdt_ns = GOV_DEFAULT_USDT_NS;
	c->origin = "default table (not calibrated)";
}

static bool site_nop5(const struct plan_site *s)
{
	return s->insn_len == 5 && !strncmp(s->insn_text, "nop", 3);
}

/* ns per event of descriptor i: its entry trap (the dearest class among
 * its entry sites) plus the return probe's extra when it has one */
static double desc_cost(const struct plan *p, size_t i, const struct gov_site_costs *c)
{
	double entry = 0;
	bool ret = false, usdt = false;
	size_t k;

	for (k = 0; k < p->n_sites; k++) {
		const struct plan_site *s = &p->sites[k];
		double e;

		if ((size_t)(s->cookie & PLAN_COOKIE_DESC_MASK) != i)
			continue;
		if (s->usdt) {
			usdt = true;
			continue;
		}
		ret |= s->retprobe;
		e = site_nop5(s) ? c->entry_nop5_ns : c->entry_emulated_ns;
		if (s->retprobe && s->insn_len)	/* the return probe's own entry trap */
			e = site_nop5(s) ? c->entry_nop5_ns : c->entry_emulated_ns;
		if (e > entry)
			entry = e;
	}
	if (usdt && entry < c->usdt_ns)
		entry = c->usdt_ns;
	if (ret && !entry)
		entry = c->entry_emulated_ns;
	return entry + (ret ? c->ret_extra_ns : 0);
}

int gov_cost_source__from_plan(struct gov_cost_source *src, const struct plan *p,
			       const struct gov_site_costs *c)
{
	size_t i;

	src->n = p->n_descriptors;
	src->origin = c->origin;
	src->ns_per_hit = calloc(src->n + 1, sizeof(*src->ns_per_hit));
	if (!src->ns_per_hit)
		return -ENOMEM;
	for (i = 0; i < src->n; i++)
		src->ns_per_hit[i] = desc_cost(p, i, c);
	return 0;
}

void gov_cost_source__free(struct gov_cost_source *src)
{
	free(src->ns_per_hit);
	src->ns_per_hit = NULL;
}

int gov_parse_budget(const char *s, double *fraction)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "%")) || !(v > 0) || v > 100)
		return -EINVAL;
	*fraction = v / 100;
	return 0;
}

uint64_t gov_cpu_ns_pids(const pid_t *pids, size_t n)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		char path[64], buf[1024], *p;
		unsigned long long ut = 0, st = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		/* after "(comm)": state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt cmajflt utime stime */
		if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st) == 2)
			total += (ut + st) * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
	}
	return total;
}

/* The tracked processes' CPU time, cumulative: a process that exited
 * keeps its last reading (a server's per-connection backends come and
 * go; dropping them would shrink the base the budget is a share of). */
uint64_t governor__cpu_ns(struct governor *g, const pid_t *pids, size_t n)
{
	uint64_t total = 0;
	size_t i, k;

	for (i = 0; i < n; i++) {
		uint64_t v = gov_cpu_ns_pids(&pids[i], 1);

		for (k = 0; k < g->n_cpu_seen && g->cpu_seen[k].pid != pids[i]; k++)
			;
		if (k == g->n_cpu_seen) {
			void *t = g->n_cpu_seen % 64 ? g->cpu_seen :
				  realloc(g->cpu_seen, (g->n_cpu_seen + 64) * sizeof(*g->cpu_seen));

			if (!t)
				continue;
			g->cpu_seen = t;
			g->cpu_seen[g->n_cpu_seen++] = (struct gov_cpu_seen){ .pid = pids[i] };
		}
		if (v > g->cpu_seen[k].ns)
			g->cpu_seen[k].ns = v;
	}
	for (k = 0; k < g->n_cpu_seen; k++)
		total += g->cpu_seen[k].ns;
	return total;
}

uint64_t gov_cpu_ns_cgroup(const char *dir)
{
	char path[4096], key[64];
	unsigned long long v, usage = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", key, &v) == 2)
		if (!strcmp(key, "usage_usec"))
			usage = v;
	fclose(f);
	return usage * 1000ull;
}

static bool is_acquire(const struct governor *g, uint32_t d)
{
	const struct manifest *m = g->p->manifest;

	return m->events[g->p->descriptors[d].event].kind == PB_EV_ACQUIRE;
}

void gov_group_hits(const struct governor *g, const struct gov_group *gr, const uint64_t *hits,
		    uint64_t *acq, uint64_t *ev)
{
	size_t k;

	*acq = *ev = 0;
	for (k = 0; k < gr->n_desc; k++) {
		*ev += hits[gr->descs[k]];
		if (is_acquire(g, gr->descs[k]))
			*acq += hits[gr->descs[k]];
	}
}

static bool is_acquire(const struct governor *g, uint32_t d);

/* the hits in h of the ACQUIREs of the resources that are not windowed,
 * and a signature of that set: ACQUIREs count the target's work; WAITs
 * would not do (a window's probes lengthen the holds, and contention
 * rises with them) */
static uint64_t ref_hits(const struct governor *g, const uint64_t *h, uint64_t *sig)
{
	uint64_t n = 0;

	*sig = 0;
	for (size_t i = 0; i < g->n_desc; i++)
		if (g->group_of[i] >= 0 && !g->groups[g->group_of[i]].windowed &&
		    is_acquire(g, (uint32_t)i)) {
			n += h[i];
			*sig += ((uint64_t)i + 1) * 2654435761ull;
		}
	return n;
}

/* Once per close: the always-on ACQUIREs' hit rate inside the window
 * that closes and between the last close and this window's open. Their
 * ratio would be the slowdown the window caused as probes that never
 * move see it, but a gap begins with the close's detach, which stalls
 * the target: it is reported (slowdown_measured), not used. The hits
 * and times are the same reads: the open's tick (cycle_start, open_hits,
 * read before the attach) and each close's (before the detach), so an
 * attach counts as inside and a detach as outside. Nothing is measured
 * when the always-on set changed in between. */
static void ref_sample(struct governor *g, uint64_t close_ts)
{
	uint64_t sig, at_open = ref_hits(g, g->open_hits, &sig), in = ref_hits(g, g->hits, &sig);
	uint64_t t_open = g->cycle_start;

	if (g->win_ts >= t_open && t_open >= g->gov_start_ns && close_ts > t_open && in >= at_open &&
	    g->ref_have_close && g->ref_sig == sig && t_open > g->ref_close_ts &&
	    at_open >= g->ref_close_sum) {
		g->ref_in_n += (double)(in - at_open);
		g->ref_in_s += (double)(close_ts - t_open) / 1e9;
		g->ref_out_n += (double)(at_open - g->ref_close_sum);
		g->ref_out_s += (double)(t_open - g->ref_close_ts) / 1e9;
	}
	g->ref_close_ts = close_ts;
	g->ref_close_sum = in;
	g->ref_sig = sig;
	g->ref_have_close = true;
}

/* One window's sample. The rates are corrected for the probes' own
 * slowdown of the target while the window was open (win_share: their
 * estimated cost over the target's CPU time); the sample whose window
 * opened before the warm-up ended (every probe on from the program's
 * start, planned from nothing) is kept apart: a program's start is not
 * its steady state, and it is used only when no window followed. */
void gov_sample_window(struct governor *g, struct gov_group *gr, uint64_t close_ts)
{
	uint64_t acq, ev, len = close_ts > gr->win_open_ns ? close_ts - gr->win_open_ns : 0;
	double s = (double)len / 1e9, f, ra, re, ca, ce;

	if (close_ts != g->ref_close_ts)
		ref_sample(g, close_ts);
	if (!len)
		return;
	gov_group_hits(g, gr, g->hits, &acq, &ev);
	ca = (double)(acq - gr->win_acq0);
	ce = (double)(ev - gr->win_ev0);
	f = 1 / (1 - g->win_share);
	ra = ca / s * f;
	re = ce / s * f;
	gr->acq_in += acq - gr->win_acq0;
	gr->ev_in += ev - gr->win_ev0;
	if (!g->gov_start_ns || gr->win_open_ns < g->gov_start_ns) {
		gr->has_warm = true;
		gr->warm_acq = ra;
		gr->warm_acq_raw = ca / s;
		gr->warm_ev = re;
		gr->warm_s = s;
		return;
	}
	gr->acq_raw_sum += ca / s;
	gr->acq_raw_sumsq += (ca / s) * (ca / s);
	gr->acq_sum += ra;
	gr->acq_sumsq += ra * ra;
	gr->ev_sum += re;
	gr->ev_sumsq += re * re;
	/* the counts are Poisson within a window: var(c / s * f) = c f^2 / s^2 */
	gr->acq_pois += ca * f * f / (s * s);
	gr->ev_pois += ce * f * f / (s * s);
	if (g->win_share > gr->share_max)
		gr->share_max = g->win_share;
	gr->share_capped |= g->win_share >= GOV_SHARE_CAP - 1e-9;
	gr->win_ns += len;
	gr->n_win++;
}

bool gov_any_windowed(const struct governor *g)
{
	for (size_t i = 0; i < g->n_groups; i++)
		if (g->groups[i].windowed)
			return true;
	return false;
}

bool gov_any_detached(const struct governor *g)
{
	for (size_t i = 0; i < g->n_groups; i++)
		if (!g->groups[i].attached)
			return true;
	return false;
}

bool gov_any_open(const struct governor *g)
{
	for (size_t i = 0; i < g->n_groups; i++)
		if (g->groups[i].windowed && g->groups[i].attached)
			return true;
	return false;
}

static const char *desc_id(const struct governor *g, size_t d)
{
	return g->p->manifest->events[g->p->descriptors[d].event].id;
}

static const char *res_name(const struct governor *g, uint32_t r)
{
	return g->p->manifest->resources[r].name;
}

/* "governor: OVER BUDGET: the must-keep sites alone cost X% > P%: ID (Y%), ..." */
void gov_over_budget_note(const struct governor *g, double base, char *buf, size_t sz)
{
	size_t i, off;

	off = (size_t)snprintf(buf, sz, "governor: OVER BUDGET: the always-on sites alone cost "
			       "%.3g%% > %.3g%% and are never detached:",
			       100 * (g->must_rate + g->meter.fx.fixed) / base, 100 * g->o.budget);
	if (g->meter.fx.fixed > 0 && off < sz)
		off += (size_t)snprintf(buf + off, sz - off, " the OS-effects tracepoints (%.3g%%, "
					"measured; this engine cannot turn them off)",
					100 * g->meter.fx.fixed / base);
	for (i = 0; i < g->n_desc && off < sz; i++) {
		if (!g->must[i] || g->rate[i] <= 0)
			continue;
		off += (size_t)snprintf(buf + off, sz - off, " %s (%.3g%%, %.0f hits/s)",
					desc_id(g, i), 100 * g->rate[i] / base, g->hz[i]);
	}
}

/* on for the whole run so far: a must-keep or pinned WAIT, or a
 * descriptor of a resource that is not windowed */
static bool desc_on(const struct governor *g, size_t i)
{
	int gi = g->group_of[i];

	return g->pin[i] || gi < 0 || !g->groups[gi].windowed;
}

/* square root by Newton's method (the tree links without libm) */
static double gov_sqrt(double v)
{
	double x = v > 1 ? v : 1;
	int i;

	if (!(v > 0))
		return 0;
	for (i = 0; i < 64; i++)
		x = 0.5 * (x + v / x);
	return x;
}

/* Student's t, two-sided 95 %, for df degrees of freedom (a table to
 * 30, then 1.96 + 2.4 / df, within 0.2 % of the exact quantile) */
static double t95(size_t df)
{
	static const double t[31] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
		2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
		2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
		2.042 };

	return df <= 30 ? t[df] : 1.96 + 2.4 / (double)df;
}

/* mean and 95 % half-width of n per-window rates: a t-interval on their
 * spread between windows, never narrower than the Poisson noise of the
 * counts inside them (pois = the sum of the windows' Poisson variances);
 * err < 0 when unknown (fewer than 2 windows) */
static void mean_err(double sum, double sumsq, double pois, size_t n, double *mean, double *err)
{
	double var, se2;

	*mean = n ? sum / (double)n : 0;
	*err = -1;
	if (n < 2)
		return;
	var = (sumsq - sum * sum / (double)n) / (double)(n - 1);
	se2 = var > 0 ? var / (double)n : 0;
	if (pois / ((double)n * (double)n) > se2)
		se2 = pois / ((double)n * (double)n);
	*err = t95(n - 1) * gov_sqrt(se2);
}

/* The slowdown a window causes, measured by the always-on sites (the
 * ratio of their hit rates inside and outside the windows), and its
 * variance from their Poisson counts; false when they saw nothing. */
static bool ref_ratio(const struct governor *g, double *rho, double *relvar)
{
	if (!(g->ref_in_n > 0 && g->ref_out_n > 0 && g->ref_in_s > 0 && g->ref_out_s > 0))
		return false;
	*rho = (g->ref_in_n / g->ref_in_s) / (g->ref_out_n / g->ref_out_s);
	*relvar = 1 / g->ref_in_n + 1 / g->ref_out_n;
	return true;
}

/* The ACQUIRE rate estimate of one windowed resource: the windows'
 * counted rates (after the warm-up), divided by the slowdown the windows
 * caused, from the cost model (each window's probe cost over the
 * target's CPU time), which assumes a CPU-bound target: one whose
 * threads mostly wait is slowed less, down to not at all, so the
 * interval runs from the counted rate's lower bound to the corrected
 * rate's upper one. The always-on ACQUIREs' rate inside over between the
 * windows (rho) is reported beside it. err < 0:
 * unknown (fewer than 2 windows); high < 0: the probes took
 * GOV_SHARE_CAP of the target in a window, the model's correction is a
 * guess. */
struct gov_est {
	double mean, err, raw, low, high, rho;
	size_t n;
	const char *basis;	/* "windows", "warm-up only", "none" */
	const char *slowdown;	/* "cost model" */
};

static void acq_estimate(const struct governor *g, const struct gov_group *gr,
			 struct gov_est *e)
{
	double raw_err, relvar;

	memset(e, 0, sizeof(*e));
	e->err = e->low = e->high = e->rho = -1;
	e->n = gr->n_win;
	e->slowdown = "cost model";
	if (!gr->n_win) {
		e->basis = gr->has_warm ? "warm-up only" : "none";
		e->mean = gr->warm_acq;
		e->raw = gr->warm_acq_raw;
		return;
	}
	e->basis = "windows";
	mean_err(gr->acq_sum, gr->acq_sumsq, gr->acq_pois, gr->n_win, &e->mean, &e->err);
	mean_err(gr->acq_raw_sum, gr->acq_raw_sumsq, gr->acq_pois, gr->n_win, &e->raw, &raw_err);
	/* shown, not used: the out-periods hold each close's detach, which
	 * stalls the target (measured on the demo: ratios of 2-5, the
	 * windows "faster" than the gaps), so the ratio overstates the
	 * slowdown; the cost model's range is the stated one */
	if (!ref_ratio(g, &e->rho, &relvar))
		e->rho = -1;
	if (e->err < 0)
		return;
	e->low = e->raw > raw_err ? e->raw - raw_err : 0;
	e->high = gr->share_capped ? -1 : e->mean + e->err;
}

/* estimated overhead of the whole run (the warm-up included), as a
 * fraction of the CPU time net of the probes, and of one CPU's wall time */
static void overheads(const struct governor *g, double *cpu, double *wall)
{
	uint64_t end = g->end_ns ? g->end_ns : g->last_ns;
	uint64_t c1 = g->cpu_end > g->cpu_last ? g->cpu_end : g->cpu_last;
	double cost = g->warm_cost_ns + g->gov_cost_ns;
	double cpu_ns = c1 > g->cpu_start ? (double)(c1 - g->cpu_start) : 0;

	*wall = end > g->start_ns ? cost / (double)(end - g->start_ns) : 0;
	*cpu = cpu_ns > cost ? cost / (cpu_ns - cost) : -1;
}

static json_t *num_or_null(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

static json_t *group_json(const struct governor *g, const struct gov_group *gr)
{
	struct gov_est a;
	double em, ee;
	json_t *o;

	acq_estimate(g, gr, &a);
	mean_err(gr->ev_sum, gr->ev_sumsq, gr->ev_pois, gr->n_win, &em, &ee);
	if (!gr->n_win)
		em = gr->warm_ev;
	o = json_pack("{s:s, s:b, s:f, s:f, s:I, s:f, s:s, s:f, s:o, s:o, s:o, s:f, s:f, s:b}",
		      "resource", res_name(g, gr->res), "windowed", gr->windowed,
		      "full_cost_fraction_of_cpu", g->allowed_rate > 0 ?
		      gr->full_rate * g->o.budget / g->allowed_rate : 0,
		      "warmup_events_per_s", gr->warm_hits_rate,
		      "windows", (json_int_t)gr->n_win,
		      "window_s", (double)gr->win_ns / 1e9,
		      "estimate_basis", a.basis,
		      "acquires_per_s", a.mean, "acquires_per_s_err95", num_or_null(a.err),
		      "acquires_per_s_low95", num_or_null(a.low),
		      "acquires_per_s_high95", num_or_null(a.high),
		      "acquires_per_s_uncorrected", a.raw,
		      "slowdown_share_max", gr->share_max, "slowdown_correction_capped",
		      gr->share_capped);
	if (o && json_object_update_new(o, json_pack("{s:s, s:o}", "slowdown_basis", a.slowdown,
			"slowdown_measured", num_or_null(a.rho))))
		json_decref(o), o = NULL;
	if (o && json_object_update_new(o, json_pack("{s:f, s:o, s:I, s:o}",
			"events_per_s", em, "events_per_s_err95", num_or_null(ee),
			"events_in_windows", (json_int_t)gr->ev_in,
			"warmup_acquires_per_s", gr->has_warm ? json_real(gr->warm_acq) : json_null())))
		json_decref(o), o = NULL;
	return o;
}

json_t *governor__report_json(const struct governor *g)
{
	json_t *o, *groups = json_array(), *on = json_array(), *all = json_array(), *ref;
	double cpu, wall;
	size_t i;

	overheads(g, &cpu, &wall);
	for (i = 0; i < g->n_groups; i++)
		json_array_append_new(groups, group_json(g, &g->groups[i]));
	ref = json_pack("{s:f, s:f, s:f, s:f}", "hits_in_windows", g->ref_in_n, "s_in_windows",
			g->ref_in_s, "hits_between", g->ref_out_n, "s_between", g->ref_out_s);
	for (i = 0; i < g->n_desc; i++) {
		json_t *d = json_pack("{s:s, s:s, s:f, s:f, s:f}", "id", desc_id(g, i), "state",
				      g->must[i] ? "must_keep" : desc_on(g, i) ? "on" : "windowed",
				      "ns_per_hit", g->cost[i], "hits_per_s", g->hz[i],
				      "estimated_cost_ns", g->desc_cost_ns[i]);

		json_array_append_new(all, d);
		if (desc_on(g, i))
			json_array_append_new(on, json_incref(d));
	}
	o = json_pack("{s:f, s:s, s:b, s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:I, s:I, s:o, s:o, "
		      "s:o, s:f, s:f, s:f, s:n, s:s}",
		      "budget", g->o.budget, "costs", g->origin ? g->origin : "default table",
		      "cpu_time_known", g->cpu_known, "estimated_overhead_cpu", cpu,
		      "estimated_overhead_wall", wall, "always_on_fraction",
		      g->allowed_rate > 0 ? g->always_on_rate * g->o.budget / g->allowed_rate : 0,
		      "must_keep_fraction", g->allowed_rate > 0 ?
		      g->must_rate * g->o.budget / g->allowed_rate : 0,
		      "over_budget", g->over_budget, "duty", g->duty,
		      "window_ms", (double)g->window_ns / 1e6, "windows_opened",
		      (json_int_t)g->n_open, "windows_postponed", (json_int_t)g->n_debt_waits,
		      "always_on", on, "descriptors", all, "resources", groups,
		      "last_close_ms", (double)g->close_lat_ns / 1e6,
		      "last_close_probe_cost_ms", g->close_cost_ns / 1e6,
		      "closes_probe_cost_ms", g->close_cost_total_ns / 1e6,
		      "measured_overhead", "measured_overhead_note",
		      "not measured in-process (bench/governor.sh measures throughput)");
	if (o) {
		json_object_set_new(o, "slowdown_reference", ref);
		json_object_set_new(o, "measured", gov_meter_json(g));
		json_object_set_new(o, "windows_extended", json_integer((json_int_t)g->n_ext));
		json_object_set_new(o, "extended_window_ms", g->n_ext ?
				    json_real((double)g->ext_last_ns / 1e6) : json_null());
		json_object_set_new(o, "warmup_cost_ms", json_real(g->warm_cost_ns / 1e6));
		json_object_set_new(o, "estimate_over_budget",
				    json_boolean((cpu >= 0 ? cpu : wall) > g->o.budget));
	} else {
		json_decref(ref);
	}
	return o;
}

/* "≈ 12000 ± 900 acquires/s (95 %, 14 windows; ...)"; with fewer than
 * two windows the error is unknown, never 0 */
static void print_estimate(const struct governor *g, const struct gov_group *gr, FILE *out)
{
	struct gov_est a;

	acq_estimate(g, gr, &a);
	fprintf(out, "  %s: windowed (duty %.3g%%, %zu windows, %.2f s observed): ",
		res_name(g, gr->res), 100 * g->duty, gr->n_win, (double)gr->win_ns / 1e9);
	if (!a.n && !gr->has_warm)
		fprintf(out, "no estimate (no window)");
	else if (!a.n)
		fprintf(out, "≈ %.0f acquires/s ± unknown (warm-up only: the program's start "
			"with every probe on)", a.mean);
	else if (a.err < 0)
		fprintf(out, "≈ %.0f acquires/s ± unknown (1 window)", a.mean);
	else if (a.high < 0)
		fprintf(out, "≈ %.0f ± %.0f acquires/s (95 %%, %zu windows); counted %.0f: the "
			"probes took over %.0f%% of the target in a window, the slowdown "
			"correction is unreliable (at least %.0f)", a.mean, a.err, a.n, a.raw,
			100 * GOV_SHARE_CAP, a.low);
	else
		fprintf(out, "≈ %.0f ± %.0f acquires/s (95 %%, %zu windows); counted %.0f, "
			"x%.2f for the probes' slowdown (CPU-bound target; %.0f-%.0f if it "
			"mostly waits or not)", a.mean, a.err, a.n, a.raw,
			a.raw > 0 ? a.mean / a.raw : 1, a.low, a.high);
	fprintf(out, "; lifetimes crossing a window edge are unknown\n");
}

void governor__report_print(const struct governor *g, FILE *out)
{
	double cpu, wall;
	size_t i;

	overheads(g, &cpu, &wall);
	fprintf(out, "budget %.3g%%: estimated overhead ", g->o.budget * 100);
	if (cpu >= 0)
		fprintf(out, "%.3g%% of the target's CPU time, ", cpu * 100);
	else
		fprintf(out, "(CPU time unknown) ");
	fprintf(out, "%.3g%% of one CPU (costs: %s)\n", wall * 100,
		g->origin ? g->origin : "default table");
	if (g->over_budget)
		fprintf(out, "  OVER BUDGET: the always-on sites alone cost more than %.3g%% "
			"(they are never detached; see the trace notes)\n", g->o.budget * 100);
	else if ((cpu >= 0 ? cpu : wall) > g->o.budget)
		fprintf(out, "  the estimate ended above the budget: the warm-up (every probe "
			"on) cost %.3g ms and the closes %.3g ms at the probes' full rate, more than "
			"this run lasted to pay back (a longer run amortizes them; docs/record.md)\n",
			g->warm_cost_ns / 1e6, g->close_cost_total_ns / 1e6);
	gov_meter_print(g, out);
	for (i = 0; i < g->n_groups; i++) {
		const struct gov_group *gr = &g->groups[i];

		if (gr->windowed)
			print_estimate(g, gr, out);
	}
}

/* the i-th group by cost, dearest first when dear_first (a close: each
 * detach takes time, so the dearest probes go first), else cheapest */
size_t gov_order(const struct governor *g, size_t i, bool dear_first)
{
	size_t k, best = 0, rank;

	for (k = 0; k < g->n_groups; k++) {
		rank = 0;
		for (size_t j = 0; j < g->n_groups; j++) {
			double a = g->groups[j].full_rate, b = g->groups[k].full_rate;

			if (dear_first ? (a > b || (a == b && j < k)) : (a < b || (a == b && j < k)))
				rank++;
		}
		if (rank == i) {
			best = k;
			break;
		}
	}
	return best;
}
