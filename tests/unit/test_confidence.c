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
	struct confidence_opts o = { .sz = sizeof(o), .grace_ns = 1000000000ull };
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
	struct confidence_opts o = { .sz = 0 };

	ASSERT_NULL(confidence__new(1, NULL, &o));
	ASSERT_EQ(errno, EINVAL);
	ASSERT_ERR(confidence__snapshot(NULL, 0, NULL, 0), -EINVAL);
	ASSERT_EQ(confidence__state(NULL, 0), PB_CONF_CANDIDATE);
	confidence__free(NULL);
}
