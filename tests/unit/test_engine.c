/* SPDX-License-Identifier: BSD-2-Clause */
/* test_engine.c: the resource-event engine attached for real (as root) to
 * the demo service and to the addr_reuse fixture; its in-kernel counts
 * must equal the demo's own ground truth. Also the trace writer/reader
 * without BPF (round trip, cut file). */
#include "harness.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <jansson.h>
#include "common/clock.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "elf/elf_image.h"
#include "engine/engine.h"
#include "trace/trace.h"

#include "demo_paths.h"

/* records collected in --events mode */
struct recs {
	struct pb_rec_resource *res;
	size_t n, cap;
	size_t other;
};

static int collect(const void *rec, size_t len, void *ctx)
{
	const struct pb_rec_hdr *h = rec;
	struct recs *r = ctx;

	if (h->type != PB_REC_RESOURCE || len < sizeof(struct pb_rec_resource)) {
		r->other++;
		return 0;
	}
	if (r->n == r->cap) {
		size_t nc = r->cap ? 2 * r->cap : 1024;
		void *p = realloc(r->res, nc * sizeof(*r->res));

		if (!p)
			return -ENOMEM;
		r->res = p;
		r->cap = nc;
	}
	memcpy(&r->res[r->n++], rec, sizeof(*r->res));
	return 0;
}

struct run {
	struct manifest *m;
	struct plan *p;
	struct engine *e;
	struct engine_snapshot snap;
	struct recs recs;
	json_t *summary;	/* the demo's --json exit summary */
	int status;
};

static void run__free(struct run *r)
{
	engine__free(r->e);
	plan__free(r->p);
	manifest__free(r->m);
	json_decref(r->summary);
	free(r->recs.res);
}

/* record --budget's window state, set on one resource (by name) after the
 * engine attaches and before the target runs: windowed (PB_LOST_WINDOW),
 * and with a window open since then when `open` (run_engine) */
static struct {
	const char *res;
	bool open;
} run_window;

/* Fork a child held on a pipe, attach the engine to its pid, let it exec
 * `bin args`, drain records until it exits, then snapshot. */
static int run_engine(struct run *r, const char *manifest_path, const char *bin,
		      const char *const *args, bool events)
{
	struct engine_opts eo = { .events = events };
	struct diags *d = diags__new();
	int go[2], out[2], err;
	char buf[65536];
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!d || manifest__load(manifest_path, &r->m, d)) {
		diags__print(d, stderr);
		diags__free(d);
		return -EINVAL;
	}
	{
		const char *bins[] = { bin };
		struct plan_opts po = { .binaries = bins, .n_binaries = 1 };

		err = plan__build(r->m, &po, &r->p, d);
	}
	if (err) {
		diags__print(d, stderr);
		diags__free(d);
		return err;
	}
	diags__free(d);
	if (pipe(go) || pipe(out))
		return -errno;
	pid = fork();
	if (pid == 0) {
		char c;
		int null = open("/dev/null", O_WRONLY);

		close(go[1]);
		close(out[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		dup2(out[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execv(bin, (char *const *)args);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	eo.pid = pid;
	r->e = engine__new(r->p, &eo);
	if (!r->e) {
		err = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]);
		close(out[0]);
		return err;
	}
	if (run_window.res) {
		int ri = manifest__find_resource(r->m, run_window.res);

		if (ri < 0 || engine__window_resource(r->e, (uint32_t)ri) ||
		    (run_window.open && engine__window_opened(r->e, (uint32_t)ri, pb_mono_ns()))) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -EINVAL;
		}
	}
	if (write(go[1], "g", 1) != 1)
		return -EIO;
	close(go[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		pid_t w = waitpid(pid, &r->status, WNOHANG);

		engine__poll(r->e, 20, collect, &r->recs);
		while ((n = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
			got += (size_t)n;
		if (w == pid)
			break;
	}
	while ((n = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(out[0]);
	while (engine__poll(r->e, 0, collect, &r->recs) > 0)
		;
	buf[got] = 0;
	r->summary = json_loads(buf, 0, NULL);
	return engine__snapshot(r->e, &r->snap);
}

static long long jint(json_t *root, const char *obj, const char *key)
{
	json_t *o = obj ? json_object_get(root, obj) : root;

	return (long long)json_integer_value(json_object_get(o, key));
}

static int desc_of(const struct manifest *m, const char *id)
{
	return manifest__find_event(m, id);
}

/* --pathology leak: ACQUIRE - RELEASE of pages = leaked_pins, the pages
 * stay live until the demo exits and then end with it (exit_ended,
 * exit_units: docs/record.md "Many processes"), and every other count
 * equals the demo's own counters. */
TEST(engine_counts_equal_demo_truth_under_leak)
{
	const char *args[] = { "probity-demo", "--clients", "2", "--requests", "600",
			       "--pathology", "leak", "--json", "-q", NULL };
	struct run r;
	const struct pb_desc_stats *ds;
	long long leaked, acq, rel;
	int get, put, res;

	REQUIRE_BPF();
	paths();
	ASSERT_OK(run_engine(&r, demo_manifest, demo_bin, args, false));
	ASSERT_NOT_NULL(r.summary);
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	ds = r.snap.desc;
	get = desc_of(r.m, "page_get");
	put = desc_of(r.m, "page_put");
	res = manifest__find_resource(r.m, "demo.pool.page");
	leaked = jint(r.summary, "truth", "leaked_pins");
	acq = (long long)ds[get].events;
	rel = (long long)ds[put].events;
	fprintf(stderr, "  leak: page ACQUIRE %lld RELEASE %lld leaked_pins %lld live %lld\n",
		acq, rel, leaked, (long long)r.snap.res[res].live_instances);
	ASSERT_EQ(leaked, 600 / 50);
	ASSERT_EQ(acq - rel, leaked);
	ASSERT_EQ(acq, jint(r.summary, "bufpool", "gets") - jint(r.summary, "bufpool", "read_errors"));
	ASSERT_EQ(rel, jint(r.summary, "bufpool", "puts"));
	/* the final snapshot follows the exit: its pins ended with it */
	ASSERT_EQ(r.snap.res[res].live_instances, 0);
	ASSERT_GT(r.snap.res[res].exit_ended, 0);
	/* Exact. Two threads pinning one frame at once, or one pinning it
	 * while its last holder releases it, race on the instance entry; the
	 * engine retries the ACQUIRE until the entry settles (engine.bpf.c,
	 * ACQ_TRIES) and counts an unsettled one as lost identity
	 * (instance_map_full), never as a unit: only lost evidence may
	 * leave the gauge off, by at most one unit each. */
	fprintf(stderr, "  leak: outstanding units %lld, reordered %llu, identity lost %llu\n",
		(long long)r.snap.res[res].outstanding_units,
		(unsigned long long)r.snap.engine.reordered,
		(unsigned long long)r.snap.engine.instance_map_full);
	if (!r.snap.engine.instance_map_full) {
		ASSERT_EQ(r.snap.res[res].outstanding_units + r.snap.res[res].exit_units, leaked);
	} else {
		long long diff = (long long)(r.snap.res[res].outstanding_units +
					     r.snap.res[res].exit_units) - leaked;
		long long lost = (long long)r.snap.engine.instance_map_full;

		ASSERT_TRUE(diff >= -lost && diff <= lost);
	}
	ASSERT_EQ(ds[desc_of(r.m, "page_read_miss")].events, jint(r.summary, "bufpool", "misses"));
	ASSERT_EQ(ds[desc_of(r.m, "conn_acquire")].events, jint(r.summary, "connpool", "acquires"));
	ASSERT_EQ(ds[desc_of(r.m, "conn_query")].events, jint(r.summary, "connpool", "queries"));
	ASSERT_EQ(ds[desc_of(r.m, "conn_release")].events, jint(r.summary, "connpool", "releases"));
	ASSERT_EQ(ds[desc_of(r.m, "slot_push")].events, jint(r.summary, "workq", "pushes"));
	ASSERT_EQ(ds[desc_of(r.m, "slot_done")].events, jint(r.summary, "workq", "done"));
	ASSERT_EQ(ds[desc_of(r.m, "page_use")].not_active, 0);
	ASSERT_EQ(ds[desc_of(r.m, "page_put")].not_active, 0);
	ASSERT_EQ(ds[desc_of(r.m, "conn_release")].not_active, 0);
	ASSERT_EQ(r.snap.engine.ringbuf_drops, 0);
	ASSERT_EQ(r.snap.engine.stash_missing, 0);
	run__free(&r);
}

/* tokens_take is a try-acquire guarded by `s32(retval) != 0`: each failed
 * take is a guard rejection, never an ACQUIRE. */
TEST(engine_guard_rejections_equal_failed_takes)
{
	const char *args[] = { "probity-demo", "--clients", "2", "--requests", "300",
			       "--rate", "4000", "--burst", "8", "--json", "-q", NULL };
	const struct pb_desc_stats *ds;
	struct run r;
	long long empty, takes;
	int take;

	REQUIRE_BPF();
	paths();
	ASSERT_OK(run_engine(&r, demo_manifest, demo_bin, args, false));
	ASSERT_NOT_NULL(r.summary);
	ds = r.snap.desc;
	take = desc_of(r.m, "tokens_take");
	empty = jint(r.summary, "tokens", "empty");
	takes = jint(r.summary, "tokens", "takes");
	fprintf(stderr, "  tokens: hits %llu events %llu rejected %llu; demo takes %lld empty %lld\n",
		(unsigned long long)ds[take].hits, (unsigned long long)ds[take].events,
		(unsigned long long)ds[take].guard_rejected, takes, empty);
	ASSERT_GT(empty, 0);
	ASSERT_EQ(ds[take].guard_rejected, empty);
	ASSERT_EQ(ds[take].hits, ds[take].events + ds[take].guard_rejected);
	ASSERT_EQ(ds[desc_of(r.m, "tokens_wait")].events, jint(r.summary, "tokens", "waits"));
	run__free(&r);
}

/* --pathology pool-contention: clients wait for a frame off CPU inside the
 * bufpool_wait_free WAIT span; that time lands on demo.pool.page. */
TEST(engine_off_cpu_joined_to_pool_wait)
{
	const char *args[] = { "probity-demo", "--clients", "4", "--requests", "1500",
			       "--pathology", "pool-contention", "--json", "-q", NULL };
	struct run r;
	double demo_ns, span_ns;
	int res, wait;

	REQUIRE_BPF();
	paths();
	ASSERT_OK(run_engine(&r, demo_manifest, demo_bin, args, false));
	ASSERT_NOT_NULL(r.summary);
	res = manifest__find_resource(r.m, "demo.pool.page");
	wait = desc_of(r.m, "page_wait_free");
	fprintf(stderr, "  pool-contention: demo wait_ms %.1f\n",
		json_real_value(json_object_get(json_object_get(r.summary, "bufpool"), "wait_ms")));
	fprintf(stderr, "  pool-contention: waits %llu (demo %lld), wait %llu ns, off-CPU in wait %llu ns, "
		"holding %llu ns, I/O while holding %llu, wakeups from release %llu\n",
		(unsigned long long)r.snap.desc[wait].events, jint(r.summary, "bufpool", "waits"),
		(unsigned long long)r.snap.desc[wait].total_ns,
		(unsigned long long)r.snap.res[res].off_cpu_wait_ns,
		(unsigned long long)r.snap.res[res].off_cpu_hold_ns,
		(unsigned long long)r.snap.res[res].io_while_holding,
		(unsigned long long)r.snap.res[res].wakeups_from_release);
	ASSERT_EQ(r.snap.desc[wait].events, jint(r.summary, "bufpool", "waits"));
	ASSERT_GT(r.snap.desc[wait].events, 0);
	/* span time agrees with the demo's own clock (within 20%) */
	demo_ns = json_real_value(json_object_get(json_object_get(r.summary, "bufpool"),
						  "wait_ms")) * 1e6;
	ASSERT_GT(r.snap.desc[wait].total_ns, demo_ns * 0.8);
	ASSERT_GT(demo_ns * 1.2, r.snap.desc[wait].total_ns);
	/* off-CPU time inside the resource's WAIT spans cannot exceed them */
	span_ns = r.snap.desc[wait].total_ns + r.snap.desc[desc_of(r.m, "page_read_miss")].total_ns;
	fprintf(stderr, "  pool-contention: WAIT spans on demo.pool.page %.1f ms, off-CPU in them %.1f ms\n",
		span_ns / 1e6, r.snap.res[res].off_cpu_wait_ns / 1e6);
	ASSERT_GE(span_ns, r.snap.res[res].off_cpu_wait_ns);
	ASSERT_GT(r.snap.res[res].off_cpu_wait_ns, 0);
	ASSERT_GT(r.snap.res[res].io_while_holding, 0);
	run__free(&r);
}

/* Run the addr_reuse fixture with `args` under a manifest written for it:
 * ACQUIRE obj_get at the return of `acq_sym` (instance retval, its entry
 * stashed by the plan), RELEASE obj_put at res_release's entry. */
static int run_reuse(struct run *r, const char *acq_sym, const char *const *args)
{
	char bin[4300], dir[] = "/tmp/pb-engine-XXXXXX", path[4200], hex[160];
	struct elf_image *img;
	FILE *f;
	int err = 0;

	snprintf(bin, sizeof(bin), "%s/fixtures/addr_reuse", build_dir());
	if (!realpath(bin, path))
		return -errno;
	snprintf(bin, sizeof(bin), "%s", path);
	img = elf_image__open(bin);
	if (!img)
		return -EINVAL;
	if (elf_image__build_id_hex(img, hex, sizeof(hex)) <= 0)
		err = -EINVAL;
	elf_image__free(img);
	if (err || !mkdtemp(dir))
		return err ? err : -errno;
	snprintf(path, sizeof(path), "%s/reuse.yaml", dir);
	f = fopen(path, "w");
	if (!f) {
		rmdir(dir);
		return -errno;
	}
	fprintf(f,
		"manifest: 1\nname: addr-reuse\n"
		"targets:\n  - id: main\n    binary: %s\n    build_id: \"%s\"\n"
		"resources:\n  - { name: fx.obj, class: pool, units: objects }\n"
		"events:\n"
		"  - id: obj_get\n    resource: fx.obj\n    kind: ACQUIRE\n"
		"    site: { symbol: %s, at: return }\n"
		"    instance: retval\n    units: u32(arg0)\n    returns: value\n    confidence: validated\n"
		"  - id: obj_put\n    resource: fx.obj\n    kind: RELEASE\n"
		"    site: { symbol: res_release, at: entry }\n"
		"    instance: arg0\n    returns: void\n    confidence: validated\n",
		bin, hex, acq_sym);
	fclose(f);
	err = run_engine(r, path, bin, args, true);
	unlink(path);
	rmdir(dir);
	return err;
}

/* One address acquired, released and acquired again: two generations. */
TEST(engine_address_reuse_gets_a_new_generation)
{
	const char *args[] = { "addr_reuse", "3", NULL };
	struct run r;
	uint64_t inst = 0, gens[8];
	size_t i, n_gen = 0, n_acq = 0;

	REQUIRE_BPF();
	ASSERT_OK(run_reuse(&r, "res_acquire", args));
	for (i = 0; i < r.recs.n; i++) {
		const struct pb_rec_resource *e = &r.recs.res[i];

		if (e->kind != PB_EV_ACQUIRE)
			continue;
		n_acq++;
		if (!inst)
			inst = e->instance;
		ASSERT_U64_EQ(e->instance, inst);	/* the same address each time */
		ASSERT_TRUE(e->flags & PB_RF_NEW_GENERATION);
		ASSERT_EQ(e->units, 1);
		if (n_gen < 8)
			gens[n_gen++] = e->generation;
	}
	fprintf(stderr, "  reuse: %zu ACQUIREs of 0x%llx, generations %llu %llu %llu\n", n_acq,
		(unsigned long long)inst, (unsigned long long)(n_gen > 0 ? gens[0] : 0),
		(unsigned long long)(n_gen > 1 ? gens[1] : 0), (unsigned long long)(n_gen > 2 ? gens[2] : 0));
	ASSERT_EQ(n_acq, 3);
	ASSERT_NE(gens[0], gens[1]);
	ASSERT_NE(gens[1], gens[2]);
	ASSERT_NE(gens[0], gens[2]);
	for (i = 0; i < r.recs.n; i++) {
		const struct pb_rec_resource *e = &r.recs.res[i];

		/* each RELEASE closes the generation its ACQUIRE opened */
		if (e->kind == PB_EV_RELEASE && i > 0)
			ASSERT_U64_EQ(e->generation, r.recs.res[i - 1].generation);
	}
	ASSERT_EQ(r.snap.desc[0].new_generations, 3);
	ASSERT_EQ(r.snap.res[0].live_instances, 0);
	run__free(&r);
}

/* The object given back during its acquiring call, whose return probe
 * fires 120 ms later (past PB_REORDER_NS; a thread descheduled that long
 * between publishing an object and returning): the RELEASE, held back,
 * happened after the call's entry, so the ACQUIRE is only observed late
 * and the lifetime already ended. No violation, no live generation; the
 * next round's ACQUIRE of the address is no double acquire. Before the
 * order was decided by the call's entry whatever the delay, each round
 * charged a release_not_active and opened a lifetime never to end. */
TEST(engine_return_probe_late_past_reorder_bound_is_only_reordered)
{
	const char *args[] = { "addr_reuse", "3", "late", NULL };
	struct run r;
	size_t i, n_acq = 0;

	REQUIRE_BPF();
	ASSERT_OK(run_reuse(&r, "res_acquire_late", args));
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	for (i = 0; i < r.recs.n; i++)
		if (r.recs.res[i].kind == PB_EV_ACQUIRE) {
			n_acq++;
			ASSERT_TRUE(r.recs.res[i].flags & PB_RF_REORDERED);
		}
	fprintf(stderr, "  late: %zu ACQUIREs, reordered %llu, not active %llu, "
		"double acquires %llu, live %lld\n", n_acq,
		(unsigned long long)r.snap.engine.reordered,
		(unsigned long long)r.snap.desc[1].not_active,
		(unsigned long long)r.snap.desc[0].violations[PB_INV_DOUBLE_ACQUIRE],
		(long long)r.snap.res[0].live_instances);
	ASSERT_EQ(n_acq, 3);
	ASSERT_U64_EQ(r.snap.engine.reordered, 3);
	ASSERT_U64_EQ(r.snap.desc[0].violations[PB_INV_DOUBLE_ACQUIRE], 0);
	ASSERT_U64_EQ(r.snap.desc[1].violations[PB_INV_RELEASE_NOT_ACTIVE], 0);
	ASSERT_EQ(r.snap.res[0].live_instances, 0);
	run__free(&r);
}

/* Run a mutants.c build (tests/fixtures/validation/) under the clean
 * build's contract (mutants.manifest.yaml, build-id of that binary), then
 * take a second snapshot once every expectation bound (50 ms) has passed:
 * by then each lease is charged, at its late close or by the sweep. */
static int run_mutant(struct run *r, const char *variant)
{
	char bin[4300], real[4200], hex[160], dir[] = "/tmp/pb-mutant-XXXXXX", path[4300];
	const char *args[] = { "mutants", "0.6", NULL };
	struct elf_image *img;
	char *tmpl = NULL, *at;
	size_t len = 0;
	FILE *f;
	int err;

	snprintf(bin, sizeof(bin), "%s/fixtures/mutants_%s", build_dir(), variant);
	if (!realpath(bin, real))
		return -errno;
	img = elf_image__open(real);
	if (!img)
		return -errno;
	err = elf_image__build_id_hex(img, hex, sizeof(hex));
	elf_image__free(img);
	if (err <= 0)
		return -EINVAL;
	f = fopen("tests/fixtures/validation/mutants.manifest.yaml", "r");
	if (!f)
		return -errno;
	tmpl = calloc(1, 65536);
	if (tmpl)
		len = fread(tmpl, 1, 65535, f);
	fclose(f);
	if (!tmpl || !len || !mkdtemp(dir)) {
		free(tmpl);
		return -EIO;
	}
	snprintf(path, sizeof(path), "%s/m.yaml", dir);
	f = fopen(path, "w");
	if (!f) {
		free(tmpl);
		return -errno;
	}
	/* every @BINARY@ and @BUILD_ID@ (the comments name them too) */
	for (at = tmpl; *at;) {
		if (!strncmp(at, "@BINARY@", 8)) {
			fputs(real, f);
			at += 8;
		} else if (!strncmp(at, "@BUILD_ID@", 10)) {
			fputs(hex, f);
			at += 10;
		} else {
			fputc(*at++, f);
		}
	}
	fclose(f);
	free(tmpl);
	err = run_engine(r, path, real, args, false);
	unlink(path);
	rmdir(dir);
	if (err)
		return err;
	usleep(60 * 1000);
	return engine__snapshot(r->e, &r->snap);
}

static uint64_t viol(const struct run *r, const char *id, int inv)
{
	return r->snap.desc[desc_of(r->m, id)].violations[inv];
}

static uint64_t events(const struct run *r, const char *id)
{
	return r->snap.desc[desc_of(r->m, id)].events;
}

/* Invariants 4 and 5 count exactly: every lease of the LATE_CLOSE build
 * misses its 50 ms bound, charged once, at its late close or, for the
 * last ones never closed, by the snapshot sweep; every q_push of the
 * BYTES build (64 "objects" each against a capacity of 16) is over
 * capacity. The clean build breaks neither. */
TEST(engine_expect_timeout_and_over_capacity_are_exact)
{
	struct run r;
	size_t i;
	int k;

	REQUIRE_BPF();
	ASSERT_OK(run_mutant(&r, "clean"));
	ASSERT_GT(events(&r, "lease_open"), 100);
	for (i = 0; i < r.snap.n_desc; i++)
		ASSERT_EQ(r.snap.desc[i].violations[PB_INV_OVER_CAPACITY], 0);
	/* a lease closes microseconds after it opens; a thread descheduled
	 * for 50 ms in between would count, rarely */
	ASSERT_TRUE(viol(&r, "lease_open", PB_INV_EXPECT_TIMEOUT) * 100 < events(&r, "lease_open"));
	run__free(&r);

	ASSERT_OK(run_mutant(&r, "LATE_CLOSE"));
	fprintf(stderr, "  late close: %llu leases, %llu expect_timeout, %llu closes\n",
		(unsigned long long)events(&r, "lease_open"),
		(unsigned long long)viol(&r, "lease_open", PB_INV_EXPECT_TIMEOUT),
		(unsigned long long)events(&r, "lease_close"));
	ASSERT_GT(events(&r, "lease_open"), 100);
	/* the last 200 ms of leases are never closed: only the sweep sees them */
	ASSERT_GT(events(&r, "lease_open"), events(&r, "lease_close") + 50);
	ASSERT_U64_EQ(viol(&r, "lease_open", PB_INV_EXPECT_TIMEOUT), events(&r, "lease_open"));
	for (k = 0; k < PB_INV_SLOTS; k++)
		if (k != PB_INV_EXPECT_TIMEOUT)
			ASSERT_EQ(viol(&r, "lease_open", k), 0);
	ASSERT_EQ(viol(&r, "lease_close", PB_INV_EXPECT_TIMEOUT), 0);
	run__free(&r);

	ASSERT_OK(run_mutant(&r, "BYTES"));
	fprintf(stderr, "  bytes: %llu q_push, %llu over_capacity\n",
		(unsigned long long)events(&r, "q_push"),
		(unsigned long long)viol(&r, "q_push", PB_INV_OVER_CAPACITY));
	ASSERT_GT(events(&r, "q_push"), 100);
	ASSERT_U64_EQ(viol(&r, "q_push", PB_INV_OVER_CAPACITY), events(&r, "q_push"));
	ASSERT_EQ(viol(&r, "q_done", PB_INV_OVER_CAPACITY), 0);
	ASSERT_EQ(viol(&r, "obj_get", PB_INV_OVER_CAPACITY), 0);
	run__free(&r);
}

/* record --budget: an expectation a window edge may have cut is unknown
 * (window_unjudged), never invariant 4; one armed and missed inside an
 * open window is judged. The LATE_CLOSE build misses every lease's 50 ms
 * bound: with fixture.lease windowed and no window open (a close is
 * detaching its probes, or the next window's are still attaching) none is
 * charged and each is counted unjudged; with a window open all along,
 * each is charged as without windows. (cli.budget's rare "expect_timeout
 * of slot_push 16.7 ms from a window edge": a close detaches the USE
 * probe before the RELEASE that ends the lifetime.) */
/* the LATE_CLOSE build with fixture.lease windowed, a window open all
 * along or none; 0 or -errno */
static int late_close_windowed(struct run *r, bool open)
{
	int err;

	run_window.res = "fixture.lease";
	run_window.open = open;
	err = run_mutant(r, "LATE_CLOSE");
	run_window.res = NULL;
	if (!err)
		fprintf(stderr, "  %s: %llu leases, %llu expect_timeout, %llu unjudged\n",
			open ? "window open" : "no window open",
			(unsigned long long)events(r, "lease_open"),
			(unsigned long long)viol(r, "lease_open", PB_INV_EXPECT_TIMEOUT),
			(unsigned long long)r->snap.engine.window_unjudged);
	return err;
}

TEST(engine_expectations_cut_by_a_window_edge_are_unknown)
{
	struct run r;
	uint64_t n;

	REQUIRE_BPF();
	ASSERT_OK(late_close_windowed(&r, false));
	n = events(&r, "lease_open");
	ASSERT_GT(n, 100);
	ASSERT_EQ(viol(&r, "lease_open", PB_INV_EXPECT_TIMEOUT), 0);
	ASSERT_U64_EQ(r.snap.engine.window_unjudged, n);
	run__free(&r);

	ASSERT_OK(late_close_windowed(&r, true));
	n = events(&r, "lease_open");
	ASSERT_GT(n, 100);
	ASSERT_U64_EQ(viol(&r, "lease_open", PB_INV_EXPECT_TIMEOUT), n);
	ASSERT_EQ(r.snap.engine.window_unjudged, 0);
	run__free(&r);
}

/* Two threads pin and unpin one shared frame as fast as they can
 * (tests/fixtures/validation/sharedpin.c): ACQUIREs race with the RELEASE
 * that ends the generation and with each other's insert of an untracked
 * frame. Each must join or open a generation, never be lost: units and
 * live generations end at 0, no USE/RELEASE is "not active". Before the
 * ACQUIRE retry (engine.bpf.c, ACQ_TRIES) a hold added to an entry being
 * deleted, or a failed concurrent insert counted as opened, left the
 * gauge off by one per race. */
TEST(engine_shared_pins_race_exactly)
{
	char bin[4300], dir[] = "/tmp/pb-pin-XXXXXX", path[4200], hex[160];
	const char *args[] = { "sharedpin", "20000", NULL };
	struct elf_image *img;
	uint64_t lost;
	struct run r;
	FILE *f;
	int k;

	REQUIRE_BPF();
	snprintf(bin, sizeof(bin), "%s/fixtures/sharedpin", build_dir());
	ASSERT_NOT_NULL(realpath(bin, path));
	snprintf(bin, sizeof(bin), "%s", path);
	img = elf_image__open(bin);
	ASSERT_NOT_NULL(img);
	ASSERT_GT(elf_image__build_id_hex(img, hex, sizeof(hex)), 0);
	elf_image__free(img);
	ASSERT_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pin.yaml", dir);
	f = fopen(path, "w");
	ASSERT_NOT_NULL(f);
	fprintf(f,
		"manifest: 1\nname: sharedpin\n"
		"targets:\n  - id: main\n    binary: %s\n    build_id: \"%s\"\n"
		"resources:\n  - { name: fx.frame, class: pool, units: pins, capacity: 1, shared: true }\n"
		"events:\n"
		"  - id: pin\n    resource: fx.frame\n    kind: ACQUIRE\n"
		"    site: { symbol: frame_pin, at: return }\n"
		"    instance: retval\n    returns: value\n    confidence: validated\n"
		"  - id: unpin\n    resource: fx.frame\n    kind: RELEASE\n"
		"    site: { symbol: frame_unpin, at: entry }\n"
		"    instance: arg0\n    returns: void\n    confidence: validated\n",
		bin, hex);
	fclose(f);
	ASSERT_OK(run_engine(&r, path, bin, args, false));
	unlink(path);
	rmdir(dir);
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	fprintf(stderr, "  pins: %llu ACQUIRE (%llu joined), %llu RELEASE, units %lld, live %lld, "
		"not active %llu, lost %llu, reordered %llu\n",
		(unsigned long long)r.snap.desc[0].events,
		(unsigned long long)(r.snap.desc[0].events - r.snap.desc[0].new_generations),
		(unsigned long long)r.snap.desc[1].events,
		(long long)r.snap.res[0].outstanding_units, (long long)r.snap.res[0].live_instances,
		(unsigned long long)r.snap.desc[1].not_active,
		(unsigned long long)r.snap.engine.instance_map_full,
		(unsigned long long)r.snap.engine.reordered);
	ASSERT_EQ(r.snap.desc[0].events, 40000);
	ASSERT_EQ(r.snap.desc[1].events, 40000);
	lost = r.snap.engine.instance_map_full;
	if (!lost) {
		/* the races settled: exact */
		ASSERT_EQ(r.snap.desc[1].not_active, 0);
		ASSERT_EQ(r.snap.res[0].outstanding_units, 0);
		ASSERT_EQ(r.snap.res[0].live_instances, 0);
		/* capacity 1 pin-frame: a shared hold takes nothing more */
		for (k = 0; k < PB_INV_SLOTS; k++) {
			ASSERT_EQ(r.snap.desc[0].violations[k], 0);
			ASSERT_EQ(r.snap.desc[1].violations[k], 0);
		}
	} else {
		/* A RELEASE preempted between ending the generation and deleting
		 * it for longer than the bounded settle wait (a loaded machine):
		 * the racing ACQUIRE is counted as lost evidence, never as a
		 * unit, and the RELEASE of that lost hold finds nothing active.
		 * On a key this hot that starts a chain (docs/validation.md,
		 * "Concurrent ACQUIREs"): the held-back RELEASE swallows the
		 * next ACQUIRE as reordered, whose RELEASE is held back again,
		 * until the key rests 50 ms. The chain is counted (reordered),
		 * the gauges end exact up to the lost holds, and almost nothing
		 * is charged as a violation. */
		fprintf(stderr, "  note: %llu ACQUIREs did not settle (lost evidence)\n",
			(unsigned long long)lost);
		ASSERT_TRUE(lost <= 40);
		ASSERT_TRUE(r.snap.res[0].outstanding_units >= 0 &&
			    r.snap.res[0].outstanding_units <= (int64_t)lost);
		ASSERT_TRUE(r.snap.res[0].live_instances >= 0 &&
			    r.snap.res[0].live_instances <= (int64_t)lost);
		ASSERT_TRUE(r.snap.desc[1].not_active <= r.snap.engine.reordered + 40 * lost);
		for (k = 0; k < PB_INV_SLOTS; k++) {
			if (k == PB_INV_RELEASE_NOT_ACTIVE)
				continue;
			ASSERT_EQ(r.snap.desc[0].violations[k], 0);
			ASSERT_EQ(r.snap.desc[1].violations[k], 0);
		}
		ASSERT_TRUE(r.snap.desc[1].violations[PB_INV_RELEASE_NOT_ACTIVE] <= 40 * lost);
	}
	run__free(&r);
}

/* ---- trace file (no BPF) ---- */

static void write_trace(const char *path, bool end, size_t n_recs)
{
	struct trace_header h = { .clock_id = CLOCK_MONOTONIC, .pid = 42, .n_targets = 1 };
	struct pb_desc_stats desc[2] = { { .hits = 5, .events = 4 }, { .hits = 7 } };
	struct pb_res_stats res[1] = { { .live_instances = 3 } };
	struct trace_snapshot s = { .ts_ns = 1000, .n_desc = 2, .n_res = 1, .desc = desc,
				    .res = res };
	struct manifest mf = { .n_resources = 1 };
	struct plan_descriptor pd[2] = { { .event = 0 }, { .event = 1 } };
	struct plan_site ps[1] = { { .descriptor = 1, .retprobe = true, .cookie = 1 | PLAN_COOKIE_RETURN } };
	struct plan p = { .manifest = &mf, .descriptors = pd, .n_descriptors = 2, .sites = ps,
			  .n_sites = 1 };
	struct trace_end e = { .records = n_recs, .stop_reason = TRACE_STOP_DURATION };
	struct trace_writer *w = trace_writer__create(path, &h);
	size_t i;

	if (!w)
		return;
	trace_writer__manifest(w, "manifest: 1\n", 12);
	trace_writer__plan(w, &p);
	for (i = 0; i < n_recs; i++) {
		struct pb_rec_resource r = { .hdr = { .type = PB_REC_RESOURCE,
			.size = sizeof(r), .ts_ns = i }, .instance = i };

		trace_writer__record(w, &r, sizeof(r));
		if (i % 1000 == 999)
			trace_writer__flush(w);
	}
	trace_writer__snapshot(w, &s);
	trace_writer__note(w, "hello");
	if (end)
		trace_writer__end(w, &e);
	trace_writer__close(w);
}

static void count_items(struct trace_reader *r, size_t *recs, size_t *snaps, size_t *notes)
{
	struct trace_item it;

	*recs = *snaps = *notes = 0;
	while (trace_reader__next(r, &it) == 1) {
		if (it.type == TRACE_ITEM_RECORD)
			(*recs)++;
		else if (it.type == TRACE_ITEM_SNAPSHOT)
			(*snaps)++;
		else if (it.type == TRACE_ITEM_NOTE)
			(*notes)++;
	}
}

TEST(trace_round_trip_and_mode_0600)
{
	char path[] = "/tmp/pb-trace-XXXXXX";
	struct trace_reader *r;
	struct trace_item it;
	const void *mb;
	size_t n, recs, snaps, notes;
	struct stat st;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	unlink(path);
	write_trace(path, true, 2500);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	r = trace_reader__open(path);
	ASSERT_NOT_NULL(r);
	ASSERT_EQ(trace_reader__header(r)->pid, 42);
	mb = trace_reader__manifest(r, &n);
	ASSERT_EQ(n, 12);
	ASSERT_TRUE(!memcmp(mb, "manifest: 1\n", 12));
	trace_reader__descriptors(r, &n);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(trace_reader__sites(r, &n)[0].flags, TRACE_SITE_RETURN);
	count_items(r, &recs, &snaps, &notes);
	ASSERT_EQ(recs, 2500);
	ASSERT_EQ(snaps, 1);
	ASSERT_EQ(notes, 1);
	ASSERT_TRUE(trace_reader__ended_cleanly(r));
	ASSERT_NULL(trace_reader__cut_reason(r));
	ASSERT_OK(trace_reader__rewind(r));
	while (trace_reader__next(r, &it) == 1 && it.type != TRACE_ITEM_SNAPSHOT)
		;
	ASSERT_EQ(it.snap.desc[0].events, 4);
	ASSERT_EQ(it.snap.res[0].live_instances, 3);
	trace_reader__free(r);
	unlink(path);
}

/* A file cut in the middle of a chunk reads up to the last whole chunk. */
TEST(trace_cut_file_reads_up_to_last_chunk)
{
	char path[] = "/tmp/pb-trace-XXXXXX";
	struct trace_reader *r;
	size_t recs, snaps, notes;
	struct stat st;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	write_trace(path, false, 2500);
	ASSERT_OK(stat(path, &st));
	ASSERT_OK(truncate(path, st.st_size - 10));	/* tear the note chunk */
	r = trace_reader__open(path);
	ASSERT_NOT_NULL(r);
	count_items(r, &recs, &snaps, &notes);
	ASSERT_EQ(recs, 2500);
	ASSERT_EQ(snaps, 1);
	ASSERT_EQ(notes, 0);
	ASSERT_FALSE(trace_reader__ended_cleanly(r));
	ASSERT_NOT_NULL(trace_reader__cut_reason(r));
	trace_reader__free(r);
	unlink(path);
}

/* `probity record` killed with SIGKILL mid-run: the trace reads up to its
 * last complete chunk (snapshots and records), is marked cut, and is 0600. */
TEST(record_killed_with_sigkill_leaves_a_readable_trace)
{
	char probity[4096], trace[] = "/tmp/pb-kill-XXXXXX", path[64];
	struct trace_reader *r;
	size_t recs, snaps, notes;
	struct stat st;
	int fd, status, i;
	pid_t pid;

	REQUIRE_BPF();
	paths();
	snprintf(probity, sizeof(probity), "%s/probity", build_dir());
	if (access(probity, X_OK))
		SKIP("probity binary not built");
	fd = mkstemp(trace);
	ASSERT_GE(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s", trace);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(probity, "probity", "record", "-m", demo_manifest, "-o", path, "--events",
		      "--interval", "100", "--", demo_bin, "--clients", "2", "--duration", "5",
		      "-q", (char *)NULL);
		_exit(127);
	}
	ASSERT_GT(pid, 0);
	/* kill once 3 snapshots are on disk (a slow start, e.g. under ASan,
	 * must not fail the test), at most 4 s in */
	for (i = 0; i < 40; i++) {
		usleep(100 * 1000);
		r = trace_reader__open(path);
		if (!r)
			continue;
		count_items(r, &recs, &snaps, &notes);
		trace_reader__free(r);
		if (snaps >= 3 && i >= 9)
			break;
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	r = trace_reader__open(path);
	ASSERT_NOT_NULL(r);
	count_items(r, &recs, &snaps, &notes);
	fprintf(stderr, "  SIGKILL: %zu records, %zu snapshots readable; cut: %s\n", recs, snaps,
		trace_reader__cut_reason(r) ? trace_reader__cut_reason(r) : "(none)");
	ASSERT_FALSE(trace_reader__ended_cleanly(r));
	ASSERT_NOT_NULL(trace_reader__cut_reason(r));
	ASSERT_GT(snaps, 2);
	ASSERT_GT(recs, 0);
	trace_reader__free(r);
	unlink(path);
	usleep((unsigned)(45 - i) * 100 * 1000 + 500 * 1000);	/* the orphaned demo ends itself (--duration 5) */
}

/* docs/examples/postgres-lwlock.yaml on the LWLock stand-in: two
 * descriptors on one function (a span and an `at: return` ACQUIRE with its
 * entry stash), a u8(retval) guard, and a USDT WAIT through bpf_usdt_arg. */
TEST(engine_postgres_example_on_lwlock_standin)
{
	char fixture[4096], bid[160], path[] = "/tmp/pb-lwlock-XXXXXX", *text, *pos;
	const char *args[] = { "fake_lwlock", "many", NULL };
	const struct pb_desc_stats *ds;
	struct elf_image *img;
	struct run r;
	FILE *f;
	long n;
	int fd;

	REQUIRE_BPF();
	snprintf(fixture, sizeof(fixture), "%s/fixtures/fake_lwlock", build_dir());
	img = elf_image__open(fixture);
	ASSERT_NOT_NULL(img);
	elf_image__build_id_hex(img, bid, sizeof(bid));
	elf_image__free(img);
	f = fopen("docs/examples/postgres-lwlock.yaml", "rb");
	ASSERT_NOT_NULL(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, n + 1);
	ASSERT_NOT_NULL(text);
	ASSERT_EQ(fread(text, 1, n, f), n);
	fclose(f);
	pos = strstr(text, "build_id: 44c007cfee140e4c25e8a434008096828e70a92c");
	ASSERT_NOT_NULL(pos);
	ASSERT_EQ(strlen(bid), 40);
	memcpy(pos + strlen("build_id: "), bid, 40);
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, text, n), n);
	close(fd);
	free(text);
	ASSERT_OK(run_engine(&r, path, fixture, args, true));
	unlink(path);
	ds = r.snap.desc;
	/* 1000 iterations: cond acquire (succeeds) + release, two acquires
	 * (the second always takes the wait path), two releases */
	ASSERT_EQ(ds[desc_of(r.m, "lwlock_wait")].events, 2000);
	ASSERT_EQ(ds[desc_of(r.m, "lwlock_acquire")].events, 2000);
	ASSERT_EQ(ds[desc_of(r.m, "lwlock_cond_acquire")].events, 1000);
	ASSERT_EQ(ds[desc_of(r.m, "lwlock_cond_acquire")].guard_rejected, 0);
	ASSERT_EQ(ds[desc_of(r.m, "lwlock_release")].events, 3000);
	ASSERT_EQ(ds[desc_of(r.m, "lwlock_wait_start")].events, 1000);
	ASSERT_EQ(r.snap.engine.stash_missing, 0);
	ASSERT_EQ(r.snap.engine.ringbuf_drops, 0);
	run__free(&r);
}
