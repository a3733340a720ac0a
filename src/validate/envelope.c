/* envelope.c: distribution envelopes (envelope.h, docs/validation.md).
 *
 * One metric = one number per window of evidence (a ratio between
 * counters of the window). Training keeps every window's value and turns
 * their spread into a band; checking computes the same numbers over the
 * same kind of window and counts the windows outside the band. Pure
 * bookkeeping over counters and records: no BPF; the file is JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "validate/envelope.h"
#include "common/digest.h"
#include "common/io.h"

enum metric_type {
	MT_SHARE,		/* events of the descriptor / events of all */
	MT_RATIO,		/* events of kind K / ACQUIRE events, one resource */
	MT_GUARD_PASS,		/* events / hits (a `when:` guard) */
	MT_NEW_GEN,		/* ACQUIREs that opened a generation / ACQUIREs */
	MT_UNITS_MEAN,		/* decoded units / events */
	MT_DUR_P50,		/* median log2(ns) bucket of WAIT span / hold time */
	MT_KEY_ALIGNED8,	/* records: instance keys that are 8-byte aligned */
	MT_KEY_DISTINCT,	/* records: distinct keys among the first KEY_SEEN */
	MT_TRANSITION,		/* records: next event of an ACQUIREd instance is K / any */
	MT_UNITS_P50,		/* records: median log2 bucket of decoded units */
	MT__COUNT,
};

static const struct {
	const char *name;
	double floor;		/* smallest half-width added to the trained range */
	uint64_t min_evidence;	/* denominator needed in a window */
	bool records;		/* needs --events records */
} mtypes[MT__COUNT] = {
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

#define BAND_REL	0.2	/* half-width at least 20% of the median */
#define BAND_SPREAD	0.5	/* and at least half the trained range */
#define KEY_SEEN	512	/* key_distinct looks at the first 512 events */
#define KEY_SLOTS	1024	/* open addressing, > 2 x KEY_SEEN */
#define TRANS_SLOTS	8192	/* (resource, instance) -> last kind; lossy cache */
#define MAX_METRICS	65536
#define MAX_NAME	256

struct metric {
	enum metric_type type;
	int desc;		/* descriptor (event index), -1 for ratios */
	int res;		/* resource of a ratio */
	int kind;		/* numerator kind of a ratio */
	char *name;
	/* training: one value per window */
	double *vals;
	size_t n_vals, cap_vals;
	/* band */
	double lo, hi, tmin, tmax, median;
	uint64_t windows;
};

/* what each descriptor is, from the manifest */
struct layout {
	size_t n_desc, n_res;
	uint8_t *kind;
	int *res;
	bool *guard;
	char **desc_id;
	char **res_name;
};

#define UNIT_BUCKETS	65	/* 0, then [2^i, 2^(i+1)) as bucket i + 1 */

struct key_acc {
	uint64_t n, aligned8;
	uint32_t units[UNIT_BUCKETS];	/* log2 histogram of decoded units */
	uint32_t seen, distinct;
	bool zero_seen;
	uint64_t *set;		/* KEY_SLOTS, allocated on first record */
};

/* one window of evidence: cumulative counters at its start, records since */
/* last event kind per (resource, instance), across windows of a run: a
 * direct-mapped cache (a collision forgets the older instance) */
struct trans_slot {
	uint64_t instance;
	uint32_t resource;	/* + 1; 0 = empty */
	uint32_t kind;
};

struct window {
	size_t n_desc, n_res;
	struct pb_desc_stats *base;
	uint64_t open_ts;
	bool started;
	struct key_acc *keys;
	struct trans_slot *trans;	/* TRANS_SLOTS, on the first record */
	uint64_t (*after_acq)[4];	/* per resource: next kind after an ACQUIRE */
};

struct pb_envelope {
	char *manifest_name;
	uint8_t sha256[32];
	size_t n_targets;
	char *target_id[ENVELOPE_MAX_TARGETS];
	char build_id[ENVELOPE_MAX_TARGETS][129];
	uint64_t window_ns;
	size_t runs, windows, n_untrained;
	bool key_metrics;	/* every training run had records */
	bool finished;
	struct metric *metrics;
	size_t n_metrics;
	/* training */
	struct layout lay;
	struct window win;
	bool in_run;
};

struct check_metric {
	const struct metric *band;	/* in the envelope */
	struct metric def;		/* type/desc/res/kind from this manifest */
	uint64_t checked, outside;
	uint32_t run;
	int warning;			/* index into warnings, -1 none */
};

struct envelope_check {
	const struct pb_envelope *env;
	struct layout lay;
	struct window win;
	struct check_metric *m;
	size_t n_m;
	struct envelope_warning *warnings;
	size_t n_warnings, cap_warnings;
	uint64_t windows;
	uint64_t key_windows;		/* windows in which a key metric had evidence */
};

/* ---- layout and candidate metrics ---- */

static void layout_free(struct layout *l)
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

static int layout_init(struct layout *l, const struct manifest *m)
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
	layout_free(l);
	return -ENOMEM;
}

static void metrics_free(struct metric *ms, size_t n)
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

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;

		x = realloc(*ms, nc * sizeof(*x));
		if (!x)
			return -ENOMEM;
		*ms = x;
		*cap = nc;
	}
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

/* Every metric this manifest can have, in a fixed order. */
static int gen_candidates(const struct layout *l, struct metric **out, size_t *n_out)
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
			snprintf(name, sizeof(name), "%s/%s", mtypes[t].name, l->desc_id[d]);
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
		metrics_free(ms, n);
		return err;
	}
	*out = ms;
	*n_out = n;
	return 0;
}

/* ---- windows ---- */

static void window_free(struct window *w)
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

static int window_init(struct window *w, size_t n_desc, size_t n_res)
{
	memset(w, 0, sizeof(*w));
	w->n_desc = n_desc;
	w->n_res = n_res;
	w->base = calloc(n_desc + 1, sizeof(*w->base));
	w->keys = calloc(n_desc + 1, sizeof(*w->keys));
	w->after_acq = calloc(n_res + 1, sizeof(*w->after_acq));
	if (!w->base || !w->keys || !w->after_acq) {
		window_free(w);
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

/* a new run: counters start from zero */
static void window_restart(struct window *w)
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

static int window_record(struct window *w, const void *rec, size_t len)
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

/* The value of one metric over the closing window; false when the window
 * holds too little evidence for it. */
static bool metric_value(const struct metric *mt, const struct layout *l, const struct window *w,
			 const struct pb_desc_stats *cum, double *out)
{
	const struct pb_desc_stats *c, *b;
	uint64_t num = 0, den = 0, n, half, acc;
	size_t i;
	int k;

	if (mt->type == MT_RATIO) {
		for (i = 0; i < l->n_desc; i++) {
			if (l->res[i] != mt->res)
				continue;
			n = delta(cum[i].events, w->base[i].events);
			if (l->kind[i] == PB_EV_ACQUIRE)
				den += n;
			else if (l->kind[i] == mt->kind)
				num += n;
		}
		goto ratio;
	}
	if (mt->type == MT_TRANSITION) {
		if (mt->res < 0 || (size_t)mt->res >= l->n_res)
			return false;
		for (k = 0; k < 4; k++)
			den += w->after_acq[mt->res][k];
		num = mt->kind >= 0 && mt->kind < 4 ? w->after_acq[mt->res][mt->kind] : 0;
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
		if (den < mtypes[mt->type].min_evidence)
			return false;
		half = (den + 1) / 2;
		for (k = 0, acc = 0; k < PB_HIST_BUCKETS; k++) {
			acc += delta(c->hist[k], b->hist[k]);
			if (acc >= half)
				break;
		}
		*out = k;
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
		if (den < mtypes[mt->type].min_evidence)
			return false;
		half = (den + 1) / 2;
		for (k = 0, acc = 0; k < UNIT_BUCKETS; k++) {
			acc += w->keys[mt->desc].units[k];
			if (acc >= half)
				break;
		}
		*out = k;	/* 0: zero units; k: [2^(k-1), 2^k) */
		return true;
	default:
		return false;
	}
ratio:
	if (den < mtypes[mt->type].min_evidence)
		return false;
	*out = (double)num / (double)den;
	return true;
}

/* Feed a snapshot to a window. Returns 1 when the window closed (the
 * caller evaluates the metrics against cum, then calls window_advance),
 * 0 when it stays open. */
static int window_snapshot(struct window *w, uint64_t ts, const struct pb_desc_stats *cum,
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

static void window_advance(struct window *w, uint64_t ts, const struct pb_desc_stats *cum)
{
	memcpy(w->base, cum, w->n_desc * sizeof(*cum));
	w->open_ts = ts;
	window_reset_keys(w);
}

/* ---- training ---- */

static int binding_copy(struct pb_envelope *env, const struct manifest *m,
			const struct envelope_binding *b)
{
	size_t i;

	if (b->n_targets != m->n_targets || b->n_targets > ENVELOPE_MAX_TARGETS)
		return -EINVAL;
	memcpy(env->sha256, b->manifest_sha256, sizeof(env->sha256));
	env->n_targets = b->n_targets;
	for (i = 0; i < b->n_targets; i++) {
		env->target_id[i] = strdup(m->targets[i].id ? m->targets[i].id : "?");
		if (!env->target_id[i])
			return -ENOMEM;
		snprintf(env->build_id[i], sizeof(env->build_id[i]), "%s", b->build_id[i]);
	}
	env->manifest_name = strdup(m->name ? m->name : "");
	return env->manifest_name ? 0 : -ENOMEM;
}

struct pb_envelope *envelope__new(const struct manifest *m, const struct envelope_binding *b)
{
	struct pb_envelope *env;
	int err;

	if (!m || !b) {
		errno = EINVAL;
		return NULL;
	}
	env = calloc(1, sizeof(*env));
	if (!env)
		return NULL;
	env->window_ns = ENVELOPE_WINDOW_NS;
	env->key_metrics = true;
	err = binding_copy(env, m, b);
	if (!err)
		err = layout_init(&env->lay, m);
	if (!err)
		err = window_init(&env->win, env->lay.n_desc, env->lay.n_res);
	if (!err)
		err = gen_candidates(&env->lay, &env->metrics, &env->n_metrics);
	if (err) {
		envelope__free(env);
		errno = -err;
		return NULL;
	}
	return env;
}

int envelope__begin_run(struct pb_envelope *env, bool has_records)
{
	if (!env || env->finished)
		return -EINVAL;
	window_restart(&env->win);
	env->in_run = true;
	env->runs++;
	if (!has_records)
		env->key_metrics = false;
	return 0;
}

int envelope__record(struct pb_envelope *env, const void *rec, size_t len)
{
	if (!env || !rec || !env->in_run)
		return -EINVAL;
	return window_record(&env->win, rec, len);
}

int envelope__snapshot(struct pb_envelope *env, uint64_t ts_ns,
		       const struct pb_desc_stats *cum, size_t n_desc)
{
	size_t i;
	double v;

	if (!env || !env->in_run || (!cum && n_desc))
		return -EINVAL;
	if (window_snapshot(&env->win, ts_ns, cum, n_desc, env->window_ns) != 1)
		return 0;
	for (i = 0; i < env->n_metrics; i++) {
		struct metric *mt = &env->metrics[i];

		if (!metric_value(mt, &env->lay, &env->win, cum, &v))
			continue;
		if (mt->n_vals == mt->cap_vals) {
			size_t nc = mt->cap_vals ? mt->cap_vals * 2 : 16;
			double *x = realloc(mt->vals, nc * sizeof(*x));

			if (!x)
				return -ENOMEM;
			mt->vals = x;
			mt->cap_vals = nc;
		}
		mt->vals[mt->n_vals++] = v;
	}
	env->windows++;
	window_advance(&env->win, ts_ns, cum);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Band = [min - h, max + h], h = max(BAND_SPREAD x (max - min),
 * BAND_REL x |median|, the type's floor); never below 0 (every metric is
 * a non-negative quantity). */
static void band_from(struct metric *mt)
{
	double spread, h, med;

	qsort(mt->vals, mt->n_vals, sizeof(double), cmp_double);
	mt->tmin = mt->vals[0];
	mt->tmax = mt->vals[mt->n_vals - 1];
	med = mt->n_vals % 2 ? mt->vals[mt->n_vals / 2] :
	      (mt->vals[mt->n_vals / 2 - 1] + mt->vals[mt->n_vals / 2]) / 2;
	mt->median = med;
	spread = mt->tmax - mt->tmin;
	h = BAND_SPREAD * spread;
	if (BAND_REL * fabs(med) > h)
		h = BAND_REL * fabs(med);
	if (mtypes[mt->type].floor > h)
		h = mtypes[mt->type].floor;
	mt->lo = mt->tmin - h < 0 ? 0 : mt->tmin - h;
	mt->hi = mt->tmax + h;
	mt->windows = mt->n_vals;
}

int envelope__finish(struct pb_envelope *env)
{
	size_t i, n = 0;

	if (!env || env->finished)
		return -EINVAL;
	for (i = 0; i < env->n_metrics; i++) {
		struct metric *mt = &env->metrics[i];
		bool keep = mt->n_vals >= ENVELOPE_MIN_WINDOWS &&
			    (!mtypes[mt->type].records || env->key_metrics);

		if (!keep) {
			if (!mtypes[mt->type].records || env->key_metrics)
				env->n_untrained++;
			free(mt->name);
			free(mt->vals);
			continue;
		}
		band_from(mt);
		free(mt->vals);
		mt->vals = NULL;
		mt->n_vals = mt->cap_vals = 0;
		env->metrics[n++] = *mt;
	}
	env->n_metrics = n;
	env->finished = true;
	env->in_run = false;
	if (!env->runs)
		env->key_metrics = false;
	return n ? 0 : -ENODATA;
}

size_t envelope__n_metrics(const struct pb_envelope *env)
{
	return env ? env->n_metrics : 0;
}

size_t envelope__n_runs(const struct pb_envelope *env)
{
	return env ? env->runs : 0;
}

size_t envelope__n_windows(const struct pb_envelope *env)
{
	return env ? env->windows : 0;
}

bool envelope__has_key_metrics(const struct pb_envelope *env)
{
	return env && env->key_metrics;
}

size_t envelope__n_untrained(const struct pb_envelope *env)
{
	return env ? env->n_untrained : 0;
}

/* ---- the file ---- */

static const char *type_of_name(const char *name, int *type)
{
	int t;

	for (t = 0; t < MT__COUNT; t++) {
		size_t l = strlen(mtypes[t].name);

		if (!strncmp(name, mtypes[t].name, l) && name[l] == '/') {
			*type = t;
			return mtypes[t].name;
		}
	}
	return NULL;
}

json_t *envelope__to_json(const struct pb_envelope *env)
{
	json_t *o, *targets, *metrics;
	char sha[PB_DIGEST_HEX_LEN];
	size_t i;

	if (!env || !env->finished)
		return NULL;
	pb_hex(env->sha256, sizeof(env->sha256), sha);
	o = json_object();
	targets = json_array();
	metrics = json_array();
	if (!o || !targets || !metrics) {
		json_decref(o);
		json_decref(targets);
		json_decref(metrics);
		return NULL;
	}
	json_object_set_new(o, "format", json_string(ENVELOPE_FORMAT));
	json_object_set_new(o, "version", json_integer(ENVELOPE_VERSION));
	json_object_set_new(o, "manifest", json_pack("{s:s, s:s}", "name", env->manifest_name,
						     "sha256", sha));
	for (i = 0; i < env->n_targets; i++)
		json_array_append_new(targets, json_pack("{s:s, s:s}", "id", env->target_id[i],
							 "build_id", env->build_id[i]));
	json_object_set_new(o, "targets", targets);
	json_object_set_new(o, "window_ms", json_integer((json_int_t)(env->window_ns / 1000000)));
	json_object_set_new(o, "training", json_pack("{s:I, s:I, s:b, s:I}",
		"runs", (json_int_t)env->runs, "windows", (json_int_t)env->windows,
		"key_metrics", env->key_metrics, "untrained", (json_int_t)env->n_untrained));
	for (i = 0; i < env->n_metrics; i++) {
		const struct metric *mt = &env->metrics[i];

		json_array_append_new(metrics, json_pack("{s:s, s:f, s:f, s:{s:f, s:f, s:f, s:I}}",
			"name", mt->name, "lo", mt->lo, "hi", mt->hi, "trained",
			"min", mt->tmin, "max", mt->tmax, "median", mt->median,
			"windows", (json_int_t)mt->windows));
	}
	json_object_set_new(o, "metrics", metrics);
	return o;
}

int envelope__write(const struct pb_envelope *env, const char *path)
{
	json_t *doc = envelope__to_json(env);
	char *text = NULL, *tmp = NULL;
	int fd = -1, err;

	if (!doc)
		return -EINVAL;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (!text || asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = pb_write_all(fd, text, strlen(text));
	if (!err)
		err = pb_write_all(fd, "\n", 1);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	fd = -1;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(text);
	return err;
}

static int perr(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return -EINVAL;
	n = snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *json_type_str(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static bool is_hex(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s), i;

	if (n < min || n > max || n % 2)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* a member of an object, of one JSON type; err names the field path */
static json_t *member(json_t *o, const char *key, json_type want, const char *path,
		      const char *name, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	bool ok = v && (json_typeof(v) == want ||
			(want == JSON_REAL && json_typeof(v) == JSON_INTEGER));

	if (!v)
		perr(err, errlen, name, "%s%s: missing", path, key);
	else if (!ok)
		perr(err, errlen, name, "%s%s: expected %s, found %s", path, key,
		     want == JSON_OBJECT ? "an object" : want == JSON_ARRAY ? "an array" :
		     want == JSON_STRING ? "a string" : want == JSON_INTEGER ? "an integer" :
		     want == JSON_TRUE ? "a boolean" : "a number", json_type_str(v));
	return ok ? v : NULL;
}

static bool number_of(json_t *v, double *out)
{
	double d = json_number_value(v);

	if (!isfinite(d))
		return false;
	*out = d;
	return true;
}

static int parse_metric(struct pb_envelope *env, json_t *jm, size_t idx, const char *name,
			char *err, size_t errlen)
{
	struct metric *mt = &env->metrics[idx];
	json_t *v, *tr;
	char path[64];
	const char *s;
	int type;

	snprintf(path, sizeof(path), "metrics[%zu].", idx);
	if (!json_is_object(jm))
		return perr(err, errlen, name, "metrics[%zu]: expected an object, found %s", idx,
			    json_type_str(jm));
	if (!(v = member(jm, "name", JSON_STRING, path, name, err, errlen)))
		return -EINVAL;
	s = json_string_value(v);
	if (!s[0] || strlen(s) > MAX_NAME || !type_of_name(s, &type))
		return perr(err, errlen, name, "%sname: expected TYPE/WHAT with TYPE one of share, "
			    "ratio, guard_pass, new_generation, units_mean, duration_p50_log2, "
			    "key_aligned8, key_distinct, transition, units_p50_log2, found "
			    "'%.80s'", path, s);
	mt->type = type;
	mt->desc = mt->res = mt->kind = -1;
	mt->name = strdup(s);
	if (!mt->name)
		return -ENOMEM;
	if (!(v = member(jm, "lo", JSON_REAL, path, name, err, errlen)) || !number_of(v, &mt->lo))
		return v ? perr(err, errlen, name, "%slo: not a finite number", path) : -EINVAL;
	if (!(v = member(jm, "hi", JSON_REAL, path, name, err, errlen)) || !number_of(v, &mt->hi))
		return v ? perr(err, errlen, name, "%shi: not a finite number", path) : -EINVAL;
	if (mt->lo > mt->hi)
		return perr(err, errlen, name, "%slo, hi: expected lo <= hi, found [%g, %g]", path,
			    mt->lo, mt->hi);
	/* trained: informative, optional */
	tr = json_object_get(jm, "trained");
	if (tr && !json_is_object(tr))
		return perr(err, errlen, name, "%strained: expected an object, found %s", path,
			    json_type_str(tr));
	mt->tmin = mt->lo;
	mt->tmax = mt->hi;
	if (tr) {
		if ((v = json_object_get(tr, "min")) && json_is_number(v))
			number_of(v, &mt->tmin);
		if ((v = json_object_get(tr, "max")) && json_is_number(v))
			number_of(v, &mt->tmax);
		if ((v = json_object_get(tr, "median")) && json_is_number(v))
			number_of(v, &mt->median);
		if ((v = json_object_get(tr, "windows")) && json_is_integer(v) &&
		    json_integer_value(v) >= 0)
			mt->windows = (uint64_t)json_integer_value(v);
	}
	return 0;
}

static int parse_doc(struct pb_envelope *env, json_t *doc, const char *name, char *err,
		     size_t errlen)
{
	json_t *v, *man, *targets, *metrics, *t;
	const char *s;
	json_int_t ver;
	size_t i, j;
	int rc;

	if (!json_is_object(doc))
		return perr(err, errlen, name, "expected a JSON object, found %s", json_type_str(doc));
	if (!(v = member(doc, "format", JSON_STRING, "", name, err, errlen)))
		return -EINVAL;
	if (strcmp(json_string_value(v), ENVELOPE_FORMAT))
		return perr(err, errlen, name, "format: expected \"%s\", found \"%.64s\" (not an "
			    "envelope written by 'probity train')", ENVELOPE_FORMAT,
			    json_string_value(v));
	if (!(v = member(doc, "version", JSON_INTEGER, "", name, err, errlen)))
		return -EINVAL;
	ver = json_integer_value(v);
	if (ver != ENVELOPE_VERSION)
		return perr(err, errlen, name, "version: expected %d, found %lld%s", ENVELOPE_VERSION,
			    (long long)ver, ver > ENVELOPE_VERSION ? " (written by a newer probity)" : "");
	if (!(man = member(doc, "manifest", JSON_OBJECT, "", name, err, errlen)))
		return -EINVAL;
	if (!(v = member(man, "sha256", JSON_STRING, "manifest.", name, err, errlen)))
		return -EINVAL;
	s = json_string_value(v);
	if (!is_hex(s, 64, 64))
		return perr(err, errlen, name, "manifest.sha256: expected 64 lower-case hex digits, "
			    "found '%.80s'", s);
	for (i = 0; i < 32; i++) {
		unsigned int b;

		sscanf(s + 2 * i, "%2x", &b);
		env->sha256[i] = (uint8_t)b;
	}
	v = json_object_get(man, "name");
	env->manifest_name = strdup(json_is_string(v) ? json_string_value(v) : "");
	if (!env->manifest_name)
		return -ENOMEM;
	if (!(targets = member(doc, "targets", JSON_ARRAY, "", name, err, errlen)))
		return -EINVAL;
	if (!json_array_size(targets) || json_array_size(targets) > ENVELOPE_MAX_TARGETS)
		return perr(err, errlen, name, "targets: expected 1 to %d targets, found %zu",
			    ENVELOPE_MAX_TARGETS, json_array_size(targets));
	json_array_foreach(targets, i, t) {
		char path[32];

		snprintf(path, sizeof(path), "targets[%zu].", i);
		if (!json_is_object(t))
			return perr(err, errlen, name, "targets[%zu]: expected an object, found %s", i,
				    json_type_str(t));
		if (!(v = member(t, "id", JSON_STRING, path, name, err, errlen)))
			return -EINVAL;
		env->target_id[i] = strdup(json_string_value(v));
		if (!env->target_id[i])
			return -ENOMEM;
		env->n_targets = i + 1;
		if (!(v = member(t, "build_id", JSON_STRING, path, name, err, errlen)))
			return -EINVAL;
		s = json_string_value(v);
		if (!is_hex(s, 0, 128))
			return perr(err, errlen, name, "%sbuild_id: expected an even number (up to 128) "
				    "of lower-case hex digits, found '%.140s'", path, s);
		snprintf(env->build_id[i], sizeof(env->build_id[i]), "%s", s);
	}
	v = json_object_get(doc, "window_ms");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 100 ||
		    json_integer_value(v) > 3600000)
			return perr(err, errlen, name, "window_ms: expected an integer 100..3600000");
		env->window_ns = (uint64_t)json_integer_value(v) * 1000000ull;
	}
	v = json_object_get(doc, "training");
	if (v && !json_is_object(v))
		return perr(err, errlen, name, "training: expected an object, found %s",
			    json_type_str(v));
	if (v) {
		json_t *x = json_object_get(v, "runs");

		if (json_is_integer(x) && json_integer_value(x) >= 0)
			env->runs = (size_t)json_integer_value(x);
		x = json_object_get(v, "windows");
		if (json_is_integer(x) && json_integer_value(x) >= 0)
			env->windows = (size_t)json_integer_value(x);
		x = json_object_get(v, "key_metrics");
		env->key_metrics = json_is_true(x);
	}
	if (!(metrics = member(doc, "metrics", JSON_ARRAY, "", name, err, errlen)))
		return -EINVAL;
	if (json_array_size(metrics) > MAX_METRICS)
		return perr(err, errlen, name, "metrics: more than %d", MAX_METRICS);
	env->metrics = calloc(json_array_size(metrics) + 1, sizeof(*env->metrics));
	if (!env->metrics)
		return -ENOMEM;
	json_array_foreach(metrics, i, t) {
		rc = parse_metric(env, t, i, name, err, errlen);
		env->n_metrics = i + (env->metrics[i].name ? 1 : 0);
		if (rc)
			return rc;
		if (mtypes[env->metrics[i].type].records)
			env->key_metrics = true;
		for (j = 0; j < i; j++)
			if (!strcmp(env->metrics[j].name, env->metrics[i].name))
				return perr(err, errlen, name, "metrics[%zu].name: '%.80s' already in "
					    "metrics[%zu]", i, env->metrics[i].name, j);
	}
	env->finished = true;
	return 0;
}

struct pb_envelope *envelope__parse(const char *name, const void *buf, size_t len,
				    char *err, size_t errlen)
{
	struct pb_envelope *env;
	json_error_t jerr;
	json_t *doc;
	int rc;

	if (err && errlen)
		err[0] = 0;
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%d:%d: invalid JSON: %s", name, jerr.line,
				 jerr.column, jerr.text);
		errno = EINVAL;
		return NULL;
	}
	env = calloc(1, sizeof(*env));
	if (!env) {
		json_decref(doc);
		errno = ENOMEM;
		return NULL;
	}
	env->window_ns = ENVELOPE_WINDOW_NS;
	rc = parse_doc(env, doc, name, err, errlen);
	json_decref(doc);
	if (rc) {
		envelope__free(env);
		errno = -rc;
		return NULL;
	}
	return env;
}

struct pb_envelope *envelope__load(const char *path, char *err, size_t errlen)
{
	struct pb_envelope *env;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	for (;;) {
		if (len == cap) {
			char *x;

			cap = cap ? cap * 2 : 65536;
			if (cap > (64u << 20)) {
				close(fd);
				free(buf);
				snprintf(err, errlen, "%s: larger than 64 MiB: not an envelope", path);
				errno = EINVAL;
				return NULL;
			}
			x = realloc(buf, cap);
			if (!x) {
				close(fd);
				free(buf);
				snprintf(err, errlen, "%s: out of memory", path);
				errno = ENOMEM;
				return NULL;
			}
			buf = x;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			close(fd);
			free(buf);
			snprintf(err, errlen, "%s: %s", path, strerror(e));
			errno = e;
			return NULL;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	env = envelope__parse(path, buf, len, err, errlen);
	e = errno;
	free(buf);
	errno = e;
	return env;
}

int envelope__check_binding(const struct pb_envelope *env, const struct manifest *m,
			    const struct envelope_binding *b, char *err, size_t errlen)
{
	struct layout lay;
	struct metric *cand = NULL;
	size_t n_cand = 0, i, j, t;
	char want[PB_DIGEST_HEX_LEN], have[PB_DIGEST_HEX_LEN];
	int rc;

	if (!env || !m || !b)
		return -EINVAL;
	if (memcmp(env->sha256, b->manifest_sha256, sizeof(env->sha256))) {
		pb_hex(env->sha256, 32, want);
		pb_hex(b->manifest_sha256, 32, have);
		snprintf(err, errlen, "the envelope was trained on another manifest (sha256 %.16s..., "
			 "this one is %.16s...): train it again for this manifest", want, have);
		return -EINVAL;
	}
	for (t = 0; t < m->n_targets; t++) {
		const char *id = m->targets[t].id ? m->targets[t].id : "?";

		for (i = 0; i < env->n_targets; i++)
			if (!strcmp(env->target_id[i], id))
				break;
		if (i == env->n_targets) {
			snprintf(err, errlen, "target '%s' of the manifest is not in the envelope", id);
			return -EINVAL;
		}
		if (t >= b->n_targets || strcmp(env->build_id[i], b->build_id[t])) {
			snprintf(err, errlen, "target '%s': the envelope was trained on build-id %s, "
				 "this run probes build-id %s: an envelope holds for one build only",
				 id, env->build_id[i][0] ? env->build_id[i] : "(none)",
				 t < b->n_targets && b->build_id[t][0] ? b->build_id[t] : "(none)");
			return -EINVAL;
		}
	}
	if (env->n_targets != m->n_targets) {
		snprintf(err, errlen, "the envelope names %zu target(s), the manifest %zu",
			 env->n_targets, m->n_targets);
		return -EINVAL;
	}
	rc = layout_init(&lay, m);
	if (!rc)
		rc = gen_candidates(&lay, &cand, &n_cand);
	layout_free(&lay);
	if (rc)
		return rc;
	for (i = 0; i < env->n_metrics; i++) {
		for (j = 0; j < n_cand; j++)
			if (!strcmp(cand[j].name, env->metrics[i].name))
				break;
		if (j == n_cand) {
			snprintf(err, errlen, "metrics[%zu]: '%s' is not a metric of this manifest",
				 i, env->metrics[i].name);
			rc = -EINVAL;
			break;
		}
	}
	metrics_free(cand, n_cand);
	return rc;
}

void envelope__free(struct pb_envelope *env)
{
	size_t i;

	if (!env)
		return;
	metrics_free(env->metrics, env->n_metrics);
	for (i = 0; i < ENVELOPE_MAX_TARGETS; i++)
		free(env->target_id[i]);
	free(env->manifest_name);
	layout_free(&env->lay);
	window_free(&env->win);
	free(env);
}

/* ---- checking ---- */

struct envelope_check *envelope_check__new(const struct pb_envelope *env, const struct manifest *m)
{
	struct envelope_check *chk;
	struct metric *cand = NULL;
	size_t n_cand = 0, i, j;
	int err;

	if (!env || !m || !env->finished) {
		errno = EINVAL;
		return NULL;
	}
	chk = calloc(1, sizeof(*chk));
	if (!chk)
		return NULL;
	chk->env = env;
	err = layout_init(&chk->lay, m);
	if (!err)
		err = window_init(&chk->win, chk->lay.n_desc, chk->lay.n_res);
	if (!err)
		err = gen_candidates(&chk->lay, &cand, &n_cand);
	if (!err) {
		chk->m = calloc(env->n_metrics + 1, sizeof(*chk->m));
		if (!chk->m)
			err = -ENOMEM;
	}
	for (i = 0; !err && i < env->n_metrics; i++) {
		for (j = 0; j < n_cand; j++)
			if (!strcmp(cand[j].name, env->metrics[i].name))
				break;
		if (j == n_cand) {
			err = -EINVAL;	/* envelope__check_binding says which */
			break;
		}
		chk->m[chk->n_m].band = &env->metrics[i];
		chk->m[chk->n_m].def = cand[j];
		chk->m[chk->n_m].def.name = env->metrics[i].name;	/* borrowed */
		chk->m[chk->n_m].def.vals = NULL;
		chk->m[chk->n_m].warning = -1;
		chk->n_m++;
	}
	metrics_free(cand, n_cand);
	if (err) {
		envelope_check__free(chk);
		errno = -err;
		return NULL;
	}
	return chk;
}

static int push_warning(struct envelope_check *chk, struct check_metric *cm, double v, uint64_t ts)
{
	struct envelope_warning *w;
	const struct metric *b = cm->band;

	if (chk->n_warnings == chk->cap_warnings) {
		size_t nc = chk->cap_warnings ? chk->cap_warnings * 2 : 16;

		w = realloc(chk->warnings, nc * sizeof(*w));
		if (!w)
			return -ENOMEM;
		chk->warnings = w;
		chk->cap_warnings = nc;
	}
	w = &chk->warnings[chk->n_warnings];
	memset(w, 0, sizeof(*w));
	w->metric = b->name;
	w->value = v;
	w->lo = b->lo;
	w->hi = b->hi;
	w->trained_min = b->tmin;
	w->trained_max = b->tmax;
	w->ts_ns = ts;
	w->windows_outside = cm->outside;
	w->windows_checked = cm->checked;
	snprintf(w->text, sizeof(w->text),
		 "%s = %.4g outside the envelope [%.4g, %.4g] (trained %.4g..%.4g over %llu "
		 "windows) for %u consecutive windows; weak evidence, not proof",
		 b->name, v, b->lo, b->hi, b->tmin, b->tmax, (unsigned long long)b->windows,
		 cm->run);
	cm->warning = (int)chk->n_warnings++;
	return 1;
}

int envelope_check__record(struct envelope_check *chk, const void *rec, size_t len)
{
	if (!chk || !rec)
		return -EINVAL;
	return window_record(&chk->win, rec, len);
}

int envelope_check__snapshot(struct envelope_check *chk, uint64_t ts_ns,
			     const struct pb_desc_stats *cum, size_t n_desc)
{
	size_t i;
	int raised = 0, rc;
	bool key_seen = false;
	double v;

	if (!chk || (!cum && n_desc))
		return -EINVAL;
	if (window_snapshot(&chk->win, ts_ns, cum, n_desc, chk->env->window_ns) != 1)
		return 0;
	for (i = 0; i < chk->n_m; i++) {
		struct check_metric *cm = &chk->m[i];

		if (!metric_value(&cm->def, &chk->lay, &chk->win, cum, &v))
			continue;
		if (mtypes[cm->def.type].records)
			key_seen = true;
		cm->checked++;
		if (v >= cm->band->lo && v <= cm->band->hi) {
			cm->run = 0;
		} else {
			cm->outside++;
			cm->run++;
			if (cm->run >= ENVELOPE_SUSTAIN && cm->warning < 0) {
				rc = push_warning(chk, cm, v, ts_ns);
				if (rc < 0)
					return rc;
				raised += rc;
			}
		}
		if (cm->warning >= 0) {
			chk->warnings[cm->warning].windows_outside = cm->outside;
			chk->warnings[cm->warning].windows_checked = cm->checked;
		}
	}
	chk->windows++;
	if (key_seen)
		chk->key_windows++;
	window_advance(&chk->win, ts_ns, cum);
	return raised;
}

const struct envelope_warning *envelope_check__warnings(const struct envelope_check *chk, size_t *n)
{
	*n = chk ? chk->n_warnings : 0;
	return chk ? chk->warnings : NULL;
}

uint64_t envelope_check__windows(const struct envelope_check *chk)
{
	return chk ? chk->windows : 0;
}

size_t envelope_check__n_metrics(const struct envelope_check *chk)
{
	return chk ? chk->n_m : 0;
}

json_t *envelope_check__to_json(const struct envelope_check *chk)
{
	json_t *o, *ws;
	size_t i;

	if (!chk)
		return NULL;
	o = json_object();
	ws = json_array();
	if (!o || !ws) {
		json_decref(o);
		json_decref(ws);
		return NULL;
	}
	json_object_set_new(o, "windows", json_integer((json_int_t)chk->windows));
	json_object_set_new(o, "metrics_checked", json_integer((json_int_t)chk->n_m));
	json_object_set_new(o, "key_metrics", json_boolean(chk->env->key_metrics));
	json_object_set_new(o, "key_metrics_checked", json_boolean(chk->key_windows > 0));
	for (i = 0; i < chk->n_warnings; i++) {
		const struct envelope_warning *w = &chk->warnings[i];

		json_array_append_new(ws, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I}",
			"metric", w->metric, "value", w->value, "lo", w->lo, "hi", w->hi,
			"trained_min", w->trained_min, "trained_max", w->trained_max,
			"ts_ns", (json_int_t)w->ts_ns,
			"windows_outside", (json_int_t)w->windows_outside,
			"windows_checked", (json_int_t)w->windows_checked));
	}
	json_object_set_new(o, "warnings", ws);
	return o;
}

void envelope_check__free(struct envelope_check *chk)
{
	if (!chk)
		return;
	layout_free(&chk->lay);
	window_free(&chk->win);
	free(chk->m);
	free(chk->warnings);
	free(chk);
}
