/* SPDX-License-Identifier: BSD-2-Clause */
/* gov_hold.c: record --budget's window length from the holds the closes
 * cut (censoring). A close forgets the instances its resources hold, and
 * records their ages (PB_REC_WINDOW_STATS): a hold is seen whole only if
 * it starts and ends inside one window. When a close cuts a hold older
 * than half its window, the window is too short for that resource's
 * holds, and the next windows are made longer (GOV_HOLD_K x the oldest
 * age cut, up to GOV_HOLD_CAP_NS and the windows' time so far); set_duty (governor.c) keeps the duty,
 * so the cycle grows as much and the budget is unchanged. docs/record.md
 * "OVERHEAD BUDGET", "Window length". */
#include <jansson.h>
#include <stdio.h>
#include "record/governor_int.h"

/* A hold of length H that starts at a uniform time inside a window of
 * length W >= H ends inside it with probability 1 - H / W: W = 4 H sees
 * 3 in 4 of them whole (2 H: half). The oldest age a close cut is a lower
 * bound of H, so the window asked for is 4 x that age. */
#define GOV_HOLD_K		4

/* The longest window the rule asks for: 4 x GOV_HOLD_WINDOW_NS. A hold
 * of up to 250 ms is then seen whole 3 times in 4; a longer one (or a
 * leaked unit: a hold that never ends) is still seen cut at an age of up
 * to 1 s, 10-20x report's long-hold (50 ms) and leak (100 ms) ages, so
 * its finding does not need it whole. */
#define GOV_HOLD_CAP_NS		(4 * GOV_HOLD_WINDOW_NS)

/* report's smallest leak: ACQUIRE - RELEASE growth of at least 8
 * (LEAK_MIN_GROWTH, src/analyze/diagnose_int.h); a resource whose windows
 * grew less is not leak-like (gov_hold_close) */
#define GOV_HOLD_LEAK_MIN	8

/* The rule: a close that cut a hold of age a asks for windows of K x a
 * when that is longer than the window it closed (the hold outlived a
 * quarter of it) and than what was asked before. A resource whose holds
 * are far shorter than the window (a lock's microseconds, a request's
 * milliseconds) asks for nothing: only holds of 62 ms or more (a quarter
 * of the 250 ms minimum window) can. */
uint64_t gov_hold_demand(uint64_t win_ns, uint64_t age_max_ns, uint64_t cur_ns)
{
	uint64_t want;

	want = GOV_HOLD_K * age_max_ns;
	if (!win_ns || want <= win_ns)
		return cur_ns;
	if (want > GOV_HOLD_CAP_NS)
		want = GOV_HOLD_CAP_NS;
	return want > cur_ns ? want : cur_ns;
}

/* The window length set_duty uses: what the closes asked for, but never
 * longer than all the windows closed so far together (seen_ns): at the
 * same duty a longer window comes as much less often, and a run's first
 * seconds are the only guess of its length; so the windows at most double
 * each time, and their count grows with the run (a 20 s run at 2 % on the
 * demo still gets several) rather than stalling at one long window. */
uint64_t gov_hold_window(uint64_t want_ns, uint64_t seen_ns)
{
	uint64_t cap = seen_ns > GOV_HOLD_WINDOW_NS ? seen_ns : GOV_HOLD_WINDOW_NS;

	return want_ns < cap ? want_ns : cap;
}

/* The holds a close cut at an age of at least a quarter of its window
 * (generations; ages as log2 buckets, their lower bounds). */
static uint64_t old_cuts(const struct pb_rec_window_stats *c, uint64_t win)
{
	uint64_t n = 0;

	for (int b = 0; b < PB_HIST_BUCKETS; b++)
		if ((double)(1ull << b) * GOV_HOLD_K >= (double)win)
			n += c->cut_age_hist[b];
	return n;
}

/* The length asked for: the largest of the groups that are not leak-like
 * (gr: the one that gives it, or NULL). */
static uint64_t hold_want(const struct governor *g, const struct gov_group **by)
{
	uint64_t w = 0;

	*by = NULL;
	for (size_t i = 0; i < g->n_groups; i++) {
		const struct gov_group *gr = &g->groups[i];

		if (!gr->hold_leaky && gr->hold_want_ns > w) {
			w = gr->hold_want_ns;
			*by = gr;
		}
	}
	return w;
}

/* Over 80 lines because it is one rule with its two notes: the close's ask,
 * the leak-like test, the global length and the trace's explanation. */
void gov_hold_close(struct governor *g, struct gov_group *gr, uint64_t close_ns,
		    gov_emit_fn emit, void *ctx)
{
	uint64_t win = close_ns > gr->win_open_ns ? close_ns - gr->win_open_ns : 0;
	const struct pb_rec_window_stats *c = &gr->cut;
	const struct gov_group *by;
	uint64_t want, was = g->hold_want_ns;
	const char *name = g->p->manifest->resources[gr->res].name;
	char note[400];

	if (close_ns != g->hold_close_ts) {	/* one close, many groups */
		g->hold_close_ts = close_ns;
		g->hold_seen_ns += win;
	}
	/* credit is consumed, not held (report gives it no long hold and no
	 * leak): its ACQUIREs without RELEASE are no hold to see whole */
	if (g->p->manifest->resources[gr->res].class == PB_CLASS_CREDIT)
		return;
	g->hold_closes++;
	/* A unit never released raises its window's growth (ACQUIRE - RELEASE
	 * events while both probes are on) by one; a hold that ends does not
	 * on average (its RELEASE, in a later window, balances one acquired
	 * before another window's open). So when a resource's windows grew by
	 * at least report's smallest leak (GOV_HOLD_LEAK_MIN) and at least by
	 * the old holds they cut, those holds look like a leak's: they never
	 * end, no window length shows them whole, and longer windows would only
	 * leave report's leak estimate fewer windows (it needs 2): its ask is
	 * withdrawn. The warm-up's window is left out: it began with no hold
	 * seen, so its growth is every hold in flight at its close. */
	if (gr->win_open_ns > g->start_ns) {
		gr->hold_growth += (int64_t)(c->acquires - c->releases);
		gr->hold_old += old_cuts(c, win);
	}
	gr->hold_leaky = gr->hold_growth >= GOV_HOLD_LEAK_MIN &&
			 gr->hold_growth >= (int64_t)gr->hold_old;
	want = gov_hold_demand(win, c->cut_age_max_ns, gr->hold_want_ns);
	if (want > gr->hold_want_ns) {
		gr->hold_want_ns = want;
		gr->hold_age_ns = c->cut_age_max_ns;
		gr->hold_win_ns = win;
	}
	g->hold_want_ns = hold_want(g, &by);
	if (g->hold_want_ns == was)
		return;
	if (g->hold_want_ns > was) {
		g->hold_res = by->res;
		g->hold_age_ns = by->hold_age_ns;
		g->hold_win_ns = by->hold_win_ns;
		g->hold_grows++;
		snprintf(note, sizeof(note),
			 "governor: a close cut a hold of %s %.0f ms old in a %.0f ms window (windows "
			 "too short to see its holds whole); windows from the next plan on are asked "
			 "to last %.0f ms (%dx that age, at most %.0f ms and at most the %.0f ms all "
			 "windows so far lasted), the cycle as much longer (same duty)",
			 g->p->manifest->resources[by->res].name, (double)by->hold_age_ns / 1e6,
			 (double)by->hold_win_ns / 1e6, (double)g->hold_want_ns / 1e6, GOV_HOLD_K,
			 (double)GOV_HOLD_CAP_NS / 1e6, (double)g->hold_seen_ns / 1e6);
	} else {
		g->hold_withdrawn++;
		snprintf(note, sizeof(note),
			 "governor: %s's windows grew by %lld (ACQUIRE - RELEASE), at least the %llu "
			 "old holds they cut: holds that never end (a leak's), which no window shows "
			 "whole; its ask for longer windows is withdrawn (now %.0f ms)", name,
			 (long long)gr->hold_growth, (unsigned long long)gr->hold_old,
			 (double)g->hold_want_ns / 1e6);
		if (by) {
			g->hold_res = by->res;
			g->hold_age_ns = by->hold_age_ns;
			g->hold_win_ns = by->hold_win_ns;
		}
	}
	emit(NULL, 0, note, ctx);
}

json_t *governor__hold_json(const struct governor *g)
{
	json_t *o;
	uint64_t w;

	if (!g)
		return NULL;
	w = gov_hold_window(g->hold_want_ns, g->hold_seen_ns);
	o = json_pack("{s:f, s:f, s:f, s:i, s:f, s:f, s:i, s:i}",
		      "window_ms", (double)(w > GOV_HOLD_WINDOW_NS ? w : GOV_HOLD_WINDOW_NS) / 1e6,
		      "asked_ms", (double)g->hold_want_ns / 1e6,
		      "base_ms", (double)GOV_HOLD_WINDOW_NS / 1e6, "k", (json_int_t)GOV_HOLD_K,
		      "cap_ms", (double)GOV_HOLD_CAP_NS / 1e6,
		      "windows_so_far_ms", (double)g->hold_seen_ns / 1e6,
		      "grown", (json_int_t)g->hold_grows, "closes_seen", (json_int_t)g->hold_closes);
	if (o)
		json_object_set_new(o, "withdrawn", json_integer((json_int_t)g->hold_withdrawn));
	if (!o)
		return NULL;
	if (g->hold_want_ns)
		json_object_set_new(o, "why", json_pack("{s:s, s:f, s:f}", "resource",
			g->p->manifest->resources[g->hold_res].name, "cut_age_ms",
			(double)g->hold_age_ns / 1e6, "in_window_ms", (double)g->hold_win_ns / 1e6));
	else
		json_object_set_new(o, "why", json_string("no close cut a hold older than a quarter of "
							  "its window: the base length"));
	return o;
}
