/* SPDX-License-Identifier: BSD-2-Clause */
/* test_gov_hold.c: record --budget's window-length rule (src/record/
 * gov_hold.c; docs/record.md "Window length"), on hand-made closes (no
 * BPF): a close that cut a hold older than half its window asks for
 * windows 4x that age (at most 1 s), never shorter than asked before;
 * short holds, and credit (consumed, not held), ask for nothing; the
 * summary's budget.hold_window says what was chosen and why.
 */
#include <jansson.h>
#include "harness.h"
#include "record/governor.h"
#include "record/governor_int.h"
#include "contract/manifest.h"

#define MS 1000000ull

static const char *const manifest_yaml =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.conn, class: pool, units: connections, capacity: 8 }\n"
	"  - { name: t.tokens, class: credit, units: tokens }\n"
	"events:\n"
	"  - { id: c_get, resource: t.conn, kind: ACQUIRE, site: { symbol: cg }, instance: arg0, confidence: validated }\n"
	"  - { id: c_put, resource: t.conn, kind: RELEASE, site: { symbol: cp }, instance: arg0, confidence: validated }\n"
	"  - { id: t_take, resource: t.tokens, kind: ACQUIRE, site: { symbol: tt }, instance: arg0, confidence: validated }\n";

static int n_notes;

static bool num_eq(double a, double b)
{
	return a - b < 0.001 && b - a < 0.001;
}

static void emit(const void *rec, size_t len, const char *note, void *ctx)
{
	(void)rec;
	(void)len;
	(void)ctx;
	n_notes += note != NULL;
}

/* one close of gr: window [open, close), its oldest cut hold age_ns, the
 * window's growth and its n_old holds cut at that age */
static void close_with(struct governor *g, struct gov_group *gr, uint64_t open, uint64_t close,
		       uint64_t age_ns, int64_t growth, uint64_t n_old)
{
	int b = 0;

	memset(&gr->cut, 0, sizeof(gr->cut));
	gr->win_open_ns = open;
	gr->cut.acquires = 1000 + (uint64_t)(growth > 0 ? growth : 0);
	gr->cut.releases = 1000 + (uint64_t)(growth < 0 ? -growth : 0);
	gr->cut.cut_age_max_ns = age_ns;
	for (uint64_t x = age_ns; x > 1 && b < PB_HIST_BUCKETS - 1; x >>= 1)
		b++;
	gr->cut.cut_age_hist[b] = n_old;
	gov_hold_close(g, gr, close, emit, NULL);
}

TEST(test_hold_demand_rule)
{
	/* holds far shorter than the window: nothing asked */
	ASSERT_U64_EQ(gov_hold_demand(250 * MS, 3 * MS, 0), 0);
	ASSERT_U64_EQ(gov_hold_demand(250 * MS, 62 * MS, 0), 0);
	/* a hold cut at 130 ms in a 223 ms window (the demo's long hold):
	 * 4x its age */
	ASSERT_U64_EQ(gov_hold_demand(223 * MS, 130 * MS, 0), 520 * MS);
	/* older than a quarter of the window: asked for */
	ASSERT_U64_EQ(gov_hold_demand(250 * MS, 63 * MS, 0), 252 * MS);
	/* a hold older than the cap allows (a leaked unit: as old as its
	 * window): the cap, 4 x 250 ms */
	ASSERT_U64_EQ(gov_hold_demand(900 * MS, 890 * MS, 520 * MS), 4 * GOV_HOLD_WINDOW_NS);
	/* never shorter than asked before: a later close with shorter
	 * holds, or a younger old one, keeps it */
	ASSERT_U64_EQ(gov_hold_demand(1000 * MS, 10 * MS, 800 * MS), 800 * MS);
	ASSERT_U64_EQ(gov_hold_demand(300 * MS, 160 * MS, 800 * MS), 800 * MS);
	/* a window of no length (a close without an open): nothing */
	ASSERT_U64_EQ(gov_hold_demand(0, 5 * MS, 0), 0);
}

TEST(test_hold_window_capped_by_windows_so_far)
{
	/* nothing asked: 0 (set_duty's 250 ms minimum applies) */
	ASSERT_U64_EQ(gov_hold_window(0, 3000 * MS), 0);
	/* asked 1 s after one 250 ms window: 250 ms; after 600 ms of
	 * windows: 600 ms; after 3 s: the 1 s asked */
	ASSERT_U64_EQ(gov_hold_window(1000 * MS, 250 * MS), 250 * MS);
	ASSERT_U64_EQ(gov_hold_window(1000 * MS, 100 * MS), 250 * MS);
	ASSERT_U64_EQ(gov_hold_window(1000 * MS, 600 * MS), 600 * MS);
	ASSERT_U64_EQ(gov_hold_window(1000 * MS, 3000 * MS), 1000 * MS);
}

TEST(test_hold_close_lengthens_and_says_why)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;
	struct plan_descriptor pd[3] = { { .event = 0, .status = PLAN_DESC_OK, .n_sites = 1 },
					 { .event = 1, .status = PLAN_DESC_OK, .n_sites = 1 },
					 { .event = 2, .status = PLAN_DESC_OK, .n_sites = 1 } };
	struct plan p = { 0 };
	double cost[3] = { 1000, 1000, 1000 };
	struct gov_cost_source src = { .ns_per_hit = cost, .n = 3, .origin = "test" };
	struct gov_opts o = { .budget = 0.02 };
	struct governor *g;
	struct gov_group *conn, *tok;
	json_t *j;

	ASSERT_OK(manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d));
	diags__free(d);
	p.manifest = m;
	p.descriptors = pd;
	p.n_descriptors = 3;
	g = governor__new(&p, &src, &o);
	ASSERT_NOT_NULL(g);
	ASSERT_EQ((long long)g->n_groups, 2);
	conn = &g->groups[0];
	tok = &g->groups[1];
	ASSERT_EQ(conn->res, 0);
	/* nothing cut yet: the base length, and why */
	j = governor__hold_json(g);
	ASSERT_TRUE(num_eq(json_number_value(json_object_get(j, "window_ms")), 250));
	ASSERT_TRUE(json_is_string(json_object_get(j, "why")));
	json_decref(j);
	/* credit's tokens are consumed: 990 ms "held" in a 1 s window asks
	 * for nothing */
	tok->win_open_ns = 1000 * MS;
	tok->cut.cut_age_max_ns = 990 * MS;
	gov_hold_close(g, tok, 2000 * MS, emit, NULL);
	ASSERT_U64_EQ(g->hold_want_ns, 0);
	ASSERT_EQ(n_notes, 0);
	/* a short hold cut: nothing */
	conn->win_open_ns = 3000 * MS;
	conn->cut.cut_age_max_ns = 20 * MS;
	gov_hold_close(g, conn, 3250 * MS, emit, NULL);
	ASSERT_U64_EQ(g->hold_want_ns, 0);
	/* a 130 ms hold cut in a 223 ms window: 520 ms from then on, with
	 * a note in the trace */
	conn->win_open_ns = 5000 * MS;
	conn->cut.cut_age_max_ns = 130 * MS;
	gov_hold_close(g, conn, 5223 * MS, emit, NULL);
	ASSERT_U64_EQ(g->hold_want_ns, 520 * MS);
	ASSERT_EQ(n_notes, 1);
	j = governor__hold_json(g);
	ASSERT_TRUE(num_eq(json_number_value(json_object_get(j, "window_ms")), 520));
	ASSERT_STREQ(json_string_value(json_object_get(json_object_get(j, "why"), "resource")),
		     "t.conn");
	ASSERT_TRUE(num_eq(json_number_value(json_object_get(json_object_get(j, "why"),
							     "cut_age_ms")), 130));
	ASSERT_EQ(json_integer_value(json_object_get(j, "grown")), 1);
	json_decref(j);
	/* the next window (520 ms) cuts the same hold at 290 ms: censored
	 * again, 1.16 s asked, capped at 1 s (used once the windows so far
	 * last that long: 250 + 223 + 520 ms here); a close that asks for less
	 * changes nothing and writes no note */
	conn->win_open_ns = 7000 * MS;
	conn->cut.cut_age_max_ns = 290 * MS;
	gov_hold_close(g, conn, 7520 * MS, emit, NULL);
	ASSERT_U64_EQ(g->hold_want_ns, 4 * GOV_HOLD_WINDOW_NS);
	ASSERT_EQ(n_notes, 2);
	ASSERT_U64_EQ(g->hold_seen_ns, (1000 + 250 + 223 + 520) * MS);
	ASSERT_U64_EQ(gov_hold_window(g->hold_want_ns, g->hold_seen_ns), 1000 * MS);
	conn->win_open_ns = 9000 * MS;
	conn->cut.cut_age_max_ns = 600 * MS;
	gov_hold_close(g, conn, 10000 * MS, emit, NULL);
	ASSERT_U64_EQ(g->hold_want_ns, 4 * GOV_HOLD_WINDOW_NS);
	ASSERT_EQ(n_notes, 2);
	governor__free(g);
	manifest__free(m);
}

/* a resource whose windows (after the warm-up) grew by 8 or more, and at
 * least by the old holds they cut, is leak-like: its units are never
 * released, no window length shows them whole, and its ask is withdrawn
 * (report's leak estimate needs windows, not long ones); a long hold's
 * windows do not grow (its RELEASEs balance), so its ask stands */
TEST(test_hold_leak_like_ask_withdrawn)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;
	struct plan_descriptor pd[3] = { { .event = 0, .status = PLAN_DESC_OK, .n_sites = 1 },
					 { .event = 1, .status = PLAN_DESC_OK, .n_sites = 1 },
					 { .event = 2, .status = PLAN_DESC_OK, .n_sites = 1 } };
	struct plan p = { 0 };
	double cost[3] = { 1000, 1000, 1000 };
	struct gov_cost_source src = { .ns_per_hit = cost, .n = 3, .origin = "test" };
	struct gov_opts o = { .budget = 0.02 };
	struct governor *g;
	struct gov_group *conn;
	json_t *j;

	ASSERT_OK(manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d));
	diags__free(d);
	p.manifest = m;
	p.descriptors = pd;
	p.n_descriptors = 3;
	g = governor__new(&p, &src, &o);
	ASSERT_NOT_NULL(g);
	conn = &g->groups[0];
	g->start_ns = 1000 * MS;
	n_notes = 0;
	/* the warm-up's close (its window opened at the start): 200 ms cut,
	 * growth 30 (every hold in flight): asks 800 ms, not leak-like */
	close_with(g, conn, 1000 * MS, 1500 * MS, 200 * MS, 30, 4);
	ASSERT_U64_EQ(g->hold_want_ns, 800 * MS);
	ASSERT_FALSE(conn->hold_leaky);
	ASSERT_EQ(n_notes, 1);
	/* a window that grew by 23 with 5 old cut holds: leak-like, the ask
	 * is withdrawn, and a note says why */
	close_with(g, conn, 3000 * MS, 3250 * MS, 240 * MS, 23, 5);
	ASSERT_TRUE(conn->hold_leaky);
	ASSERT_U64_EQ(g->hold_want_ns, 0);
	ASSERT_EQ(n_notes, 2);
	j = governor__hold_json(g);
	ASSERT_EQ(json_integer_value(json_object_get(j, "withdrawn")), 1);
	ASSERT_TRUE(num_eq(json_number_value(json_object_get(j, "window_ms")), 250));
	json_decref(j);
	/* windows that give back more than they grew (RELEASEs of earlier
	 * holds): no longer leak-like, its ask stands again (960 ms: the
	 * 240 ms hold of the close before, 4x) */
	close_with(g, conn, 5000 * MS, 5250 * MS, 100 * MS, -20, 1);
	ASSERT_FALSE(conn->hold_leaky);
	ASSERT_U64_EQ(g->hold_want_ns, 960 * MS);
	ASSERT_EQ(n_notes, 3);
	governor__free(g);
	manifest__free(m);
}
