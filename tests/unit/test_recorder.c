/* SPDX-License-Identifier: BSD-2-Clause */
/* test_recorder.c: the recorder library (src/record/recorder.h) driven
 * in-process, as `record`, `train` and a daemon call it: the demo
 * recorded for about a second (as root, with BPF), the trace read back
 * and compared with the result the recorder reports; a stop from another
 * thread; and the failures that need no BPF (bad opts, a manifest that
 * does not load).
 */
#include "harness.h"
#include <pthread.h>
#include <time.h>
#include "common/diag.h"
#include "contract/manifest.h"
#include "record/recorder.h"
#include "trace/trace.h"

#include "demo_paths.h"

struct seen {
	unsigned progress;
	unsigned errors;
	uint64_t last_records;
	bool records_went_back;
};

static void on_message(enum pb_log_level level, const char *msg, void *ctx)
{
	struct seen *s = ctx;

	if (level == PB_LOG_ERROR)
		s->errors++;
	fprintf(stderr, "  recorder: %s\n", msg);
}

static void on_progress(const struct recorder_progress *p, void *ctx)
{
	struct seen *s = ctx;

	if (p->records < s->last_records)
		s->records_went_back = true;
	s->last_records = p->records;
	s->progress++;
}

/* What the trace file holds, read back. */
struct readback {
	uint64_t snapshots;
	uint64_t last_events;		/* summed over descriptors, last snapshot */
	uint64_t last_drops;
	bool ended;
	struct trace_end end;
	uint32_t pid;
	uint32_t flags;
};

static int read_back(const char *path, struct readback *rb)
{
	struct trace_reader *r = trace_reader__open(path);
	struct trace_item it;
	uint32_t i;
	int rc;

	memset(rb, 0, sizeof(*rb));
	if (!r)
		return -errno;
	rb->pid = trace_reader__header(r)->pid;
	rb->flags = trace_reader__header(r)->flags;
	while ((rc = trace_reader__next(r, &it)) > 0) {
		if (it.type == TRACE_ITEM_SNAPSHOT) {
			rb->snapshots++;
			rb->last_events = 0;
			for (i = 0; i < it.snap.n_desc; i++)
				rb->last_events += it.snap.desc[i].events;
			rb->last_drops = it.snap.engine.ringbuf_drops;
		} else if (it.type == TRACE_ITEM_END) {
			rb->end = it.end;
		}
	}
	rb->ended = rc == 0 && trace_reader__ended_cleanly(r);
	trace_reader__free(r);
	return rc;
}

static void trace_path(char *buf, size_t sz, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(buf, sz, "%s/probity-test-recorder-%d-%s.trace", tmp && *tmp ? tmp : "/tmp",
		 (int)getpid(), name);
}

TEST(recorder_records_the_demo_and_its_result_matches_the_trace)
{
	char *cmd[] = { demo_bin, "--clients", "2", "--duration", "0", "-q", NULL };
	struct seen seen = { 0 };
	struct recorder_opts o = {
		.manifest = demo_manifest, .cmd = cmd, .cmd_stdout_to_stderr = true,
		.duration_ns = 1000000000ull, .interval_ns = 100000000ull,
		.message = on_message, .progress = on_progress, .ctx = &seen,
	};
	const struct recorder_result *res;
	struct recorder *r;
	struct readback rb;
	char out[4096];
	int err;

	REQUIRE_BPF();
	paths();
	trace_path(out, sizeof(out), "demo");
	o.output = out;
	r = recorder__new(&o);
	ASSERT_TRUE(r != NULL);
	err = recorder__run(r);
	if (err) {
		PB_FAIL("recorder__run: %s (failure %d)", strerror(-err), recorder__failure(r));
		recorder__free(r);
		unlink(out);
		return;
	}
	res = recorder__result(r);
	err = read_back(out, &rb);
	unlink(out);
	ASSERT_EQ(recorder__failure(r), RECORDER_FAILED_NOT);
	ASSERT_EQ(seen.errors, 0);
	ASSERT_EQ(res->stopped_by, TRACE_STOP_DURATION);
	ASSERT_GE(res->duration_ns, 1000000000ull);
	ASSERT_GT(res->events, 0);
	ASSERT_GT(res->bytes, 0);
	/* every snapshot of the loop gave one progress report */
	ASSERT_GE(res->snapshots, 5);
	ASSERT_GE(seen.progress, 3);
	ASSERT_FALSE(seen.records_went_back);
	/* the spawned target was stopped (SIGTERM) and reaped after the end */
	ASSERT_TRUE(res->target_status != -1);
	/* the summary and the trace tell the same story */
	ASSERT_OK(err);
	ASSERT_TRUE(rb.ended);
	ASSERT_EQ(rb.pid, res->pid);
	ASSERT_TRUE(rb.flags & TRACE_F_SPAWNED);
	ASSERT_EQ(rb.snapshots, res->snapshots);
	ASSERT_EQ(rb.end.snapshots, res->snapshots);
	ASSERT_EQ(rb.end.records, res->records);
	ASSERT_EQ(rb.end.stop_reason, TRACE_STOP_DURATION);
	ASSERT_EQ(rb.end.ringbuf_drops, res->engine.ringbuf_drops);
	/* the trace ended while the target still ran; the result has how it
	 * ended after the stop */
	ASSERT_EQ(rb.end.target_status, -1);
	ASSERT_EQ(rb.last_events, res->events);
	ASSERT_EQ(rb.last_drops, res->engine.ringbuf_drops);
	/* a clean demo run: no confidence moved */
	ASSERT_EQ(res->n_confidence, 0);
	ASSERT_FALSE(res->any_stale);
	/* and it runs once */
	ASSERT_ERR(recorder__run(r), -EALREADY);
	recorder__free(r);
}

struct stopper {
	struct recorder *r;
	unsigned ms;
};

static void *stop_later(void *arg)
{
	struct stopper *s = arg;
	struct timespec ts = { s->ms / 1000, (long)(s->ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	recorder__stop(s->r);
	return NULL;
}

/* also: a manifest the caller loaded (as a daemon holding it would) */
TEST(recorder_stops_when_asked_from_another_thread)
{
	char *cmd[] = { demo_bin, "--clients", "1", "--duration", "0", "-q", NULL };
	struct seen seen = { 0 };
	struct recorder_opts o = {
		.cmd = cmd, .cmd_stdout_to_stderr = true,
		.duration_ns = 30000000000ull, .message = on_message, .ctx = &seen,
	};
	struct stopper s = { .ms = 700 };
	struct recorder_result res;
	struct manifest *m = NULL;
	struct diags *d;
	struct readback rb;
	char out[4096];
	pthread_t th;
	int err;

	REQUIRE_BPF();
	paths();
	d = diags__new();
	ASSERT_TRUE(d != NULL);
	err = manifest__load(demo_manifest, &m, d);
	diags__free(d);
	ASSERT_OK(err);
	trace_path(out, sizeof(out), "stop");
	o.output = out;
	o.loaded_manifest = m;
	s.r = recorder__new(&o);
	if (!s.r)
		manifest__free(m);
	ASSERT_TRUE(s.r != NULL);
	ASSERT_OK(pthread_create(&th, NULL, stop_later, &s));
	err = recorder__run(s.r);
	pthread_join(th, NULL);
	res = *recorder__result(s.r);	/* the numbers outlive the recorder */
	if (!err)
		err = read_back(out, &rb);
	unlink(out);
	if (err) {
		PB_FAIL("run or read back: %s", strerror(-err));
		recorder__free(s.r);
		manifest__free(m);
		return;
	}
	recorder__free(s.r);	/* the manifest is the caller's */
	ASSERT_TRUE(m->n_events > 0);
	manifest__free(m);
	ASSERT_EQ(res.stopped_by, TRACE_STOP_SIGNAL);
	ASSERT_TRUE(res.duration_ns < 10000000000ull);
	ASSERT_EQ(rb.end.stop_reason, TRACE_STOP_SIGNAL);
	ASSERT_EQ(rb.end.records, res.records);
}

TEST(recorder_new_refuses_bad_opts)
{
	char *cmd[] = { "/bin/true", NULL };
	struct recorder_opts o = { .manifest = "m.yaml", .output = "x.trace" };

	errno = 0;
	ASSERT_TRUE(recorder__new(&o) == NULL);	/* neither pid nor cmd */
	ASSERT_EQ(errno, EINVAL);
	o.pid = 1;
	o.cmd = cmd;
	errno = 0;
	ASSERT_TRUE(recorder__new(&o) == NULL);	/* both */
	ASSERT_EQ(errno, EINVAL);
	o.pid = 0;
	o.output = NULL;
	ASSERT_TRUE(recorder__new(&o) == NULL);
	ASSERT_TRUE(recorder__new(NULL) == NULL);
	recorder__free(NULL);
	recorder__stop(NULL);
}

TEST(recorder_reports_an_unreadable_manifest_without_attaching)
{
	char *cmd[] = { "/bin/true", NULL };
	struct seen seen = { 0 };
	struct recorder_opts o = {
		.manifest = "/nonexistent/probity-test.yaml", .cmd = cmd,
		.message = on_message, .ctx = &seen,
	};
	struct recorder *r;
	char out[4096];
	int err;

	trace_path(out, sizeof(out), "nomanifest");
	o.output = out;
	r = recorder__new(&o);
	ASSERT_TRUE(r != NULL);
	err = recorder__run(r);
	ASSERT_TRUE(err < 0);
	ASSERT_EQ(recorder__failure(r), RECORDER_FAILED_MANIFEST);
	ASSERT_TRUE(recorder__diags(r) != NULL);
	ASSERT_TRUE(access(out, F_OK) != 0);	/* no trace written */
	recorder__free(r);
}
