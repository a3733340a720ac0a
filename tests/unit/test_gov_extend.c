/* SPDX-License-Identifier: BSD-2-Clause */
/* test_gov_extend.c: record --budget's extended windows
 * (src/record/gov_window.c gov_extend; docs/record.md "Extended
 * windows"), on hand-made hit counts (no BPF): at a joint close, a
 * resource whose probes cost at most 1/8 of the window's probe cost,
 * whose WAITs fired in the window, and that is not credit, stays open for up to 3 more window lengths (at most
 * 2 s in all) while the extension costs at most half the window's cost at
 * the rates counted in it; the plan's rates play no part; what the
 * extension cost is the ledger's guess for the next one.
 */
#include "harness.h"
#include "record/governor.h"
#include "record/governor_int.h"
#include "contract/manifest.h"

#define MS 1000000ull
#define ROOM 1e12	/* the ledger's room: no limit */

/* a dear pool, three cheap locks and a cheap credit, one ACQUIRE and one
 * RELEASE each: descriptors 2i, 2i + 1 are resource i's */
static const char *const manifest_yaml =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.pool, class: pool, units: pages, capacity: 16 }\n"
	"  - { name: t.a, class: lock, units: holds }\n"
	"  - { name: t.b, class: lock, units: holds }\n"
	"  - { name: t.c, class: lock, units: holds }\n"
	"  - { name: t.tok, class: credit, units: tokens }\n"
	"events:\n"
	"  - { id: p_get, resource: t.pool, kind: ACQUIRE, site: { symbol: pg }, instance: arg0, confidence: validated }\n"
	"  - { id: p_put, resource: t.pool, kind: RELEASE, site: { symbol: pp }, instance: arg0, confidence: validated }\n"
	"  - { id: a_get, resource: t.a, kind: ACQUIRE, site: { symbol: ag }, instance: arg0, confidence: validated }\n"
	"  - { id: a_put, resource: t.a, kind: RELEASE, site: { symbol: ap }, instance: arg0, confidence: validated }\n"
	"  - { id: b_get, resource: t.b, kind: ACQUIRE, site: { symbol: bg }, instance: arg0, confidence: validated }\n"
	"  - { id: b_put, resource: t.b, kind: RELEASE, site: { symbol: bp }, instance: arg0, confidence: validated }\n"
	"  - { id: c_get, resource: t.c, kind: ACQUIRE, site: { symbol: cg }, instance: arg0, confidence: validated }\n"
	"  - { id: c_put, resource: t.c, kind: RELEASE, site: { symbol: cp }, instance: arg0, confidence: validated }\n"
	"  - { id: t_take, resource: t.tok, kind: ACQUIRE, site: { symbol: tt }, instance: arg0, confidence: validated }\n"
	"  - { id: t_back, resource: t.tok, kind: RELEASE, site: { symbol: tb }, instance: arg0, confidence: validated }\n"
	"  - { id: a_wait, resource: t.a, kind: WAIT, site: { symbol: aw, at: span }, instance: arg0, returns: void, confidence: validated }\n"
	"  - { id: b_wait, resource: t.b, kind: WAIT, site: { symbol: bw, at: span }, instance: arg0, returns: void, confidence: validated }\n"
	"  - { id: c_wait, resource: t.c, kind: WAIT, site: { symbol: cw, at: span }, instance: arg0, returns: void, confidence: validated }\n"
	"  - { id: t_wait, resource: t.tok, kind: WAIT, site: { symbol: tw, at: span }, instance: arg0, returns: void, confidence: validated }\n";

/* descriptors 2r, 2r + 1: resource r's ACQUIRE, RELEASE; 9 + r: its WAIT */
#define N_DESC 14

struct fixture {
	struct manifest *m;
	struct plan_descriptor pd[N_DESC];
	struct plan p;
	double cost[N_DESC];
	struct governor *g;
};

static struct fixture *fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct diags *d = diags__new();
	struct gov_opts o = { .budget = 0.02 };
	struct gov_cost_source src = { .n = N_DESC, .origin = "test" };
	size_t i;

	if (!f || manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &f->m, d)) {
		diags__free(d);
		free(f);
		return NULL;
	}
	diags__free(d);
	for (i = 0; i < N_DESC; i++) {
		f->pd[i] = (struct plan_descriptor){ .event = (uint32_t)i, .status = PLAN_DESC_OK,
						      .n_sites = 1 };
		f->cost[i] = 1000;	/* 1 us a hit */
	}
	f->p.manifest = f->m;
	f->p.descriptors = f->pd;
	f->p.n_descriptors = N_DESC;
	src.ns_per_hit = f->cost;
	f->g = governor__new(&f->p, &src, &o);
	if (!f->g) {
		manifest__free(f->m);
		free(f);
		return NULL;
	}
	for (i = 0; i < f->g->n_groups; i++)
		f->g->groups[i].windowed = f->g->groups[i].attached = true;
	f->g->win_ts = f->g->cycle_start = 1000 * MS;
	f->g->cycle_ns = 10000 * MS;	/* the next window: due at 11 s */
	return f;
}

static void fixture_free(struct fixture *f)
{
	governor__free(f->g);
	manifest__free(f->m);
	free(f);
}

/* the window counted n ACQUIREs and n RELEASEs of resource r */
static void hits(struct governor *g, size_t r, uint64_t n)
{
	g->hits[2 * r] = g->open_hits[2 * r] + n;
	g->hits[2 * r + 1] = g->open_hits[2 * r + 1] + n;
}

/* resource r's WAIT fired n times in the window (r >= 1) */
static void waits(struct governor *g, size_t r, uint64_t n)
{
	g->hits[9 + r] = g->open_hits[9 + r] + n;
}

static bool ext_of(const struct governor *g, const char *name)
{
	for (size_t i = 0; i < g->n_groups; i++)
		if (!strcmp(g->p->manifest->resources[g->groups[i].res].name, name))
			return g->groups[i].ext;
	return false;
}

static bool near_ms(uint64_t ns, double ms)
{
	double d = (double)ns / 1e6 - ms;

	return d < 0.01 && d > -0.01;
}

/* one cheap lock: 3 more windows; the dear pool and the credit close */
TEST(test_extend_cheap_resource_three_more_windows)
{
	struct fixture *f = fixture_new();
	struct governor *g;

	ASSERT_NOT_NULL(f);
	g = f->g;
	ASSERT_EQ((long long)g->n_groups, 5);
	hits(g, 0, 10000);	/* the pool: 20 ms of probes */
	hits(g, 1, 100);	/* t.a: 0.2 ms, 1 %: cheap, and waited for */
	waits(g, 1, 10);
	hits(g, 2, 1500);	/* t.b: 3 ms of 23.3: over 1/8 */
	waits(g, 2, 10);
	hits(g, 3, 100);	/* t.c: cheap, nobody waited */
	hits(g, 4, 50);		/* credit: cheap, waited, but no hold to see whole */
	waits(g, 4, 10);
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, ROOM), 1);
	ASSERT_TRUE(ext_of(g, "t.a"));
	ASSERT_FALSE(ext_of(g, "t.b"));
	ASSERT_FALSE(ext_of(g, "t.c"));
	ASSERT_FALSE(ext_of(g, "t.pool"));
	ASSERT_FALSE(ext_of(g, "t.tok"));
	ASSERT_TRUE(near_ms(g->ext_end_ns, 1250 + 750));
	ASSERT_TRUE(near_ms(g->ext_last_ns, 1000));
	ASSERT_TRUE(gov_ext_open(g));
	g->hits[2] += 200;	/* the extension: t.a 500 hits, 0.5 ms; the */
	g->hits[3] += 200;	/* pool's hits (its close) are not the */
	g->hits[10] += 100;	/* extension's */
	g->hits[0] += 5000;
	ASSERT_TRUE(gov_ext_close(g));	/* cleared: they close now */
	ASSERT_TRUE(near_ms((uint64_t)g->ext_cost_ns, 0.5));
	ASSERT_FALSE(gov_ext_open(g));
	ASSERT_FALSE(gov_ext_close(g));
	fixture_free(f);
}

/* t.b at 1/8 of the window's cost is cheap too; three cheap ones cost
 * 3/8 of it: their extension is capped at half the window's cost */
TEST(test_extend_capped_at_half_the_windows_cost)
{
	struct fixture *f = fixture_new();
	struct governor *g;
	double total = (2 * (4000.0 + 3 * 500) + 3) * 1000, cheap = (2 * 3 * 500.0 + 3) * 1000;

	ASSERT_NOT_NULL(f);
	g = f->g;
	hits(g, 0, 4000);
	hits(g, 1, 500);
	hits(g, 2, 500);
	hits(g, 3, 500);	/* each 1 ms of 11 ms: under 1/8 */
	waits(g, 1, 1);
	waits(g, 2, 1);
	waits(g, 3, 1);
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, ROOM), 3);
	/* 0.5 x 11 ms x 250 ms / 3 ms = 458.3 ms (less than 3 windows) */
	ASSERT_TRUE(near_ms(g->ext_end_ns - 1250 * MS, 0.5 * total * 250 / cheap));
	ASSERT_TRUE(ext_of(g, "t.a") && ext_of(g, "t.b") && ext_of(g, "t.c"));
	fixture_free(f);
}

/* at most 2 s in all, never past the next window's due time, at most
 * the ledger's room; an
 * extension under half a window is not worth its close; nothing before
 * the first window opened */
TEST(test_extend_bounds)
{
	struct fixture *f = fixture_new();
	struct governor *g;

	ASSERT_NOT_NULL(f);
	g = f->g;
	hits(g, 0, 10000);
	hits(g, 1, 100);
	waits(g, 1, 5);
	ASSERT_EQ((long long)gov_extend(g, 1800 * MS, ROOM), 1);	/* an 800 ms window */
	ASSERT_TRUE(near_ms(g->ext_last_ns, 2000));
	ASSERT_TRUE(near_ms(g->ext_end_ns, 3000));
	gov_ext_close(g);
	/* a 1.5 s window: 0.5 s left of 2 s, under half the window */
	ASSERT_EQ((long long)gov_extend(g, 2500 * MS, ROOM), 0);
	ASSERT_FALSE(gov_ext_open(g));
	/* never past the next window's due time (a high duty) */
	g->cycle_ns = 300 * MS;		/* due at 1.3 s: 50 ms left, < 125 */
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, ROOM), 0);
	g->cycle_ns = 600 * MS;		/* due at 1.6 s: 350 ms, not 750 */
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, ROOM), 1);
	ASSERT_TRUE(near_ms(g->ext_end_ns, 1600));
	gov_ext_close(g);
	/* the ledger's room: 0.2 ms of probes at t.a's 0.21 ms per 250 ms
	 * (its ACQUIRE, RELEASE and WAIT): 238 ms; 0.05 ms: under half */
	g->cycle_ns = 10000 * MS;
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, 0.2 * MS), 1);
	ASSERT_TRUE(near_ms(g->ext_end_ns, 1250 + 250 * 0.2 / 0.205));
	gov_ext_close(g);
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, 0.05 * MS), 0);
	g->win_ts = 0;
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, ROOM), 0);
	fixture_free(f);
}

/* the ledger reserves the next window's extension at its open: none
 * while no cheap resource was waited for; half the window's cost before
 * the first extension; then what the last one cost */
TEST(test_extend_expected_by_the_ledger)
{
	struct fixture *f = fixture_new();
	struct governor *g;

	ASSERT_NOT_NULL(f);
	g = f->g;
	g->hot_rate = 100e6;	/* the plan: 100 ms of probes a second, all on */
	g->groups[0].full_rate = 90e6;
	g->groups[1].full_rate = 5e6;	/* t.a: cheap */
	g->groups[4].full_rate = 5e6;	/* credit: never */
	waits(g, 4, 3);
	ASSERT_TRUE(gov_ext_expect(g, 25e6) == 0);
	waits(g, 1, 3);
	ASSERT_TRUE(gov_ext_expect(g, 25e6) == 12.5e6);
	hits(g, 0, 10000);
	hits(g, 1, 100);
	ASSERT_EQ((long long)gov_extend(g, 1250 * MS, ROOM), 1);
	g->hits[2] += 300;
	ASSERT_TRUE(gov_ext_close(g));
	ASSERT_TRUE(near_ms((uint64_t)gov_ext_expect(g, 25e6), 0.3));
	g->groups[1].full_rate = 20e6;	/* no longer cheap by the plan */
	ASSERT_TRUE(gov_ext_expect(g, 25e6) == 0);
	fixture_free(f);
}
