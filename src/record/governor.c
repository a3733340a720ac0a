/* SPDX-License-Identifier: BSD-2-Clause */
/* governor.c: record --budget (see governor.h, docs/record.md "Overhead
 * budget"). The model and the window schedule; the window edges in
 * gov_window.c, costs and the report in gov_report.c. */
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
#define GOV_WARM_TICK_NS	10000000ull	/* the warm-up is checked every 10 ms */
#define GOV_WARM_HORIZON_S	0.25	/* it may spend the budget of 250 ms */
/* overspending re-plans at most every 10 ms (a load starting after the
 * warm-up runs every probe at full rate until then: at 100 ms, 1 % of a
 * 12 s PostgreSQL run), so the governor ticks that often (next_ms);
 * the CPU time is read for it every 100 ms */
#define GOV_RECHECK_NS		10000000ull
#define GOV_CPU_RECHECK_NS	100000000ull
#define GOV_SLACK_S		0.1	/* ... by more than the budget of 100 ms */

/* every probed descriptor of a resource in one group (its WAITs too: a
 * WAIT that does not fit the budget is windowed with its resource) */
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
		if (pd->status != PLAN_DESC_OK || !pd->n_sites)
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
				while (at > 0 && gov_desc_kind(g, gr->descs[at - 1]) == PB_EV_ACQUIRE) {
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
	size_t n;

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
	g->origin = c->origin;
	n = g->n_desc + 1;
	g->hits = calloc(n, sizeof(*g->hits));
	g->events = calloc(n, sizeof(*g->events));
	g->total_ns = calloc(n, sizeof(*g->total_ns));
	g->prev = calloc(n, sizeof(*g->prev));
	g->warm_hits = calloc(n, sizeof(*g->warm_hits));
	g->open_hits = calloc(n, sizeof(*g->open_hits));
	g->det_hits = calloc(2 * n, sizeof(*g->det_hits));
	g->desc_cost_ns = calloc(n, sizeof(*g->desc_cost_ns));
	g->pin = calloc(n, sizeof(*g->pin));
	g->pin_old = calloc(n, sizeof(*g->pin_old));
	g->must = calloc(n, sizeof(*g->must));
	g->rate = calloc(n, sizeof(*g->rate));
	g->hz = calloc(n, sizeof(*g->hz));
	if (!g->hits || !g->events || !g->total_ns || !g->prev || !g->warm_hits || !g->open_hits || !g->desc_cost_ns || !g->det_hits ||
	    !g->pin || !g->pin_old || !g->must || !g->rate || !g->hz || build_groups(g) ||
	    gov_meter_init(g, c->ns_per_hit)) {
		governor__free(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

/* Account the probe cost of the hits since the last read (the OS
 * effects' measured cost: at once when `exact`, else polled). */
static int account(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		   bool exact)
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
	/* the OS effects, as measured */
	cost += exact ? gov_meter_read(g, e, now) : gov_meter_poll(g, e, now);
	if (g->phase == GOV_WARMUP)
		g->warm_cost_ns += cost;
	else
		g->gov_cost_ns += cost;
	if (cpu_ns) {
		if (!g->cpu_first)
			g->cpu_first = cpu_ns;
		if (cpu_ns > g->cpu_last) {
			g->cpu_last = cpu_ns;
			g->cpu_last_ns = now;
		}
	}
	g->last_ns = now;
	return 0;
}

/* The ledger: probe cost spent since the start (warm-up included) and
 * what the budget allows for the target's CPU time net of it. */
static void ledger(const struct governor *g, uint64_t now, double *spent, double *allowed)
{
	double cpu = g->cpu_last > g->cpu_start ? (double)(g->cpu_last - g->cpu_start) : 0;
	double idle = 0.01 * (double)(now - g->start_ns), base;

	*spent = g->warm_cost_ns + g->gov_cost_ns;
	base = cpu - *spent;
	if (base < idle)
		base = idle;	/* an idle target: 1 % of a CPU */
	*allowed = g->o.budget * base;
}

/* Measure each descriptor's rates since the last decision, per second it
 * was attached; a descriptor not attached since keeps its last figures. */
static void measure(struct governor *g, uint64_t now, double secs)
{
	size_t i;

	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (gr->att_ns)
			gr->on_ns_dec += now - (gr->att_ns > g->dec_ns ? gr->att_ns : g->dec_ns);
	}
	for (i = 0; i < g->n_desc; i++) {
		int gi = g->group_of[i];
		/* not the hits while a close detached it: its time is not in on */
		double on = secs, n = (double)(g->hits[i] - g->warm_hits[i]) -
				      (double)(g->det_hits[i] - g->det_hits[g->n_desc + i]);

		if (gi < 0)
			continue;
		/* a pinned WAIT stayed attached; the others moved with their group */
		if (!g->pin[i] || !g->decided)
			on = (double)g->groups[gi].on_ns_dec / NS_PER_S;
		if (on > secs)
			on = secs;
		if (on * NS_PER_S < (double)g->o.min_window_ns / 2 && g->decided)
			continue;	/* too little seen: keep the last figures */
		g->hz[i] = on > 0 ? n / on : 0;
		g->rate[i] = g->hz[i] * g->cost[i];
	}
	for (i = 0; i < g->n_groups; i++)
		g->groups[i].on_ns_dec = 0;
}

/* sort helper: indices by rate, cheapest first (n is small) */
static void by_rate(size_t *idx, size_t n, const double *r)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && r[idx[k]] < r[idx[k - 1]]; k--) {
			size_t t = idx[k];

			idx[k] = idx[k - 1];
			idx[k - 1] = t;
		}
}

/* WAITs first (value), cheapest first: a rare one (<= GOV_RARE_HZ hits/s)
 * is must-keep whatever it costs; another stays pinned on while the
 * always-on set fits the allowance (a contention's evidence is its WAIT
 * spans: they come before the windows); returns the always-on rate */
static double classify_waits(struct governor *g, double allowed)
{
	size_t i, n = 0, *idx = malloc(g->n_desc * sizeof(*idx));
	double on = 0;

	g->must_rate = 0;
	if (!idx)
		return 0;
	for (i = 0; i < g->n_desc; i++) {
		g->pin[i] = g->must[i] = false;
		if (g->group_of[i] >= 0 && gov_desc_kind(g, i) == PB_EV_WAIT)
			idx[n++] = i;
	}
	by_rate(idx, n, g->rate);
	for (i = 0; i < n; i++)
		if (g->hz[idx[i]] <= GOV_RARE_HZ) {
			g->must[idx[i]] = g->pin[idx[i]] = true;
			g->must_rate += g->rate[idx[i]];
		}
	on = g->must_rate;
	for (i = 0; i < n; i++)
		if (!g->must[idx[i]] && on + g->rate[idx[i]] <= allowed) {
			g->pin[idx[i]] = true;
			on += g->rate[idx[i]];
		}
	free(idx);
	return on;
}

/* cheap resources (their unpinned descriptors) join the always-on set
 * while it fits half the allowance; the rest are windowed. Returns the
 * windowed ones' full rate. */
static double classify_groups(struct governor *g, double allowed, double *on, bool *changed)
{
	size_t i, k, *idx = malloc((g->n_groups + 1) * sizeof(*idx));
	double *full = calloc(g->n_groups + 1, sizeof(*full)), hot = 0;

	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		gr->full_rate = 0;
		for (k = 0; k < gr->n_desc; k++)
			if (!g->pin[gr->descs[k]])
				gr->full_rate += g->rate[gr->descs[k]];
		if (full)
			full[i] = gr->full_rate;
		if (idx)
			idx[i] = i;
	}
	if (idx && full)
		by_rate(idx, g->n_groups, full);
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[idx && full ? idx[i] : i];
		bool was = gr->windowed;

		gr->windowed = gr->full_rate > 0 && *on + gr->full_rate > allowed / 2;
		gr->on_streak = gr->windowed ? 0 : gr->on_streak + 1;
		*changed |= was != gr->windowed;
		if (gr->windowed)
			hot += gr->full_rate;
		else
			*on += gr->full_rate;
	}
	free(idx);
	free(full);
	return hot;
}

static void decide_note(struct governor *g, double total, double base, size_t n_on,
			gov_emit_fn emit, void *ctx)
{
	char note[768];

	snprintf(note, sizeof(note),
		 "governor: budget %.3g%% of %s; estimated cost %.3g%% with every probe on; "
		 "always on: %zu of %zu resources and the WAITs that fit or are rare (%.3g%%)%s; "
		 "%zu windowed at duty %.3g%% (%.0f ms every %.0f ms, when the budget ledger "
		 "allows); OS effects %.3g%% (measured), %s; costs from the %s",
		 g->o.budget * 100, g->cpu_known ? "the target's CPU time" : "one CPU (CPU time unknown)",
		 100 * total / base, n_on, g->n_groups, 100 * g->always_on_rate / base,
		 g->over_budget ? ": OVER BUDGET" : "", g->n_groups - n_on, 100 * g->duty,
		 (double)g->window_ns / 1e6, (double)g->cycle_ns / 1e6, 100 * g->meter.fx.rate / base,
		 !g->meter.gate ? "always on (cannot be turned off)" :
		 g->meter.fx.windowed ? "on inside the windows only (cross-layer checks and joins "
		 "outside them: unjudged, not seen)" : "always on",
		 g->origin ? g->origin : "default table");
	emit(NULL, 0, note, ctx);
	if (g->over_budget) {
		gov_over_budget_note(g, base, note, sizeof(note));
		emit(NULL, 0, note, ctx);
	}
}

/* The last close's probe cost as time at the windowed probes' full rate
 * hot (probe ns per s). */
static uint64_t close_equiv_ns(const struct governor *g, double hot)
{
	return hot > 0 ? (uint64_t)(g->close_cost_ns / hot * NS_PER_S) : 0;
}

/* duty and window length of the windowed resources: what is left of the
 * allowance after the always-on set, over their full cost */
static void set_duty(struct governor *g, double allowed, double on, double hot, bool *changed)
{
	uint64_t close_ns, hold_ns;
	size_t i;

	g->duty = hot > 0 ? (allowed - on) / hot : 1;
	if (g->duty >= 1) {
		g->duty = 1;
		for (i = 0; i < g->n_groups; i++) {
			*changed |= g->groups[i].windowed;
			g->groups[i].windowed = false;
		}
	}
	if (g->duty < 0)
		g->duty = 0;
	g->window_ns = (uint64_t)((g->duty > GOV_MIN_DUTY ? g->duty : GOV_MIN_DUTY) *
				  (double)g->o.period_ns);
	if (g->window_ns < g->o.min_window_ns)
		g->window_ns = g->o.min_window_ns;
	if (g->window_ns < GOV_HOLD_WINDOW_NS && g->o.min_window_ns < GOV_HOLD_WINDOW_NS)
		g->window_ns = GOV_HOLD_WINDOW_NS;
	/* longer when a close cut holds older than a quarter of its window
	 * (gov_hold.c) */
	hold_ns = gov_hold_window(g->hold_want_ns, g->hold_seen_ns);
	if (g->window_ns < hold_ns)
		g->window_ns = hold_ns;
	/* every close costs the hits of the probes that fire until their
	 * breakpoints are gone (close_cost_ns, counted at the last close):
	 * a window shorter than that cost's worth at full rate spends more on
	 * its close than on what it sees, so it lasts at least that, and the
	 * cycle pays for both */
	close_ns = close_equiv_ns(g, hot);
	if (g->window_ns < close_ns)
		g->window_ns = close_ns;
	g->cycle_ns = g->duty > 0 ? (uint64_t)((double)(g->window_ns + close_ns) / g->duty) :
				    g->o.period_ns;
	if (g->cycle_ns < g->o.period_ns)
		g->cycle_ns = g->o.period_ns;
}

/* A WAIT's pin changed while its resource is detached between windows:
 * a newly pinned one attaches now, an unpinned one detaches now (a WAIT
 * span is self-contained: no lifetime is cut). */
static void apply_pins(struct governor *g, struct engine *e, const bool *old)
{
	size_t i, changed;

	for (i = 0; i < g->n_desc; i++) {
		int gi = g->group_of[i];

		if (gi < 0 || g->groups[gi].attached || old[i] == g->pin[i])
			continue;
		engine__set_desc(e, (uint32_t)i, g->pin[i], &changed);
	}
}

/* A decision: rates since the last one -> allowance -> always-on set
 * (rare WAITs, WAITs that fit, cheap resources) -> over-budget verdict
 * -> duty of the windowed ones -> a note when the plan changed. */
static void decide(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		   gov_emit_fn emit, void *ctx)
{
	double secs = (double)(now - g->dec_ns) / NS_PER_S, base, allowed, hot, on;
	double total = 0, spent, old_duty = g->duty;
	struct gov_fx *fx = &g->meter.fx;
	size_t i, n_on = 0;
	bool changed = !g->decided, was_over, *old = g->pin_old;

	if (engine__desc_hits(e, g->hits, g->n_desc) || secs <= 0)
		return;
	memcpy(old, g->pin, g->n_desc * sizeof(*old));
	/* the effects read at once (account() polls them), then per-hit
	 * costs with the measured probe programs, effects' rate */
	*(g->phase == GOV_WARMUP ? &g->warm_cost_ns : &g->gov_cost_ns) += gov_meter_read(g, e, now);
	spent = gov_meter_plan(g) / secs;
	measure(g, now, secs);
	for (i = 0; i < g->n_desc; i++) {
		total += g->rate[i];
		spent += (double)(g->hits[i] - g->warm_hits[i]) * g->cost[i] / secs;
	}
	/* CPU ns per s of wall; the probes' cost is inside it (the trap runs
	 * in the target's context): the budget is a fraction of the rest */
	g->cpu_rate = cpu_ns > g->dec_cpu ? (double)(cpu_ns - g->dec_cpu) / secs : 0;
	if ((!(g->cpu_rate > 0) || now - g->dec_ns < g->o.period_ns * 9 / 10) &&
	    g->cpu_last > g->cpu_start)
		/* an early re-plan, or no read since the last one (reads are
		 * rate-limited): the run's mean so far */
		g->cpu_rate = g->cpu_last_ns > g->start_ns ? (double)(g->cpu_last - g->cpu_start) /
			      ((double)(g->cpu_last_ns - g->start_ns) / NS_PER_S) : 0;
	g->cpu_known = g->cpu_rate > 0;
	base = g->cpu_known ? g->cpu_rate - spent : NS_PER_S;
	if (base < 0.01 * NS_PER_S)
		base = 0.01 * NS_PER_S;	/* an idle target: 1 % of a CPU */
	allowed = g->o.budget * base;
	g->allowed_rate = allowed;
	g->base_rate = base;
	fx->gate = g->meter.gate;
	fx->rate = g->meter.fx_rate;
	if (total + fx->rate <= allowed) {	/* everything fits: nothing is windowed */
		for (i = 0; i < g->n_desc; i++)
			g->pin[i] = g->must[i] = false;
		g->must_rate = 0;
		on = 0;
		hot = classify_groups(g, 2 * total + 1, &on, &changed);
		gov_fx_plan(fx, 2 * (total + fx->rate) + 1, &on, &hot);
	} else {
		on = classify_waits(g, allowed);
		hot = classify_groups(g, allowed, &on, &changed);
		gov_fx_plan(fx, allowed, &on, &hot);
	}
	g->always_on_rate = on;
	g->hot_rate = hot;
	was_over = g->over_budget;
	g->over_budget = g->must_rate + fx->fixed > allowed;
	if (!fx->windowed)
		gov_meter_effects(g, e, now, true);
	else if (!gov_any_open(g))
		gov_meter_effects(g, e, now, false);
	set_duty(g, allowed, on, hot, &changed);
	for (i = 0; i < g->n_groups; i++)
		n_on += !g->groups[i].windowed;
	changed |= g->over_budget != was_over || g->duty > 1.5 * old_duty || g->duty < old_duty / 1.5;
	if (changed)
		decide_note(g, total, base, n_on, emit, ctx);
	g->was_over |= g->over_budget;
	apply_pins(g, e, old);
	g->decided = true;
	memcpy(g->warm_hits, g->hits, g->n_desc * sizeof(*g->hits));
	memcpy(g->det_hits + g->n_desc, g->det_hits, g->n_desc * sizeof(*g->det_hits));
	g->dec_ns = now;
	g->dec_cpu = cpu_ns;
}

/* A close (at *ts): marks, the detach (gov_window.c), its cost, the
 * effects off; a joint close may keep the cheap ones open (gov_extend). */
static int close_windows(struct governor *g, struct engine *e, gov_emit_fn emit, void *ctx,
			 uint64_t *ts)
{
	double cc = g->close_cost_ns;
	uint64_t cl = g->close_lat_ns;
	bool ext_close;
	int err, err2;

	err = engine__desc_hits(e, g->hits, g->n_desc);
	if (err)
		return err;
	ext_close = gov_ext_close(g);	/* the extended ones close */
	gov_window_share(g);
	/* the close marks go into the trace before the detach, after every
	 * record already in the ring buffer: a reader then sees the events
	 * that fire while the links are being destroyed (in parallel,
	 * gov_window.c) after the mark, outside the window, where a lifetime
	 * they would open is not opened */
	emit(NULL, 0, NULL, ctx);
	*ts = pb_mono_ns();
	if (!ext_close && g->ext_ok) {
		double spent, allowed;

		ledger(g, *ts, &spent, &allowed);	/* what is left after this close */
		gov_extend(g, *ts, allowed - spent - g->close_cost_ns);
	}
	g->ext_ok = false;
	for (size_t i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[gov_order(g, i, true)];

		if (!gr->attached || !gr->windowed || gr->ext)
			continue;
		gr->n_move = gov_movable(g, gr);
		gov_window_mark(g, gr, false, *ts, emit, ctx);
	}
	err = gov_close_groups(g, e, *ts);
	g->close_lat_ns = pb_mono_ns() - *ts;
	err2 = gov_close_cost(g, e);
	if (err2 && !err)
		err = err2;
	if (ext_close) {	/* a few cheap probes: not the next close's cost */
		g->ext_cost_ns += g->close_cost_ns;
		g->close_cost_ns = cc;
		g->close_lat_ns = cl;
	}
	if (g->meter.fx.windowed)	/* after the probes are gone */
		gov_meter_effects(g, e, pb_mono_ns(), false);
	return err;
}

/* open (on) every detached resource or close every windowed one; at a
 * close, one sample of each resource's ACQUIRE rate for the estimates */
static int set_windows(struct governor *g, struct engine *e, bool on, gov_emit_fn emit,
		       void *ctx)
{
	uint64_t ts = 0;
	size_t i;
	int err = 0, err2;

	if (on && g->meter.fx.windowed)	/* the effects first: the probes find them on */
		gov_meter_effects(g, e, pb_mono_ns(), true);
	if (!on) {
		err = close_windows(g, e, emit, ctx, &ts);
		if (err && !ts)		/* the hit counts unread: nothing closed */
			return err;
	}
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[gov_order(g, i, !on)];

		if (on) {
			/* every detached resource (one no longer windowed stays on) */
			if (gr->attached)
				continue;
			err2 = gov_open_group(g, e, gr, &ts);
			if (err2 && !err)
				err = err2;
			gr->win_open_ns = ts;
			gov_group_hits(g, gr, g->hits, &gr->win_acq0, &gr->win_ev0);
		} else {
			if (!gr->closing)
				continue;
			gr->closing = false;
			gov_sample_window(g, gr, ts);
			gov_window_stats(g, gr, ts, emit, ctx);
			gov_hold_close(g, gr, ts, emit, ctx);
			continue;
		}
		gov_window_mark(g, gr, on, ts, emit, ctx);
	}
	if (on) {
		g->n_open++;
		g->next_ns = ts + g->window_ns;
		g->win_ts = ts;
		memcpy(g->open_hits, g->hits, g->n_desc * sizeof(*g->hits));
	} else {
		/* the next window is a cycle after this one opened; the ledger
		 * postpones it while the cost spent so far is over budget */
		uint64_t end = pb_mono_ns();

		g->close_end_ns = end;
		g->next_ns = g->cycle_start + g->cycle_ns;
		if (g->next_ns < end)
			g->next_ns = end;
		if (gov_ext_open(g))	/* the extended ones close first */
			g->next_ns = g->ext_end_ns;
	}
	return err;
}

/* A resource the plan no longer windows, but whose probes a window's
 * close detached, is attached at once: waiting for the next window, which
 * the ledger may postpone for the rest of a short run, would leave an
 * always-on resource dark (its cost is in the always-on set the plan fit
 * in the allowance). Only after two plans in a row kept it on: a resource
 * at the edge flips between plans, and each attach is paid again by a
 * close (the detach latency at full rate). */
static int attach_unwindowed(struct governor *g, struct engine *e, gov_emit_fn emit, void *ctx)
{
	uint64_t ts = 0;
	int err = 0, err2;

	for (size_t i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (gr->windowed || gr->attached || gr->on_streak < 2)
			continue;
		err2 = gov_open_group(g, e, gr, &ts);
		if (err2 && !err)
			err = err2;
		gr->win_open_ns = ts;
		gov_group_hits(g, gr, g->hits, &gr->win_acq0, &gr->win_ev0);
		gov_window_mark(g, gr, true, ts, emit, ctx);
	}
	return err;
}

/* The warm-up (every probe on, rates measured) ends after warmup_ns, or
 * as soon as its cost reached what the budget allows in GOV_WARM_HORIZON
 * of the target's CPU time (at least one shortest window). */
static bool warmup_done(const struct governor *g, uint64_t now)
{
	double secs = (double)(now - g->start_ns) / NS_PER_S, cpu_rate;

	if (now - g->start_ns >= g->o.warmup_ns)
		return true;
	if (now - g->start_ns < g->o.min_window_ns || secs <= 0)
		return false;
	/* CPU time not read yet (--all: no process seen): one CPU, as decide() */
	cpu_rate = !g->cpu_first ? NS_PER_S : g->cpu_last > g->cpu_start ?
		   (double)(g->cpu_last - g->cpu_start) / secs : 0;
	cpu_rate -= g->warm_cost_ns / secs;
	if (cpu_rate < 0.01 * NS_PER_S)
		cpu_rate = 0.01 * NS_PER_S;
	return g->warm_cost_ns >= g->o.budget * cpu_rate * GOV_WARM_HORIZON_S;
}

/* The always-on set overspends (its rates rose since the last plan). */
static bool overspent(const struct governor *g, uint64_t now)
{
	double secs = (double)(now - g->dec_ns) / NS_PER_S, cost = 0;

	if (g->over_budget || now - g->dec_ns < GOV_RECHECK_NS)
		return false;
	for (size_t i = 0; i < g->n_desc; i++)
		cost += (double)(g->hits[i] - g->warm_hits[i]) * g->cost[i];
	return cost > g->allowed_rate * (secs + GOV_SLACK_S);
}

/* The open window costs more than planned (rates measured on a short or
 * unrepresentative stretch, a program's start): it closes now. */
static bool window_overspent(const struct governor *g, uint64_t now)
{
	double cost = 0, planned;

	if (!g->win_ts || now <= g->win_ts)
		return false;
	for (size_t i = 0; i < g->n_desc; i++)
		cost += (double)(g->hits[i] - g->open_hits[i]) * g->cost[i];
	/* the plan's rates are per second attached up to a close, without
	 * the hits of the detach that follows (gov_close_cost), so the
	 * window is planned at them over its length */
	planned = (g->hot_rate + g->always_on_rate) * (double)g->window_ns / NS_PER_S +
		  g->allowed_rate * GOV_SLACK_S;
	return cost > planned;
}

/* a window opens when the ledger is paid (spent within the budget so far) */
static bool ledger_wait(struct governor *g, uint64_t now)
{
	double spent, allowed, spare = g->allowed_rate - g->always_on_rate, wait, win;

	ledger(g, now, &spent, &allowed);
	/* the window's expected cost, its close's included (the hits while
	 * its links are being destroyed are counted by the engine and land in
	 * the ledger; the last close's are the estimate), and its expected
	 * extension's (gov_window.c gov_extend) */
	win = g->hot_rate * (double)g->window_ns / NS_PER_S;
	spent += win + g->close_cost_ns + gov_ext_expect(g, win);
	if (spent <= allowed)
		return false;
	wait = spare > 0 ? (spent - allowed) / spare * NS_PER_S : (double)g->o.period_ns;
	if (wait > (double)g->o.period_ns)
		wait = (double)g->o.period_ns;
	if (wait < (double)g->o.min_window_ns)
		wait = (double)g->o.min_window_ns;
	g->next_ns = now + (uint64_t)wait;
	g->n_debt_waits++;
	return true;
}

/* Over 80 lines because the schedule is one story: start -> warm-up ->
 * close an open window -> re-plan each period (or when the always-on set
 * overspends) -> the ledger gates the next open. */
int governor__tick(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		   gov_emit_fn emit, void *ctx)
{
	int err;

	if (!g->start_ns) {
		gov_meter_start(g, e, now);
		g->start_ns = g->dec_ns = now;
		g->cpu_start = g->dec_cpu = cpu_ns;
		g->next_ns = now + GOV_WARM_TICK_NS;
		if (engine__desc_events(e, g->events, g->total_ns, g->n_desc)) {
			memset(g->events, 0, g->n_desc * sizeof(*g->events));
			memset(g->total_ns, 0, g->n_desc * sizeof(*g->total_ns));
		}
		for (size_t i = 0; i < g->n_groups; i++) {
			struct gov_group *gr = &g->groups[i];

			gr->win_open_ns = gr->att_ns = now;
			gov_group_events(g, gr, &gr->win_at0);
		}
	}
	err = account(g, e, now, cpu_ns, false);
	if (err)
		return err;
	if (g->phase == GOV_WARMUP) {
		if (!warmup_done(g, now)) {
			g->next_ns = now + GOV_WARM_TICK_NS;
			return 0;
		}
		g->phase = GOV_GOVERNED;
		g->gov_start_ns = now;
		g->cpu_gov_start = cpu_ns;
		g->next_ns = now;
	}
	if (g->decided && gov_any_open(g)) {
		if (now < g->next_ns && (gov_ext_open(g) || !window_overspent(g, now)))
			return 0;
		g->ext_ok = true;	/* the joint close: the cheap may stay open */
		return set_windows(g, e, false, emit, ctx);
	}
	/* between windows: re-plan every period, or when overspending */
	if (!g->decided || now - g->dec_ns >= g->o.period_ns || overspent(g, now)) {
		decide(g, e, now, cpu_ns, emit, ctx);
		err = attach_unwindowed(g, e, emit, ctx);
		if (err)
			return err;
		if (gov_any_open(g)) {	/* newly windowed: their window ends now */
			g->cycle_start = now;
			return set_windows(g, e, false, emit, ctx);
		}
		g->next_ns = g->cycle_start + g->cycle_ns;
		if (g->next_ns < g->close_end_ns)
			g->next_ns = g->close_end_ns;
	}
	if (now < g->next_ns)
		return 0;
	if (!gov_any_windowed(g) && !gov_any_detached(g)) {
		g->next_ns = now + g->o.period_ns;
		return 0;
	}
	if (ledger_wait(g, now))
		return 0;
	g->cycle_start = now;
	return set_windows(g, e, true, emit, ctx);
}

int governor__next_ms(const struct governor *g, uint64_t now, int cap)
{
	uint64_t left, next;

	if (!g || g->next_ns == UINT64_MAX)
		return cap;
	next = g->next_ns;
	if (g->decided && !gov_any_open(g) && g->dec_ns + g->o.period_ns < next)
		next = g->dec_ns + g->o.period_ns;	/* the next re-plan */
	if (g->phase == GOV_GOVERNED && now + GOV_RECHECK_NS < next)
		next = now + GOV_RECHECK_NS;
	left = next > now ? (next - now + 999999) / 1000000 : 0;
	return left < (uint64_t)cap ? (int)left : cap;
}

bool governor__wants_cpu(const struct governor *g, uint64_t now)
{
	/* the warm-up, a due boundary, a re-plan (also an early one) */
	return g && (g->phase == GOV_WARMUP || now >= g->next_ns ||
		     now - g->dec_ns >= GOV_CPU_RECHECK_NS);
}

void governor__finish(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		      gov_emit_fn emit, void *ctx)
{
	if (!g->start_ns)
		return;
	account(g, e, now, cpu_ns, true);
	g->ext_ok = false;
	while (g->phase == GOV_GOVERNED && gov_any_open(g))	/* extended ones: twice */
		if (set_windows(g, e, false, emit, ctx))
			break;
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
	free(g->events);
	free(g->total_ns);
	free(g->prev);
	free(g->warm_hits);
	free(g->open_hits);
	free(g->det_hits);
	free(g->cpu_seen);
	free(g->desc_cost_ns);
	free(g->pin);
	free(g->pin_old);
	free(g->must);
	free(g->rate);
	free(g->hz);
	gov_meter_free(g);
	free(g);
}
