/* SPDX-License-Identifier: BSD-2-Clause */
/* test_gov_estimate.c: the governor's rate estimates of a windowed
 * resource (src/record/gov_report.c; docs/record.md "Estimates"), on
 * hand-made windows (no BPF): the warm-up's sample is kept apart, one
 * window states its error as unknown (null, never 0), two give a Student
 * t interval, each window's rate is divided by 1 - the probes' share.
 */
#include <jansson.h>
#include "harness.h"
#include "record/governor.h"
#include "record/governor_int.h"
#include "contract/manifest.h"

#define S 1000000000ull

static const char *const manifest_yaml =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.pool, class: pool, units: pages, capacity: 16 }\n"
	"events:\n"
	"  - { id: p_get, resource: t.pool, kind: ACQUIRE, site: { symbol: pg }, instance: arg0, confidence: validated }\n"
	"  - { id: p_put, resource: t.pool, kind: RELEASE, site: { symbol: pp }, instance: arg0, confidence: validated }\n";

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* the resource's estimate as the report states it */
static json_t *estimate(struct governor *g)
{
	json_t *rep = governor__report_json(g), *r;

	r = json_incref(json_array_get(json_object_get(rep, "resources"), 0));
	json_decref(rep);
	return r;
}

/* a window [open, close) that counted n ACQUIREs with the probes taking
 * share of the target */
static void window(struct governor *g, uint64_t open, uint64_t close, uint64_t n, double share)
{
	struct gov_group *gr = &g->groups[0];

	gr->win_open_ns = open;
	gr->win_acq0 = g->hits[0];
	gr->win_ev0 = g->hits[0] + g->hits[1];
	g->hits[0] += n;
	g->win_share = share;
	gov_sample_window(g, gr, close);
}

static bool near(double a, double b)
{
	return a - b < 0.5 && b - a < 0.5;
}

TEST(test_estimate_warmup_apart_one_window_unknown_two_t_interval)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;
	struct plan_descriptor pd[2] = { { .event = 0, .status = PLAN_DESC_OK, .n_sites = 1 },
					 { .event = 1, .status = PLAN_DESC_OK, .n_sites = 1 } };
	struct plan p = { 0 };
	double cost[2] = { 1000, 1000 };
	struct gov_cost_source src = { .ns_per_hit = cost, .n = 2, .origin = "test" };
	struct gov_opts o = { .budget = 0.02 };
	struct governor *g;
	json_t *e;

	ASSERT_OK(manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d));
	diags__free(d);
	p.manifest = m;
	p.descriptors = pd;
	p.n_descriptors = 2;
	g = governor__new(&p, &src, &o);
	ASSERT_NOT_NULL(g);
	ASSERT_EQ((long long)g->n_groups, 1);
	g->groups[0].windowed = true;
	g->start_ns = 1;
	g->gov_start_ns = 2 * S;
	/* the warm-up: from the start, 1000/s; alone it is all there is */
	window(g, 1, 1 + S, 1000, 0);
	e = estimate(g);
	ASSERT_STREQ(json_string_value(json_object_get(e, "estimate_basis")), "warm-up only");
	ASSERT_EQ((long long)num(e, "windows"), 0);
	ASSERT_TRUE(json_is_null(json_object_get(e, "acquires_per_s_err95")));
	json_decref(e);
	/* one window: 2000/s counted, the probes took half the target */
	window(g, 3 * S, 4 * S, 2000, 0.5);
	e = estimate(g);
	ASSERT_STREQ(json_string_value(json_object_get(e, "estimate_basis")), "windows");
	ASSERT_EQ((long long)num(e, "windows"), 1);
	ASSERT_TRUE(near(num(e, "acquires_per_s"), 4000));
	ASSERT_TRUE(near(num(e, "acquires_per_s_uncorrected"), 2000));
	ASSERT_TRUE(json_is_null(json_object_get(e, "acquires_per_s_err95")));
	json_decref(e);
	/* two: 4000 and 6000/s corrected; t(1) = 12.706 x the standard
	 * error 1000 (the Poisson floor, 20000 / 4, is below it); the warm-up
	 * is not in the mean */
	window(g, 5 * S, 6 * S, 3000, 0.5);
	e = estimate(g);
	ASSERT_EQ((long long)num(e, "windows"), 2);
	ASSERT_TRUE(near(num(e, "acquires_per_s"), 5000));
	ASSERT_TRUE(near(num(e, "acquires_per_s_err95"), 12706));
	ASSERT_TRUE(near(num(e, "acquires_per_s_high95"), 17706));
	ASSERT_TRUE(near(num(e, "acquires_per_s_low95"), 0));
	ASSERT_TRUE(near(num(e, "warmup_acquires_per_s"), 1000));
	json_decref(e);
	governor__free(g);
	manifest__free(m);
}
