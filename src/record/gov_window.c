/* SPDX-License-Identifier: BSD-2-Clause */
/* gov_window.c: record --budget's window edges (governor_int.h): open a
 * resource's probes, close the open windows (detaching in parallel), and
 * the trace records of each edge: PB_REC_WINDOW and, after a close,
 * PB_REC_WINDOW_STATS (what the window saw); which cheap resources stay
 * open past a joint close (gov_extend), the probes' share of the target
 * in a window and a close's cost. The schedule that decides when is
 * governor.c; docs/record.md "OVERHEAD BUDGET". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "record/governor_int.h"
#include "engine/engine.h"
#include "common/clock.h"

/* the descriptors a close detaches: not the pinned WAITs */
size_t gov_movable(const struct governor *g, const struct gov_group *gr)
{
	size_t k, n = 0;

	for (k = 0; k < gr->n_desc; k++)
		n += !g->pin[gr->descs[k]];
	return n;
}

void gov_window_mark(struct governor *g, struct gov_group *gr, bool on, uint64_t ts,
			gov_emit_fn emit, void *ctx)
{
	struct pb_rec_window w = { 0 };

	w.hdr.type = PB_REC_WINDOW;
	w.hdr.version = PB_EVENTS_VERSION;
	w.hdr.size = sizeof(w);
	w.hdr.ts_ns = ts;
	w.resource = gr->res;
	w.open = on;
	w.n_desc = (uint32_t)gr->n_move;
	w.duty_ppm = (uint32_t)(g->duty * 1e6);
	emit(&w, sizeof(w), NULL, ctx);
}

/* the group's ACQUIRE and RELEASE events, WAIT events and time, in
 * g->events and g->total_ns */
void gov_group_events(const struct governor *g, const struct gov_group *gr,
		      struct gov_win_ev *out)
{
	*out = (struct gov_win_ev){ 0 };
	for (size_t k = 0; k < gr->n_desc; k++) {
		uint32_t d = gr->descs[k];
		enum pb_event_kind kind = gov_desc_kind(g, d);

		if (kind == PB_EV_ACQUIRE) {
			out->acq += g->events[d];
		} else if (kind == PB_EV_RELEASE) {
			out->rel += g->events[d];
		} else if (kind == PB_EV_WAIT) {
			out->waits += g->events[d];
			out->wait_ns += g->total_ns[d];
		}
	}
}

/* The close's PB_REC_WINDOW_STATS (after its close mark): the window's
 * net growth (ACQUIRE - RELEASE events while both were on) and the
 * generations it cut (gr->cut, read before the close forgot them). */
void gov_window_stats(struct governor *g, struct gov_group *gr, uint64_t ts,
			 gov_emit_fn emit, void *ctx)
{
	struct pb_rec_window_stats *w = &gr->cut;
	struct gov_win_ev now;

	gov_group_events(g, gr, &now);
	w->hdr.type = PB_REC_WINDOW_STATS;
	w->hdr.version = PB_EVENTS_VERSION;
	w->hdr.size = sizeof(*w);
	w->hdr.ts_ns = ts;
	w->resource = gr->res;
	w->open_ns = gr->win_open_ns;
	w->acquires = now.acq - gr->win_at0.acq;
	w->releases = now.rel - gr->win_at0.rel;
	w->waits = now.waits - gr->win_at0.waits;
	w->wait_ns = now.wait_ns - gr->win_at0.wait_ns;
	emit(w, sizeof(*w), NULL, ctx);
}

/* open one group: RELEASE/USE/WAIT first, ACQUIREs last (a pinned WAIT
 * is attached already; one pinned since it was detached comes back) */
int gov_open_group(struct governor *g, struct engine *e, struct gov_group *gr, uint64_t *ts)
{
	size_t k, changed;
	int err = 0, err2;

	gr->n_move = gov_movable(g, gr);
	for (k = 0; k < gr->n_desc; k++) {
		err2 = engine__set_desc(e, gr->descs[k], true, &changed);
		if (err2 && !err)
			err = err2;
	}
	*ts = pb_mono_ns();	/* the window begins after the last attach */
	if (engine__window_opened(e, gr->res, *ts) && !err)
		err = -EIO;
	gr->att_ns = *ts;
	gr->attached = true;
	if (!engine__desc_events(e, g->events, g->total_ns, g->n_desc))
		gov_group_events(g, gr, &gr->win_at0);
	return err;
}

/* close the windowed groups that are open: the window ended at ts (the
 * caller marked it), before the first detach. The groups' ACQUIREs are
 * paused first (a map update: no lifetime opens from then on while its
 * USE or RELEASE probes are going, which the engine would count a churn
 * cycle, an expectation missed, a double acquire at the next ACQUIRE),
 * then every movable descriptor is detached at once and the ACQUIREs
 * resumed (detached: nothing fires). Each group's instances are
 * forgotten before and after. */
int gov_close_groups(struct governor *g, struct engine *e, uint64_t ts)
{
	uint32_t *descs = malloc((g->n_desc + 1) * sizeof(*descs));
	size_t i, k, n = 0;
	uint64_t end;
	int err = 0, err2;

	if (!descs)
		return -ENOMEM;
	if (engine__desc_events(e, g->events, g->total_ns, g->n_desc) && !err)
		err = -EIO;
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (!gr->attached || !gr->windowed || gr->ext)
			continue;
		gr->n_move = gov_movable(g, gr);
		/* marked windowed before its ACQUIREs pause: a USE or RELEASE
		 * of a unit whose ACQUIRE the pause hid is unknown, not a
		 * violation (the forget below marks it too, ms later) */
		if ((engine__window_resource(e, gr->res) || engine__window_closing(e, gr->res)) &&
		    !err)
			err = -EIO;
		for (k = 0; k < gr->n_desc; k++) {
			uint32_t desc = gr->descs[k];

			if (g->pin[desc])
				continue;
			descs[n++] = desc;
			if (gov_desc_kind(g, desc) == PB_EV_ACQUIRE &&
			    engine__pause_desc(e, desc, true) && !err)
				err = -EIO;
		}
		/* the generations this close cuts, before it forgets them */
		memset(&gr->cut, 0, sizeof(gr->cut));
		if (engine__live_ages(e, gr->res, ts, &gr->cut) && !err)
			err = -EIO;
		if (engine__forget_resource(e, gr->res, NULL) && !err)
			err = -EIO;
	}
	/* every link at once (engine__detach_descs): each link's destroy
	 * removes its breakpoints at once, then waits for the probes running
	 * on it (an RCU-tasks grace period, 50-170 ms here); one after
	 * another, the last ones fired at full cost through the others'
	 * waits (the demo's pool: 110-150 ms of probe time in a 300 ms close;
	 * PostgreSQL's LWLocks, one descriptor per worker, its return link
	 * after its entry link: 40-115 ms) */
	err2 = engine__detach_descs(e, descs, n, NULL);
	if (err2 && !err)
		err = err2;
	for (i = 0; i < n; i++)
		if (gov_desc_kind(g, descs[i]) == PB_EV_ACQUIRE &&
		    engine__pause_desc(e, descs[i], false) && !err)
			err = -EIO;
	free(descs);
	end = pb_mono_ns();
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (!gr->attached || !gr->windowed || gr->ext)
			continue;
		if (engine__forget_resource(e, gr->res, NULL) && !err)
			err = -EIO;
		/* its probes fired until the detach completed, but few of
		 * them: its rates count its hits to the close (the detach's
		 * are gov_close_cost's) over its time to the close */
		gr->cut.detached_ns = end;
		if (engine__open_cuts(e, gr->res, &gr->cut) && !err)
			err = -EIO;
		if (gr->att_ns && ts > gr->att_ns)
			gr->on_ns_dec += ts - (gr->att_ns > g->dec_ns ? gr->att_ns : g->dec_ns);
		gr->att_ns = 0;
		gr->attached = false;
		gr->closing = true;
	}
	return err;
}

/* Extended windows. The windowed resources open and close together (one
 * close detaches all in parallel), at the duty the dearest ones allow. A
 * cheap one then sees holds of a few hundred ms seldom whole: its windows
 * are as short as the dear ones'. At a joint close, a resource whose
 * probes cost at most 1/GOV_EXT_CHEAP of the window's probe cost (hits x
 * cost counted in the window just closed: the plan's rates can date from
 * the program's start), that is not credit (consumed, not held: no hold
 * to see whole) and whose WAITs fired in the window (its holds are what
 * explains them: contention, a long hold or a leak; one nobody waits for
 * gains little from longer windows) stays open for up to GOV_EXT_K - 1 more window
 * lengths, at most GOV_EXT_MAX_NS in all and never past the next
 * window's due time, while the extension costs at most GOV_EXT_SHARE of
 * the window's cost at the rates counted in it, and at most what the
 * budget ledger has left after this close. Its
 * own close (a detach of a few probes) ends it. The ledger counts every
 * hit, so the next window waits for what the extension spent
 * (docs/record.md "Extended windows"). */
#define GOV_EXT_CHEAP		8
#define GOV_EXT_K		4
#define GOV_EXT_MAX_NS		2000000000ull
#define GOV_EXT_SHARE		0.5

/* group gr's probe cost so far (hits x cost of its unpinned probes) */
static double cum_cost(const struct governor *g, const struct gov_group *gr)
{
	double c = 0;

	for (size_t k = 0; k < gr->n_desc; k++)
		if (!g->pin[gr->descs[k]])
			c += (double)g->hits[gr->descs[k]] * g->cost[gr->descs[k]];
	return c;
}

/* group gr's probe cost since the windows opened (its unpinned probes) */
static double win_cost(const struct governor *g, const struct gov_group *gr)
{
	double c = 0;

	for (size_t k = 0; k < gr->n_desc; k++) {
		uint32_t d = gr->descs[k];

		if (!g->pin[d] && g->hits[d] > g->open_hits[d])
			c += (double)(g->hits[d] - g->open_hits[d]) * g->cost[d];
	}
	return c;
}

/* group gr's WAITs (pinned or not) that fired since the windows opened */
static uint64_t win_waits(const struct governor *g, const struct gov_group *gr)
{
	uint64_t n = 0;

	for (size_t k = 0; k < gr->n_desc; k++) {
		uint32_t d = gr->descs[k];

		if (gov_desc_kind(g, d) == PB_EV_WAIT && g->hits[d] > g->open_hits[d])
			n += g->hits[d] - g->open_hits[d];
	}
	return n;
}

static bool ext_candidate(const struct governor *g, const struct gov_group *gr, double total)
{
	return gr->attached && gr->windowed &&
	       g->p->manifest->resources[gr->res].class != PB_CLASS_CREDIT &&
	       win_cost(g, gr) * GOV_EXT_CHEAP <= total && win_waits(g, gr) > 0;
}

size_t gov_extend(struct governor *g, uint64_t now, double room)
{
	double w, cheap = 0, total = 0, ext;
	size_t i, n = 0;

	if (!g->win_ts || now <= g->win_ts)
		return 0;
	w = (double)(now - g->win_ts);
	for (i = 0; i < g->n_groups; i++)
		if (g->groups[i].attached && g->groups[i].windowed)
			total += win_cost(g, &g->groups[i]);
	if (!(total > 0))
		return 0;
	for (i = 0; i < g->n_groups; i++)
		if (ext_candidate(g, &g->groups[i], total))
			cheap += win_cost(g, &g->groups[i]);
	/* cheap / w: their cost per ns of window; the extension's cost at
	 * that rate is at most GOV_EXT_SHARE x the window's, and at most what
	 * the ledger has left (room) */
	ext = (GOV_EXT_K - 1) * w;
	if (cheap > 0 && ext * cheap / w > GOV_EXT_SHARE * total)
		ext = GOV_EXT_SHARE * total * w / cheap;
	if (cheap > 0 && ext * cheap / w > room)
		ext = room > 0 ? room * w / cheap : 0;
	if (ext > (double)GOV_EXT_MAX_NS - w)
		ext = (double)GOV_EXT_MAX_NS - w;
	/* never into the next window's due time: at a high duty the dear
	 * resources' windows come first */
	if (g->cycle_start + g->cycle_ns < now + ext)
		ext = g->cycle_start + g->cycle_ns > now ?
		      (double)(g->cycle_start + g->cycle_ns - now) : 0;
	if (ext < w / 2)	/* not worth its own close */
		return 0;
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		gr->ext = ext_candidate(g, gr, total);
		gr->ext_c0 = cum_cost(g, gr);
		n += gr->ext;
	}
	if (!n)
		return 0;
	g->ext_end_ns = now + (uint64_t)ext;
	g->ext_last_ns = (uint64_t)(w + ext);
	g->n_ext++;
	return n;
}

/* The extension the next window is expected to have, as probe cost for
 * the ledger to reserve at its open (win_cost: the window's expected
 * cost): a windowed, cheap (by the plan's rates), non-credit resource
 * whose WAITs fired since the last open will be extended; its cost is the
 * last extension's, or at first the most one may cost (GOV_EXT_SHARE of
 * the window's). The close gives it what the ledger then has left. */
double gov_ext_expect(const struct governor *g, double win_cost)
{
	for (size_t i = 0; i < g->n_groups; i++) {
		const struct gov_group *gr = &g->groups[i];

		if (gr->windowed && gr->full_rate > 0 &&
		    gr->full_rate * GOV_EXT_CHEAP <= g->hot_rate &&
		    g->p->manifest->resources[gr->res].class != PB_CLASS_CREDIT &&
		    win_waits(g, gr) > 0)
			return g->n_ext ? g->ext_cost_ns : GOV_EXT_SHARE * win_cost;
	}
	return 0;
}

bool gov_ext_open(const struct governor *g)
{
	for (size_t i = 0; i < g->n_groups; i++)
		if (g->groups[i].ext)
			return true;
	return false;
}

bool gov_ext_close(struct governor *g)
{
	bool any = false;
	double c = 0;

	for (size_t i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (gr->ext && cum_cost(g, gr) > gr->ext_c0)
			c += cum_cost(g, gr) - gr->ext_c0;
		any |= gr->ext;
		gr->ext = false;
	}
	if (any)
		g->ext_cost_ns = c;
	return any;
}

/* The probes' share of the target's CPU while the windows were open:
 * their estimated cost since the open over the CPU time the target
 * gets (its rate at the last plan), at most 90 %. */
void gov_window_share(struct governor *g)
{
	uint64_t now = pb_mono_ns(), t0 = g->win_ts ? g->win_ts : g->start_ns;
	double cost = 0, cpu = g->cpu_rate > 0 ? g->cpu_rate : 1e9;

	for (size_t i = 0; i < g->n_desc; i++)
		cost += (double)(g->hits[i] - g->open_hits[i]) * g->cost[i];
	g->win_share = now > t0 ? cost / ((double)(now - t0) / 1e9 * cpu) : 0;
	if (g->win_share > GOV_SHARE_CAP)
		g->win_share = GOV_SHARE_CAP;
}

/* The cost of the hits since g->hits was read before a close: the probes
 * that fired while the close's links were being destroyed (g->hits is
 * left as it was: account() charges them to the ledger). */
int gov_close_cost(struct governor *g, struct engine *e)
{
	uint64_t *now_hits = calloc(g->n_desc, sizeof(*now_hits));
	int err;

	if (!now_hits)
		return -ENOMEM;
	err = engine__desc_hits(e, now_hits, g->n_desc);
	if (!err) {
		g->close_cost_ns = 0;
		for (size_t i = 0; i < g->n_desc; i++) {
			int gi = g->group_of[i];

			if (now_hits[i] <= g->hits[i])
				continue;
			g->close_cost_ns += (double)(now_hits[i] - g->hits[i]) * g->cost[i];
			/* a detached descriptor's: not in its rate (measure()) */
			if (gi >= 0 && g->groups[gi].closing && !g->pin[i])
				g->det_hits[i] += now_hits[i] - g->hits[i];
		}
		g->close_cost_total_ns += g->close_cost_ns;
	}
	free(now_hits);
	return err;
}
