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

/* one group's detach (ACQUIREs first: the reverse of descs), run on its
 * own thread: each link's destroy waits for the probes running on it,
 * and the groups' waits overlap instead of adding up */
struct gov_detach {
	struct governor *g;
	struct engine *e;
	struct gov_group *gr;
	pthread_t th;
	bool started;
	int err;
};

static void *detach_group(void *arg)
{
	struct gov_detach *d = arg;
	size_t k, changed;

	for (k = d->gr->n_desc; k-- > 0;) {
		uint32_t desc = d->gr->descs[k];
		int err;

		if (d->g->pin[desc])
			continue;
		err = engine__set_desc(d->e, desc, false, &changed);
		if (err && !d->err)
			d->err = err;
	}
	return NULL;
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

/* the group's ACQUIRE and RELEASE events in g->events */
void gov_group_events(const struct governor *g, const struct gov_group *gr, uint64_t *acq,
			 uint64_t *rel)
{
	*acq = *rel = 0;
	for (size_t k = 0; k < gr->n_desc; k++) {
		enum pb_event_kind kind = gov_desc_kind(g, gr->descs[k]);

		if (kind == PB_EV_ACQUIRE)
			*acq += g->events[gr->descs[k]];
		else if (kind == PB_EV_RELEASE)
			*rel += g->events[gr->descs[k]];
	}
}

/* The close's PB_REC_WINDOW_STATS (after its close mark): the window's
 * net growth (ACQUIRE - RELEASE events while both were on) and the
 * generations it cut (gr->cut, read before the close forgot them). */
void gov_window_stats(struct governor *g, struct gov_group *gr, uint64_t ts,
			 gov_emit_fn emit, void *ctx)
{
	struct pb_rec_window_stats *w = &gr->cut;
	uint64_t acq, rel;

	gov_group_events(g, gr, &acq, &rel);
	w->hdr.type = PB_REC_WINDOW_STATS;
	w->hdr.version = PB_EVENTS_VERSION;
	w->hdr.size = sizeof(*w);
	w->hdr.ts_ns = ts;
	w->resource = gr->res;
	w->open_ns = gr->win_open_ns;
	w->acquires = acq - gr->win_acq_ev0;
	w->releases = rel - gr->win_rel_ev0;
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
	if (!engine__desc_events(e, g->events, g->n_desc))
		gov_group_events(g, gr, &gr->win_acq_ev0, &gr->win_rel_ev0);
	return err;
}

/* close the windowed groups that are open, in parallel: the window ends
 * (ts) before the first detach; from then on not-active USE/RELEASE of
 * their resources are unknown (engine__forget_resource before and after
 * the detach, on this thread: it is not reentrant) */
int gov_close_groups(struct governor *g, struct engine *e, uint64_t *ts)
{
	struct gov_detach *d = calloc(g->n_groups + 1, sizeof(*d));
	uint64_t end;
	size_t i;
	int err = 0;

	if (!d)
		return -ENOMEM;
	*ts = pb_mono_ns();
	if (engine__desc_events(e, g->events, g->n_desc) && !err)
		err = -EIO;
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (!gr->attached || !gr->windowed)
			continue;
		d[i] = (struct gov_detach){ .g = g, .e = e, .gr = gr };
		gr->n_move = gov_movable(g, gr);
		/* the generations this close cuts, before it forgets them */
		memset(&gr->cut, 0, sizeof(gr->cut));
		if (engine__live_ages(e, gr->res, *ts, &gr->cut) && !err)
			err = -EIO;
		if (engine__forget_resource(e, gr->res, NULL) && !err)
			err = -EIO;
		d[i].started = !pthread_create(&d[i].th, NULL, detach_group, &d[i]);
		if (!d[i].started)
			detach_group(&d[i]);
	}
	for (i = 0; i < g->n_groups; i++) {
		struct gov_group *gr = &g->groups[i];

		if (!d[i].gr)
			continue;
		if (d[i].started)
			pthread_join(d[i].th, NULL);
		if (d[i].err && !err)
			err = d[i].err;
		if (engine__forget_resource(e, gr->res, NULL) && !err)
			err = -EIO;
		/* its probes fired until the detach completed: the hits of the
		 * detach count against the time to its end, or the rates would
		 * be inflated by (window + detach) / window */
		end = pb_mono_ns();
		gr->cut.detached_ns = end;
		if (gr->att_ns && end > gr->att_ns)
			gr->on_ns_dec += end - (gr->att_ns > g->dec_ns ? gr->att_ns : g->dec_ns);
		gr->att_ns = 0;
		gr->attached = false;
		gr->closing = true;
	}
	free(d);
	return err;
}
