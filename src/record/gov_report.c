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

void gov_sample_window(struct governor *g, struct gov_group *gr, uint64_t close_ts)
{
	uint64_t acq, ev, len = close_ts > gr->win_open_ns ? close_ts - gr->win_open_ns : 0;
	double s = (double)len / 1e9, ra, re;

	if (!len)
		return;
	gov_group_hits(g, gr, g->hits, &acq, &ev);
	ra = (double)(acq - gr->win_acq0) / s;
	re = (double)(ev - gr->win_ev0) / s;
	gr->acq_raw_sum += ra;
	/* the probes slowed the target while the window was open: the rate
	 * without them is the counted one over the share of CPU left */
	ra /= 1 - g->win_share;
	re /= 1 - g->win_share;
	gr->acq_in += acq - gr->win_acq0;
	gr->ev_in += ev - gr->win_ev0;
	gr->acq_sum += ra;
	gr->acq_sumsq += ra * ra;
	gr->ev_sum += re;
	gr->ev_sumsq += re * re;
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
			       100 * g->must_rate / base, 100 * g->o.budget);
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

/* mean and 95 % half-width of the per-window rates */
static void mean_err(double sum, double sumsq, size_t n, double *mean, double *err)
{
	double var;

	*mean = n ? sum / (double)n : 0;
	*err = 0;
	if (n < 2)
		return;
	var = (sumsq - sum * sum / (double)n) / (double)(n - 1);
	*err = var > 0 ? 1.96 * gov_sqrt(var / (double)n) : 0;
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

static json_t *group_json(const struct governor *g, const struct gov_group *gr)
{
	double am, ae, em, ee;

	mean_err(gr->acq_sum, gr->acq_sumsq, gr->n_win, &am, &ae);
	mean_err(gr->ev_sum, gr->ev_sumsq, gr->n_win, &em, &ee);
	return json_pack("{s:s, s:b, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:I}",
			 "resource", res_name(g, gr->res), "windowed", gr->windowed,
			 "full_cost_fraction_of_cpu", g->allowed_rate > 0 ?
			 gr->full_rate * g->o.budget / g->allowed_rate : 0,
			 "warmup_events_per_s", gr->warm_hits_rate,
			 "windows", (json_int_t)gr->n_win,
			 "window_s", (double)gr->win_ns / 1e9,
			 "acquires_per_s", am, "acquires_per_s_err95", ae,
			 "acquires_per_s_uncorrected", gr->n_win ? gr->acq_raw_sum / (double)gr->n_win : 0,
			 "events_per_s", em, "events_per_s_err95", ee,
			 "events_in_windows", (json_int_t)gr->ev_in);
}

json_t *governor__report_json(const struct governor *g)
{
	json_t *o, *groups = json_array(), *on = json_array(), *all = json_array();
	double cpu, wall;
	size_t i;

	overheads(g, &cpu, &wall);
	for (i = 0; i < g->n_groups; i++)
		json_array_append_new(groups, group_json(g, &g->groups[i]));
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
		      "s:o, s:f, s:n, s:s}",
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
		      "measured_overhead", "measured_overhead_note",
		      "not measured in-process (bench/governor.sh measures throughput)");
	return o;
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
	for (i = 0; i < g->n_groups; i++) {
		const struct gov_group *gr = &g->groups[i];
		double am, ae;

		if (!gr->windowed)
			continue;
		mean_err(gr->acq_sum, gr->acq_sumsq, gr->n_win, &am, &ae);
		fprintf(out, "  %s: windowed (duty %.3g%%, %zu windows, %.2f s observed): ",
			res_name(g, gr->res), 100 * g->duty, gr->n_win, (double)gr->win_ns / 1e9);
		if (gr->n_win > 1)
			fprintf(out, "≈ %.0f ± %.0f acquires/s", am, ae);
		else
			fprintf(out, "≈ %.0f acquires/s (one window: no error estimate)", am);
		fprintf(out, "; lifetimes crossing a window edge are unknown\n");
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
