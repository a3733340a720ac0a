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

/* a governor at --budget 2 % over the two-descriptor manifest, each hit
 * priced 1000 ns; *m is the caller's to free. The plan is static: the
 * governor keeps pointing at it (one governor at a time). */
static struct governor *gov_2pct(struct manifest **m)
{
	struct diags *d = diags__new();
	static struct plan_descriptor pd[2] = {
		{ .event = 0, .status = PLAN_DESC_OK, .n_sites = 1 },
		{ .event = 1, .status = PLAN_DESC_OK, .n_sites = 1 } };
	static struct plan p;
	static double cost[2] = { 1000, 1000 };
	struct gov_cost_source src = { .ns_per_hit = cost, .n = 2, .origin = "test" };
	struct gov_opts o = { .budget = 0.02 };
	int err;

	*m = NULL;
	err = manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), m, d);
	diags__free(d);
	if (err)
		return NULL;
	memset(&p, 0, sizeof(p));
	p.manifest = *m;
	p.descriptors = pd;
	p.n_descriptors = 2;
	return governor__new(&p, &src, &o);
}

TEST(test_estimate_warmup_apart_one_window_unknown_two_t_interval)
{
	struct manifest *m;
	struct governor *g = gov_2pct(&m);
	json_t *e;

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

/* A run too short to pay back its start: the whole-run estimate (warm-up
 * and closes at the probes' full rate, over the target's CPU time net of
 * them) ends above the budget, and the report says so (JSON
 * estimate_over_budget, warmup_cost_ms; a line in the text summary)
 * rather than only printing a figure above it. */
TEST(test_estimate_above_the_budget_is_said)
{
	struct manifest *m;
	struct governor *g = gov_2pct(&m);
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	json_t *r;

	ASSERT_NOT_NULL(g);
	g->start_ns = 1;
	g->end_ns = 1 + 10 * S;
	g->cpu_known = true;
	g->cpu_start = 0;
	g->cpu_end = 10 * S;		/* 10 CPU-s */
	g->warm_cost_ns = 0.1 * S;	/* 0.1 / 9.9: 1.01 % */
	r = governor__report_json(g);
	ASSERT_NOT_NULL(r);
	ASSERT_TRUE(json_is_false(json_object_get(r, "estimate_over_budget")));
	ASSERT_TRUE(near(num(r, "warmup_cost_ms"), 100));
	json_decref(r);
	g->warm_cost_ns = 0.2 * S;	/* + 0.1 s of closes: 0.3 / 9.7 = 3.1 % */
	g->gov_cost_ns = 0.1 * S;
	g->close_cost_total_ns = 0.1 * S;
	r = governor__report_json(g);
	ASSERT_NOT_NULL(r);
	ASSERT_TRUE(json_is_true(json_object_get(r, "estimate_over_budget")));
	ASSERT_TRUE(near(num(r, "estimated_overhead_cpu") * 1000, 30.9));
	json_decref(r);
	f = open_memstream(&text, &len);
	ASSERT_NOT_NULL(f);
	governor__report_print(g, f);
	fclose(f);
	ASSERT_NOT_NULL(strstr(text, "the estimate ended above the budget: the warm-up (every "
				     "probe on) cost 200 ms and the closes 100 ms"));
	free(text);
	governor__free(g);
	manifest__free(m);
}

/* The probe programs' run time, measured by the kernel's statistics, is
 * added to each descriptor's per-hit cost, once per program a hit runs
 * (a span: entry + return), and the OS effects are charged at their
 * measured rate while on (gov_meter.c). */
TEST(test_meter_prices_probe_programs_and_effects)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;
	struct plan_descriptor pd[2] = { { .event = 0, .status = PLAN_DESC_OK, .n_sites = 2 },
					 { .event = 1, .status = PLAN_DESC_OK, .n_sites = 1 } };
	struct plan_site sites[3] = { 0 };
	struct plan p = { 0 };
	double cost[2] = { 1000, 600 };
	struct gov_cost_source src = { .ns_per_hit = cost, .n = 2, .origin = "test" };
	struct gov_opts o = { .budget = 0.02 };
	struct governor *g;
	double fx;

	ASSERT_OK(manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d));
	diags__free(d);
	sites[0].descriptor = 0;	/* a span: entry ... */
	sites[0].insn_len = 1;
	snprintf(sites[0].insn_text, sizeof(sites[0].insn_text), "push rbp");
	sites[1].descriptor = 0;	/* ... and return */
	sites[1].retprobe = true;
	sites[2].descriptor = 1;	/* an entry only */
	sites[2].insn_len = 1;
	snprintf(sites[2].insn_text, sizeof(sites[2].insn_text), "push rbp");
	p.manifest = m;
	p.descriptors = pd;
	p.n_descriptors = 2;
	p.sites = sites;
	p.n_sites = 3;
	g = governor__new(&p, &src, &o);
	ASSERT_NOT_NULL(g);
	ASSERT_TRUE(g->cost[0] == 1000 && g->cost[1] == 600);	/* traps only, before */
	g->meter.stats = true;
	g->meter.last.probes.run_cnt = 1000;	/* 1000 runs in 400 us: 400 ns each */
	g->meter.last.probes.run_ns = 400000;
	g->meter.effects_ns = 5e6;		/* 5 ms of effects in 0.5 s on */
	g->meter.fx_on_ns = 5e6;
	g->meter.fx_on_wall_ns = S / 2;
	fx = gov_meter_plan(g);
	ASSERT_TRUE(near(fx, 5e6));
	ASSERT_TRUE(near(g->cost[0], 1000 + 2 * 400));
	ASSERT_TRUE(near(g->cost[1], 600 + 400));
	ASSERT_TRUE(near(g->meter.fx_rate, 10e6));
	/* too few runs since: the last figure stays */
	g->meter.last.probes.run_cnt += 10;
	g->meter.last.probes.run_ns += 100000;
	ASSERT_TRUE(near(gov_meter_plan(g), 0));
	ASSERT_TRUE(near(g->cost[1], 1000));
	governor__free(g);
	manifest__free(m);
}
