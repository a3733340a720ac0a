/* SPDX-License-Identifier: BSD-2-Clause */
/* test_envelope.c: distribution envelopes (src/validate/envelope*.c) on
 * synthetic counters: the training distribution stays inside, a shifted
 * ratio is flagged after ENVELOPE_SUSTAIN windows, a one-window blip is
 * not, key metrics from records, the binding refusals, the JSON round
 * trip and the parser's positioned errors. */
#include "harness.h"
#include "validate/envelope.h"

static const char *const manifest_yaml =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - id: app\n"
	"    binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.pool, class: pool, units: pages, capacity: 16 }\n"
	"  - { name: t.conn, class: connection, units: conns, capacity: 8 }\n"
	"events:\n"
	"  - { id: p_wait, resource: t.pool, kind: WAIT, site: { symbol: pw, at: span }, instance: arg0, confidence: validated }\n"
	"  - { id: p_get, resource: t.pool, kind: ACQUIRE, site: { symbol: pg }, instance: arg0, confidence: validated }\n"
	"  - { id: p_use, resource: t.pool, kind: USE, site: { symbol: pu }, instance: arg0, confidence: validated }\n"
	"  - { id: p_put, resource: t.pool, kind: RELEASE, site: { symbol: pp }, instance: arg0, confidence: validated }\n"
	"  - { id: c_acq, resource: t.conn, kind: ACQUIRE, site: { symbol: ca }, instance: arg0, confidence: validated }\n"
	"  - { id: c_use, resource: t.conn, kind: USE, site: { symbol: cu }, instance: arg0, confidence: validated }\n"
	"  - { id: c_rel, resource: t.conn, kind: RELEASE, site: { symbol: cr }, instance: arg0, confidence: validated }\n";

enum { P_WAIT, P_GET, P_USE, P_PUT, C_ACQ, C_USE, C_REL, N_DESC };

#define SNAP_NS	250000000ull

static struct manifest *load_manifest(void)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;

	manifest__parse("t.yaml", manifest_yaml, strlen(manifest_yaml), &m, d);
	diags__free(d);
	return m;
}

static void binding(const struct manifest *m, struct envelope_binding *b)
{
	memset(b, 0, sizeof(*b));
	memcpy(b->manifest_sha256, m->digest, 32);
	b->n_targets = 1;
	strcpy(b->build_id[0], "0123456789abcdef");
}

/* A workload: per snapshot interval, events of each descriptor, with
 * +-3% deterministic noise; conn_use_ratio scales USE of t.conn. */
struct sim {
	struct pb_desc_stats cum[N_DESC];
	uint64_t ts;
	uint64_t rng;
	double conn_use_ratio;
	bool records;
	bool small_keys;	/* instance keys 1..7 instead of 8-aligned pointers */
	uint64_t units;		/* decoded units in the records (default 1) */
	uint64_t next_key;
};

static double noise(struct sim *s)
{
	s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
	return 0.97 + 0.06 * (double)(s->rng >> 40) / (double)(1ull << 24);
}

static void sim_init(struct sim *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->rng = seed;
	s->conn_use_ratio = 1.0;
	s->ts = 1000000000ull;
	s->next_key = 0x7f0000001000ull;
	s->units = 1;
}

static void add(struct sim *s, int d, uint64_t n)
{
	s->cum[d].hits += n;
	s->cum[d].events += n;
	s->cum[d].units += n;
}

typedef int (*rec_fn)(void *ctx, const void *rec, size_t len);
typedef int (*snap_fn)(void *ctx, uint64_t ts, const struct pb_desc_stats *c, size_t n);

/* one snapshot interval; records (if any) first, as record drains them */
static int sim_step(struct sim *s, void *ctx, rec_fn rf, snap_fn sf)
{
	uint64_t req = (uint64_t)(400 * noise(s)), conn = (uint64_t)(200 * noise(s)), i;
	uint64_t cuse = (uint64_t)((double)conn * s->conn_use_ratio);

	add(s, P_GET, req);
	s->cum[P_GET].new_generations += (uint64_t)((double)req * 0.9);
	add(s, P_USE, req);
	add(s, P_PUT, req);
	s->cum[P_PUT].hist[14] += req;
	add(s, P_WAIT, req / 10);
	s->cum[P_WAIT].hist[17] += req / 10;
	add(s, C_ACQ, conn);
	s->cum[C_ACQ].new_generations += conn;
	add(s, C_USE, cuse);
	add(s, C_REL, conn);
	s->cum[C_REL].hist[18] += conn;
	if (s->records && rf) {
		/* each connection: ACQUIRE, USE (cuse of them), RELEASE */
		for (i = 0; i < conn; i++) {
			struct pb_rec_resource r = { .hdr = { .type = PB_REC_RESOURCE,
				.version = PB_EVENTS_VERSION, .size = sizeof(r) } };

			r.resource = 1;
			r.units = s->units + (i & 1);	/* 1 and 2: log2 buckets 1 and 2 */
			r.instance = s->small_keys ? 1 + i % 7 : s->next_key + 64 * (i % 8);
			r.descriptor = C_ACQ;
			r.kind = PB_EV_ACQUIRE;
			if (rf(ctx, &r, sizeof(r)))
				return -1;
			if (i < cuse) {
				r.descriptor = C_USE;
				r.kind = PB_EV_USE;
				if (rf(ctx, &r, sizeof(r)))
					return -1;
			}
			r.descriptor = C_REL;
			r.kind = PB_EV_RELEASE;
			if (rf(ctx, &r, sizeof(r)))
				return -1;
		}
	}
	s->ts += SNAP_NS;
	return sf(ctx, s->ts, s->cum, N_DESC);
}

static int train_rec(void *ctx, const void *rec, size_t len)
{
	return envelope__record(ctx, rec, len);
}

static int train_snap(void *ctx, uint64_t ts, const struct pb_desc_stats *c, size_t n)
{
	return envelope__snapshot(ctx, ts, c, n);
}

static int check_rec(void *ctx, const void *rec, size_t len)
{
	return envelope_check__record(ctx, rec, len);
}

static int check_snap(void *ctx, uint64_t ts, const struct pb_desc_stats *c, size_t n)
{
	return envelope_check__snapshot(ctx, ts, c, n);
}

/* 3 runs x 4 s of the clean workload */
static struct pb_envelope *train(const struct manifest *m, bool records)
{
	struct envelope_binding b;
	struct pb_envelope *env;
	struct sim s;
	int run, i;

	binding(m, &b);
	env = envelope__new(m, &b);
	if (!env)
		return NULL;
	for (run = 0; run < 3; run++) {
		sim_init(&s, 11 + (uint64_t)run);
		s.records = records;
		envelope__begin_run(env, records);
		for (i = 0; i < 16; i++)
			sim_step(&s, env, train_rec, train_snap);
	}
	if (envelope__finish(env)) {
		envelope__free(env);
		return NULL;
	}
	return env;
}

static const struct envelope_warning *find_warning(const struct envelope_check *chk,
						   const char *metric)
{
	const struct envelope_warning *w;
	size_t n, i;

	w = envelope_check__warnings(chk, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(w[i].metric, metric))
			return &w[i];
	return NULL;
}

TEST(test_training_distribution_stays_inside)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env;
	struct envelope_check *chk;
	struct sim s;
	size_t n;
	int i;

	ASSERT_NOT_NULL(m);
	env = train(m, false);
	ASSERT_NOT_NULL(env);
	ASSERT_EQ(envelope__n_runs(env), 3);
	ASSERT_GE(envelope__n_windows(env), 9);
	ASSERT_GT(envelope__n_metrics(env), 10);
	ASSERT_FALSE(envelope__has_key_metrics(env));
	chk = envelope_check__new(env, m);
	ASSERT_NOT_NULL(chk);
	sim_init(&s, 99);	/* another run of the same workload */
	for (i = 0; i < 40; i++)
		ASSERT_EQ(sim_step(&s, chk, check_rec, check_snap), 0);
	envelope_check__warnings(chk, &n);
	ASSERT_EQ(n, 0);
	ASSERT_GE(envelope_check__windows(chk), 8);
	envelope_check__free(chk);
	envelope__free(env);
	manifest__free(m);
}

TEST(test_shifted_ratio_is_flagged)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, false);
	struct envelope_check *chk;
	const struct envelope_warning *w;
	struct sim s;
	int i, raised = 0;

	ASSERT_NOT_NULL(env);
	chk = envelope_check__new(env, m);
	ASSERT_NOT_NULL(chk);
	sim_init(&s, 5);
	s.conn_use_ratio = 0.1;		/* churn: ACQUIREs without USE */
	/* first window (from the start to 1 s after the first snapshot): outside once, no warning */
	for (i = 0; i < 5; i++)
		raised += sim_step(&s, chk, check_rec, check_snap);
	ASSERT_EQ(envelope_check__windows(chk), 1);
	ASSERT_EQ(raised, 0);
	for (i = 0; i < 4; i++)
		raised += sim_step(&s, chk, check_rec, check_snap);
	ASSERT_EQ(envelope_check__windows(chk), 2);
	ASSERT_GT(raised, 0);
	w = find_warning(chk, "ratio/t.conn/USE:ACQUIRE");
	ASSERT_NOT_NULL(w);
	ASSERT_TRUE(w->value < 0.15 && w->value > 0.05);
	ASSERT_TRUE(w->lo > 0.5 && w->hi < 1.5);
	ASSERT_EQ(w->windows_outside, 2);
	ASSERT_NOT_NULL(strstr(w->text, "weak evidence"));
	/* the pool was not touched */
	ASSERT_NULL(find_warning(chk, "ratio/t.pool/USE:ACQUIRE"));
	ASSERT_NULL(find_warning(chk, "duration_p50_log2/p_put"));
	envelope_check__free(chk);
	envelope__free(env);
	manifest__free(m);
}

TEST(test_one_window_blip_is_not_a_warning)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, false);
	struct envelope_check *chk;
	struct sim s;
	size_t n;
	int i;

	ASSERT_NOT_NULL(env);
	chk = envelope_check__new(env, m);
	ASSERT_NOT_NULL(chk);
	sim_init(&s, 7);
	for (i = 0; i < 9; i++)		/* two clean windows */
		sim_step(&s, chk, check_rec, check_snap);
	s.conn_use_ratio = 0.1;
	for (i = 0; i < 4; i++)		/* one shifted window */
		sim_step(&s, chk, check_rec, check_snap);
	s.conn_use_ratio = 1.0;
	for (i = 0; i < 8; i++)
		sim_step(&s, chk, check_rec, check_snap);
	envelope_check__warnings(chk, &n);
	ASSERT_EQ(n, 0);
	envelope_check__free(chk);
	envelope__free(env);
	manifest__free(m);
}

TEST(test_key_metrics_from_records)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, true);
	struct envelope_check *chk;
	struct sim s;
	int i;

	ASSERT_NOT_NULL(env);
	ASSERT_TRUE(envelope__has_key_metrics(env));
	chk = envelope_check__new(env, m);
	ASSERT_NOT_NULL(chk);
	/* pointers turned into small indexes: alignment and distinct keys shift */
	sim_init(&s, 3);
	s.records = true;
	s.small_keys = true;
	for (i = 0; i < 12; i++)
		sim_step(&s, chk, check_rec, check_snap);
	ASSERT_NOT_NULL(find_warning(chk, "key_aligned8/c_acq"));
	ASSERT_NULL(find_warning(chk, "ratio/t.conn/USE:ACQUIRE"));
	envelope_check__free(chk);
	/* the same keys as in training: nothing */
	chk = envelope_check__new(env, m);
	sim_init(&s, 4);
	s.records = true;
	for (i = 0; i < 12; i++)
		sim_step(&s, chk, check_rec, check_snap);
	ASSERT_NULL(find_warning(chk, "key_aligned8/c_acq"));
	ASSERT_NULL(find_warning(chk, "key_distinct/c_acq"));
	envelope_check__free(chk);
	envelope__free(env);
	manifest__free(m);
}

TEST(test_transition_from_records)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, true);
	struct envelope_check *chk;
	const struct envelope_warning *w;
	struct sim s;
	int i;

	ASSERT_NOT_NULL(env);
	chk = envelope_check__new(env, m);
	ASSERT_NOT_NULL(chk);
	sim_init(&s, 8);
	s.records = true;
	s.conn_use_ratio = 0.1;	/* ACQUIRE now mostly followed by RELEASE */
	for (i = 0; i < 12; i++)
		sim_step(&s, chk, check_rec, check_snap);
	w = find_warning(chk, "transition/t.conn/ACQUIRE>USE");
	ASSERT_NOT_NULL(w);
	ASSERT_TRUE(w->value < 0.15);
	w = find_warning(chk, "transition/t.conn/ACQUIRE>RELEASE");
	ASSERT_NOT_NULL(w);
	ASSERT_TRUE(w->value > 0.85 && w->lo < 0.1);
	envelope_check__free(chk);
	envelope__free(env);
	manifest__free(m);
}

TEST(test_units_distribution_from_records)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, true);
	struct envelope_check *chk;
	const struct envelope_warning *w;
	struct sim s;
	int i;

	ASSERT_NOT_NULL(env);
	chk = envelope_check__new(env, m);
	ASSERT_NOT_NULL(chk);
	sim_init(&s, 9);
	s.records = true;
	s.units = 4096;		/* e.g. bytes where the training saw counts */
	for (i = 0; i < 12; i++)
		sim_step(&s, chk, check_rec, check_snap);
	w = find_warning(chk, "units_p50_log2/c_acq");
	ASSERT_NOT_NULL(w);
	ASSERT_EQ((long long)w->value, 13);	/* [4096, 8192) */
	ASSERT_TRUE(w->hi < 5);
	ASSERT_NULL(find_warning(chk, "transition/t.conn/ACQUIRE>USE"));
	envelope_check__free(chk);
	envelope__free(env);
	manifest__free(m);
}

TEST(test_binding_refusals)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, false);
	struct envelope_binding b;
	struct pb_errtext err = { 0 };

	ASSERT_NOT_NULL(env);
	binding(m, &b);
	ASSERT_OK(envelope__check_binding(env, m, &b, &err));
	b.manifest_sha256[3] ^= 1;
	ASSERT_ERR(envelope__check_binding(env, m, &b, &err), -EINVAL);
	ASSERT_NOT_NULL(strstr(err.msg, "another manifest"));
	binding(m, &b);
	strcpy(b.build_id[0], "0123456789abcdee");
	ASSERT_ERR(envelope__check_binding(env, m, &b, &err), -EINVAL);
	ASSERT_NOT_NULL(strstr(err.msg, "target 'app'"));
	ASSERT_NOT_NULL(strstr(err.msg, "0123456789abcdee"));
	envelope__free(env);
	manifest__free(m);
}

TEST(test_json_round_trip)
{
	struct manifest *m = load_manifest();
	struct pb_envelope *env = train(m, true), *back;
	struct envelope_binding b;
	struct pb_errtext err = { 0 };
	char *text;
	json_t *doc;

	ASSERT_NOT_NULL(env);
	doc = envelope__to_json(env);
	ASSERT_NOT_NULL(doc);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	ASSERT_NOT_NULL(text);
	back = envelope__parse("e.json", text, strlen(text), &err);
	free(text);
	ASSERT_NOT_NULL(back);
	ASSERT_EQ(envelope__n_metrics(back), envelope__n_metrics(env));
	ASSERT_TRUE(envelope__has_key_metrics(back));
	binding(m, &b);
	ASSERT_OK(envelope__check_binding(back, m, &b, &err));
	envelope__free(back);
	envelope__free(env);
	manifest__free(m);
}

static void expect_parse_error(const char *text, const char *want)
{
	struct pb_errtext err = { 0 };
	struct pb_envelope *env = envelope__parse("e.json", text, strlen(text), &err);

	if (env) {
		PB_FAIL("parsed, expected an error with '%s': %s", want, text);
		envelope__free(env);
		return;
	}
	if (errno != EINVAL || !strstr(err.msg, want))
		PB_FAIL("error '%s' (errno %d), expected one with '%s'", err.msg, errno, want);
}

#define HEAD "{\"format\":\"probity-envelope\",\"version\":1,\"manifest\":{\"sha256\":\"" \
	"0000000000000000000000000000000000000000000000000000000000000000\"}," \
	"\"targets\":[{\"id\":\"app\",\"build_id\":\"0123\"}],"

TEST(test_parse_errors)
{
	expect_parse_error("{\"format\": \n  \"probity-envelope\",,}", "e.json:2:");
	expect_parse_error("[]", "expected a JSON object, found an array");
	expect_parse_error("{\"format\":\"other\",\"version\":1}", "format: expected \"probity-envelope\"");
	expect_parse_error("{\"format\":\"probity-envelope\",\"version\":2}", "newer probity");
	expect_parse_error("{\"format\":\"probity-envelope\",\"version\":1,\"manifest\":{\"sha256\":\"zz\"}}",
			   "manifest.sha256: expected 64");
	expect_parse_error(HEAD "\"metrics\":[{\"name\":\"share/x\",\"lo\":2,\"hi\":1}]}",
			   "metrics[0].lo, hi: expected lo <= hi");
	expect_parse_error(HEAD "\"metrics\":[{\"name\":\"bogus/x\",\"lo\":0,\"hi\":1}]}",
			   "metrics[0].name: expected TYPE/WHAT");
	expect_parse_error(HEAD "\"metrics\":[{\"name\":\"share/x\",\"lo\":\"0\",\"hi\":1}]}",
			   "metrics[0].lo: expected a number, found a string");
	expect_parse_error(HEAD "\"metrics\":[{\"name\":\"share/x\",\"lo\":0,\"hi\":1},"
			   "{\"name\":\"share/x\",\"lo\":0,\"hi\":1}]}", "already in metrics[0]");
	expect_parse_error(HEAD "\"metrics\":{}}", "metrics: expected an array");
	expect_parse_error("{\"format\":\"probity-envelope\",\"version\":1,\"manifest\":{\"sha256\":\""
			   "0000000000000000000000000000000000000000000000000000000000000000\"},"
			   "\"targets\":[{\"id\":\"app\",\"build_id\":\"xyz\"}],\"metrics\":[]}",
			   "targets[0].build_id: expected");
	expect_parse_error("{\"format\":\"probity-envelope\",\"version\":1,\"format\":\"x\"}",
			   "duplicate");
}

TEST(test_unknown_metric_is_refused_at_binding)
{
	struct manifest *m = load_manifest();
	struct envelope_binding b;
	struct pb_envelope *env;
	struct pb_errtext err = { 0 };
	char text[1024], sha[65];
	size_t i;

	ASSERT_NOT_NULL(m);
	for (i = 0; i < 32; i++)
		sprintf(sha + 2 * i, "%02x", m->digest[i]);
	snprintf(text, sizeof(text), "{\"format\":\"probity-envelope\",\"version\":1,\"manifest\":"
		 "{\"sha256\":\"%s\"},\"targets\":[{\"id\":\"app\",\"build_id\":\"0123456789abcdef\"}],"
		 "\"metrics\":[{\"name\":\"share/no_such_event\",\"lo\":0,\"hi\":1}]}", sha);
	env = envelope__parse("e.json", text, strlen(text), &err);
	ASSERT_NOT_NULL(env);
	binding(m, &b);
	ASSERT_ERR(envelope__check_binding(env, m, &b, &err), -EINVAL);
	ASSERT_NOT_NULL(strstr(err.msg, "share/no_such_event"));
	ASSERT_NULL(envelope_check__new(env, m));
	envelope__free(env);
	manifest__free(m);
}

TEST(test_too_little_evidence)
{
	struct manifest *m = load_manifest();
	struct envelope_binding b;
	struct pb_envelope *env;
	struct sim s;
	int i;

	ASSERT_NOT_NULL(m);
	binding(m, &b);
	env = envelope__new(m, &b);
	ASSERT_NOT_NULL(env);
	sim_init(&s, 1);
	envelope__begin_run(env, false);
	for (i = 0; i < 6; i++)		/* 1.5 s: one window */
		sim_step(&s, env, train_rec, train_snap);
	ASSERT_ERR(envelope__finish(env), -ENODATA);
	ASSERT_NULL(envelope__to_json(NULL));
	envelope__free(env);
	envelope__free(NULL);
	envelope_check__free(NULL);
	manifest__free(m);
}
