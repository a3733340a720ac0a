/* SPDX-License-Identifier: BSD-2-Clause */
/* confidence.c: the per-descriptor confidence controller (confidence.h,
 * docs/validation.md). Pure bookkeeping over counters: no BPF, no I/O. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "validate/confidence.h"
#include "validate/leak_int.h"

struct desc_state {
	enum pb_confidence initial, state;
	/* cumulative counters at the start of the open window */
	uint64_t base_events, base_viol[CONFIDENCE_INV_SLOTS];
	/* last cumulative counters seen */
	uint64_t last_events, last_viol[CONFIDENCE_INV_SLOTS];
	uint64_t last_inferred;	/* of last_events: happened unobserved (leak model) */
	/* violations discounted by the grace period (per invariant) */
	uint64_t graced[CONFIDENCE_INV_SLOTS];
	/* cross-layer predictions (per effect): cumulative as last seen, and
	 * at the start of the open prediction window (which closes with a
	 * judged event window holding >= min_checks checks) */
	uint64_t last_chk[PB_FX_SLOTS], last_fail[PB_FX_SLOTS], last_unj[PB_FX_SLOTS];
	uint64_t base_chk[PB_FX_SLOTS], base_fail[PB_FX_SLOTS];
	uint32_t high_run, viol_run, quiet_run;	/* consecutive windows */
	struct confidence_evidence ev;		/* clean evidence (promotion) */
	struct pb_rec_violation samples[CONFIDENCE_SAMPLES];
	uint32_t n_samples;
	int last_change;			/* index into changes, -1 none */
};

struct confidence {
	struct confidence_opts o;
	size_t n_desc;
	struct desc_state *d;
	struct confidence_change *changes;
	size_t n_changes, cap_changes;
	uint64_t first_ts;
	bool seen;
	struct leak_model *leak;	/* NULL: the leak hypothesis is off */
};

const char *pb_invariant_str(int inv)
{
	switch (inv) {
	case PB_INV_DOUBLE_ACQUIRE: return "acquire_active";
	case PB_INV_RELEASE_NOT_ACTIVE: return "release_not_active";
	case PB_INV_USE_NOT_ACQUIRED: return "use_not_acquired";
	case PB_INV_GEN_OVERLAP: return "generation_overlap";
	case PB_INV_EXPECT_TIMEOUT: return "expect_timeout";
	case PB_INV_OVER_CAPACITY: return "over_capacity";
	case PB_INV_PREDICTION_FAILED: return "prediction_failed";
	case PB_INV_ACQUIRE_BYPASSED: return "acquire_bypassed";
	case CONFIDENCE_INV_RELEASE_MISSING: return "release_missing";
	default: return "unknown";
	}
}

/* invariants that a RELEASE/USE of an instance acquired before the attach
 * would also break */
static bool graceable(int inv)
{
	return inv == PB_INV_RELEASE_NOT_ACTIVE || inv == PB_INV_USE_NOT_ACQUIRED;
}

struct confidence *confidence__new(size_t n_desc, const enum pb_confidence *initial,
				   const struct confidence_opts *opts)
{
	struct confidence *c;
	size_t i;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->o.min_events = 50;
	c->o.suspect_rate = 0.05;
	c->o.stale_rate = 0.20;
	c->o.stale_high_windows = 2;
	c->o.stale_windows = 3;
	c->o.recover_windows = 3;
	c->o.min_checks = 20;
	if (opts) {
		c->o.promote_windows = opts->promote_windows;
		if (opts->min_events)
			c->o.min_events = opts->min_events;
		if (opts->suspect_rate > 0)
			c->o.suspect_rate = opts->suspect_rate;
		if (opts->stale_rate > 0)
			c->o.stale_rate = opts->stale_rate;
		if (opts->stale_high_windows)
			c->o.stale_high_windows = opts->stale_high_windows;
		if (opts->stale_windows)
			c->o.stale_windows = opts->stale_windows;
		if (opts->recover_windows)
			c->o.recover_windows = opts->recover_windows;
		c->o.grace_ns = opts->grace_ns;
		if (opts->min_checks)
			c->o.min_checks = opts->min_checks;
	}
	if (!c->o.promote_windows)
		c->o.promote_windows = c->o.recover_windows;
	c->n_desc = n_desc;
	c->d = calloc(n_desc ? n_desc : 1, sizeof(*c->d));
	c->leak = opts && opts->manifest ? leak_model__new(opts->manifest, opts->desc_event, n_desc) : NULL;
	if (!c->d || (opts && opts->manifest && !c->leak)) {
		free(c->d);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n_desc; i++) {
		c->d[i].initial = initial ? initial[i] : PB_CONF_VALIDATED;
		c->d[i].state = c->d[i].initial;
		c->d[i].last_change = -1;
	}
	return c;
}

void confidence__free(struct confidence *c)
{
	if (!c)
		return;
	free(c->d);
	free(c->changes);
	leak_model__free(c->leak);
	free(c);
}

int confidence__sample(struct confidence *c, const struct pb_rec_violation *v, size_t len)
{
	struct pb_rec_violation s;
	struct desc_state *d;

	if (!c || !v || len < sizeof(s))
		return -EINVAL;
	memcpy(&s, v, sizeof(s));	/* may sit unaligned in a chunk */
	if (s.descriptor >= c->n_desc || s.invariant >= PB_INV_SLOTS)
		return -EINVAL;
	d = &c->d[s.descriptor];
	if (c->o.grace_ns && graceable(s.invariant) &&
	    (!c->seen || s.hdr.ts_ns < c->first_ts + c->o.grace_ns))
		return 0;
	if (d->n_samples < CONFIDENCE_SAMPLES)
		d->samples[d->n_samples++] = s;
	return 0;
}

static const struct pb_rec_violation *first_sample(const struct desc_state *d, int inv)
{
	uint32_t i;

	for (i = 0; i < d->n_samples; i++)
		if (d->samples[i].invariant == inv)
			return &d->samples[i];
	return NULL;
}

/* One closed window of a descriptor. */
struct window {
	uint64_t ev;
	uint64_t viol[CONFIDENCE_INV_SLOTS];	/* [PB_INV_PREDICTION_FAILED] unused: see chk/fail */
	bool pred_judged;		/* enough checks: the prediction rate counts */
	bool in_grace;			/* closed within the attach grace */
	uint64_t held;			/* over_capacity held back (leak hypothesis) */
	bool unexplained;		/* charged missing RELEASEs still outstanding */
	uint64_t chk, fail;		/* predictions in the window (all effects) */
	uint64_t chk_fx[PB_FX_SLOTS], fail_fx[PB_FX_SLOTS];
};

static const char *effect_name(uint32_t fx)
{
	return fx < PB_FX__COUNT ? pb_effect_str((enum pb_effect)fx) : "?";
}

/* The effect moved: failed samples whose process did the effect on another
 * thread during the call (PB_VIOL_FX_MOVED): a model change, not "no
 * effect" (docs/validation.md "Mutation classes"). */
static void moved_note(const struct desc_state *d, char *out, size_t len)
{
	uint32_t i, n = 0, moved = 0, fx = 0;

	for (i = 0; i < d->n_samples; i++) {
		if (d->samples[i].invariant != PB_INV_PREDICTION_FAILED)
			continue;
		if (!n++)
			fx = d->samples[i].detail & 0xff;
		if (d->samples[i].detail & PB_VIOL_FX_MOVED)
			moved++;
	}
	if (moved * 2 > n)
		snprintf(out, len, "; moved: in %u of %u samples another thread of the process did "
			 "the effect during the call (a model change, not 'no %s')", moved, n,
			 effect_name(fx));
}

/* release_missing has no sample: say what the release test saw instead. */
static void release_note(const struct confidence *c, uint32_t di, char *out, size_t len)
{
	struct confidence_release r;

	if (!leak_model__release(c->leak, di, &r))
		return;
	snprintf(out, len, "; of %lld units held %.0f ms before, %lld were released or touched "
		 "since, %lld at the first test, %lld idle: RELEASEs the model does not see, or "
		 "a leak on instances still in use (not told apart)",
		 (long long)r.held_units, (double)r.age_ns / 1e6, (long long)r.busy_units,
		 (long long)r.baseline_units, (long long)r.idle_units);
}

static int push_change(struct confidence *c, uint32_t di, uint64_t ts, enum pb_confidence to,
		       int inv, const struct window *w, uint64_t viol, uint64_t inv_viol,
		       const char *why)
{
	struct desc_state *d = &c->d[di];
	struct confidence_change *ch;
	const struct pb_rec_violation *s = inv >= 0 ? first_sample(d, inv) : NULL;
	int n, k;

	if (PB_ARRAY_RESERVE_ONE(c->changes, c->n_changes, c->cap_changes))
		return -ENOMEM;
	ch = &c->changes[c->n_changes];
	memset(ch, 0, sizeof(*ch));
	ch->descriptor = di;
	ch->ts_ns = ts;
	ch->from = d->state;
	ch->to = to;
	ch->invariant = inv;
	ch->window_events = w->ev;
	ch->window_violations = viol;
	ch->invariant_violations = inv_viol;
	if (w->pred_judged) {
		ch->window_checked = w->chk;
		ch->window_failed = w->fail;
	}
	if (inv == PB_INV_PREDICTION_FAILED) {
		n = snprintf(ch->reason, sizeof(ch->reason), "%s: %llu of %llu checked predictions (%.1f%%) in the window (",
			     pb_invariant_str(inv), (unsigned long long)w->fail,
			     (unsigned long long)w->chk,
			     w->chk ? 100.0 * (double)w->fail / (double)w->chk : 0.0);
		for (k = 0; k < PB_FX_SLOTS && n > 0 && (size_t)n < sizeof(ch->reason); k++)
			if (w->chk_fx[k])
				n += snprintf(ch->reason + n, sizeof(ch->reason) - (size_t)n,
					      "%s%s %llu failed of %llu", ch->reason[n - 1] == '(' ? "" : ", ",
					      effect_name((uint32_t)k),
					      (unsigned long long)w->fail_fx[k],
					      (unsigned long long)w->chk_fx[k]);
		if (n > 0 && (size_t)n < sizeof(ch->reason))
			n += snprintf(ch->reason + n, sizeof(ch->reason) - (size_t)n, "); %s", why);
	} else if (inv >= 0) {
		n = snprintf(ch->reason, sizeof(ch->reason), "%s: %llu of %llu events (%.1f%%) in the window; %s",
			     pb_invariant_str(inv), (unsigned long long)inv_viol,
			     (unsigned long long)w->ev,
			     w->ev ? 100.0 * (double)inv_viol / (double)w->ev : 0.0, why);
	} else {
		n = snprintf(ch->reason, sizeof(ch->reason), "%llu events, %llu violations in the window; %s",
			     (unsigned long long)w->ev, (unsigned long long)viol, why);
	}
	if (s && inv == PB_INV_PREDICTION_FAILED && n > 0 && (size_t)n < sizeof(ch->reason))
		n += snprintf(ch->reason + n, sizeof(ch->reason) - (size_t)n,
			      "; first sample: tid %u instance 0x%llx %s not seen, call %llu ns",
			      s->hdr.tid, (unsigned long long)s->instance,
			      effect_name(s->detail & 0xff), (unsigned long long)s->new_generation);
	if (inv == CONFIDENCE_INV_RELEASE_MISSING && n > 0 && (size_t)n < sizeof(ch->reason))
		release_note(c, di, ch->reason + n, sizeof(ch->reason) - (size_t)n);
	else if (s && inv == PB_INV_PREDICTION_FAILED && n > 0 && (size_t)n < sizeof(ch->reason))
		moved_note(d, ch->reason + n, sizeof(ch->reason) - (size_t)n);
	else if (s && n > 0 && (size_t)n < sizeof(ch->reason))
		snprintf(ch->reason + n, sizeof(ch->reason) - (size_t)n,
			 "; first sample: tid %u instance 0x%llx generation %llu owner tid %u args 0x%llx 0x%llx 0x%llx",
			 s->hdr.tid, (unsigned long long)s->instance,
			 (unsigned long long)s->generation, s->owner_tid,
			 (unsigned long long)s->args[0], (unsigned long long)s->args[1],
			 (unsigned long long)s->args[2]);
	d->state = to;
	d->last_change = (int)c->n_changes;
	c->n_changes++;
	return 1;
}

/* Count the window as clean evidence or not. A window is clean when it
 * holds no invariant violation and no failed prediction (judged or still
 * carried over), and closed after the attach grace (during it some
 * violations are discounted, so it proves less). */
static void count_evidence(struct desc_state *d, const struct window *w, uint64_t inv_total)
{
	struct confidence_evidence *ev = &d->ev;

	ev->windows++;
	if (inv_total || w->fail || w->in_grace || w->held || w->unexplained) {
		ev->clean_run = 0;
		ev->run_events = ev->run_checked = 0;
		if (inv_total || w->fail)
			ev->promoted = false;	/* the evidence no longer holds */
		return;
	}
	ev->clean_windows++;
	ev->clean_run++;
	ev->run_events += w->ev;
	ev->run_checked += w->chk;
}

/* A degraded descriptor after promote_windows consecutive clean windows
 * becomes validated. 1 on a promotion, 0 none, -errno. */
static int promote(struct confidence *c, uint32_t di, uint64_t ts, const struct window *w)
{
	struct desc_state *d = &c->d[di];
	struct confidence_evidence *ev = &d->ev;
	char why[192];

	if (d->state != PB_CONF_DEGRADED || ev->clean_run < c->o.promote_windows)
		return 0;
	snprintf(why, sizeof(why),
		 "%u consecutive clean windows since the re-bind (%llu events, %llu predictions checked, none failed): promoted",
		 ev->clean_run, (unsigned long long)ev->run_events,
		 (unsigned long long)ev->run_checked);
	ev->promoted = true;
	ev->promoted_ts_ns = ts;
	ev->promoted_windows = ev->clean_run;
	ev->promoted_events = ev->run_events;
	ev->promoted_checked = ev->run_checked;
	return push_change(c, di, ts, PB_CONF_VALIDATED, -1, w, 0, 0, why);
}

/* Judge one closed window of descriptor di. Its rate is the larger of the
 * invariant violations per event and, when the window holds enough
 * checks, the failed predictions per checked prediction (a prediction may
 * concern a few of the events, e.g. WAITs over min_duration). 1 on a
 * change, 0 none, -errno. */
static int judge(struct confidence *c, uint32_t di, uint64_t ts, const struct window *w)
{
	struct desc_state *d = &c->d[di];
	uint64_t total = 0, top = 0, inv_total = 0;
	int inv = -1, k;
	double rate, pred_rate = 0;
	char why[128];

	for (k = 0; k < CONFIDENCE_INV_SLOTS; k++) {
		if (k == PB_INV_PREDICTION_FAILED)
			continue;
		inv_total += w->viol[k];
		if (w->viol[k] > top) {
			top = w->viol[k];
			inv = k;
		}
	}
	rate = w->ev ? (double)inv_total / (double)w->ev : 0;
	total = inv_total;
	if (w->pred_judged && w->chk) {
		pred_rate = (double)w->fail / (double)w->chk;
		total += w->fail;
		if (w->fail && pred_rate > rate) {
			rate = pred_rate;
			inv = PB_INV_PREDICTION_FAILED;
			top = w->fail;
		}
	}
	count_evidence(d, w, inv_total);
	if (d->state == PB_CONF_STALE)
		return 0;	/* sticky */
	if (rate >= c->o.stale_rate)
		d->high_run++;
	else
		d->high_run = 0;
	if (rate >= c->o.suspect_rate) {
		d->viol_run++;
		d->quiet_run = 0;
	} else {
		d->viol_run = 0;
		/* missing RELEASEs still unexplained: not quiet (the growth
		 * stopped only because every instance is held) */
		d->quiet_run = w->unexplained ? 0 : d->quiet_run + 1;
	}
	if (d->high_run >= c->o.stale_high_windows) {
		snprintf(why, sizeof(why), "%u consecutive windows at >= %.0f%%", d->high_run,
			 100 * c->o.stale_rate);
		return push_change(c, di, ts, PB_CONF_STALE, inv, w, total, top, why);
	}
	if (d->viol_run >= c->o.stale_windows) {
		snprintf(why, sizeof(why), "%u consecutive windows at >= %.0f%%", d->viol_run,
			 100 * c->o.suspect_rate);
		return push_change(c, di, ts, PB_CONF_STALE, inv, w, total, top, why);
	}
	if (d->viol_run && d->state != PB_CONF_SUSPECT) {
		snprintf(why, sizeof(why), "%s rate %.1f%% >= %.0f%%",
			 inv == PB_INV_PREDICTION_FAILED ? "failure" : "violation", 100 * rate,
			 100 * c->o.suspect_rate);
		return push_change(c, di, ts, PB_CONF_SUSPECT, inv, w, total, top, why);
	}
	if (d->state == PB_CONF_SUSPECT && d->quiet_run >= c->o.recover_windows) {
		snprintf(why, sizeof(why), "%u consecutive windows below %.0f%%: back to %s",
			 d->quiet_run, 100 * c->o.suspect_rate, pb_confidence_str(d->initial));
		return push_change(c, di, ts, d->initial, inv, w, total, top, why);
	}
	return promote(c, di, ts, w);
}

/* Descriptor di's cumulative counters as last seen, in the coupled view
 * (leak_model__adjust: acquire_bypassed), graced violations apart. */
static void take_counters(struct confidence *c, uint32_t di, const struct pb_desc_stats *cs,
			  bool in_grace)
{
	struct desc_state *d = &c->d[di];
	uint64_t events = cs->events, viol[CONFIDENCE_INV_SLOTS] = { 0 };
	int k;

	memcpy(viol, cs->violations, sizeof(cs->violations));
	leak_model__adjust(c->leak, di, &events, viol);
	/* counters are cumulative; a smaller value is a restart: rebase */
	if (events < d->last_events)
		d->base_events = d->last_events = 0;
	for (k = 0; k < CONFIDENCE_INV_SLOTS; k++) {
		uint64_t v = viol[k];

		if (v < d->last_viol[k])
			d->base_viol[k] = d->last_viol[k] = d->graced[k] = 0;
		if (in_grace && graceable(k))
			d->graced[k] += v - d->last_viol[k];
		d->last_viol[k] = v;
	}
	for (k = 0; k < PB_FX_SLOTS; k++) {
		if (cs->pred_checked[k] < d->last_chk[k] || cs->pred_failed[k] < d->last_fail[k])
			d->base_chk[k] = d->base_fail[k] = 0;
		d->last_chk[k] = cs->pred_checked[k];
		d->last_fail[k] = cs->pred_failed[k];
		d->last_unj[k] = cs->pred_unjudged[k];
	}
	d->last_events = events;
	d->last_inferred = events - cs->events;
}

void confidence__window(struct confidence *c, const struct pb_rec_hdr *rec, size_t len)
{
	const struct pb_rec_window *w = (const void *)rec;

	if (c && rec && len >= sizeof(*w) && rec->type == PB_REC_WINDOW)
		leak_model__windowed(c->leak, w->resource);
}

int confidence__snapshot(struct confidence *c, uint64_t ts_ns,
			 const struct pb_desc_stats *cum, size_t n_desc)
{
	return confidence__snapshot_res(c, ts_ns, cum, n_desc, NULL, 0);
}

int confidence__snapshot_res(struct confidence *c, uint64_t ts_ns,
			     const struct pb_desc_stats *cum, size_t n_desc,
			     const struct pb_res_stats *res, size_t n_res)
{
	size_t i;
	int k, changes = 0, err;

	if (!c || (!cum && n_desc))
		return -EINVAL;
	if (!c->seen) {
		c->seen = true;
		c->first_ts = ts_ns;
	}
	leak_model__snapshot(c->leak, ts_ns, cum, n_desc, res, n_res);
	for (i = 0; i < n_desc && i < c->n_desc; i++) {
		struct desc_state *d = &c->d[i];
		struct window w;
		bool in_grace = c->o.grace_ns && ts_ns < c->first_ts + c->o.grace_ns;

		memset(&w, 0, sizeof(w));
		take_counters(c, (uint32_t)i, &cum[i], in_grace);
		w.ev = d->last_events - d->base_events;
		if (w.ev < c->o.min_events)
			continue;	/* not enough evidence yet: the window stays open */
		for (k = 0; k < CONFIDENCE_INV_SLOTS; k++) {
			uint64_t v = d->last_viol[k] - d->graced[k];

			w.viol[k] = v > d->base_viol[k] ? v - d->base_viol[k] : 0;
			d->base_viol[k] = v;
		}
		/* leaks may explain an excess over the capacity: not model
		 * evidence until the hypothesis is tested (leak_int.h) */
		w.viol[PB_INV_OVER_CAPACITY] = leak_model__window(c->leak, (uint32_t)i, ts_ns,
								  w.viol[PB_INV_OVER_CAPACITY],
								  &w.held);
		w.unexplained = leak_model__release_outstanding(c->leak, (uint32_t)i);
		for (k = 0; k < PB_FX_SLOTS; k++) {
			w.chk_fx[k] = d->last_chk[k] - d->base_chk[k];
			w.fail_fx[k] = d->last_fail[k] - d->base_fail[k];
			w.chk += w.chk_fx[k];
			w.fail += w.fail_fx[k];
		}
		/* too few checks: they carry over to the next window */
		if (w.chk >= c->o.min_checks) {
			w.pred_judged = true;
			for (k = 0; k < PB_FX_SLOTS; k++) {
				d->base_chk[k] = d->last_chk[k];
				d->base_fail[k] = d->last_fail[k];
			}
		}
		d->base_events = d->last_events;
		w.in_grace = in_grace;
		err = judge(c, (uint32_t)i, ts_ns, &w);
		if (err < 0)
			return err;
		changes += err;
	}
	return changes;
}

enum pb_confidence confidence__state(const struct confidence *c, uint32_t di)
{
	return c && di < c->n_desc ? c->d[di].state : PB_CONF_CANDIDATE;
}

enum pb_confidence confidence__initial(const struct confidence *c, uint32_t di)
{
	return c && di < c->n_desc ? c->d[di].initial : PB_CONF_CANDIDATE;
}

uint64_t confidence__violations(const struct confidence *c, uint32_t di, int inv)
{
	if (!c || di >= c->n_desc || inv < 0 || inv >= CONFIDENCE_INV_SLOTS)
		return 0;
	return c->d[di].last_viol[inv] - c->d[di].graced[inv];
}

uint64_t confidence__events(const struct confidence *c, uint32_t di)
{
	return c && di < c->n_desc ? c->d[di].last_events : 0;
}

uint64_t confidence__inferred_events(const struct confidence *c, uint32_t di)
{
	return c && di < c->n_desc ? c->d[di].last_inferred : 0;
}

void confidence__predictions(const struct confidence *c, uint32_t di, int fx, uint64_t *checked,
			     uint64_t *failed, uint64_t *unjudged)
{
	bool ok = c && di < c->n_desc && fx >= 0 && fx < PB_FX_SLOTS;

	*checked = ok ? c->d[di].last_chk[fx] : 0;
	*failed = ok ? c->d[di].last_fail[fx] : 0;
	*unjudged = ok ? c->d[di].last_unj[fx] : 0;
}

const char *confidence__reason(const struct confidence *c, uint32_t di)
{
	if (!c || di >= c->n_desc || c->d[di].last_change < 0)
		return NULL;
	return c->changes[c->d[di].last_change].reason;
}

void confidence__evidence(const struct confidence *c, uint32_t di,
			  struct confidence_evidence *ev)
{
	if (c && di < c->n_desc)
		*ev = c->d[di].ev;
	else
		memset(ev, 0, sizeof(*ev));
}

void confidence__promotion_rule(const struct confidence *c, uint32_t *windows,
				uint64_t *min_events)
{
	*windows = c ? c->o.promote_windows : 0;
	*min_events = c ? c->o.min_events : 0;
}

const struct pb_rec_violation *confidence__samples(const struct confidence *c, uint32_t di,
						   size_t *n)
{
	if (!c || di >= c->n_desc) {
		*n = 0;
		return NULL;
	}
	*n = c->d[di].n_samples;
	return c->d[di].samples;
}

const struct confidence_change *confidence__changes(const struct confidence *c, size_t *n)
{
	*n = c ? c->n_changes : 0;
	return c ? c->changes : NULL;
}

bool confidence__any_stale(const struct confidence *c)
{
	size_t i;

	for (i = 0; c && i < c->n_desc; i++)
		if (c->d[i].state == PB_CONF_STALE)
			return true;
	return false;
}

size_t confidence__n_desc(const struct confidence *c)
{
	return c ? c->n_desc : 0;
}

bool confidence__leak(const struct confidence *c, uint32_t di, struct confidence_leak *out)
{
	return leak_model__get(c ? c->leak : NULL, di, out);
}

bool confidence__release(const struct confidence *c, uint32_t di,
			 struct confidence_release *out)
{
	return leak_model__release(c ? c->leak : NULL, di, out);
}
