/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_window.c: what record --budget does at a window's edges
 * (docs/record.md "OVERHEAD BUDGET"): reads the descriptors' event
 * counters (the window's net growth) and, before a close forgets a
 * resource, the ages of its live generations (the holds the close cuts),
 * then forgets them (engine__forget_resource); and the holds a window's
 * open cut (RELEASEs of units acquired before it, counted in BPF). */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine_int.h"
#include "engine.skel.h"

int engine__desc_events(struct engine *e, uint64_t *events, uint64_t *total_ns, size_t n)
{
	int dfd = bpf_map__fd(e->skel->maps.desc_stats);
	uint32_t i, c;

	for (i = 0; i < e->n_desc && i < n; i++) {
		if (bpf_map_lookup_elem(dfd, &i, e->desc_pcpu))
			return -errno;
		events[i] = 0;
		if (total_ns)
			total_ns[i] = 0;
		for (c = 0; c < (uint32_t)e->ncpu; c++) {
			events[i] += e->desc_pcpu[c].events;
			if (total_ns)
				total_ns[i] += e->desc_pcpu[c].total_ns;
		}
	}
	return 0;
}

int engine__live_ages(struct engine *e, uint32_t res, uint64_t now_ns,
		      struct pb_rec_window_stats *w)
{
	int fd = bpf_map__fd(e->skel->maps.instances);
	struct pb_inst_key cur, next;
	struct pb_inst_state st;
	bool first = true;

	if (res >= e->n_res)
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		uint64_t age;
		unsigned b = 0;

		first = false;
		cur = next;
		if (cur.resource != res || bpf_map_lookup_elem(fd, &cur, &st) || st.pending_ts ||
		    st.holders <= 0)
			continue;
		age = now_ns > st.acquire_ts ? now_ns - st.acquire_ts : 0;
		w->cut_lives++;
		w->cut_holders += (uint64_t)st.holders;
		w->cut_age_sum_ns += age;
		if (age > w->cut_age_max_ns)
			w->cut_age_max_ns = age;
		for (uint64_t x = age; x > 1 && b < PB_HIST_BUCKETS - 1; x >>= 1)
			b++;
		w->cut_age_hist[b]++;
	}
	return 0;
}

int engine__window_opened(struct engine *e, uint32_t res, uint64_t open_ns)
{
	struct pb_win_edge none = { 0 };

	if (res >= e->n_res)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.win_edge), &res, &none, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(e->skel->maps.win_open), &res, &open_ns, BPF_ANY))
		return -errno;
	return 0;
}

int engine__window_closing(struct engine *e, uint32_t res)
{
	uint64_t none = 0;

	if (res >= e->n_res)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.win_open), &res, &none, BPF_ANY))
		return -errno;
	return 0;
}

int engine__open_cuts(struct engine *e, uint32_t res, struct pb_rec_window_stats *w)
{
	struct pb_win_edge cur;

	if (res >= e->n_res)
		return -EINVAL;
	if (bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.win_edge), &res, &cur))
		return -errno;
	w->open_cuts = cur.n;
	w->open_cut_sum_ns = cur.sum_ns;
	w->open_cut_max_ns = cur.max_ns;
	memcpy(w->open_cut_hist, cur.hist, sizeof(w->open_cut_hist));
	return 0;
}

int engine__window_resource(struct engine *e, uint32_t res)
{
	int lfd = bpf_map__fd(e->skel->maps.res_lost);
	uint64_t lost = 0;

	if (res >= e->n_res)
		return -EINVAL;
	if (bpf_map_lookup_elem(lfd, &res, &lost))
		return -errno;
	lost |= PB_LOST_WINDOW;
	if (bpf_map_update_elem(lfd, &res, &lost, BPF_ANY))
		return -errno;
	e->windowed[res] = true;
	return 0;
}

/* Mark res windowed (PB_LOST_WINDOW), delete its instance entries and
 * zero its units held against the capacity;
 * keys collected first as in sweep_tombstones. Called with the resource's
 * probes detached, so no program touches its keys meanwhile. */
int engine__forget_resource(struct engine *e, uint32_t res, uint64_t *forgotten)
{
	int fd = bpf_map__fd(e->skel->maps.instances);
	struct pb_inst_key cur, next;
	bool first = true, more = true;
	int64_t zero = 0;
	int err = engine__window_resource(e, res);

	if (err)
		return err;
	/* the units held for `capacity` were the forgotten instances' */
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.res_cap), &res, &zero, BPF_ANY))
		return -errno;
	if (forgotten)
		*forgotten = 0;
	while (more) {
		size_t n = 0, i;

		first = true;
		while (n < ENGINE_SWEEP_MAX &&
		       !bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
			first = false;
			cur = next;
			if (cur.resource == res)
				e->expired[n++] = cur;
		}
		more = n == ENGINE_SWEEP_MAX;
		for (i = 0; i < n; i++)
			if (!bpf_map_delete_elem(fd, &e->expired[i]) && forgotten)
				(*forgotten)++;
	}
	return 0;
}
