/* SPDX-License-Identifier: BSD-2-Clause */
/* test_probefx.c: the probe-effect correction of src/analyze/probefx.c on
 * synthetic evidence (no BPF): a WAIT span loses its own probes' cost and,
 * from the --events records, the cost of the other probes that fired on
 * the same thread inside it (a nested WAIT, an ACQUIRE, a USE, a RELEASE);
 * probes of other threads and outside the span are not charged; without
 * span records the nested count is unknown (null), not 0.
 */
#include <jansson.h>
#include "harness.h"
#include "analyze/analyze.h"
#include "trace/trace.h"
#include "analyze_fixture.h"

#define US 1000ull
#define MS 1000000ull
#define T0 (1000 * 1000000000ull)


/* calibrated ns per event of each descriptor (no spread: error 0) */
static const uint64_t cost_ns[N_DESC] = { 8 * US, 3 * US, 2 * US, 4 * US, 10 * US, 1 * US,
					  1 * US, 1 * US };

static struct manifest *load_manifest(void)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;

	manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d);
	diags__free(d);
	return m;
}

static void rec(struct analysis *a, const struct manifest *m, uint64_t ts, uint32_t tid,
		uint32_t desc, uint64_t inst, uint64_t dur, uint32_t flags)
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
	r.generation = 1;
	r.units = 1;
	r.duration_ns = dur;
	if (r.kind == PB_EV_WAIT)
		r.flags |= PB_RF_SPAN_END;
	analysis__add_record(a, &r.hdr, sizeof(r));
}

static void set_costs(struct analysis *a)
{
	struct trace_cost_class cls[TRACE_COST_CLASSES] = { 0 };
	struct trace_cost_desc d[N_DESC] = { 0 };
	size_t i;

	for (i = 0; i < N_DESC; i++) {
		d[i].descriptor = (uint32_t)i;
		d[i].cost_ns = cost_ns[i];
	}
	analysis__set_probe_cost(a, cls, TRACE_COST_CLASSES, d, N_DESC, true);
}

/* the probe_effect entry of one resource in the report's JSON */
static json_t *fx_of(json_t *doc, const char *res)
{
	json_t *arr = json_object_get(json_object_get(doc, "probe_effect"), "resources"), *x;
	size_t i;

	json_array_foreach(arr, i, x)
		if (!strcmp(json_string_value(json_object_get(x, "resource")), res))
			return x;
	return NULL;
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* 100 rounds on tid 2: a 100 us WAIT on t.conn holding, on the same
 * thread, a 20 us WAIT on t.pool, an ACQUIRE, a USE and a RELEASE of a
 * page; tid 3 uses a page during each span (another thread: not charged)
 * and tid 2 uses one after it (outside: not charged). */
TEST(test_nested_probes_subtracted_from_wait_spans)
{
	struct manifest *m = load_manifest();
	struct analysis *a;
	json_t *doc, *conn, *pool;
	int i;

	ASSERT_NOT_NULL(m);
	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	set_costs(a);
	for (i = 0; i < 100; i++) {
		uint64_t t = T0 + (uint64_t)i * MS, page = 0x100 + (uint64_t)i;

		rec(a, m, t + 30 * US, 2, P_WAIT, 0xaaaa, 20 * US, 0);
		rec(a, m, t + 40 * US, 2, P_GET, page, 0, PB_RF_NEW_GENERATION);
		rec(a, m, t + 45 * US, 3, P_GET, page + 0x1000, 0, PB_RF_NEW_GENERATION);
		rec(a, m, t + 50 * US, 2, P_USE, page, 0, 0);
		rec(a, m, t + 55 * US, 3, P_USE, page + 0x1000, 0, 0);
		rec(a, m, t + 60 * US, 2, P_PUT, page, 20 * US, 0);
		rec(a, m, t + 100 * US, 2, C_WAIT, 0xbbbb, 100 * US, 0);
		rec(a, m, t + 200 * US, 2, P_GET, page + 0x2000, 0, PB_RF_NEW_GENERATION);
		rec(a, m, t + 210 * US, 2, P_USE, page + 0x2000, 0, 0);
		rec(a, m, t + 220 * US, 2, P_PUT, page + 0x2000, 20 * US, 0);
		rec(a, m, t + 300 * US, 3, P_PUT, page + 0x1000, 255 * US, 0);
	}
	analysis__finish(a);
	doc = analysis__to_json(a);
	ASSERT_NOT_NULL(doc);
	conn = fx_of(doc, "t.conn");
	pool = fx_of(doc, "t.pool");
	ASSERT_NOT_NULL(conn);
	ASSERT_NOT_NULL(pool);
	/* t.conn: 100 x 100 us raw; each span loses its own 10 us and the
	 * 8 + 3 + 2 + 4 us of tid 2's nested probes: 100 x 73 us */
	ASSERT_EQ((long long)num(conn, "wait_ns_raw"), (long long)(100 * 100 * US));
	ASSERT_EQ((long long)num(conn, "nested_probes"), 400);
	ASSERT_EQ((long long)num(conn, "nested_probe_ns"), (long long)(100 * 17 * US));
	ASSERT_EQ((long long)num(conn, "wait_ns"), (long long)(100 * 73 * US));
	ASSERT_EQ((long long)num(conn, "probe_ns_per_wait"), (long long)(27 * US));
	/* t.pool: its 20 us WAITs hold nothing of their thread: 20 - 8 us */
	ASSERT_EQ((long long)num(pool, "nested_probes"), 0);
	ASSERT_EQ((long long)num(pool, "wait_ns"), (long long)(100 * 12 * US));
	json_decref(doc);
	analysis__free(a);
	manifest__free(m);
}

/* without span records (a snapshot-only trace) nothing says which probes
 * fired inside a WAIT: the nested count is unknown (null), not 0 */
TEST(test_nested_unknown_without_events)
{
	struct manifest *m = load_manifest();
	struct analysis *a;
	struct pb_desc_stats ds[N_DESC] = { 0 };
	struct pb_res_stats rs[2] = { 0 };
	json_t *doc, *conn;

	ASSERT_NOT_NULL(m);
	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	set_costs(a);
	ds[C_WAIT].hits = ds[C_WAIT].events = 100;
	ds[C_WAIT].total_ns = 100 * 100 * US;
	ds[C_WAIT].hist[16] = 100;
	ASSERT_OK(analysis__add_snapshot(a, T0 + 1000 * MS, ds, N_DESC, rs, 2, NULL));
	analysis__set_window(a, T0, T0 + 1000 * MS);
	analysis__finish(a);
	doc = analysis__to_json(a);
	conn = fx_of(doc, "t.conn");
	ASSERT_NOT_NULL(conn);
	ASSERT_TRUE(json_is_null(json_object_get(conn, "nested_probes")));
	ASSERT_EQ((long long)num(conn, "wait_ns"), (long long)(100 * 90 * US));
	json_decref(doc);
	analysis__free(a);
	manifest__free(m);
}
