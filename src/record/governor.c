/* SPDX-License-Identifier: BSD-2-Clause */
/* governor.c: record --budget (see governor.h, docs/record.md "Overhead
 * budget"). The model and the window schedule; costs in gov_cost.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/governor.h"
#include "record/governor_int.h"
#include "engine/engine.h"
#include "engine/events.h"
#include "contract/manifest.h"
#include "common/clock.h"

#define NS_PER_S		1e9
#define DEF_WARMUP_NS		1000000000ull
#define DEF_PERIOD_NS		1000000000ull
#define DEF_MIN_WINDOW_NS	20000000ull

static int build_groups(struct governor *g)
{
	const struct manifest *m = g->p->manifest;
	size_t i;

	g->group_of = malloc(g->n_desc * sizeof(*g->group_of));
	g->groups = calloc(m->n_resources ? m->n_resources : 1, sizeof(*g->groups));
	if (!g->group_of || !g->groups)
		return -ENOMEM;
	for (i = 0; i < g->n_desc; i++) {
		const struct plan_descriptor *pd = &g->p->descriptors[i];
		const struct pb_event *ev = &m->events[pd->event];
		struct gov_group *gr = NULL;
		size_t k;

		g->group_of[i] = -1;
		/* WAIT spans are high-value and self-contained: always on */
		if (ev->kind == PB_EV_WAIT || pd->status != PLAN_DESC_OK || !pd->n_sites)
			continue;
		for (k = 0; k < g->n_groups; k++)
			if (g->groups[k].res == (uint32_t)ev->resource_idx)
				gr = &g->groups[k];
		if (!gr) {
			gr = &g->groups[g->n_groups++];
			gr->res = (uint32_t)ev->resource_idx;
			gr->attached = true;
		}
		if (gr->n_desc < GOV_GROUP_MAX_DESC) {
			size_t at = gr->n_desc++;

			/* ACQUIREs last: attached last, detached first, so no
			 * lifetime opens while its RELEASE probe is off */
			if (ev->kind != PB_EV_ACQUIRE) {
				while (at > 0 && m->events[g->p->descriptors[
					gr->descs[at - 1]].event].kind == PB_EV_ACQUIRE) {
					gr->descs[at] = gr->descs[at - 1];
					at--;
				}
			}
			gr->descs[at] = (uint32_t)i;
			g->group_of[i] = (int)(gr - g->groups);
		}
	}
	return 0;
}

struct governor *governor__new(const struct plan *p, const struct gov_cost_source *c,
			       const struct gov_opts *o)
{
	struct governor *g;

	if (!p || !c || !o || c->n != p->n_descriptors || !(o->budget > 0 && o->budget <= 1)) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->p = p;
	g->o = *o;
	g->o.warmup_ns = o->warmup_ns ? o->warmup_ns : DEF_WARMUP_NS;
	g->o.period_ns = o->period_ns ? o->period_ns : DEF_PERIOD_NS;
	g->o.min_window_ns = o->min_window_ns ? o->min_window_ns : DEF_MIN_WINDOW_NS;
	g->n_desc = p->n_descriptors;
	g->cost = c->ns_per_hit;
	g->origin = c->origin;
	g->hits = calloc(g->n_desc + 1, sizeof(*g->hits));
	g->prev = calloc(g->n_desc + 1, sizeof(*g->prev));
	g->warm_hits = calloc(g->n_desc + 1, sizeof(*g->warm_hits));
	g->desc_cost_ns = calloc(g->n_desc + 1, sizeof(*g->desc_cost_ns));
	if (!g->hits || !g->prev || !g->warm_hits || !g->desc_cost_ns || build_groups(g)) {
		governor__free(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

/* Account the probe cost of the hits since the last read. */
static int account(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns)
{
	size_t i;
	int err = engine__desc_hits(e, g->hits, g->n_desc);
	double cost = 0;

	if (err)
		return err;
	for (i = 0; i < g->n_desc; i++) {
		double c = (double)(g->hits[i] - g->prev[i]) * g->cost[i];

		g->desc_cost_ns[i] += c;
		cost += c;
		g->prev[i] = g->hits[i];
	}
	if (g->phase == GOV_WARMUP)
		g->warm_cost_ns += cost;
	else
		g->gov_cost_ns += cost;
	if (cpu_ns) {
		if (!g->cpu_first)
			g->cpu_first = cpu_ns;
		if (cpu_ns > g->cpu_last)
			g->cpu_last = cpu_ns;
	}
	g->last_ns = now;
	return 0;
}

/* probe ns per s of descriptor i since the last decision, per second it
 * was attached (windowed groups: their windows' time) */
static double desc_rate(const struct governor *g, size_t i, double secs)
{
	int gi = g->group_of[i];
	double on = secs;

	if (gi >= 0 && g->groups[gi].windowed)
		on = (double)g->groups[gi].win_ns_dec / NS_PER_S;
	return on > 0 ? (double)(g->hits[i] - g->warm_hits[i]) * g->cost[i] / on : 0;
}

static void decide_note(struct governor *g, double total, double base, size_t n_on,
			double secs, gov_emit_fn emit, void *ctx)
{
	char note[512];

	snprintf(note, sizeof(note),
		 "governor: budget %.3g%% of %s; estimated cost %.3g%% with every probe on; "
		 "always on: the WAITs and %zu of %zu resources (%.3g%%)%s; %zu windowed at "
		 "duty %.3g%% (%.0f ms every %.0f ms); costs from the %s",
		 g->o.budget * 100, g->cpu_known ? "the target's CPU time" : "one CPU (CPU time unknown)",
		 100 * total / base, n_on, g->n_groups, 100 * g->always_on_rate / base,
		 g->over_budget ? ": OVER BUDGET" : "", g->n_groups - n_on, 100 * g->duty,
		 (double)g->window_ns / 1e6, (double)g->cycle_ns / 1e6,
		 g->origin ? g->origin : "default table");
	emit(NULL, 0, note, ctx);
	if (g->over_budget) {
		gov_over_budget_note(g, secs, base, note, sizeof(note));
		emit(NULL, 0, note, ctx);
	}
}

/* Over 80 lines because the decision is one story: rates since the last
 * decision -> allowance -> always-on set (WAITs, cheap resources) ->
 * over-budget verdict -> duty and window length of the windowed ones ->
 * a note when the plan changed. */
static void decide(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		   gov_emit_fn emit, void *ctx)
{
	double secs = (double)(now - g->dec_ns) / NS_PER_S, base, allowed, share, hot = 0;
	double on = 0, total = 0, spent = 0, old_duty = g->duty;
	size_t i, n_on = 0;
	bool changed = !g->decided;

	if (engine__desc_hits(e, g->hits, g->n_desc) || secs <= 0)
		return;
	for (i = 0; i < g->n_desc; i++) {
		total += desc_rate(g, i, secs);
		spent += (double)(g->hits[i] - g->warm_hits[i]) * g->cost[i] / secs;
		if (g->group_of[i] < 0)
			on += desc_rate(g, i, secs);
	}
	/* CPU ns per s of wall; the probes' cost is inside it (the trap runs
	 * in the target's context): the budget is a fraction of the rest */
	g->cpu_rate = cpu_ns > g->dec_cpu ? (double)(cpu_ns - g->dec_cpu) / secs : 0;
	g->cpu_known = g->cpu_rate > 0;
	base = g->cpu_known ? g->cpu_rate - spent : NS_PER_S;
	if (base < 0.01 * NS_PER_S)
		base = 0.01 * NS_PER_S;	/* an idle target: 1 % of a CPU */
	allowed = g->o.budget * base;
	g->allowed_rate = allowed;
	g->base_rate = base;
	/* the threshold derived from the budget: half of the allowance,
	 * shared evenly, is what one resource may cost and stay always on */
	share = g->n_groups ? allowed / 2 / (double)g->n_groups : allowed;
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];
		bool was = gr->windowed;

		gr->full_rate = 0;
		for (size_t k = 0; k < gr->n_desc; k++)
			gr->full_rate += desc_rate(g, gr->descs[k], secs);
		gr->windowed = gr->full_rate > share;
		changed |= was != gr->windowed;
		if (gr->windowed)
			hot += gr->full_rate;
		else
			on += gr->full_rate;
	}
	g->always_on_rate = on;
	g->over_budget = on > allowed;
	g->duty = hot > 0 ? (allowed - on) / hot : 1;
	if (g->duty < GOV_MIN_DUTY)
		g->duty = GOV_MIN_DUTY;
	if (g->duty >= 1) {
		g->duty = 1;
		for (i = 0; i < g->n_groups; i++) {
			changed |= g->groups[i].windowed;
			g->groups[i].windowed = false;
		}
	}
	for (i = 0; i < g->n_groups; i++) {
		n_on += !g->groups[i].windowed;
		g->groups[i].win_ns_dec = 0;
	}
	g->window_ns = (uint64_t)(g->duty * (double)g->o.period_ns);
	g->cycle_ns = g->o.period_ns;
	if (g->window_ns < g->o.min_window_ns) {
		g->window_ns = g->o.min_window_ns;
		g->cycle_ns = (uint64_t)((double)g->window_ns / g->duty);
	}
	changed |= g->over_budget != g->was_over ||
		   g->duty > 1.5 * old_duty || g->duty < old_duty / 1.5;
	if (changed)
		decide_note(g, total, base, n_on, secs, emit, ctx);
	g->was_over |= g->over_budget;
	g->decided = true;
	memcpy(g->warm_hits, g->hits, g->n_desc * sizeof(*g->hits));
	g->dec_ns = now;
	g->dec_cpu = cpu_ns;
}

static bool is_acq(const struct governor *g, uint32_t d)
{
	return g->p->manifest->events[g->p->descriptors[d].event].kind == PB_EV_ACQUIRE;
}

static int set_group(struct governor *g, struct engine *e, struct gov_group *gr, bool on,
		     uint64_t *ts, gov_emit_fn emit, void *ctx)
{
	struct pb_rec_window w = { 0 };
	size_t k, changed;
	int err = 0, err2;

	if (!on) {
		*ts = pb_mono_ns();	/* the window ends before the first detach */
		/* from now on not-active USE/RELEASE are unknown */
		err = engine__forget_resource(e, gr->res, NULL);
	}
	for (k = 0; k < gr->n_desc; k++) {
		/* open: RELEASE/USE first, ACQUIREs last; close: the reverse */
		uint32_t d = gr->descs[on ? k : gr->n_desc - 1 - k];
		bool acq = is_acq(g, d);

		err2 = engine__set_desc(e, d, on, &changed);
		if (err2 && !err)
			err = err2;
		/* once the ACQUIREs are off, nothing opened is judged as lost */
		if (!on && acq && (k + 1 == gr->n_desc || !is_acq(g, gr->descs[gr->n_desc - 2 - k])))
			err2 = engine__forget_resource(e, gr->res, NULL);
		if (err2 && !err)
			err = err2;
	}
	err2 = on ? 0 : engine__forget_resource(e, gr->res, NULL);
	if (err2 && !err)
		err = err2;
	if (on)
		*ts = pb_mono_ns();	/* ... and begins after the last attach */
	gr->attached = on;
	w.hdr.type = PB_REC_WINDOW;
	w.hdr.version = PB_EVENTS_VERSION;
	w.hdr.size = sizeof(w);
	w.hdr.ts_ns = *ts;
	w.resource = gr->res;
	w.open = on;
	w.n_desc = (uint32_t)gr->n_desc;
	w.duty_ppm = (uint32_t)(g->duty * 1e6);
	emit(&w, sizeof(w), NULL, ctx);
	return err;
}

/* the i-th group by cost, dearest first when dear_first (a close: each
 * detach takes time, so the dearest probes go first), else cheapest */
static size_t gov_order(const struct governor *g, size_t i, bool dear_first)
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

/* open (on) or close every windowed resource; at a close, one sample of
 * each resource's ACQUIRE rate for the estimates */
static int set_windows(struct governor *g, struct engine *e, bool on, gov_emit_fn emit,
		       void *ctx)
{
	uint64_t ts = 0;
	size_t i;
	int err = 0, err2;

	if (!on) {
		err = engine__desc_hits(e, g->hits, g->n_desc);
		if (err)
			return err;
	}
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[gov_order(g, i, !on)];

		/* open: every detached resource (one no longer windowed
		 * stays on); close: the windowed ones */
		if (gr->attached == on || (!on && !gr->windowed))
			continue;
		err2 = set_group(g, e, gr, on, &ts, emit, ctx);
		if (err2 && !err)
			err = err2;
		if (on) {
			gr->win_open_ns = ts;
			gov_group_hits(g, gr, g->hits, &gr->win_acq0, &gr->win_ev0);
		} else {
			gov_sample_window(g, gr, ts);
		}
	}
	if (on) {
		g->n_open++;
		g->next_ns = ts + g->window_ns;
	} else {
		/* attaching and detaching take time (the kernel waits for
		 * running probes): the cycle stretches so that the time the
		 * probes were actually on stays its duty share */
		uint64_t end = pb_mono_ns(), spent = end - g->cycle_start;
		uint64_t cycle = g->duty > 0 ? (uint64_t)((double)spent / g->duty) : g->cycle_ns;

		g->next_ns = g->cycle_start + (cycle > g->cycle_ns ? cycle : g->cycle_ns);
	}
	return err;
}

int governor__tick(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		   gov_emit_fn emit, void *ctx)
{
	int err;

	if (!g->start_ns) {
		g->start_ns = g->dec_ns = now;
		g->cpu_start = g->dec_cpu = cpu_ns;
		g->next_ns = now + g->o.warmup_ns;
		for (size_t i = 0; i < g->n_groups; i++)
			g->groups[i].win_open_ns = now;	/* attached from the start */
	}
	err = account(g, e, now, cpu_ns);
	if (err || now < g->next_ns)
		return err;
	if (g->phase == GOV_WARMUP) {
		g->phase = GOV_GOVERNED;
		g->gov_start_ns = now;
		g->cpu_gov_start = cpu_ns;
	}
	if (g->decided && gov_any_open(g))
		return set_windows(g, e, false, emit, ctx);
	/* a cycle starts: re-plan from the rates since the last plan, then
	 * close what became windowed and open what is due */
	decide(g, e, now, cpu_ns, emit, ctx);
	g->cycle_start = now;
	if (gov_any_open(g))	/* newly windowed: their window ends now */
		return set_windows(g, e, false, emit, ctx);
	err = set_windows(g, e, true, emit, ctx);
	if (!gov_any_windowed(g))
		g->next_ns = now + g->o.period_ns;
	return err;
}

int governor__next_ms(const struct governor *g, uint64_t now, int cap)
{
	uint64_t left;

	if (!g || g->next_ns == UINT64_MAX)
		return cap;
	if (g->next_ns <= now)
		return 0;
	left = (g->next_ns - now + 999999) / 1000000;
	return left < (uint64_t)cap ? (int)left : cap;
}

void governor__finish(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		      gov_emit_fn emit, void *ctx)
{
	if (!g->start_ns)
		return;
	account(g, e, now, cpu_ns);
	if (g->phase == GOV_GOVERNED && gov_any_open(g))
		set_windows(g, e, false, emit, ctx);
	g->end_ns = now;
	g->cpu_end = cpu_ns;
}

bool governor__over_budget(const struct governor *g)
{
	return g && g->over_budget;
}

void governor__free(struct governor *g)
{
	if (!g)
		return;
	free(g->group_of);
	free(g->groups);
	free(g->hits);
	free(g->prev);
	free(g->warm_hits);
	free(g->desc_cost_ns);
	free(g);
}
