/* SPDX-License-Identifier: BSD-2-Clause */
/* test_confidence.c: the confidence controller (src/validate/) on
 * synthetic windows: cumulative counters as snapshots carry them. */
#include "harness.h"
#include "validate/confidence.h"

#define ND 2

struct feed {
	struct pb_desc_stats s[ND];
	uint64_t ts;
};

/* one snapshot: descriptor d gets ev more events, v more violations of inv */
static int step(struct confidence *c, struct feed *f, uint32_t d, uint64_t ev, int inv, uint64_t v)
{
	f->s[d].events += ev;
	if (inv >= 0)
		f->s[d].violations[inv] += v;
	f->ts += 250000000ull;
	return confidence__snapshot(c, f->ts, f->s, ND);
}

TEST(test_clean_windows_stay_validated)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	size_t n;
	int i;

	ASSERT_NOT_NULL(c);
	for (i = 0; i < 40; i++)
		ASSERT_EQ(step(c, &f, 0, 1000, -1, 0), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	confidence__changes(c, &n);
	ASSERT_EQ(n, 0);
	ASSERT_FALSE(confidence__any_stale(c));
	confidence__free(c);
}

TEST(test_below_min_events_no_judgement)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	int i;

	/* 10 events a window, all violations: no window reaches 50 events
	 * until the 5th snapshot; then one judgement (suspect), not more */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(step(c, &f, 0, 10, PB_INV_DOUBLE_ACQUIRE, 10), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	ASSERT_EQ(step(c, &f, 0, 10, PB_INV_DOUBLE_ACQUIRE, 10), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	confidence__free(c);
}

TEST(test_high_rate_goes_stale_in_two_windows)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	const struct confidence_change *ch;
	size_t n;

	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_DOUBLE_ACQUIRE, 50), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_DOUBLE_ACQUIRE, 30), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_STALE);
	ASSERT_TRUE(confidence__any_stale(c));
	ch = confidence__changes(c, &n);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(ch[1].from, PB_CONF_SUSPECT);
	ASSERT_EQ(ch[1].to, PB_CONF_STALE);
	ASSERT_EQ(ch[1].invariant, PB_INV_DOUBLE_ACQUIRE);
	ASSERT_EQ(ch[1].window_events, 100);
	ASSERT_EQ(ch[1].invariant_violations, 30);
	ASSERT_STRSTR(ch[1].reason, "acquire_active: 30 of 100 events");
	/* sticky: clean windows do not bring it back */
	ASSERT_EQ(step(c, &f, 0, 1000, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 1000, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 1000, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 1000, -1, 0), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_STALE);
	/* the other descriptor never moved */
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_VALIDATED);
	confidence__free(c);
}

TEST(test_suspect_three_windows_goes_stale)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };

	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_RELEASE_NOT_ACTIVE, 6), 1);	/* 6% */
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_RELEASE_NOT_ACTIVE, 7), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_RELEASE_NOT_ACTIVE, 5), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_STALE);
	ASSERT_STRSTR(confidence__reason(c, 0), "release_not_active");
	confidence__free(c);
}

TEST(test_suspect_recovers_to_initial)
{
	enum pb_confidence init[ND] = { PB_CONF_DEGRADED, PB_CONF_CANDIDATE };
	struct confidence *c = confidence__new(ND, init, NULL);
	struct feed f = { 0 };

	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_USE_NOT_ACQUIRED, 10), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_USE_NOT_ACQUIRED, 1), 0);	/* 1%: quiet */
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 1);
	/* back to degraded, never up to validated */
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_DEGRADED);
	ASSERT_EQ(confidence__initial(c, 0), PB_CONF_DEGRADED);
	ASSERT_STRSTR(confidence__reason(c, 0), "back to degraded");
	/* a clean candidate stays candidate */
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_CANDIDATE);
	confidence__free(c);
}

TEST(test_samples_quoted_in_reason)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	struct pb_rec_violation v = { 0 };

	v.hdr.type = PB_REC_VIOLATION;
	v.hdr.size = sizeof(v);
	v.hdr.tid = 4242;
	v.descriptor = 1;
	v.invariant = PB_INV_GEN_OVERLAP;
	v.instance = 0xabc;
	v.generation = 7;
	ASSERT_OK(confidence__sample(c, &v, sizeof(v)));
	ASSERT_ERR(confidence__sample(c, &v, sizeof(v) - 1), -EINVAL);
	v.descriptor = ND;
	ASSERT_ERR(confidence__sample(c, &v, sizeof(v)), -EINVAL);
	ASSERT_EQ(step(c, &f, 1, 200, PB_INV_GEN_OVERLAP, 100), 1);
	ASSERT_STRSTR(confidence__reason(c, 1), "generation_overlap");
	ASSERT_STRSTR(confidence__reason(c, 1), "tid 4242 instance 0xabc generation 7");
	ASSERT_EQ(confidence__violations(c, 1, PB_INV_GEN_OVERLAP), 100);
	confidence__free(c);
}

TEST(test_grace_discounts_unacquired_at_attach)
{
	struct confidence_opts o = { .grace_ns = 1000000000ull };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct feed f = { 0 };
	int i;

	/* first second (4 snapshots): releases of instances acquired before
	 * the attach are not counted; a double ACQUIRE is */
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_RELEASE_NOT_ACTIVE, 40), 0);
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_USE_NOT_ACQUIRED, 40), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	ASSERT_EQ(confidence__violations(c, 0, PB_INV_RELEASE_NOT_ACTIVE), 0);
	ASSERT_EQ(step(c, &f, 1, 100, PB_INV_DOUBLE_ACQUIRE, 40), 1);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_SUSPECT);
	for (i = 0; i < 3; i++)
		step(c, &f, 0, 100, -1, 0);
	/* after the grace they count */
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_RELEASE_NOT_ACTIVE, 40), 1);
	ASSERT_EQ(confidence__violations(c, 0, PB_INV_RELEASE_NOT_ACTIVE), 40);
	confidence__free(c);
}

TEST(test_bad_args)
{
	/* (opts are a plain struct now: no size tag left to reject) */
	ASSERT_ERR(confidence__snapshot(NULL, 0, NULL, 0), -EINVAL);
	ASSERT_EQ(confidence__state(NULL, 0), PB_CONF_CANDIDATE);
	confidence__free(NULL);
}

/* one snapshot with cross-layer predictions: ev events, chk checked and
 * fail failed predictions of effect fx (failures also in violations[6],
 * as the engine counts them) */
static int pstep(struct confidence *c, struct feed *f, uint32_t d, uint64_t ev, int fx,
		 uint64_t chk, uint64_t fail, uint64_t unj)
{
	f->s[d].events += ev;
	f->s[d].pred_checked[fx] += chk;
	f->s[d].pred_failed[fx] += fail;
	f->s[d].pred_unjudged[fx] += unj;
	f->s[d].violations[PB_INV_PREDICTION_FAILED] += fail;
	f->ts += 250000000ull;
	return confidence__snapshot(c, f->ts, f->s, ND);
}

TEST(test_prediction_rate_is_over_checks_not_events)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	const struct confidence_change *ch;
	uint64_t chk, fail, unj;
	size_t n;

	/* 1000 events, 30 checked, 30 failed: 3 % of events but 100 % of the
	 * checks: suspect, then stale (2 windows >= 20 %) */
	ASSERT_EQ(pstep(c, &f, 0, 1000, PB_FX_BLOCK_IO, 30, 30, 2), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	ASSERT_EQ(pstep(c, &f, 0, 1000, PB_FX_BLOCK_IO, 30, 30, 0), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_STALE);
	ch = confidence__changes(c, &n);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(ch[1].invariant, PB_INV_PREDICTION_FAILED);
	ASSERT_EQ(ch[1].window_checked, 30);
	ASSERT_EQ(ch[1].window_failed, 30);
	ASSERT_STRSTR(ch[1].reason, "prediction_failed: 30 of 30 checked predictions (100.0%)");
	ASSERT_STRSTR(ch[1].reason, "block_io 30 failed of 30");
	confidence__predictions(c, 0, PB_FX_BLOCK_IO, &chk, &fail, &unj);
	ASSERT_EQ(chk, 60);
	ASSERT_EQ(fail, 60);
	ASSERT_EQ(unj, 2);
	ASSERT_EQ(confidence__violations(c, 0, PB_INV_PREDICTION_FAILED), 60);
	confidence__free(c);
}

TEST(test_prediction_checks_carry_over_until_min_checks)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	int i;

	/* 5 failed checks per window: under the 20 needed, they carry over;
	 * the 4th window holds 20 and judges them (100 %) */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(pstep(c, &f, 0, 100, PB_FX_OFF_CPU, 5, 5, 0), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	ASSERT_EQ(pstep(c, &f, 0, 100, PB_FX_OFF_CPU, 5, 5, 0), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	ASSERT_STRSTR(confidence__reason(c, 0), "20 of 20 checked predictions");
	confidence__free(c);
}

TEST(test_held_predictions_and_unjudged_never_fail)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	size_t n;
	int i;

	/* 1 % failed, many unjudged: below 5 %, no change */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(pstep(c, &f, 1, 200, PB_FX_WAKES_WAITER, 100, 1, 500), 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_VALIDATED);
	confidence__changes(c, &n);
	ASSERT_EQ(n, 0);
	confidence__free(c);
}

TEST(test_prediction_sample_quoted)
{
	struct confidence *c = confidence__new(ND, NULL, NULL);
	struct feed f = { 0 };
	struct pb_rec_violation v = { 0 };

	v.hdr.type = PB_REC_VIOLATION;
	v.hdr.size = sizeof(v);
	v.hdr.tid = 77;
	v.invariant = PB_INV_PREDICTION_FAILED;
	v.instance = 0x5b0;
	v.new_generation = 104659;
	v.detail = PB_FX_BLOCK_IO;
	ASSERT_OK(confidence__sample(c, &v, sizeof(v)));
	ASSERT_EQ(pstep(c, &f, 0, 100, PB_FX_BLOCK_IO, 100, 100, 0), 1);
	ASSERT_STRSTR(confidence__reason(c, 0),
		      "first sample: tid 77 instance 0x5b0 block_io not seen, call 104659 ns");
	ASSERT_STRSTR(pb_invariant_str(PB_INV_PREDICTION_FAILED), "prediction_failed");
	confidence__free(c);
}

/* ---- promotion of a re-bound (degraded) descriptor ---------------------- */

TEST(test_degraded_promoted_by_clean_windows)
{
	enum pb_confidence init[ND] = { PB_CONF_DEGRADED, PB_CONF_CANDIDATE };
	struct confidence *c = confidence__new(ND, init, NULL);
	struct confidence_evidence ev;
	const struct confidence_change *ch;
	struct feed f = { 0 };
	uint64_t min_ev;
	uint32_t k;
	size_t n;

	confidence__promotion_rule(c, &k, &min_ev);
	ASSERT_EQ(k, 3);	/* = recover_windows */
	ASSERT_EQ(min_ev, 50);
	/* 30 events: no window closes, no evidence */
	ASSERT_EQ(step(c, &f, 0, 30, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 30, -1, 0), 0);	/* 60: window 1 */
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);	/* window 2 */
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_DEGRADED);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 1);	/* window 3: promoted */
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	ASSERT_EQ(confidence__initial(c, 0), PB_CONF_DEGRADED);
	ch = confidence__changes(c, &n);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(ch[0].from, PB_CONF_DEGRADED);
	ASSERT_EQ(ch[0].to, PB_CONF_VALIDATED);
	ASSERT_STRSTR(ch[0].reason, "3 consecutive clean windows since the re-bind (260 events");
	confidence__evidence(c, 0, &ev);
	ASSERT_TRUE(ev.promoted);
	ASSERT_EQ(ev.promoted_windows, 3);
	ASSERT_EQ(ev.promoted_events, 260);
	ASSERT_EQ(ev.windows, 3);
	/* a clean candidate is never promoted by the controller */
	for (k = 0; k < 10; k++)
		step(c, &f, 1, 1000, -1, 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_CANDIDATE);
	confidence__free(c);
}

TEST(test_promotion_needs_an_unbroken_clean_run)
{
	enum pb_confidence init[ND] = { PB_CONF_DEGRADED, PB_CONF_DEGRADED };
	struct confidence *c = confidence__new(ND, init, NULL);
	struct confidence_evidence ev;
	struct feed f = { 0 };

	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	/* one violation in 100 events: below suspect_rate, but not clean */
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_DOUBLE_ACQUIRE, 1), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_DEGRADED);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_DEGRADED);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	confidence__evidence(c, 0, &ev);
	ASSERT_EQ(ev.windows, 6);
	ASSERT_EQ(ev.clean_windows, 5);
	/* one failed prediction (too few checks to judge a rate) also breaks it */
	ASSERT_EQ(pstep(c, &f, 1, 100, PB_FX_BLOCK_IO, 0, 0, 0), 0);
	ASSERT_EQ(pstep(c, &f, 1, 100, PB_FX_BLOCK_IO, 0, 0, 0), 0);
	ASSERT_EQ(pstep(c, &f, 1, 100, PB_FX_BLOCK_IO, 2, 1, 0), 0);
	ASSERT_EQ(pstep(c, &f, 1, 100, PB_FX_BLOCK_IO, 0, 0, 0), 0);
	ASSERT_EQ(pstep(c, &f, 1, 100, PB_FX_BLOCK_IO, 0, 0, 0), 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_DEGRADED);
	confidence__free(c);
}

TEST(test_promoted_breaks_goes_suspect_and_back_to_degraded)
{
	enum pb_confidence init[ND] = { PB_CONF_DEGRADED, PB_CONF_DEGRADED };
	struct confidence *c = confidence__new(ND, init, NULL);
	struct confidence_evidence ev;
	struct feed f = { 0 };
	int i;

	for (i = 0; i < 3; i++)
		step(c, &f, 0, 100, -1, 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	ASSERT_EQ(step(c, &f, 0, 100, PB_INV_RELEASE_NOT_ACTIVE, 10), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_SUSPECT);
	confidence__evidence(c, 0, &ev);
	ASSERT_FALSE(ev.promoted);
	/* three quiet windows: back to degraded (not validated) */
	for (i = 0; i < 3; i++)
		step(c, &f, 0, 100, -1, 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_DEGRADED);
	/* and promotion needs a fresh run: the 3 quiet windows are that run */
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	/* a semantically broken descriptor (every event a violation) goes
	 * stale and is never promoted */
	for (i = 0; i < 10; i++)
		step(c, &f, 1, 100, PB_INV_DOUBLE_ACQUIRE, 100);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_STALE);
	for (i = 0; i < 10; i++)
		step(c, &f, 1, 100, -1, 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_STALE);
	confidence__free(c);
}

TEST(test_windows_in_the_grace_do_not_promote)
{
	enum pb_confidence init[ND] = { PB_CONF_DEGRADED, PB_CONF_DEGRADED };
	struct confidence_opts o = { .grace_ns = 1000000000ull };
	struct confidence *c = confidence__new(ND, init, &o);
	struct confidence_evidence ev;
	struct feed f = { 0 };
	int i;

	/* snapshots every 250 ms: the first 4 close inside the grace */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_DEGRADED);
	confidence__evidence(c, 0, &ev);
	ASSERT_EQ(ev.windows, 4);
	ASSERT_EQ(ev.clean_windows, 0);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 1);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	/* promote_windows is an option */
	confidence__free(c);
	o.grace_ns = 0;
	o.promote_windows = 5;
	c = confidence__new(ND, init, &o);
	memset(&f, 0, sizeof(f));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 0);
	ASSERT_EQ(step(c, &f, 0, 100, -1, 0), 1);
	confidence__free(c);
}

/* The leak hypothesis (docs/validation.md "Leak or broken model"): one
 * resource of capacity 8, descriptor 0 its ACQUIRE, 1 its RELEASE (holds
 * of ~1 us: T = 16 x 2^11 ns = 32.8 us, far below the 250 ms snapshots).
 * Each snapshot: 100 ACQUIREs of which 50 over capacity, 20 units held;
 * idle[k] holdings untouched since the k+1-th previous snapshot. */
static struct pb_resource leak_res = { .name = "r", .has_capacity = true, .capacity = 8 };
static struct pb_event leak_ev[ND] = {
	{ .id = "get", .kind = PB_EV_ACQUIRE, .resource_idx = 0 },
	{ .id = "put", .kind = PB_EV_RELEASE, .resource_idx = 0 },
};
static struct manifest leak_m = { .resources = &leak_res, .n_resources = 1,
				  .events = leak_ev, .n_events = ND };

static int leak_step(struct confidence *c, struct feed *f, struct pb_res_stats *r,
		     uint64_t prev[PB_IDLE_SLOTS], int64_t idle)
{
	int k;

	f->s[0].events += 100;
	f->s[0].violations[PB_INV_OVER_CAPACITY] += 50;
	f->s[1].events += 100;
	f->s[1].hist[10] += 100;	/* ~1 us holds */
	f->ts += 250000000ull;
	memset(r, 0, sizeof(*r));
	r->outstanding_units = 20;
	for (k = 0; k < PB_IDLE_SLOTS; k++) {
		r->idle_ts[k] = prev[k];
		r->idle_n[k] = prev[k] ? (uint64_t)idle : 0;
		r->idle_units[k] = prev[k] ? idle : 0;
	}
	memmove(prev + 1, prev, (PB_IDLE_SLOTS - 1) * sizeof(*prev));
	prev[0] = f->ts;
	return confidence__snapshot_res(c, f->ts, f->s, ND, r, 1);
}

TEST(test_leaks_explain_over_capacity)
{
	struct confidence_opts o = { .manifest = &leak_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct confidence_leak l;
	struct pb_res_stats r;
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	size_t n;
	int i;

	ASSERT_NOT_NULL(c);
	/* 16 of the 20 held are idle: 20 - 16 <= 8, a leak */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(leak_step(c, &f, &r, prev, 16), 0);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	confidence__changes(c, &n);
	ASSERT_EQ(n, 0);
	ASSERT_TRUE(confidence__leak(c, 0, &l));
	ASSERT_EQ(l.windows, 9);	/* the last one is still held back */
	ASSERT_EQ(l.violations, 450);
	ASSERT_EQ(l.leaked, 16);
	ASSERT_EQ(l.units_held, 20);
	ASSERT_EQ(l.capacity, 8);
	ASSERT_EQ(l.held, 50);
	ASSERT_EQ(l.threshold_ns, 2048ull << 4);
	confidence__free(c);
}

TEST(test_busy_holdings_over_capacity_are_model_evidence)
{
	struct confidence_opts o = { .manifest = &leak_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct confidence_leak l;
	struct pb_res_stats r;
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	int i;

	ASSERT_NOT_NULL(c);
	/* 4 idle of 20: 16 busy > 8, the model is wrong */
	for (i = 0; i < 4; i++)
		leak_step(c, &f, &r, prev, 4);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_STALE);
	ASSERT_FALSE(confidence__leak(c, 0, &l));
	ASSERT_EQ(l.charged_windows, 3);	/* the 4th is still held back */
	confidence__free(c);
}

TEST(test_leak_hypothesis_off_without_manifest_or_idle_data)
{
	struct confidence_opts o = { .manifest = &leak_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct confidence_leak l;
	struct feed f = { 0 };
	int i;

	ASSERT_NOT_NULL(c);
	/* a v5 trace: no resource gauges, so nothing to test: charged */
	for (i = 0; i < 4; i++) {
		f.s[0].events += 100;
		f.s[0].violations[PB_INV_OVER_CAPACITY] += 50;
		f.s[1].hist[10] += 100;
		f.ts += 250000000ull;
		confidence__snapshot(c, f.ts, f.s, ND);
	}
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_STALE);
	ASSERT_FALSE(confidence__leak(c, 0, &l));
	confidence__free(c);
}

/* The release test (docs/validation.md "Missing RELEASEs"): the same
 * resource, shared, no capacity. Each snapshot: 100 ACQUIREs, 80 RELEASEs,
 * so 20 more units held; `idle` says whether the holdings of the previous
 * snapshot (but 2 in flight) stay idle since (a leak) or are all touched
 * again (RELEASEs the model does not see). */
static struct pb_resource rel_res = { .name = "r", .shared = true };
static struct manifest rel_m = { .resources = &rel_res, .n_resources = 1,
				 .events = leak_ev, .n_events = ND };

static int rel_step_by(struct confidence *c, struct feed *f, struct pb_res_stats *r,
		       uint64_t prev[PB_IDLE_SLOTS], bool idle, int grow)
{
	int64_t held = r->outstanding_units;
	int k;

	f->s[0].events += 100;
	f->s[0].units += 100;
	f->s[1].events += (uint64_t)(100 - grow);
	f->s[1].hist[10] += (uint64_t)(100 - grow);
	f->ts += 250000000ull;
	memset(r, 0, sizeof(*r));
	r->outstanding_units = held + grow;
	for (k = 0; k < PB_IDLE_SLOTS; k++) {
		r->idle_ts[k] = prev[k];
		/* idle since an older snapshot: fewer (the leak grew since) */
		r->idle_units[k] = prev[k] && idle && held - 2 - 20 * k > 0 ? held - 2 - 20 * k : 0;
		r->idle_n[k] = (uint64_t)r->idle_units[k];
	}
	memmove(prev + 1, prev, (PB_IDLE_SLOTS - 1) * sizeof(*prev));
	prev[0] = f->ts;
	return confidence__snapshot_res(c, f->ts, f->s, ND, r, 1);
}

static int rel_step(struct confidence *c, struct feed *f, struct pb_res_stats *r,
		    uint64_t prev[PB_IDLE_SLOTS], bool idle)
{
	return rel_step_by(c, f, r, prev, idle, 20);
}

TEST(test_busy_growth_is_missing_releases)
{
	struct confidence_opts o = { .manifest = &rel_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct confidence_release rt;
	struct pb_res_stats r = { 0 };
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	const char *why;
	int i;

	ASSERT_NOT_NULL(c);
	for (i = 0; i < 8; i++)
		rel_step(c, &f, &r, prev, false);
	ASSERT_EQ(confidence__state(c, 0), PB_CONF_VALIDATED);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_STALE);
	ASSERT_TRUE(confidence__violations(c, 1, CONFIDENCE_INV_RELEASE_MISSING) >= 40);
	why = confidence__reason(c, 1);
	ASSERT_NOT_NULL(why);
	ASSERT_TRUE(strstr(why, "release_missing") != NULL);
	ASSERT_TRUE(confidence__release(c, 1, &rt));
	ASSERT_EQ(rt.untested, 2);	/* it looks two snapshots back */
	ASSERT_EQ(rt.tested, 6);
	ASSERT_EQ(rt.baseline_units, 20);
	/* busy (held two snapshots back, none idle) 20 (baseline), 40 ..
	 * 120; a level counts once held at 2 tests in a row: 40, 60, 80,
	 * 100 at the last four, 20 each */
	ASSERT_EQ(rt.charged_units, 80);
	ASSERT_EQ(rt.charged, 80);
	/* the charged RELEASEs count among the events, as inferred ones */
	ASSERT_EQ(confidence__inferred_events(c, 1), 80);
	ASSERT_EQ(confidence__events(c, 1), f.s[1].events + 80);
	ASSERT_EQ(confidence__inferred_events(c, 0), 0);
	ASSERT_EQ(rt.idle_units, 0);
	ASSERT_FALSE(confidence__release(c, 0, &rt));	/* an ACQUIRE */
	confidence__free(c);
}

/* record --budget windows the resource (a PB_REC_WINDOW mark): each
 * close forgets its instances in the engine, so the same busy growth is
 * the forgetting; the release test stops, nothing is charged */
TEST(test_windowed_resource_has_no_release_test)
{
	struct confidence_opts o = { .manifest = &rel_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct pb_rec_window w = { 0 };
	struct pb_res_stats r = { 0 };
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	struct confidence_release rt;
	int i;

	ASSERT_NOT_NULL(c);
	w.hdr.type = PB_REC_WINDOW;
	w.hdr.size = sizeof(w);
	w.resource = 0;
	confidence__window(c, &w.hdr, sizeof(w));
	for (i = 0; i < 8; i++)
		rel_step(c, &f, &r, prev, false);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_VALIDATED);
	ASSERT_EQ(confidence__violations(c, 1, CONFIDENCE_INV_RELEASE_MISSING), 0);
	ASSERT_FALSE(confidence__release(c, 1, &rt));
	confidence__free(c);
}

/* Every instance held: the busy level stops growing, so nothing more is
 * charged, but nothing is explained either. While the level stays at its
 * high-water mark the suspect descriptor does not recover (the realmut
 * move_release cell: suspect, then back to validated on a saturated pool);
 * once the level comes back down (holds in flight after all), it does. */
TEST(test_missing_releases_stay_suspect_until_the_growth_comes_back)
{
	struct confidence_opts o = { .manifest = &rel_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct pb_res_stats r = { 0 };
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	int i;

	ASSERT_NOT_NULL(c);
	for (i = 0; i < 3; i++)		/* 6 more units held each time */
		rel_step_by(c, &f, &r, prev, false, 6);
	/* the test looks two snapshots back: 6 units charged at each of the
	 * next two (6 %: suspect, not the 3 windows stale needs) */
	for (i = 0; i < 2; i++)
		rel_step_by(c, &f, &r, prev, false, 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_SUSPECT);
	for (i = 0; i < 12; i++)	/* saturated: flat at the high-water mark */
		rel_step_by(c, &f, &r, prev, false, 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_SUSPECT);
	rel_step_by(c, &f, &r, prev, false, -30);	/* the growth comes back */
	for (i = 0; i < 12; i++)
		rel_step_by(c, &f, &r, prev, false, 0);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_VALIDATED);
	confidence__free(c);
}

TEST(test_idle_growth_is_a_leak_not_missing_releases)
{
	struct confidence_opts o = { .manifest = &rel_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct confidence_release rt;
	struct pb_res_stats r = { 0 };
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	size_t n;
	int i;

	ASSERT_NOT_NULL(c);
	for (i = 0; i < 12; i++)
		rel_step(c, &f, &r, prev, true);
	confidence__changes(c, &n);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(confidence__violations(c, 1, CONFIDENCE_INV_RELEASE_MISSING), 0);
	ASSERT_TRUE(confidence__release(c, 1, &rt));
	ASSERT_EQ(rt.charged, 0);
	ASSERT_EQ(rt.busy_units, 0);
	ASSERT_EQ(rt.idle_units, 200);	/* all 200 held two snapshots back */
	confidence__free(c);
}

/* The recorder starts before the load: the first snapshots see no
 * ACQUIRE, then a steady load keeps `inflight` units held at every
 * snapshot (each one released before the next). The baseline busy level
 * is the steady one, not the 0 read before the load: nothing charged. */
static void rel_load_step(struct confidence *c, struct feed *f, struct pb_res_stats *r,
			  uint64_t prev[PB_IDLE_SLOTS], uint64_t n, int64_t inflight)
{
	int k;

	f->s[0].events += n;
	f->s[0].units += n;
	f->s[1].events += n;
	f->s[1].hist[10] += n;
	f->ts += 250000000ull;
	memset(r, 0, sizeof(*r));
	r->outstanding_units = inflight;
	for (k = 0; k < PB_IDLE_SLOTS; k++)
		r->idle_ts[k] = prev[k];	/* none idle: all in flight */
	memmove(prev + 1, prev, (PB_IDLE_SLOTS - 1) * sizeof(*prev));
	prev[0] = f->ts;
	confidence__snapshot_res(c, f->ts, f->s, ND, r, 1);
}

TEST(test_baseline_waits_for_the_load)
{
	struct confidence_opts o = { .manifest = &rel_m };
	struct confidence *c = confidence__new(ND, NULL, &o);
	struct confidence_release rt;
	struct pb_res_stats r = { 0 };
	uint64_t prev[PB_IDLE_SLOTS] = { 0 };
	struct feed f = { 0 };
	int i;

	ASSERT_NOT_NULL(c);
	for (i = 0; i < 4; i++)		/* before the load: nothing acquired */
		rel_load_step(c, &f, &r, prev, 0, 0);
	for (i = 0; i < 12; i++)	/* steady: 6 units in flight */
		rel_load_step(c, &f, &r, prev, 100, 6);
	ASSERT_EQ(confidence__state(c, 1), PB_CONF_VALIDATED);
	ASSERT_EQ(confidence__violations(c, 1, CONFIDENCE_INV_RELEASE_MISSING), 0);
	ASSERT_TRUE(confidence__release(c, 1, &rt));
	ASSERT_EQ(rt.charged, 0);
	ASSERT_EQ(rt.baseline_units, 6);
	ASSERT_TRUE(rt.untested >= 4);	/* counted, not silently skipped */
	ASSERT_TRUE(rt.tested >= 8);
	confidence__free(c);
}
