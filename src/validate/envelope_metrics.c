/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope_metrics.c: the numbers an envelope is made of (envelope.h,
 * docs/validation.md): what each descriptor of the manifest is, every
 * candidate metric it can have, the windows of evidence and one metric's
 * value over a closing window. Shared by training (envelope.c) and
 * checking (envelope_check.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/envelope_int.h"
#include "common/array.h"

const struct envelope_mtype envelope_mtypes[MT__COUNT] = {
	[MT_SHARE] = { "share", 0.01, 200, false },
	[MT_RATIO] = { "ratio", 0.05, 30, false },
	[MT_GUARD_PASS] = { "guard_pass", 0.05, 30, false },
	[MT_NEW_GEN] = { "new_generation", 0.05, 30, false },
	[MT_UNITS_MEAN] = { "units_mean", 0.1, 30, false },
	[MT_DUR_P50] = { "duration_p50_log2", 2.0, 30, false },
	[MT_KEY_ALIGNED8] = { "key_aligned8", 0.05, 30, true },
	[MT_KEY_DISTINCT] = { "key_distinct", 0.05, 30, true },
	[MT_TRANSITION] = { "transition", 0.05, 30, true },
	[MT_UNITS_P50] = { "units_p50_log2", 1.0, 30, true },
};

/* ---- layout and candidate metrics ---- */

void env_layout_free(struct layout *l)
{
	size_t i;

	for (i = 0; l->desc_id && i < l->n_desc; i++)
		free(l->desc_id[i]);
	for (i = 0; l->res_name && i < l->n_res; i++)
		free(l->res_name[i]);
	free(l->desc_id);
	free(l->res_name);
	free(l->kind);
	free(l->res);
	free(l->guard);
	memset(l, 0, sizeof(*l));
}

int env_layout_init(struct layout *l, const struct manifest *m)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	l->n_desc = m->n_events;
	l->n_res = m->n_resources;
	l->kind = calloc(l->n_desc + 1, sizeof(*l->kind));
	l->res = calloc(l->n_desc + 1, sizeof(*l->res));
	l->guard = calloc(l->n_desc + 1, sizeof(*l->guard));
	l->desc_id = calloc(l->n_desc + 1, sizeof(*l->desc_id));
	l->res_name = calloc(l->n_res + 1, sizeof(*l->res_name));
	if (!l->kind || !l->res || !l->guard || !l->desc_id || !l->res_name)
		goto nomem;
	for (i = 0; i < l->n_desc; i++) {
		l->kind[i] = (uint8_t)m->events[i].kind;
		l->res[i] = m->events[i].resource_idx;
		l->guard[i] = m->events[i].when.present;
		l->desc_id[i] = strdup(m->events[i].id ? m->events[i].id : "?");
		if (!l->desc_id[i])
			goto nomem;
	}
	for (i = 0; i < l->n_res; i++) {
		l->res_name[i] = strdup(m->resources[i].name ? m->resources[i].name : "?");
		if (!l->res_name[i])
			goto nomem;
	}
	return 0;
nomem:
	env_layout_free(l);
	return -ENOMEM;
}

void env_metrics_free(struct metric *ms, size_t n)
{
	size_t i;

	for (i = 0; ms && i < n; i++) {
		free(ms[i].name);
		free(ms[i].vals);
	}
	free(ms);
}

static int push_metric(struct metric **ms, size_t *n, size_t *cap, enum metric_type t,
		       int desc, int res, int kind, const char *name)
{
	struct metric *x;
	int err;

	err = pb_array_grow(ms, cap, *n + 1, sizeof(**ms));
	if (err)
		return err;
	x = &(*ms)[*n];
	memset(x, 0, sizeof(*x));
	x->type = t;
	x->desc = desc;
	x->res = res;
	x->kind = kind;
	x->name = strdup(name);
	if (!x->name)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Every metric this manifest can have, in a fixed order: per descriptor
 * the per-descriptor types, then per resource its ratios and transitions
 * (the order of envelope files and of warnings). */
int env_gen_candidates(const struct layout *l, struct metric **out, size_t *n_out)
{
	static const int ratio_kinds[] = { PB_EV_USE, PB_EV_RELEASE, PB_EV_WAIT };
	struct metric *ms = NULL;
	size_t n = 0, cap = 0, d, r, k;
	char name[MAX_NAME + 64];
	int err = 0, t;

	for (d = 0; !err && d < l->n_desc; d++) {
		for (t = 0; !err && t < MT__COUNT; t++) {
			if (t == MT_RATIO || t == MT_TRANSITION)
				continue;
			if (t == MT_GUARD_PASS && !l->guard[d])
				continue;
			if (t == MT_NEW_GEN && l->kind[d] != PB_EV_ACQUIRE)
				continue;
			if (t == MT_DUR_P50 && l->kind[d] != PB_EV_WAIT && l->kind[d] != PB_EV_RELEASE)
				continue;
			snprintf(name, sizeof(name), "%s/%s", envelope_mtypes[t].name, l->desc_id[d]);
			err = push_metric(&ms, &n, &cap, t, (int)d, l->res[d], -1, name);
		}
	}
	for (r = 0; !err && r < l->n_res; r++) {
		bool has[4] = { false };

		for (d = 0; d < l->n_desc; d++)
			if (l->res[d] == (int)r && l->kind[d] < 4)
				has[l->kind[d]] = true;
		if (!has[PB_EV_ACQUIRE])
			continue;
		for (k = 0; !err && k < sizeof(ratio_kinds) / sizeof(ratio_kinds[0]); k++) {
			if (!has[ratio_kinds[k]])
				continue;
			snprintf(name, sizeof(name), "ratio/%s/%s:ACQUIRE", l->res_name[r],
				 pb_event_kind_str(ratio_kinds[k]));
			err = push_metric(&ms, &n, &cap, MT_RATIO, -1, (int)r, ratio_kinds[k], name);
		}
		/* what follows an ACQUIRE of an instance (WAIT instances name the
		 * container, not a member: not a transition of the instance) */
		for (k = PB_EV_ACQUIRE; !err && k <= PB_EV_RELEASE; k++) {
			if (!has[k])
				continue;
			snprintf(name, sizeof(name), "transition/%s/ACQUIRE>%s", l->res_name[r],
				 pb_event_kind_str((int)k));
			err = push_metric(&ms, &n, &cap, MT_TRANSITION, -1, (int)r, (int)k, name);
		}
	}
	if (err) {
		env_metrics_free(ms, n);
		return err;
	}
	*out = ms;
	*n_out = n;
	return 0;
}

/* ---- windows ---- */

void env_window_free(struct window *w)
{
	size_t i;

	for (i = 0; w->keys && i < w->n_desc; i++)
		free(w->keys[i].set);
	free(w->keys);
	free(w->base);
	free(w->trans);
	free(w->after_acq);
	memset(w, 0, sizeof(*w));
}

int env_window_init(struct window *w, size_t n_desc, size_t n_res)
{
	memset(w, 0, sizeof(*w));
	w->n_desc = n_desc;
	w->n_res = n_res;
	w->base = calloc(n_desc + 1, sizeof(*w->base));
	w->keys = calloc(n_desc + 1, sizeof(*w->keys));
	w->after_acq = calloc(n_res + 1, sizeof(*w->after_acq));
	if (!w->base || !w->keys || !w->after_acq) {
		env_window_free(w);
		return -ENOMEM;
	}
	return 0;
}

static void window_reset_keys(struct window *w)
{
	size_t i;

	for (i = 0; i < w->n_desc; i++) {
		uint64_t *set = w->keys[i].set;

		memset(&w->keys[i], 0, sizeof(w->keys[i]));
		if (set)
			memset(set, 0, KEY_SLOTS * sizeof(*set));
		w->keys[i].set = set;
	}
	memset(w->after_acq, 0, (w->n_res + 1) * sizeof(*w->after_acq));
}

void env_window_restart(struct window *w)
{
	memset(w->base, 0, w->n_desc * sizeof(*w->base));
	w->open_ts = 0;
	w->started = false;
	window_reset_keys(w);
	if (w->trans)
		memset(w->trans, 0, TRANS_SLOTS * sizeof(*w->trans));
}

/* count what follows an ACQUIRE of the same (resource, instance) */
static int window_transition(struct window *w, const struct pb_rec_resource *r)
{
	struct trans_slot *s;
	uint64_t h;

	if (r->resource >= w->n_res || r->kind == PB_EV_WAIT || r->kind > PB_EV_RELEASE)
		return 0;
	if (!w->trans) {
		w->trans = calloc(TRANS_SLOTS, sizeof(*w->trans));
		if (!w->trans)
			return -ENOMEM;
	}
	h = (r->instance ^ ((uint64_t)r->resource << 48)) * 0x9e3779b97f4a7c15ull;
	s = &w->trans[h >> 51];		/* 13 bits: TRANS_SLOTS */
	if (s->resource == (uint32_t)r->resource + 1 && s->instance == r->instance &&
	    s->kind == PB_EV_ACQUIRE)
		w->after_acq[r->resource][r->kind]++;
	s->resource = (uint32_t)r->resource + 1;
	s->instance = r->instance;
	s->kind = r->kind;
	return 0;
}

int env_window_record(struct window *w, const void *rec, size_t len)
{
	struct pb_rec_resource r;
	struct key_acc *a;
	uint64_t h;
	size_t i;

	if (len < sizeof(struct pb_rec_hdr))
		return -EINVAL;
	if (((const struct pb_rec_hdr *)rec)->type != PB_REC_RESOURCE)
		return 0;
	if (len < sizeof(r))
		return -EINVAL;
	memcpy(&r, rec, sizeof(r));	/* may sit unaligned in a chunk */
	if (r.descriptor >= w->n_desc || (r.flags & PB_RF_DEREF_FAULT))
		return 0;
	if (window_transition(w, &r))
		return -ENOMEM;
	a = &w->keys[r.descriptor];
	a->n++;
	a->units[r.units ? 64 - __builtin_clzll(r.units) : 0]++;
	if (!(r.instance & 7))
		a->aligned8++;
	if (a->seen >= KEY_SEEN)
		return 0;
	if (!a->set) {
		a->set = calloc(KEY_SLOTS, sizeof(*a->set));
		if (!a->set)
			return -ENOMEM;
	}
	a->seen++;
	if (!r.instance) {
		if (!a->zero_seen)
			a->distinct++;
		a->zero_seen = true;
		return 0;
	}
	h = r.instance * 0x9e3779b97f4a7c15ull;
	for (i = 0; i < KEY_SLOTS; i++) {
		uint64_t *slot = &a->set[((h >> 54) + i) & (KEY_SLOTS - 1)];

		if (*slot == r.instance)
			return 0;
		if (!*slot) {
			*slot = r.instance;
			a->distinct++;
			return 0;
		}
	}
	return 0;
}

static uint64_t delta(uint64_t cur, uint64_t base)
{
	return cur >= base ? cur - base : 0;
}

/* numerator and denominator of a ratio between the kinds of one resource
 * (MT_RATIO: over the descriptors' counters; MT_TRANSITION: over what
 * followed an ACQUIRE in this window); false when mt names no resource */
static bool resource_counts(const struct metric *mt, const struct layout *l,
			    const struct window *w, const struct pb_desc_stats *cum,
			    uint64_t *num, uint64_t *den)
{
	uint64_t n;
	size_t i;
	int k;

	*num = *den = 0;
	if (mt->type == MT_RATIO) {
		for (i = 0; i < l->n_desc; i++) {
			if (l->res[i] != mt->res)
				continue;
			n = delta(cum[i].events, w->base[i].events);
			if (l->kind[i] == PB_EV_ACQUIRE)
				*den += n;
			else if (l->kind[i] == mt->kind)
				*num += n;
		}
		return true;
	}
	if (mt->res < 0 || (size_t)mt->res >= l->n_res)
		return false;
	for (k = 0; k < 4; k++)
		*den += w->after_acq[mt->res][k];
	*num = mt->kind >= 0 && mt->kind < 4 ? w->after_acq[mt->res][mt->kind] : 0;
	return true;
}

/* the bucket holding the median of den samples: a window's share of a
 * cumulative histogram (cur - base) or, with cur32, a window's own one */
static int median_bucket(const __u64 *cur, const __u64 *base, const uint32_t *cur32,
			 int n_buckets, uint64_t den)
{
	uint64_t half = (den + 1) / 2, acc = 0;
	int k;

	for (k = 0; k < n_buckets; k++) {
		acc += cur32 ? cur32[k] : delta(cur[k], base[k]);
		if (acc >= half)
			break;
	}
	return k;
}

/* The value of one metric over the closing window; false when the window
 * holds too little evidence for it. */
bool env_metric_value(const struct metric *mt, const struct layout *l, const struct window *w,
		      const struct pb_desc_stats *cum, double *out)
{
	const struct pb_desc_stats *c, *b;
	uint64_t num = 0, den = 0;
	size_t i;
	int k;

	if (mt->type == MT_RATIO || mt->type == MT_TRANSITION) {
		if (!resource_counts(mt, l, w, cum, &num, &den))
			return false;
		goto ratio;
	}
	if (mt->desc < 0 || (size_t)mt->desc >= l->n_desc)
		return false;
	c = &cum[mt->desc];
	b = &w->base[mt->desc];
	switch (mt->type) {
	case MT_SHARE:
		for (i = 0; i < l->n_desc; i++)
			den += delta(cum[i].events, w->base[i].events);
		num = delta(c->events, b->events);
		break;
	case MT_GUARD_PASS:
		num = delta(c->events, b->events);
		den = delta(c->hits, b->hits);
		break;
	case MT_NEW_GEN:
		num = delta(c->new_generations, b->new_generations);
		den = delta(c->events, b->events);
		break;
	case MT_UNITS_MEAN:
		num = delta(c->units, b->units);
		den = delta(c->events, b->events);
		break;
	case MT_DUR_P50:
		for (k = 0; k < PB_HIST_BUCKETS; k++)
			den += delta(c->hist[k], b->hist[k]);
		if (den < envelope_mtypes[mt->type].min_evidence)
			return false;
		*out = median_bucket(c->hist, b->hist, NULL, PB_HIST_BUCKETS, den);
		return true;
	case MT_KEY_ALIGNED8:
		num = w->keys[mt->desc].aligned8;
		den = w->keys[mt->desc].n;
		break;
	case MT_KEY_DISTINCT:
		num = w->keys[mt->desc].distinct;
		den = w->keys[mt->desc].seen;
		break;
	case MT_UNITS_P50:
		den = w->keys[mt->desc].n;
		if (den < envelope_mtypes[mt->type].min_evidence)
			return false;
		/* 0: zero units; k: [2^(k-1), 2^k) */
		*out = median_bucket(NULL, NULL, w->keys[mt->desc].units, UNIT_BUCKETS, den);
		return true;
	default:
		return false;
	}
ratio:
	if (den < envelope_mtypes[mt->type].min_evidence)
		return false;
	*out = (double)num / (double)den;
	return true;
}

/* 1 when the window closed, 0 when it stays open (envelope_int.h) */
int env_window_snapshot(struct window *w, uint64_t ts, const struct pb_desc_stats *cum,
			   size_t n_desc, uint64_t window_ns)
{
	size_t i;

	if (n_desc < w->n_desc)
		return 0;	/* a snapshot of another shape: ignore */
	for (i = 0; i < w->n_desc; i++)
		if (cum[i].events < w->base[i].events) {
			/* counters restarted: rebase, judge nothing */
			memcpy(w->base, cum, w->n_desc * sizeof(*cum));
			w->open_ts = ts;
			window_reset_keys(w);
			return 0;
		}
	if (!w->started) {
		/* the run's first window runs from its start (zero counters) */
		w->started = true;
		w->open_ts = ts;
		return 0;
	}
	return ts >= w->open_ts + window_ns ? 1 : 0;
}

void env_window_advance(struct window *w, uint64_t ts, const struct pb_desc_stats *cum)
{
	memcpy(w->base, cum, w->n_desc * sizeof(*cum));
	w->open_ts = ts;
	window_reset_keys(w);
}
