/* SPDX-License-Identifier: BSD-2-Clause */
/* gov_window.c: record --budget's window edges (governor_int.h): open a
 * resource's probes, close the open windows (detaching in parallel), and
 * the trace records of each edge: PB_REC_WINDOW and, after a close,
 * PB_REC_WINDOW_STATS (what the window saw). The schedule that decides
 * when is governor.c; docs/record.md "OVERHEAD BUDGET". */
#include <errno.h>
#include <pthread.h>
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

/* A close's detaches, one descriptor per worker: each link's destroy
 * removes its breakpoints at once but then waits for the probes running
 * on it (an RCU-tasks grace period, 50-170 ms here), so destroying a
 * group's descriptors one after another left the last one's probes firing,
 * at full cost, through the others' waits (a 300 ms close of the demo's
 * pool cost 110-150 ms of probe time; in parallel, ~1 ms). */
#define GOV_DETACH_WORKERS	16

struct gov_detach {
	struct engine *e;
	const uint32_t *descs;
	size_t n, next;
	int err;
};

static void *detach_worker(void *arg)
{
	struct gov_detach *d = arg;
	size_t i, changed;
	int err;

	while ((i = __atomic_fetch_add(&d->next, 1, __ATOMIC_RELAXED)) < d->n) {
		err = engine__set_desc(d->e, d->descs[i], false, &changed);
		if (err)
			__atomic_store_n(&d->err, err, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* detach descs[0..n) in parallel; 0 or the last -errno */
static int detach_parallel(struct engine *e, const uint32_t *descs, size_t n)
{
	struct gov_detach d = { .e = e, .descs = descs, .n = n };
	pthread_t th[GOV_DETACH_WORKERS];
	size_t k, started = 0;

	for (k = 0; k + 1 < n && k < GOV_DETACH_WORKERS; k++) {
		if (pthread_create(&th[started], NULL, detach_worker, &d))
			break;
		started++;
	}
	detach_worker(&d);	/* this thread works too, and finishes alone
				 * if no worker could start */
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	return d.err;
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

		if (!gr->attached || !gr->windowed)
			continue;
		gr->n_move = gov_movable(g, gr);
		/* marked windowed before its ACQUIREs pause: a USE or RELEASE
		 * of a unit whose ACQUIRE the pause hid is unknown, not a
		 * violation (the forget below marks it too, ms later) */
		if (engine__window_resource(e, gr->res) && !err)
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
	err2 = detach_parallel(e, descs, n);
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

		if (!gr->attached || !gr->windowed)
			continue;
		if (engine__forget_resource(e, gr->res, NULL) && !err)
			err = -EIO;
		/* its probes fired until the detach completed: the hits of the
		 * detach count against the time to its end, or the rates would
		 * be inflated by (window + detach) / window */
		gr->cut.detached_ns = end;
		if (gr->att_ns && end > gr->att_ns)
			gr->on_ns_dec += end - (gr->att_ns > g->dec_ns ? gr->att_ns : g->dec_ns);
		gr->att_ns = 0;
		gr->attached = false;
		gr->closing = true;
	}
	return err;
}
