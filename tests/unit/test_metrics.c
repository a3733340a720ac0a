/* SPDX-License-Identifier: BSD-2-Clause */
/* test_metrics.c: src/metrics/ on a synthetic analysis (no BPF): label
 * values escaped, log2 histograms mapped to exact cumulative `le`
 * buckets with +Inf, _sum and _count, gauges absent (not 0) without a
 * snapshot, one-hot descriptor states, lost evidence shown, and the
 * textfile written by rename with no temporary left.
 */
#include <dirent.h>
#include <jansson.h>
#include "harness.h"
#include "analyze/analyze.h"
#include "common/io.h"
#include "metrics/metrics.h"

#define SEC 1000000000ull

static const char *const yaml =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.pool, class: pool, units: pages, capacity: 16 }\n"
	"events:\n"
	"  - { id: p_wait, resource: t.pool, kind: WAIT, site: { symbol: pw, at: span }, instance: arg0, confidence: validated }\n"
	"  - { id: p_get, resource: t.pool, kind: ACQUIRE, site: { symbol: pg }, instance: arg0, confidence: validated }\n"
	"  - { id: p_put, resource: t.pool, kind: RELEASE, site: { symbol: pp }, instance: arg0 }\n";

static struct manifest *load(void)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;

	manifest__parse("t.yaml", yaml, strlen(yaml), &m, d);
	diags__free(d);
	return m;
}

/* NULL when rendering failed */
static char *render(struct analysis *a, const struct metrics_opts *o)
{
	char *buf = NULL;
	size_t len = 0;

	if (metrics__render_buf(a, o, &buf, &len) || strlen(buf) != len) {
		free(buf);
		return NULL;
	}
	return buf;
}

TEST(test_escape_label)
{
	char out[32];

	ASSERT_TRUE(metrics__escape_label("a\"b\\c\nd", out, sizeof(out)));
	ASSERT_STREQ(out, "a\\\"b\\\\c\\nd");
	ASSERT_TRUE(metrics__escape_label("", out, sizeof(out)));
	ASSERT_STREQ(out, "");
	ASSERT_FALSE(metrics__escape_label("0123456789", out, 10));
	ASSERT_TRUE(metrics__escape_label("012345678", out, 10));
}

TEST(test_histogram_buckets_and_gauges)
{
	struct pb_desc_stats ds[3] = { 0 };
	struct pb_res_stats rs = { .live_instances = 5, .outstanding_units = 7 };
	struct pb_engine_stats eng = { .ringbuf_drops = 11, .records = 100 };
	struct metrics_opts o = { .trace_incomplete = true };
	struct manifest *m = load();
	struct analysis *a;
	char *t;

	ASSERT_NOT_NULL(m);
	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	ds[0].events = 6;
	ds[0].hist[0] = 1;	/* [0, 2) ns */
	ds[0].hist[10] = 3;	/* [1024, 2048) ns */
	ds[0].hist[39] = 2;	/* >= 2^39 ns: only +Inf */
	ds[0].total_ns = 1500000000;
	ds[1].events = 9;
	ds[2].events = 4;
	ds[2].hist[20] = 4;
	ds[2].total_ns = 4 * 1500000;
	ds[2].violations[1] = 2;	/* release_not_active */
	ASSERT_OK(analysis__add_snapshot(a, 2 * SEC, ds, 3, &rs, 1, &eng));
	ASSERT_GE(analysis__finish(a), 0);
	t = render(a, &o);
	ASSERT_NOT_NULL(t);
	ASSERT_STRSTR(t, "# TYPE probity_wait_seconds histogram\n");
	ASSERT_STRSTR(t, "probity_events_total{resource=\"t.pool\",descriptor=\"p_get\",kind=\"ACQUIRE\"} 9\n");
	/* bucket 0 ends at 1 ns, bucket 10 at 2047 ns: exact inclusive bounds */
	ASSERT_STRSTR(t, "probity_wait_seconds_bucket{resource=\"t.pool\",le=\"1e-09\"} 1\n");
	ASSERT_STRSTR(t, "probity_wait_seconds_bucket{resource=\"t.pool\",le=\"1.023e-06\"} 1\n");
	ASSERT_STRSTR(t, "probity_wait_seconds_bucket{resource=\"t.pool\",le=\"2.047e-06\"} 4\n");
	ASSERT_STRSTR(t, "probity_wait_seconds_bucket{resource=\"t.pool\",le=\"549.755813887\"} 4\n");
	ASSERT_STRSTR(t, "probity_wait_seconds_bucket{resource=\"t.pool\",le=\"+Inf\"} 6\n");
	ASSERT_STRSTR(t, "probity_wait_seconds_sum{resource=\"t.pool\"} 1.500000000\n");
	ASSERT_STRSTR(t, "probity_wait_seconds_count{resource=\"t.pool\"} 6\n");
	ASSERT_STRSTR(t, "probity_hold_seconds_count{resource=\"t.pool\"} 4\n");
	ASSERT_STRSTR(t, "probity_live_instances{resource=\"t.pool\"} 5\n");
	ASSERT_STRSTR(t, "probity_outstanding_units{resource=\"t.pool\"} 7\n");
	ASSERT_STRSTR(t, "probity_descriptor_state{descriptor=\"p_wait\",state=\"validated\"} 1\n");
	ASSERT_STRSTR(t, "probity_descriptor_state{descriptor=\"p_wait\",state=\"candidate\"} 0\n");
	ASSERT_STRSTR(t, "probity_descriptor_state{descriptor=\"p_put\",state=\"candidate\"} 1\n");
	ASSERT_STRSTR(t, "probity_violations_total{descriptor=\"p_put\",invariant=\"release_not_active\"} 2\n");
	ASSERT_STRSTR(t, "probity_lost_evidence_total{what=\"ringbuf_drops\"} 11\n");
	ASSERT_STRSTR(t, "probity_lost_evidence_total{what=\"trace_cut\"} 1\n");
	free(t);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_no_snapshot_no_gauges)
{
	struct manifest *m = load();
	struct analysis *a;
	char *t;

	ASSERT_NOT_NULL(m);
	a = analysis__new(m, NULL);
	ASSERT_NOT_NULL(a);
	ASSERT_GE(analysis__finish(a), 0);
	t = render(a, NULL);
	ASSERT_NOT_NULL(t);
	ASSERT_STRSTR(t, "# TYPE probity_live_instances gauge\n");
	ASSERT_NULL(strstr(t, "probity_live_instances{"));
	ASSERT_STRSTR(t, "probity_events_total{resource=\"t.pool\",descriptor=\"p_wait\",kind=\"WAIT\"} 0\n");
	ASSERT_STRSTR(t, "probity_lost_evidence_total{what=\"trace_cut\"} 0\n");
	free(t);
	analysis__free(a);
	manifest__free(m);
}

TEST(test_textfile_rename)
{
	char dir[] = "/tmp/pbmetrics.XXXXXX", path[64], *back = NULL;
	struct dirent *de;
	size_t len, n = 0;
	DIR *d;

	ASSERT_NOT_NULL(mkdtemp(dir));
	ASSERT_OK(metrics__write_textfile(dir, "x.prom", "a 1\n", 4));
	ASSERT_OK(metrics__write_textfile(dir, "x.prom", "a 2\n", 4));
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	ASSERT_OK(pb_read_file(path, 0, &back, &len));
	ASSERT_STREQ(back, "a 2\n");
	free(back);
	d = opendir(dir);
	ASSERT_NOT_NULL(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	ASSERT_EQ(n, 1);
	ASSERT_ERR(metrics__write_textfile("/nonexistent/dir", "x.prom", "a", 1), -ENOENT);
	unlink(path);
	rmdir(dir);
}

TEST(test_listen_address_rejected)
{
	ASSERT_NULL(metrics_server__new("localhost"));
	ASSERT_EQ(errno, EINVAL);
	ASSERT_NULL(metrics_server__new("127.0.0.1:99999"));
	ASSERT_EQ(errno, EINVAL);
	ASSERT_NULL(metrics_server__new(":80"));
	ASSERT_EQ(errno, EINVAL);
}
