/* SPDX-License-Identifier: BSD-2-Clause */
/* test_analyze.c: the diagnoses of src/analyze/ on synthetic evidence (no
 * BPF): each pathology ranked first with the right resource and evidence,
 * address reuse kept as separate generations, stale descriptors reported as
 * model_stale, malformed records skipped, lost evidence shown, and the
 * Perfetto export.
 */
#include <jansson.h>
#include <sys/stat.h>
#include "harness.h"
#include "analyze/analyze.h"
#include "analyze_fixture.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1000 * SEC)

static long long llround_(double x)
{
	return (long long)(x < 0 ? x - 0.5 : x + 0.5);
}

static double fabs_(double x)
{
	return x < 0 ? -x : x;
}

enum { R_POOL, R_CONN, N_RES };

static struct manifest *load_manifest(void)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;

	if (manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d)) {
		char buf[512];
		size_t i;

		for (i = 0; i < diags__count(d); i++) {
			diag__format(diags__get(d, i), buf, sizeof(buf));
			fprintf(stderr, "    | %s\n", buf);
		}
	}
	diags__free(d);
	return m;
}

static int res_rec(struct analysis *a, const struct manifest *m, uint64_t ts, uint32_t tid,
		   uint32_t desc, uint64_t inst, uint64_t gen, uint64_t dur, uint32_t flags)
{
	struct pb_rec_resource r = { 0 };

	r.hdr.type = PB_REC_RESOURCE;
	r.hdr.version = PB_EVENTS_VERSION;
	r.hdr.size = sizeof(r);
	r.hdr.ts_ns = ts;
	r.hdr.pid = 42;
	r.hdr.tid = tid;
	r.descriptor = desc;
	r.resource = (uint16_t)m->events[desc].resource_idx;
	r.kind = (uint8_t)m->events[desc].kind;
	r.flags = flags;
	r.instance = inst;
	r.generation = gen;
	r.units = 1;
	r.duration_ns = dur;
	if (r.kind == PB_EV_WAIT)
		r.flags |= PB_RF_SPAN_END;
	return analysis__add_record(a, &r.hdr, sizeof(r));
}

static void wakeup_rec(struct analysis *a, uint64_t ts, uint32_t waker, uint32_t wakee)
{
	struct pb_rec_wakeup w = { 0 };

	w.hdr.type = PB_REC_WAKEUP;
	w.hdr.version = PB_EVENTS_VERSION;
	w.hdr.size = sizeof(w);
	w.hdr.ts_ns = ts;
	w.hdr.pid = 42;
	w.hdr.tid = waker;
	w.wakee_pid = 42;
	w.wakee_tid = wakee;
	analysis__add_record(a, &w.hdr, sizeof(w));
}

static unsigned bucket(uint64_t ns)
{
	unsigned b = 0;

	while (ns > 1 && b < PB_HIST_BUCKETS - 1) {
		ns >>= 1;
		b++;
	}
	return b;
}

/* n events of `each_ns` on descriptor d (cumulative snapshot counters) */
static void desc_events(struct pb_desc_stats *d, uint64_t n, uint64_t each_ns)
{
	d->hits += n;
	d->events += n;
	d->total_ns += n * each_ns;
	if (each_ns)
		d->hist[bucket(each_ns)] += n;
}

static const struct finding *find_kind(struct analysis *a, enum finding_kind k, int res)
{
	const struct finding *f;
	size_t n, i;

	f = analysis__findings(a, &n);
	for (i = 0; i < n; i++)
		if (f[i].kind == k && (res < 0 || f[i].resource == res))
			return &f[i];
	return NULL;
}

static const struct finding_evidence *find_ev(const struct finding *f, const char *key)
{
	size_t i;

	for (i = 0; f && i < f->n_evidence; i++)
		if (!strcmp(f->evidence[i].key, key))
			return &f->evidence[i];
	return NULL;
}

static void dump(struct analysis *a)
{
	analysis__print(a, stderr, 0);
}

/* ---- aggregate-only diagnoses ----------------------------------------------- */

TEST(test_contention_from_snapshots_ranked_first)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[N_RES] = { 0 };
	struct analysis *a;
	const struct finding *f;
	size_t n;

	ASSERT_NOT_NULL(m);
	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	/* 2 s: 6000 pool waits of ~300 us (1.8 s), all woken by releasers;
	 * conn healthy: short holds, each acquisition used */
	desc_events(&ds[P_WAIT], 6000, 300000);
	desc_events(&ds[P_GET], 20000, 0);
	desc_events(&ds[P_USE], 20000, 0);
	desc_events(&ds[P_PUT], 20000, 50000);
	desc_events(&ds[C_ACQ], 10000, 0);
	desc_events(&ds[C_USE], 10000, 0);
	desc_events(&ds[C_REL], 10000, 100000);
	desc_events(&ds[C_WAIT], 10, 20000);
	rs[R_POOL].wakeups_from_release = 5400;
	rs[R_POOL].off_cpu_wait_ns = 1700 * MS;
	rs[R_CONN].wakeups_from_release = 5;
	ASSERT_OK(analysis__add_snapshot(a, T0 + 2 * SEC, ds, N_DESC, rs, N_RES, NULL));
	analysis__set_window(a, T0, T0 + 2 * SEC);
	ASSERT_GT(analysis__finish(a), 0);
	f = analysis__findings(a, &n);
	if (f[0].kind != FINDING_CONTENTION)
		dump(a);
	ASSERT_EQ(f[0].kind, FINDING_CONTENTION);
	ASSERT_STREQ(f[0].resource_name, "t.pool");
	ASSERT_EQ((long long)find_ev(&f[0], "wait_ns")->value, 6000LL * 300000);
	ASSERT_NOT_NULL(find_ev(&f[0], "off_cpu_wait_ns"));
	ASSERT_EQ((long long)find_ev(&f[0], "release_wakeup_share")->value, 90);
	ASSERT_GT(find_ev(&f[0], "wait_p99_ns")->value, 200000);
	ASSERT_EQ(f[0].n_descs, 1);
	ASSERT_EQ(f[0].descs[0].confidence, PB_CONF_VALIDATED);
	ASSERT_NULL(f[0].label);
	ASSERT_NULL(find_kind(a, FINDING_LEAK, -1));
	ASSERT_NULL(find_kind(a, FINDING_CHURN, -1));
	analysis__free(a);
	manifest__free(m);
}

/* waits that are not ended by releases (I/O) weigh a quarter */
TEST(test_contention_discounted_without_release_wakeups)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[N_RES] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;

	ASSERT_NOT_NULL(a);
	desc_events(&ds[P_WAIT], 10000, 100000);	/* 1 s of I/O-like waits */
	desc_events(&ds[C_WAIT], 2000, 350000);		/* 0.7 s of real contention */
	rs[R_POOL].wakeups_from_release = 10;
	rs[R_CONN].wakeups_from_release = 2000;
	ASSERT_OK(analysis__add_snapshot(a, T0 + 2 * SEC, ds, N_DESC, rs, N_RES, NULL));
	analysis__set_window(a, T0, T0 + 2 * SEC);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 2);
	ASSERT_EQ(f[0].kind, FINDING_CONTENTION);
	ASSERT_STREQ(f[0].resource_name, "t.conn");
	ASSERT_STREQ(f[1].resource_name, "t.pool");
	analysis__free(a);
	manifest__free(m);
}

/* version 2 snapshots: a WAIT whose spans issued block I/O is an I/O slow
 * path, not contention, even when releasers' threads ran the completion
 * wakeups (the demo's read misses) */
TEST(test_io_bound_wait_is_not_contention)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[N_RES] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;

	ASSERT_NOT_NULL(a);
	desc_events(&ds[P_WAIT], 9000, 200000);		/* 1.8 s, every span did I/O */
	ds[P_WAIT].io_spans = 9000;
	ds[P_WAIT].io_span_ns = 9000ULL * 200000;
	ds[P_WAIT].wakeups = ds[P_WAIT].io_wakeups = 9000;
	desc_events(&ds[C_WAIT], 2000, 350000);		/* 0.7 s of real contention */
	ds[C_WAIT].wakeups = ds[C_WAIT].release_wakeups = ds[C_WAIT].release_woken_spans = 2000;
	rs[R_POOL].wakeups_from_release = 9000;	/* what version 1 counted */
	rs[R_CONN].wakeups_from_release = 2000;
	ASSERT_OK(analysis__add_snapshot(a, T0 + 2 * SEC, ds, N_DESC, rs, N_RES, NULL));
	analysis__set_window(a, T0, T0 + 2 * SEC);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_CONTENTION);
	ASSERT_STREQ(f[0].resource_name, "t.conn");
	ASSERT_EQ((long long)find_ev(&f[0], "release_wakeup_share")->value, 100);
	ASSERT_NULL(find_kind(a, FINDING_CONTENTION, R_POOL));
	analysis__free(a);
	manifest__free(m);
}

TEST(test_leak_from_snapshot_trend)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[N_RES] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;
	int i;

	ASSERT_NOT_NULL(a);
	/* 5 snapshots: pool pins grow by 20 each (every 50th acquisition is
	 * never released); conn balanced with in-flight noise */
	for (i = 1; i <= 5; i++) {
		desc_events(&ds[P_GET], 1000, 0);
		desc_events(&ds[P_USE], 1000, 0);
		desc_events(&ds[P_PUT], 980, 30000);
		desc_events(&ds[C_ACQ], 500 + (i & 1) * 3, 0);
		desc_events(&ds[C_USE], 500, 0);
		desc_events(&ds[C_REL], 500, 100000);
		rs[R_POOL].live_instances = 8;
		rs[R_POOL].outstanding_units = 20 * i;
		ASSERT_OK(analysis__add_snapshot(a, T0 + (uint64_t)i * SEC / 2, ds, N_DESC, rs, N_RES, NULL));
	}
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	if (f[0].kind != FINDING_LEAK)
		dump(a);
	ASSERT_EQ(f[0].kind, FINDING_LEAK);
	ASSERT_STREQ(f[0].resource_name, "t.pool");
	ASSERT_EQ((long long)find_ev(&f[0], "imbalance_growth")->value, 80);	/* 100 -> 20 x 5 */
	ASSERT_GT(find_ev(&f[0], "trend_r2")->value, 0.99);
	ASSERT_EQ(llround_(find_ev(&f[0], "slope_per_s")->value), 40);
	ASSERT_EQ(f[0].n_descs, 2);
	ASSERT_NULL(find_kind(a, FINDING_LEAK, R_CONN));
	analysis__free(a);
	manifest__free(m);
}

/* A target record started (counters 0 at the start): growth counts from
 * zero, so the leaks before the first snapshot are not lost; the same
 * series from an attached process counts from the first snapshot. */
TEST(test_leak_growth_from_zero_when_spawned)
{
	struct manifest *m = load_manifest();
	struct analysis_opts o = { .counters_from_zero = true };
	long long growth[2];
	int k, i;

	for (k = 0; k < 2; k++) {
		struct pb_desc_stats ds[N_DESC] = { 0 };
		struct pb_res_stats rs[N_RES] = { 0 };
		struct analysis *a = analysis__new(m, k ? NULL : &o);
		const struct finding *f;
		size_t n;

		ASSERT_NOT_NULL(a);
		for (i = 1; i <= 5; i++) {
			desc_events(&ds[P_GET], 1000, 0);
			desc_events(&ds[P_PUT], 980, 30000);
			rs[R_POOL].outstanding_units = 20 * i;
			ASSERT_OK(analysis__add_snapshot(a, T0 + (uint64_t)i * SEC / 2, ds, N_DESC, rs,
							 N_RES, NULL));
		}
		analysis__finish(a);
		f = analysis__findings(a, &n);
		ASSERT_GE(n, 1);
		ASSERT_EQ(f[0].kind, FINDING_LEAK);
		growth[k] = (long long)find_ev(&f[0], "imbalance_growth")->value;
		analysis__free(a);
	}
	ASSERT_EQ(growth[0], 100);	/* all 5 x 20, from 0 at the start */
	ASSERT_EQ(growth[1], 80);	/* from the first snapshot's 20 */
	manifest__free(m);
}

/* record --budget: one window edge of res */
static void window_mark(struct analysis *a, uint32_t res, uint64_t ts, bool open)
{
	struct pb_rec_window w = { 0 };

	w.hdr.type = PB_REC_WINDOW;
	w.hdr.version = PB_EVENTS_VERSION;
	w.hdr.size = sizeof(w);
	w.resource = res;
	w.hdr.ts_ns = ts;
	w.open = open;
	ASSERT_OK(analysis__add_record(a, &w.hdr, sizeof(w)));
}

/* record --budget: a window's edges and, at its close, what it saw */
static void window_rec(struct analysis *a, uint32_t res, uint64_t open, uint64_t close,
		       int64_t growth, uint64_t cut_age_ns, uint64_t cuts)
{
	struct pb_rec_window_stats st = { 0 };

	window_mark(a, res, open, true);
	window_mark(a, res, close, false);
	st.hdr.type = PB_REC_WINDOW_STATS;
	st.hdr.version = PB_EVENTS_VERSION;
	st.hdr.size = sizeof(st);
	st.hdr.ts_ns = close;
	st.resource = res;
	st.open_ns = open;
	st.detached_ns = close + 100 * MS;
	st.acquires = 1000 + (uint64_t)(growth > 0 ? growth : 0);
	st.releases = 1000 + (uint64_t)(growth < 0 ? -growth : 0);
	st.cut_lives = st.cut_holders = cuts;
	st.cut_age_max_ns = cut_age_ns;
	st.cut_age_sum_ns = cuts * cut_age_ns;
	st.cut_age_hist[bucket(cut_age_ns)] = cuts;
	ASSERT_OK(analysis__add_record(a, &st.hdr, sizeof(st)));
}

/* record --budget windowed both resources: the pool grows by ~10 a window
 * and each close cuts 3 holds 300 ms old -> an estimated leak; conn grows
 * as much, but its cut holds are young (in flight at the close) -> none */
TEST(test_windowed_leak_estimated)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	uint64_t t;
	int i;

	ASSERT_NOT_NULL(a);
	desc_events(&ds[P_GET], 4040, 0);
	desc_events(&ds[P_USE], 4040, 0);
	desc_events(&ds[P_PUT], 4000, 30000);
	desc_events(&ds[C_ACQ], 4040, 0);
	desc_events(&ds[C_USE], 4040, 0);
	desc_events(&ds[C_REL], 4000, 30000);
	ASSERT_OK(analysis__add_snapshot(a, T0, ds, N_DESC, NULL, 0, NULL));
	for (i = 0; i < 4; i++) {
		t = T0 + (uint64_t)i * 2 * SEC + SEC;
		window_rec(a, R_POOL, t, t + 400 * MS, 10, 300 * MS, 3);
		window_rec(a, R_CONN, t, t + 400 * MS, 10, 200000, 3);
	}
	ASSERT_OK(analysis__add_snapshot(a, T0 + 8 * SEC, ds, N_DESC, NULL, 0, NULL));
	analysis__finish(a);
	f = find_kind(a, FINDING_LEAK, R_POOL);
	if (!f)
		dump(a);
	ASSERT_NOT_NULL(f);
	ASSERT_STRSTR(f->summary, "estimated from 4 windows");
	ASSERT_EQ(llround_(find_ev(f, "old_cut_holds")->value), 12);
	/* 40 in 1.6 s of windows: 25/s, over the 8 s run 200 */
	ASSERT_EQ(llround_(find_ev(f, "slope_per_s")->value), 25);
	ASSERT_EQ(llround_(find_ev(f, "imbalance_growth")->value), 200);
	ASSERT_NOT_NULL(find_ev(f, "window_share"));
	ASSERT_NULL(find_kind(a, FINDING_LEAK, R_CONN));
	analysis__free(a);
	manifest__free(m);
}

/* record --budget: a leaked unit is a hold that never ends. The pool's
 * closes cut 300 ms holds in windows that grow (a leak): they are the
 * leak's evidence, not long holds, and the wait they explain (8 s of pool
 * WAITs in the 8 s run) is the leak's, taken from the contention; conn's
 * closes cut 120 ms holds in windows that do not grow: long holds. */
TEST(test_windowed_leak_claims_its_old_cut_holds)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f, *c;
	uint64_t t;
	size_t n;
	int i;

	ASSERT_NOT_NULL(a);
	desc_events(&ds[P_GET], 4040, 0);
	desc_events(&ds[P_USE], 4040, 0);
	desc_events(&ds[P_PUT], 4000, 30000);
	desc_events(&ds[C_ACQ], 4000, 0);
	desc_events(&ds[C_USE], 4000, 0);
	desc_events(&ds[C_REL], 4000, 30000);
	ASSERT_OK(analysis__add_snapshot(a, T0, ds, N_DESC, NULL, 0, NULL));
	desc_events(&ds[P_WAIT], 8000, 1 * MS);
	for (i = 0; i < 4; i++) {
		t = T0 + (uint64_t)i * 2 * SEC + SEC;
		window_rec(a, R_POOL, t, t + 400 * MS, 10, 300 * MS, 3);
		window_rec(a, R_CONN, t, t + 400 * MS, 0, 120 * MS, 1);
	}
	ASSERT_OK(analysis__add_snapshot(a, T0 + 8 * SEC, ds, N_DESC, NULL, 0, NULL));
	analysis__finish(a);
	f = find_kind(a, FINDING_LEAK, R_POOL);
	if (!f)
		dump(a);
	ASSERT_NOT_NULL(f);
	ASSERT_NULL(find_kind(a, FINDING_LONG_HOLD, R_POOL));
	ASSERT_NOT_NULL(find_ev(f, "caused_wait_ns"));
	ASSERT_GT(find_ev(f, "caused_wait_ns")->value, 1e9);
	c = find_kind(a, FINDING_CONTENTION, R_POOL);
	if (c) {	/* what is left of the wait, the leak's share named */
		ASSERT_NOT_NULL(find_ev(c, "explained_by_leak_ns"));
		ASSERT_TRUE(c->score < f->score);
	}
	ASSERT_EQ(analysis__findings(a, &n)[0].diagnosis, FINDING_LEAK);
	ASSERT_NOT_NULL(find_kind(a, FINDING_LONG_HOLD, R_CONN));
	ASSERT_NULL(find_kind(a, FINDING_LEAK, R_CONN));
	analysis__free(a);
	manifest__free(m);
}

/* An 8 s run of conn in which it waited 4 s (4000 WAITs of 1 ms), with 4
 * windows of 400 ms (probes on 500 ms): each window's close cut one hold
 * cut_ns old, it saw `waits` WAITs of 1 ms, and its open cut one hold
 * whose part in it was open_ns (0: none). The window records are `size`
 * bytes. Returns the finished analysis, NULL on an error. */
static struct analysis *conn_windows(struct manifest *m, uint64_t cut_ns, uint64_t waits,
				     uint64_t open_ns, size_t size)
{
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	struct pb_rec_window_stats st;
	uint64_t t;
	int i;

	if (!a)
		return NULL;
	desc_events(&ds[C_ACQ], 4000, 0);
	desc_events(&ds[C_USE], 4000, 0);
	desc_events(&ds[C_REL], 4000, 30000);
	if (analysis__add_snapshot(a, T0, ds, N_DESC, NULL, 0, NULL))
		goto fail;
	desc_events(&ds[C_WAIT], 4000, 1 * MS);
	for (i = 0; i < 4; i++) {
		t = T0 + (uint64_t)i * 2 * SEC + SEC;
		window_mark(a, R_CONN, t, true);
		window_mark(a, R_CONN, t + 400 * MS, false);
		memset(&st, 0, sizeof(st));
		st.hdr.type = PB_REC_WINDOW_STATS;
		st.hdr.version = PB_EVENTS_VERSION;
		st.hdr.size = (uint32_t)size;
		st.hdr.ts_ns = t + 400 * MS;
		st.resource = R_CONN;
		st.open_ns = t;
		st.detached_ns = t + 500 * MS;
		st.acquires = st.releases = 1000;
		st.cut_lives = st.cut_holders = 1;
		st.cut_age_max_ns = st.cut_age_sum_ns = cut_ns;
		st.cut_age_hist[bucket(cut_ns)] = 1;
		st.waits = waits;
		st.wait_ns = waits * MS;
		if (open_ns) {
			st.open_cuts = 1;
			st.open_cut_max_ns = st.open_cut_sum_ns = open_ns;
			st.open_cut_hist[bucket(open_ns)] = 1;
		}
		if (analysis__add_record(a, &st.hdr, size))
			goto fail;
	}
	if (analysis__add_snapshot(a, T0 + 8 * SEC, ds, N_DESC, NULL, 0, NULL))
		goto fail;
	analysis__finish(a);
	return a;
fail:
	analysis__free(a);
	return NULL;
}

/* record --budget: conn's 4 windows of 400 ms each cut one 300 ms hold
 * and saw 200 ms of conn WAITs; over the 8 s run conn waited 4 s. With
 * the windows' waits (the record's appended fields), the long holds seen
 * outweigh the wait of the same windows: they explain the run's wait and
 * rank first. A 424-byte record (a trace without them) still reads, and
 * the long holds are scaled to the run at their lower bound instead: 1.2
 * of 4 s explained, the contention ranks first. */
TEST(test_windowed_long_holds_against_the_windows_waits)
{
	struct manifest *m = load_manifest();
	const struct finding *f;
	size_t n;
	int k;

	for (k = 0; k < 2; k++) {
		struct analysis *a = conn_windows(m, 300 * MS, 200, 0,
						  k ? PB_REC_WINDOW_STATS_MIN :
						      sizeof(struct pb_rec_window_stats));

		ASSERT_NOT_NULL(a);
		f = analysis__findings(a, &n);
		if (!n)
			dump(a);
		ASSERT_GE(n, 1);
		ASSERT_EQ(f[0].resource, R_CONN);
		if (k == 0) {
			ASSERT_EQ(f[0].diagnosis, FINDING_LONG_HOLD);
			/* all of the run's 4 s of wait */
			ASSERT_EQ(llround_(find_ev(&f[0], "caused_wait_ns")->value / 1e6), 4000);
			ASSERT_NULL(find_kind(a, FINDING_CONTENTION, R_CONN));
		} else {
			ASSERT_EQ(f[0].diagnosis, FINDING_CONTENTION);
			f = find_kind(a, FINDING_LONG_HOLD, R_CONN);
			ASSERT_NOT_NULL(f);
			ASSERT_TRUE(find_ev(f, "caused_wait_ns")->value < 2e9);
		}
		analysis__free(a);
	}
	manifest__free(m);
}

/* record --budget: each of conn's 4 windows saw 400 ms of conn WAITs, its
 * close cut a hold only 70 ms old, and its open cut a 300 ms hold
 * (acquired before the open, released 300 ms after it). Counted at both
 * edges, the long holds inside the windows explain most of their wait
 * and rank first; from a record without the open cuts
 * (PB_REC_WINDOW_STATS_WAITS bytes) only the closes' 70 ms holds are
 * seen, and the same wait reads as contention. */
TEST(test_windowed_long_holds_cut_by_the_open)
{
	struct manifest *m = load_manifest();
	const struct finding *f;
	size_t n;
	int k;

	for (k = 0; k < 2; k++) {
		struct analysis *a = conn_windows(m, 70 * MS, 400, 300 * MS,
						  k ? PB_REC_WINDOW_STATS_WAITS :
						      sizeof(struct pb_rec_window_stats));

		ASSERT_NOT_NULL(a);
		f = analysis__findings(a, &n);
		if (!n)
			dump(a);
		ASSERT_GE(n, 1);
		ASSERT_EQ(f[0].resource, R_CONN);
		if (k == 0) {
			ASSERT_EQ(f[0].diagnosis, FINDING_LONG_HOLD);
			ASSERT_EQ(llround_(find_ev(&f[0], "open_cut_long_holds")->value), 4);
			ASSERT_EQ(llround_(find_ev(&f[0], "cut_long_holds")->value), 4);
			/* (4 x 67 + 4 x 268 ms) / 1.6 s of the windows' wait */
			ASSERT_TRUE(find_ev(&f[0], "caused_wait_ns")->value > 3e9);
		} else {
			ASSERT_EQ(f[0].diagnosis, FINDING_CONTENTION);
			f = find_kind(a, FINDING_LONG_HOLD, R_CONN);
			ASSERT_NOT_NULL(f);
			ASSERT_NULL(find_ev(f, "open_cut_long_holds"));
			ASSERT_TRUE(find_ev(f, "caused_wait_ns")->value < 1e9);
		}
		analysis__free(a);
	}
	manifest__free(m);
}

/* consumed credit (ACQUIRE without RELEASE by design) is not a leak */
TEST(test_credit_consumption_is_not_a_leak)
{
	static const char yaml[] =
		"manifest: 1\n"
		"name: c\n"
		"targets:\n"
		"  - binary: /usr/bin/x\n"
		"    build_id: 0123456789abcdef\n"
		"resources:\n"
		"  - { name: c.tokens, class: credit, units: tokens, capacity: 256, shared: true }\n"
		"events:\n"
		"  - { id: take, resource: c.tokens, kind: ACQUIRE, site: { symbol: t }, instance: arg0, confidence: validated }\n"
		"  - { id: refund, resource: c.tokens, kind: RELEASE, site: { symbol: r }, instance: arg0, confidence: validated }\n";
	struct diags *d = diags__new();
	struct manifest *m = NULL;
	struct pb_desc_stats ds[2] = { 0 };
	struct analysis *a;
	int i;

	ASSERT_OK(manifest__parse("c.yaml", yaml, sizeof(yaml) - 1, &m, d));
	diags__free(d);
	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	for (i = 1; i <= 5; i++) {
		desc_events(&ds[0], 1000, 0);
		desc_events(&ds[1], 750, 0);	/* a quarter of requests refund nothing */
		ASSERT_OK(analysis__add_snapshot(a, T0 + (uint64_t)i * SEC, ds, 2, NULL, 0, NULL));
	}
	ASSERT_EQ(analysis__finish(a), 0);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_churn_from_counts)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;

	ASSERT_NOT_NULL(a);
	desc_events(&ds[C_ACQ], 110000, 0);
	desc_events(&ds[C_USE], 10000, 0);
	desc_events(&ds[C_REL], 110000, 2000);
	desc_events(&ds[P_GET], 20000, 0);
	desc_events(&ds[P_USE], 20000, 0);
	desc_events(&ds[P_PUT], 20000, 2000);
	ASSERT_OK(analysis__add_snapshot(a, T0 + 2 * SEC, ds, N_DESC, NULL, 0, NULL));
	analysis__set_window(a, T0, T0 + 2 * SEC);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_CHURN);
	ASSERT_STREQ(f[0].resource_name, "t.conn");
	ASSERT_EQ((long long)find_ev(&f[0], "cycles_without_use")->value, 100000);
	ASSERT_EQ(llround_(find_ev(&f[0], "waste_share")->value), 91);
	ASSERT_EQ(f[0].n_descs, 3);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_healthy_has_no_findings)
{
	struct manifest *m = load_manifest();
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[N_RES] = { 0 };
	struct analysis *a = analysis__new(m, NULL);
	int i;

	ASSERT_NOT_NULL(a);
	for (i = 1; i <= 4; i++) {
		desc_events(&ds[P_GET], 1000, 0);
		desc_events(&ds[P_USE], 1200, 0);
		desc_events(&ds[P_PUT], 1000 - (i & 1) * 2, 30000);
		desc_events(&ds[C_ACQ], 500, 0);
		desc_events(&ds[C_USE], 500, 0);
		desc_events(&ds[C_REL], 500, 100000);
		desc_events(&ds[C_WAIT], 2, 10000);
		ASSERT_OK(analysis__add_snapshot(a, T0 + (uint64_t)i * SEC, ds, N_DESC, rs, N_RES, NULL));
	}
	ASSERT_EQ(analysis__finish(a), 0);
	analysis__free(a);
	manifest__free(m);
}

/* ---- instance-level (--events) diagnoses ---------------------------------- */

/* tid 100 holds conn 0xc0 for 300 ms; tids 200/201 wait 280 ms meanwhile
 * and are woken by tid 100's release; plus short healthy holds */
static void long_hold_stream(struct analysis *a, const struct manifest *m)
{
	uint64_t t;
	int i;

	res_rec(a, m, T0, 100, C_ACQ, 0xc0, 1, 0, PB_RF_NEW_GENERATION);
	res_rec(a, m, T0 + 1 * MS, 100, C_USE, 0xc0, 1, 0, 0);
	for (i = 0; i < 200; i++) {	/* others use 0xd0 briefly, before the hold starves them */
		t = T0 + 2 * MS + (uint64_t)i * 20000;
		res_rec(a, m, t, 300 + (i & 3), C_ACQ, 0xd0, 10 + (uint64_t)i, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + 5000, 300 + (i & 3), C_USE, 0xd0, 10 + (uint64_t)i, 0, 0);
		res_rec(a, m, t + 10000, 300 + (i & 3), C_REL, 0xd0, 10 + (uint64_t)i, 10000, 0);
	}
	res_rec(a, m, T0 + 300 * MS, 100, C_REL, 0xc0, 1, 300 * MS, 0);
	wakeup_rec(a, T0 + 300 * MS + 1000, 100, 200);
	wakeup_rec(a, T0 + 300 * MS + 1000, 100, 201);
	res_rec(a, m, T0 + 300 * MS + 2000, 200, C_WAIT, 0xfeed, 0, 290 * MS, 0);
	res_rec(a, m, T0 + 300 * MS + 3000, 201, C_WAIT, 0xfeed, 0, 280 * MS, 0);
	res_rec(a, m, T0 + 300 * MS + 4000, 200, C_ACQ, 0xc0, 2, 0, PB_RF_NEW_GENERATION);
	res_rec(a, m, T0 + 300 * MS + 5000, 200, C_USE, 0xc0, 2, 0, 0);
	res_rec(a, m, T0 + 300 * MS + 9000, 200, C_REL, 0xc0, 2, 5000, 0);
	res_rec(a, m, T0 + 600 * MS, 201, C_ACQ, 0xc0, 3, 0, PB_RF_NEW_GENERATION);
	res_rec(a, m, T0 + 600 * MS + 1000, 201, C_USE, 0xc0, 3, 0, 0);
	res_rec(a, m, T0 + 600 * MS + 2000, 201, C_REL, 0xc0, 3, 1000, 0);
}

TEST(test_long_hold_from_events_ranked_first)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f, *c;
	const struct finding_evidence *e;
	size_t n;

	ASSERT_NOT_NULL(a);
	long_hold_stream(a, m);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	if (f[0].kind != FINDING_LONG_HOLD)
		dump(a);
	ASSERT_EQ(f[0].kind, FINDING_LONG_HOLD);
	ASSERT_STREQ(f[0].resource_name, "t.conn");
	ASSERT_EQ((long long)find_ev(&f[0], "long_holds")->value, 1);
	ASSERT_EQ((long long)find_ev(&f[0], "long_hold_max_ns")->value, (long long)(300 * MS));
	e = find_ev(&f[0], "holder_tid");
	ASSERT_NOT_NULL(e);
	ASSERT_EQ((long long)e->value, 100);
	/* the waits overlapping the hold: 290 + 280 ms, all woken by the releaser */
	ASSERT_EQ((long long)find_ev(&f[0], "caused_wait_ns")->value, (long long)(570 * MS - 5000));
	/* contention on the same resource is explained by the hold */
	c = find_kind(a, FINDING_CONTENTION, R_CONN);
	ASSERT_TRUE(!c || c->score < f[0].score);
	analysis__free(a);
	manifest__free(m);
}

static void block_rec(struct analysis *a, uint64_t ts, uint32_t tid, uint32_t bytes)
{
	struct pb_rec_block b = { 0 };

	b.hdr.type = PB_REC_BLOCK_IO;
	b.hdr.version = PB_EVENTS_VERSION;
	b.hdr.size = sizeof(b);
	b.hdr.ts_ns = ts;
	b.hdr.pid = 42;
	b.hdr.tid = tid;
	b.bytes = bytes;
	analysis__add_record(a, &b.hdr, sizeof(b));
}

/* a thread holding two instances at once (pinned buffers): an I/O it
 * issues meanwhile counts once for the resource, not once per hold */
TEST(test_io_while_holding_counted_once_per_thread)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	const struct finding_evidence *e;

	ASSERT_NOT_NULL(a);
	long_hold_stream(a, m);
	/* tid 100 also holds 0xc1 inside its 300 ms hold of 0xc0 */
	res_rec(a, m, T0 + 2 * MS, 100, C_ACQ, 0xc1, 1, 0, PB_RF_NEW_GENERATION);
	block_rec(a, T0 + 100 * MS, 100, 8192);
	block_rec(a, T0 + 150 * MS, 100, 8192);
	res_rec(a, m, T0 + 299 * MS, 100, C_REL, 0xc1, 1, 297 * MS, 0);
	block_rec(a, T0 + 700 * MS, 100, 8192);	/* after every hold: not counted */
	analysis__finish(a);
	f = find_kind(a, FINDING_LONG_HOLD, R_CONN);
	if (!f)
		dump(a);
	ASSERT_NOT_NULL(f);
	e = find_ev(f, "io_while_holding");
	ASSERT_NOT_NULL(e);
	ASSERT_EQ((long long)e->value, 2);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_contention_events_wakeup_sources)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;
	int i;

	ASSERT_NOT_NULL(a);
	/* 100 rounds of 10 ms: tid 1 holds page i for 9 ms (short: under the
	 * 50 ms threshold), tid 2 waits 8 ms and is woken by tid 1's release */
	for (i = 0; i < 100; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;

		res_rec(a, m, t, 1, P_GET, 0x100 + (uint64_t)i, 1, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + 1 * MS, 1, P_USE, 0x100 + (uint64_t)i, 1, 0, 0);
		res_rec(a, m, t + 9 * MS, 1, P_PUT, 0x100 + (uint64_t)i, 1, 9 * MS, 0);
		wakeup_rec(a, t + 9 * MS + 500, (i % 10) ? 1 : 7, 2);
		res_rec(a, m, t + 9 * MS + 800, 2, P_WAIT, 0xaaaa, 0, 8 * MS, 0);
		res_rec(a, m, t + 9 * MS + 900, 2, P_GET, 0x100 + (uint64_t)i, 2, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + 9 * MS + 950, 2, P_USE, 0x100 + (uint64_t)i, 2, 0, 0);
		res_rec(a, m, t + 9 * MS + 990, 2, P_PUT, 0x100 + (uint64_t)i, 2, 90000, 0);
	}
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	if (f[0].kind != FINDING_CONTENTION)
		dump(a);
	ASSERT_EQ(f[0].kind, FINDING_CONTENTION);
	ASSERT_STREQ(f[0].resource_name, "t.pool");
	ASSERT_EQ((long long)find_ev(&f[0], "wakeups_from_release")->value, 90);
	ASSERT_EQ((long long)find_ev(&f[0], "waiters")->value, 1);
	ASSERT_EQ((long long)find_ev(&f[0], "holder_tid")->value, 1);
	ASSERT_NULL(find_kind(a, FINDING_LONG_HOLD, -1));
	analysis__free(a);
	manifest__free(m);
}

/* one address, 30 generations, each released: 30 lifetimes, no leak; 10
 * pages leaked at other addresses: exactly those are reported */
TEST(test_address_reuse_is_two_lifetimes)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;
	int i;

	ASSERT_NOT_NULL(a);
	for (i = 0; i < 30; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;

		res_rec(a, m, t, 5, P_GET, 0x1000, (uint64_t)i + 1, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + MS, 5, P_USE, 0x1000, (uint64_t)i + 1, 0, 0);
		res_rec(a, m, t + 2 * MS, 5, P_PUT, 0x1000, (uint64_t)i + 1, MS, 0);
	}
	analysis__finish(a);
	ASSERT_NULL(find_kind(a, FINDING_LEAK, -1));
	analysis__free(a);

	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	for (i = 0; i < 30; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;

		res_rec(a, m, t, 5, P_GET, 0x1000, (uint64_t)i + 1, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + MS, 5, P_USE, 0x1000, (uint64_t)i + 1, 0, 0);
		res_rec(a, m, t + 2 * MS, 5, P_PUT, 0x1000, (uint64_t)i + 1, MS, 0);
		if (i % 3 == 0)	/* 10 leaked pins */
			res_rec(a, m, t + 3 * MS, 6, P_GET, 0x2000 + (uint64_t)i, 1, 0,
				PB_RF_NEW_GENERATION);
	}
	/* the last generation of 0x1000 is re-acquired and still open, but young */
	res_rec(a, m, T0 + 2 * SEC, 5, P_GET, 0x1000, 31, 0, PB_RF_NEW_GENERATION);
	analysis__finish(a);
	f = find_kind(a, FINDING_LEAK, R_POOL);
	if (!f)
		dump(a);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ((long long)find_ev(f, "stuck_lifetimes")->value, 10);
	ASSERT_EQ((long long)find_ev(f, "reused_addresses")->value, 30);
	/* none of the named instances is the reused address */
	for (n = 0; n < f->n_evidence; n++)
		if (!strcmp(f->evidence[n].key, "stuck_instance"))
			ASSERT_NE((long long)f->evidence[n].value, 0x1000);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_churn_per_generation_from_events)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;
	int i;

	ASSERT_NOT_NULL(a);
	for (i = 0; i < 1100; i++) {
		uint64_t t = T0 + (uint64_t)i * 100000;

		res_rec(a, m, t, 9, C_ACQ, 0xc000 + (uint64_t)(i % 4), (uint64_t)i + 1, 0,
			PB_RF_NEW_GENERATION);
		if (i % 11 == 0)
			res_rec(a, m, t + 1000, 9, C_USE, 0xc000 + (uint64_t)(i % 4), (uint64_t)i + 1, 0, 0);
		res_rec(a, m, t + 2000, 9, C_REL, 0xc000 + (uint64_t)(i % 4), (uint64_t)i + 1, 2000, 0);
	}
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_CHURN);
	ASSERT_STREQ(f[0].resource_name, "t.conn");
	ASSERT_EQ((long long)find_ev(&f[0], "cycles_without_use")->value, 1000);
	analysis__free(a);
	manifest__free(m);
}

/* record --budget: the events that fire while a close's links are being
 * destroyed come after the close mark; a lifetime they would open (its
 * USE probe already gone) is not opened, so 1000 such cycles are no
 * churn, while a window's own cycles (with their USE) are lifetimes */
TEST(test_no_lifetime_opens_between_a_close_and_the_next_open)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	int i;

	ASSERT_NOT_NULL(a);
	window_mark(a, R_CONN, T0, true);
	for (i = 0; i < 100; i++) {	/* in the window: whole, with a USE */
		uint64_t t = T0 + 10000 + (uint64_t)i * 10000;

		res_rec(a, m, t, 9, C_ACQ, 0xc000, (uint64_t)i + 1, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + 1000, 9, C_USE, 0xc000, (uint64_t)i + 1, 0, 0);
		res_rec(a, m, t + 2000, 9, C_REL, 0xc000, (uint64_t)i + 1, 2000, 0);
	}
	window_mark(a, R_CONN, T0 + SEC, false);
	for (i = 0; i < 1000; i++) {	/* the close: USE detached, ACQUIRE going */
		uint64_t t = T0 + SEC + 1000 + (uint64_t)i * 100;

		res_rec(a, m, t, 9, C_ACQ, 0xc000, (uint64_t)i + 101, 0, PB_RF_NEW_GENERATION);
		res_rec(a, m, t + 50, 9, C_REL, 0xc000, (uint64_t)i + 101, 50, 0);
	}
	analysis__finish(a);
	if (find_kind(a, FINDING_CHURN, R_CONN))
		dump(a);
	ASSERT_NULL(find_kind(a, FINDING_CHURN, R_CONN));
	ASSERT_GE(analysis__counts(a)->window_unmatched, 2000);
	analysis__free(a);
	manifest__free(m);
}

/* ---- confidence ------------------------------------------------------------ */

static void leak_snapshots(struct analysis *a)
{
	struct pb_desc_stats ds[N_DESC] = { 0 };
	int i;

	for (i = 1; i <= 5; i++) {
		desc_events(&ds[P_GET], 1000, 0);
		desc_events(&ds[P_PUT], 900, 30000);
		analysis__add_snapshot(a, T0 + (uint64_t)i * SEC, ds, N_DESC, NULL, 0, NULL);
	}
}

TEST(test_stale_descriptor_is_model_stale_not_leak)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;

	ASSERT_NOT_NULL(a);
	ASSERT_OK(analysis__set_confidence(a, P_GET, PB_CONF_STALE));
	leak_snapshots(a);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_MODEL_STALE);
	ASSERT_EQ(f[0].diagnosis, FINDING_LEAK);
	ASSERT_NULL(find_kind(a, FINDING_LEAK, -1));
	ASSERT_NOT_NULL(strstr(f[0].summary, "model stale"));
	ASSERT_NOT_NULL(strstr(f[0].label, "stale descriptor p_get"));
	analysis__free(a);

	a = analysis__new(m, NULL);
	ASSERT_OK(analysis__set_confidence(a, P_PUT, PB_CONF_SUSPECT));
	leak_snapshots(a);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_MODEL_SUSPECT);
	ASSERT_NULL(find_kind(a, FINDING_LEAK, -1));
	analysis__free(a);
	manifest__free(m);
}

TEST(test_candidate_descriptor_is_labelled)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	const struct finding *f;
	size_t n;

	ASSERT_NOT_NULL(a);
	ASSERT_OK(analysis__set_confidence(a, P_PUT, PB_CONF_CANDIDATE));
	ASSERT_ERR(analysis__set_confidence(a, 999, PB_CONF_STALE), -EINVAL);
	leak_snapshots(a);
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_LEAK);
	ASSERT_NOT_NULL(f[0].label);
	ASSERT_NOT_NULL(strstr(f[0].label, "candidate descriptor p_put"));
	ASSERT_TRUE(f[0].certainty < 0.7);
	ASSERT_TRUE(fabs_(f[0].score - f[0].severity * f[0].certainty) < 1e-9);
	analysis__free(a);
	manifest__free(m);
}

/* ---- robustness and lost evidence ------------------------------------------ */

TEST(test_malformed_records_counted_and_skipped)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	struct pb_rec_resource r = { 0 };
	const struct analysis_counts *c;
	unsigned char *tail;

	ASSERT_NOT_NULL(a);
	r.hdr.type = PB_REC_RESOURCE;
	r.hdr.version = PB_EVENTS_VERSION;
	r.hdr.size = sizeof(r);
	r.hdr.ts_ns = T0;
	r.descriptor = C_ACQ;
	r.resource = R_CONN;
	r.kind = PB_EV_ACQUIRE;
	/* buffer shorter than a header */
	ASSERT_ERR(analysis__add_record(a, &r.hdr, 8), -EINVAL);
	/* size claims less than the type needs */
	r.hdr.size = sizeof(struct pb_rec_hdr) + 4;
	ASSERT_ERR(analysis__add_record(a, &r.hdr, sizeof(r)), -EINVAL);
	/* size claims more than the buffer: never read past it (ASan checks) */
	r.hdr.size = sizeof(r);
	tail = malloc(sizeof(r) - 8);
	ASSERT_NOT_NULL(tail);
	memcpy(tail, &r, sizeof(r) - 8);
	ASSERT_ERR(analysis__add_record(a, (struct pb_rec_hdr *)tail, sizeof(r) - 8), -EINVAL);
	free(tail);
	/* descriptor out of range; kind disagreeing with the manifest */
	r.descriptor = 9999;
	ASSERT_ERR(analysis__add_record(a, &r.hdr, sizeof(r)), -EINVAL);
	r.descriptor = C_ACQ;
	r.kind = PB_EV_RELEASE;
	ASSERT_ERR(analysis__add_record(a, &r.hdr, sizeof(r)), -EINVAL);
	r.kind = PB_EV_ACQUIRE;
	/* unknown type and unknown version */
	r.hdr.type = 77;
	ASSERT_ERR(analysis__add_record(a, &r.hdr, sizeof(r)), -EINVAL);
	r.hdr.type = PB_REC_RESOURCE;
	r.hdr.version = 99;
	ASSERT_ERR(analysis__add_record(a, &r.hdr, sizeof(r)), -EINVAL);
	r.hdr.version = PB_EVENTS_VERSION;
	/* a longer record (newer writer) is fine, and so is this one */
	ASSERT_OK(analysis__add_record(a, &r.hdr, sizeof(r)));
	ASSERT_EQ(analysis__finish(a), 0);
	c = analysis__counts(a);
	ASSERT_EQ(c->malformed, 5);
	ASSERT_EQ(c->unknown_type, 2);
	ASSERT_EQ(c->records, 1);
	ASSERT_ERR(analysis__add_record(a, &r.hdr, sizeof(r)), -EBUSY);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_drops_shown_and_lower_certainty)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	struct pb_engine_stats eng = { .ringbuf_drops = 500, .records = 4500 };
	const struct finding *f;
	json_t *j;
	size_t n;

	ASSERT_NOT_NULL(a);
	long_hold_stream(a, m);
	ASSERT_OK(analysis__add_snapshot(a, T0 + 700 * MS, NULL, 0, NULL, 0, &eng));
	analysis__finish(a);
	f = analysis__findings(a, &n);
	ASSERT_GE(n, 1);
	ASSERT_NOT_NULL(find_ev(&f[0], "ringbuf_drops"));
	ASSERT_EQ((long long)find_ev(&f[0], "ringbuf_drops")->value, 500);
	ASSERT_TRUE(f[0].certainty < 0.95 && f[0].certainty > 0.85);
	j = analysis__to_json(a);
	ASSERT_NOT_NULL(j);
	ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "counts"), "ringbuf_drops")), 500);
	ASSERT_TRUE(json_array_size(json_object_get(j, "findings")) == n);
	json_decref(j);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_ranking_is_stable)
{
	struct manifest *m = load_manifest();
	char *first = NULL;
	int round_;

	for (round_ = 0; round_ < 3; round_++) {
		struct analysis *a = analysis__new(m, NULL);
		json_t *j;
		char *s;

		ASSERT_NOT_NULL(a);
		long_hold_stream(a, m);
		leak_snapshots(a);
		analysis__finish(a);
		j = analysis__to_json(a);
		s = json_dumps(j, JSON_SORT_KEYS);
		json_decref(j);
		analysis__free(a);
		ASSERT_NOT_NULL(s);
		if (!first) {
			first = s;
		} else {
			int same = !strcmp(first, s);

			free(s);
			if (!same)
				free(first);
			ASSERT_TRUE(same);
		}
	}
	free(first);
	manifest__free(m);
}

/* ---- export ------------------------------------------------------------------ */

TEST(test_perfetto_export_spans)
{
	struct manifest *m = load_manifest();
	struct analysis *a = analysis__new(m, NULL);
	size_t i, len = 0, spans = 0, waits = 0, holds = 0, uses = 0, counters = 0;
	char *buf = NULL;
	json_error_t jerr;
	json_t *doc, *evs;
	FILE *f;

	ASSERT_NOT_NULL(a);
	long_hold_stream(a, m);
	leak_snapshots(a);
	analysis__finish(a);
	f = open_memstream(&buf, &len);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(export__perfetto(a, f, &spans));
	fclose(f);
	doc = json_loads(buf, 0, &jerr);
	if (!doc)
		fprintf(stderr, "  bad JSON: %s at %d\n", jerr.text, jerr.line);
	free(buf);
	ASSERT_NOT_NULL(doc);
	evs = json_object_get(doc, "traceEvents");
	ASSERT_TRUE(json_is_array(evs));
	for (i = 0; i < json_array_size(evs); i++) {
		json_t *e = json_array_get(evs, i);
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));

		ASSERT_NOT_NULL(ph);
		ASSERT_NOT_NULL(name);
		if (!strcmp(ph, "X") && !strcmp(name, "WAIT t.conn")) {
			waits++;
			ASSERT_TRUE(json_real_value(json_object_get(e, "dur")) >= 280000.0);
		} else if (!strcmp(ph, "b") && !strcmp(name, "hold t.conn")) {
			/* holds are async slices: "b" ... its "e" with the same id */
			const char *id = json_string_value(json_object_get(e, "id"));
			size_t j;

			holds++;
			ASSERT_NOT_NULL(id);
			for (j = i + 1; id && j < json_array_size(evs); j++) {
				json_t *x = json_array_get(evs, j);
				const char *xid = json_string_value(json_object_get(x, "id"));

				if (xid && !strcmp(xid, id) &&
				    !strcmp(json_string_value(json_object_get(x, "ph")), "e"))
					break;
			}
			ASSERT_TRUE(j < json_array_size(evs));
			if (json_integer_value(json_object_get(e, "tid")) == 100)
				ASSERT_TRUE(fabs_(json_number_value(json_object_get(json_array_get(evs, j), "ts")) -
						  json_number_value(json_object_get(e, "ts")) - 300000.0) < 1);
		} else if (!strcmp(ph, "i")) {
			uses++;
		} else if (!strcmp(ph, "C")) {
			counters++;
		}
	}
	json_decref(doc);
	ASSERT_EQ(waits, 2);
	ASSERT_EQ(holds, 203);		/* 200 short + the long one + 2 after */
	ASSERT_EQ(uses, 203);
	ASSERT_EQ(counters, 2 * 5);	/* 2 resources x 5 snapshots */
	ASSERT_EQ(spans, 205);
	analysis__free(a);
	manifest__free(m);
}



/* ---- trace files (src/trace writer -> trace_load) ------------------------- */

#include "analyze/trace_load.h"
#include "contract/plan.h"

/* a leak trace: manifest, plan (p_put degraded), 5 snapshots, records, end.
 * put_viol: p_put also releases one instance not seen acquired per second
 * (0.1 %: below suspect, but no clean evidence, so it stays degraded);
 * without it, its clean windows promote it (docs/validation.md). */
static int write_trace_v(const char *path, const struct manifest *m, bool end, bool put_viol)
{
	struct plan_descriptor pd[N_DESC];
	struct plan p = { 0 };
	struct trace_header h = { 0 };
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[N_RES] = { 0 };
	struct trace_snapshot s = { 0 };
	struct trace_writer *w;
	struct pb_rec_resource r = { 0 };
	struct trace_end e = { 0 };
	int i, err = 0;

	memset(pd, 0, sizeof(pd));
	for (i = 0; i < N_DESC; i++) {
		pd[i].event = i;
		pd[i].confidence = i == P_PUT ? PB_CONF_DEGRADED : PB_CONF_VALIDATED;
	}
	p.manifest = m;
	p.descriptors = pd;
	p.n_descriptors = N_DESC;
	h.clock_id = 1;
	h.pid = 4242;
	h.start_mono_ns = T0;
	h.flags = TRACE_F_EVENTS;
	h.events_version = PB_EVENTS_VERSION;
	w = trace_writer__create(path, &h);
	if (!w)
		return -errno;
	err = err ?: trace_writer__manifest(w, manifest_yaml, strlen(manifest_yaml));
	err = err ?: trace_writer__plan(w, &p);
	for (i = 1; i <= 5 && !err; i++) {
		desc_events(&ds[P_GET], 1000, 0);
		desc_events(&ds[P_USE], 1000, 0);
		desc_events(&ds[P_PUT], 980, 30000);
		ds[P_PUT].violations[PB_INV_RELEASE_NOT_ACTIVE] += put_viol;
		s.ts_ns = T0 + (uint64_t)i * SEC;
		s.n_desc = N_DESC;
		s.n_res = N_RES;
		s.desc = ds;
		s.res = rs;
		err = trace_writer__snapshot(w, &s);
		r.hdr.type = PB_REC_RESOURCE;
		r.hdr.version = PB_EVENTS_VERSION;
		r.hdr.size = sizeof(r);
		r.hdr.ts_ns = T0 + (uint64_t)i * SEC - 1000;
		r.hdr.tid = 7;
		r.descriptor = P_GET;
		r.resource = R_POOL;
		r.kind = PB_EV_ACQUIRE;
		r.instance = 0x5000 + (uint64_t)i;
		r.generation = 1;
		err = err ?: trace_writer__record(w, &r, sizeof(r));
		err = err ?: trace_writer__flush(w);
	}
	if (end && !err) {
		e.end_mono_ns = T0 + 5 * SEC + 1000;
		e.records = 5;
		e.ringbuf_drops = 3;
		e.snapshots = 5;
		e.stop_reason = TRACE_STOP_DURATION;
		e.target_status = -1;
		err = trace_writer__end(w, &e);
	}
	return trace_writer__close(w) ?: err;
}

static int write_trace(const char *path, const struct manifest *m, bool end)
{
	return write_trace_v(path, m, end, true);
}

TEST(test_trace_clean_evidence_promotes_degraded)
{
	struct manifest *m = load_manifest();
	double promoted_certainty;
	char path[] = "/tmp/pb-analyze-XXXXXX";
	struct loaded_trace lt;
	const struct finding *f;
	size_t n;
	int fd;

	ASSERT_NOT_NULL(m);
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_OK(write_trace_v(path, m, true, false));
	ASSERT_OK(loaded_trace__load(&lt, path, NULL));
	/* 5 snapshots of 980 clean events; the first closes in the attach
	 * grace, the next three promote p_put */
	ASSERT_EQ(confidence__initial(lt.conf, P_PUT), PB_CONF_DEGRADED);
	ASSERT_EQ(confidence__state(lt.conf, P_PUT), PB_CONF_VALIDATED);
	ASSERT_STRSTR(confidence__reason(lt.conf, P_PUT), "3 consecutive clean windows");
	f = analysis__findings(lt.analysis, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_LEAK);
	ASSERT_TRUE(!f[0].label || !strstr(f[0].label, "degraded"));
	promoted_certainty = f[0].certainty;
	loaded_trace__free(&lt);
	/* the same leak resting on a descriptor still degraded: said so, and
	 * less certain (x 0.8) */
	ASSERT_OK(write_trace_v(path, m, true, true));
	ASSERT_OK(loaded_trace__load(&lt, path, NULL));
	f = analysis__findings(lt.analysis, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_LEAK);
	ASSERT_STRSTR(f[0].label, "degraded descriptor p_put");
	ASSERT_TRUE(f[0].certainty < promoted_certainty * 0.81);
	ASSERT_TRUE(f[0].certainty > promoted_certainty * 0.79);
	loaded_trace__free(&lt);
	unlink(path);
	manifest__free(m);
}

TEST(test_trace_file_report_and_cut_trace)
{
	struct manifest *m = load_manifest();
	char path[] = "/tmp/pb-analyze-XXXXXX";
	struct loaded_trace lt;
	const struct finding *f;
	struct stat st;
	size_t n;
	int fd;

	ASSERT_NOT_NULL(m);
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_OK(write_trace(path, m, true));
	if (getenv("PB_ANALYZE_KEEP_TRACE"))	/* for trying the CLI by hand */
		ASSERT_OK(write_trace(getenv("PB_ANALYZE_KEEP_TRACE"), m, true));
	ASSERT_OK(loaded_trace__load(&lt, path, NULL));
	ASSERT_TRUE(lt.ended);
	ASSERT_NULL(lt.cut_reason);
	f = analysis__findings(lt.analysis, &n);
	ASSERT_GE(n, 1);
	ASSERT_EQ(f[0].kind, FINDING_LEAK);
	ASSERT_STREQ(f[0].resource_name, "t.pool");
	/* the plan's effective confidence reaches the finding */
	ASSERT_NOT_NULL(f[0].label);
	ASSERT_NOT_NULL(strstr(f[0].label, "degraded descriptor p_put"));
	ASSERT_EQ(analysis__counts(lt.analysis)->ringbuf_drops, 3);
	ASSERT_EQ(analysis__counts(lt.analysis)->by_type[PB_REC_RESOURCE], 5);
	loaded_trace__free(&lt);

	/* cut the end chunk and part of the last chunk off: still readable */
	ASSERT_OK(stat(path, &st));
	ASSERT_OK(truncate(path, st.st_size - 60));
	ASSERT_OK(loaded_trace__load(&lt, path, NULL));
	ASSERT_FALSE(lt.ended);
	ASSERT_NOT_NULL(lt.cut_reason);
	ASSERT_GE(analysis__counts(lt.analysis)->snapshots, 4);
	loaded_trace__free(&lt);

	/* not a trace at all */
	ASSERT_OK(truncate(path, 0));
	ASSERT_ERR(loaded_trace__load(&lt, path, NULL), -EBADMSG);
	loaded_trace__free(&lt);
	unlink(path);
	manifest__free(m);
}
