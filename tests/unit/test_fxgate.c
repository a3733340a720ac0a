/* SPDX-License-Identifier: BSD-2-Clause */
/* test_fxgate.c: the effects gate (engine__set_effects) and the measured
 * program cost (engine__prog_cost), with real BPF on the demo service.
 *
 * The gate test toggles the gate every 2-5 ms from a thread while the demo
 * runs a workload whose cross-layer predictions are judged (slot_wait
 * off_cpu, slot_done wakes_waiter, page_read_miss block_io): no prediction
 * judged across an off period may fail (calls spanning one are unjudged),
 * predictions inside on periods must still be checked, and no invariant
 * may break. Without the epoch checks in the BPF object calls that slept
 * only while the gate was off fail off_cpu (that is how it was checked).
 * The cost tests: held stats count every group's runs; without them, or
 * refused by the kernel (a child without CAP_SYS_ADMIN), -ENOTSUP and a
 * note, never zeros.
 */
#include "harness.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <time.h>
#include <unistd.h>
#include "contract/manifest.h"
#include "contract/plan.h"
#include "engine/engine.h"
#include "validate/confidence.h"

#include "demo_paths.h"

struct gate_run {
	struct manifest *m;
	struct plan *p;
	struct engine *e;
	struct engine_snapshot snap;
	struct confidence *conf;	/* the recorder's controller, fed as record does */
	int status;
	/* the toggling thread */
	pthread_t thr;
	volatile int stop;
	bool detach;			/* also destroy the links while off */
	uint64_t toggles;
	struct engine_prog_cost on_cost, off_cost;	/* effects programs, by gate state */
	bool cost_ok;
};

static void add_delta(struct engine_prog_group *sum, const struct engine_prog_group *now,
		      const struct engine_prog_group *then)
{
	sum->run_ns += now->run_ns - then->run_ns;
	sum->run_cnt += now->run_cnt - then->run_cnt;
}

/* Flip the gate every 2-5 ms (a fixed pseudo-random sequence); the
 * effects programs' run time between flips goes to the on or off sum. */
static void *toggler(void *arg)
{
	struct gate_run *r = arg;
	struct engine_prog_cost prev, cur;
	unsigned seed = 12345;
	bool on = true;

	r->cost_ok = engine__prog_cost(r->e, &prev) == 0;
	while (!r->stop) {
		struct timespec ts = { 0, (long)(2 + rand_r(&seed) % 4) * 1000000L };

		nanosleep(&ts, NULL);
		if (r->cost_ok && engine__prog_cost(r->e, &cur) == 0) {
			add_delta(on ? &r->on_cost.effects : &r->off_cost.effects, &cur.effects,
				  &prev.effects);
			prev = cur;
		}
		on = !on;
		/* as record --budget does between windows: off = the gate,
		 * then the links; on = the links, then the gate */
		if (on && r->detach)
			engine__effects_link(r->e, true);
		if (engine__set_effects(r->e, on) == 0)
			r->toggles++;
		if (!on && r->detach)
			engine__effects_link(r->e, false);
	}
	engine__effects_link(r->e, true);
	engine__set_effects(r->e, true);
	return NULL;
}

static int load_plan(struct gate_run *r, const char *manifest_path, const char *bin)
{
	struct diags *d = diags__new();
	const char *bins[] = { bin };
	struct plan_opts po = { .binaries = bins, .n_binaries = 1 };
	int err = -EINVAL;

	if (d && !manifest__load(manifest_path, &r->m, d))
		err = plan__build(r->m, &po, &r->p, d);
	diags__print(d, stderr);
	diags__free(d);
	return err;
}

/* The confidence controller as `record` starts it (recorder.c
 * start_confidence, a started command: no attach grace). */
static int start_confidence(struct gate_run *r)
{
	struct confidence_opts co = { 0 };
	enum pb_confidence init[PB_MAX_DESCRIPTORS];
	uint32_t ev[PB_MAX_DESCRIPTORS];
	size_t i;

	for (i = 0; i < r->p->n_descriptors && i < PB_MAX_DESCRIPTORS; i++) {
		init[i] = r->p->descriptors[i].confidence;
		ev[i] = (uint32_t)r->p->descriptors[i].event;
	}
	co.manifest = r->m;
	co.desc_event = ev;
	r->conf = confidence__new(r->p->n_descriptors, init, &co);
	return r->conf ? 0 : -errno;
}

static int on_record(const void *rec, size_t len, void *ctx)
{
	struct gate_run *r = ctx;
	const struct pb_rec_hdr *h = rec;

	if (len >= sizeof(*h) && h->type == PB_REC_VIOLATION)
		confidence__sample(r->conf, rec, len);
	return 0;
}

/* A snapshot judged by the controller, as record does every interval. */
static int judge(struct gate_run *r)
{
	int err = engine__snapshot(r->e, &r->snap);

	if (!err)
		confidence__snapshot_res(r->conf, r->snap.ts_ns, r->snap.desc, r->snap.n_desc,
					 r->snap.res, r->snap.n_res);
	return err;
}

/* Fork the demo held on a pipe, attach the engine to it (opts eo), let it
 * run, with the gate toggling when `toggle`, until it exits, judging a
 * snapshot every ~100 ms (5 polls) and at the end. */
static int run_demo(struct gate_run *r, struct engine_opts eo, const char *const *args,
		    bool toggle, bool detach)
{
	int go[2], err;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->detach = detach;
	paths();
	err = load_plan(r, demo_manifest, demo_bin);
	if (!err)
		err = start_confidence(r);
	if (err)
		return err;
	if (pipe(go))
		return -errno;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execv(demo_bin, (char *const *)args);
		_exit(127);
	}
	close(go[0]);
	eo.pid = pid;
	r->e = engine__new(r->p, &eo);
	if (!r->e) {
		err = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]);
		return err;
	}
	if (toggle && pthread_create(&r->thr, NULL, toggler, r)) {
		kill(pid, SIGKILL);
		toggle = false;
	}
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	for (unsigned n = 1; waitpid(pid, &r->status, WNOHANG) != pid; n++) {
		engine__poll(r->e, 20, on_record, r);
		if (n % 5 == 0 && (err = judge(r)))
			break;
	}
	if (toggle) {
		r->stop = 1;
		pthread_join(r->thr, NULL);
	}
	while (engine__poll(r->e, 0, on_record, r) > 0)
		;
	return err ? err : judge(r);
}

static void gate_run__free(struct gate_run *r)
{
	engine__free(r->e);
	confidence__free(r->conf);
	plan__free(r->p);
	manifest__free(r->m);
}

static const struct pb_desc_stats *dstat(const struct gate_run *r, const char *id)
{
	int i = manifest__find_event(r->m, id);

	return i >= 0 && (uint32_t)i < r->snap.n_desc ? &r->snap.desc[i] : NULL;
}

/* A producer waits for a queue slot on almost every push (2 slots, one
 * worker): slot_wait sleeps (off_cpu) and slot_done signals it
 * (wakes_waiter), thousands of times a second. */
static const char *const gate_args[] = { "probity-demo", "--clients", "4", "--workers", "1",
					 "--queue", "2", "--requests", "6000", "--json", "-q",
					 NULL };

TEST(fxgate_rapid_toggles_judge_nothing_across_an_off_period)
{
	static const struct {
		const char *id;
		int fx;
	} pred[] = {
		{ "slot_wait", PB_FX_OFF_CPU_BIT },
		{ "slot_done", PB_FX_WAKES_WAITER_BIT },
		{ "page_read_miss", PB_FX_BLOCK_IO_BIT },
	};
	struct engine_opts eo = { .prog_stats = true };
	uint64_t unjudged = 0, passed_off_cpu = 0, viol = 0;
	size_t n_changes = 0;
	struct gate_run r;
	uint32_t i, k;

	REQUIRE_BPF();
	ASSERT_OK(run_demo(&r, eo, gate_args, true, false));
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	fprintf(stderr, "  %llu toggles, gated off %.0f ms\n", (unsigned long long)r.toggles,
		r.snap.engine.fx_gate_off_ns / 1e6);
	ASSERT_GT(r.toggles, 20);
	ASSERT_EQ(r.snap.engine.fx_gate_toggles, r.toggles + (r.toggles & 1));
	ASSERT_GT(r.snap.engine.fx_gate_off_ns, 0);
	for (i = 0; i < sizeof(pred) / sizeof(pred[0]); i++) {
		const struct pb_desc_stats *d = dstat(&r, pred[i].id);
		int fx = pred[i].fx;

		ASSERT_NOT_NULL(d);
		fprintf(stderr, "  %s: %llu checked, %llu failed, %llu unjudged\n", pred[i].id,
			(unsigned long long)d->pred_checked[fx],
			(unsigned long long)d->pred_failed[fx],
			(unsigned long long)d->pred_unjudged[fx]);
		unjudged += d->pred_unjudged[fx];
		if (fx == PB_FX_OFF_CPU_BIT) {
			passed_off_cpu = d->pred_checked[fx] - d->pred_failed[fx];
			/* the queue wait always sleeps: calls judged across
			 * off periods fail here (1001-1041 of ~2100 without
			 * the epoch checks); at most 1 % allowed: a call the
			 * hypervisor stalled (steal time, no switch away,
			 * docs/validation.md) fails on the ungated engine too */
			ASSERT_TRUE(d->pred_failed[fx] * 100 <= d->pred_checked[fx]);
			ASSERT_GT(d->pred_unjudged[fx], 0);
		} else if (fx == PB_FX_WAKES_WAITER_BIT) {
			/* at most the engine's known rare miss at load (the
			 * ungated engine shows it too, tests/cli/crosslayer.sh:
			 * <= 1 %); a stale sleeper counted across a gap fails
			 * far more of them */
			ASSERT_GT(d->pred_checked[fx], 100);
			ASSERT_TRUE(d->pred_failed[fx] * 100 <= d->pred_checked[fx]);
		} else {
			ASSERT_EQ(d->pred_failed[fx], 0);
		}
	}
	ASSERT_GT(passed_off_cpu, 100);
	ASSERT_GT(unjudged, 0);
	/* no invariant broke, and the controller changed no state */
	for (i = 0; i < r.snap.n_desc; i++)
		for (k = 0; k < PB_INV_SLOTS; k++)
			if (k != PB_INV_PREDICTION_FAILED && r.snap.desc[i].violations[k]) {
				/* which one, for a rare failure's log */
				fprintf(stderr, "  violation: descriptor %s, invariant slot %u: %llu\n",
					i < r.m->n_events ? r.m->events[i].id : "?", k,
					(unsigned long long)r.snap.desc[i].violations[k]);
				viol += r.snap.desc[i].violations[k];
			}
	ASSERT_EQ(viol, 0);
	confidence__changes(r.conf, &n_changes);
	for (i = 0; i < n_changes; i++)
		fprintf(stderr, "  change: %s\n", confidence__reason(r.conf,
			confidence__changes(r.conf, &n_changes)[i].descriptor));
	ASSERT_EQ(n_changes, 0);
	if (r.cost_ok && r.on_cost.effects.run_cnt && r.off_cost.effects.run_cnt)
		fprintf(stderr, "  effects programs: gate on %llu runs, %.0f ns/run; "
			"gate off %llu runs, %.0f ns/run\n",
			(unsigned long long)r.on_cost.effects.run_cnt,
			(double)r.on_cost.effects.run_ns / (double)r.on_cost.effects.run_cnt,
			(unsigned long long)r.off_cost.effects.run_cnt,
			(double)r.off_cost.effects.run_ns / (double)r.off_cost.effects.run_cnt);
	gate_run__free(&r);
}

/* The same toggles with the links destroyed while off and created again
 * (engine__effects_link, as record --budget does between windows): no
 * prediction judged across a detached stretch fails, the on stretches
 * still judge, and detached the programs do not run: the off stretches
 * count only the runs between the gate and the destroy (4 % of the
 * on stretches' here; < 25 % asked: gated but attached they run as
 * often as on, ~100 %). */
TEST(fxgate_detached_links_run_nothing_and_judge_nothing_across)
{
	struct engine_opts eo = { .prog_stats = true };
	const struct pb_desc_stats *d;
	struct gate_run r;
	size_t n_changes = 0;

	REQUIRE_BPF();
	ASSERT_OK(run_demo(&r, eo, gate_args, true, true));
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	ASSERT_GT(r.toggles, 20);
	d = dstat(&r, "slot_wait");
	ASSERT_NOT_NULL(d);
	fprintf(stderr, "  slot_wait off_cpu: %llu checked, %llu failed, %llu unjudged\n",
		(unsigned long long)d->pred_checked[PB_FX_OFF_CPU_BIT],
		(unsigned long long)d->pred_failed[PB_FX_OFF_CPU_BIT],
		(unsigned long long)d->pred_unjudged[PB_FX_OFF_CPU_BIT]);
	/* <= 1 %: steal time, as above */
	ASSERT_TRUE(d->pred_failed[PB_FX_OFF_CPU_BIT] * 100 <= d->pred_checked[PB_FX_OFF_CPU_BIT]);
	ASSERT_GT(d->pred_checked[PB_FX_OFF_CPU_BIT], 100);
	ASSERT_GT(d->pred_unjudged[PB_FX_OFF_CPU_BIT], 0);
	confidence__changes(r.conf, &n_changes);
	ASSERT_EQ(n_changes, 0);
	ASSERT_TRUE(r.cost_ok);
	fprintf(stderr, "  effects programs: attached %llu runs, detached %llu runs\n",
		(unsigned long long)r.on_cost.effects.run_cnt,
		(unsigned long long)r.off_cost.effects.run_cnt);
	ASSERT_GT(r.on_cost.effects.run_cnt, 1000);
	ASSERT_TRUE(r.off_cost.effects.run_cnt * 4 < r.on_cost.effects.run_cnt);
	gate_run__free(&r);
}

static int sysctl_stats(void)
{
	char c = 0;
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1';
}

/* Held stats: every group that ran counts runs and time. Not held (and
 * the sysctl off): -ENOTSUP and zeros, never a measurement of zero. */
TEST(fxgate_prog_cost_counts_runs_or_says_unsupported)
{
	static const char *const args[] = { "probity-demo", "--clients", "2", "--requests",
					    "1500", "--json", "-q", NULL };
	struct engine_opts eo = { .prog_stats = true };
	struct engine_prog_cost c;
	struct gate_run r;
	int err;

	REQUIRE_BPF();
	ASSERT_OK(run_demo(&r, eo, args, false, false));
	ASSERT_OK(engine__prog_cost(r.e, &c));
	fprintf(stderr, "  effects %u progs %llu runs %llu ns; procs %u progs %llu runs; "
		"probes %u progs %llu runs %llu ns; sweeps %u progs %llu runs\n",
		c.effects.n_progs, (unsigned long long)c.effects.run_cnt,
		(unsigned long long)c.effects.run_ns, c.procs.n_progs,
		(unsigned long long)c.procs.run_cnt, c.probes.n_progs,
		(unsigned long long)c.probes.run_cnt, (unsigned long long)c.probes.run_ns,
		c.sweeps.n_progs, (unsigned long long)c.sweeps.run_cnt);
	ASSERT_GT(c.effects.n_progs, 3);
	ASSERT_GT(c.effects.run_cnt, 0);
	ASSERT_GT(c.effects.run_ns, 0);
	ASSERT_GT(c.probes.run_cnt, 0);
	ASSERT_GT(c.probes.run_ns, 0);
	ASSERT_GT(c.sweeps.run_cnt, 0);	/* engine__snapshot ran them */
	ASSERT_EQ(c.sweeps.n_progs, 2);
	gate_run__free(&r);

	/* the same engine without held stats */
	eo.prog_stats = false;
	ASSERT_OK(run_demo(&r, eo, args, false, false));
	err = engine__prog_cost(r.e, &c);
	if (sysctl_stats() == 1) {
		fprintf(stderr, "  kernel.bpf_stats_enabled=1 here: counted without the fd\n");
		ASSERT_OK(err);
	} else {
		ASSERT_EQ(err, -ENOTSUP);
		ASSERT_EQ(c.effects.run_cnt + c.probes.run_cnt + c.sweeps.run_cnt, 0);
	}
	gate_run__free(&r);
}

/* The kernel refuses the stats (bpf_enable_stats needs CAP_SYS_ADMIN; the
 * engine itself does not): the engine still records, says so in a note,
 * and engine__prog_cost returns -ENOTSUP (the sysctl off). In a child
 * without CAP_SYS_ADMIN in its effective set. Exit codes: 0 ok, 77 the
 * engine cannot load without it here, else the failed step. */
static int refused_child(void)
{
	static const char *const args[] = { "probity-demo", "--clients", "2", "--requests",
					    "300", "--json", "-q", NULL };
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cd[2];
	struct engine_opts eo = { .prog_stats = true };
	struct engine_prog_cost c;
	struct gate_run r;
	bool noted = false;
	size_t i;
	int err;

	if (syscall(SYS_capget, &h, cd))
		return 2;
	cd[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	if (syscall(SYS_capset, &h, cd))
		return 3;
	err = run_demo(&r, eo, args, false, false);
	if (err && !r.e)
		return 77;
	if (err)
		return 4;
	for (i = 0; i < engine__n_notes(r.e); i++)
		noted |= strstr(engine__note(r.e, i), "run-time stats refused") != NULL;
	if (!noted)
		return 5;
	err = engine__prog_cost(r.e, &c);
	if (sysctl_stats() != 1 && (err != -ENOTSUP || c.effects.run_cnt || c.probes.run_cnt))
		return 6;
	if (sysctl_stats() == 1 && err)
		return 7;
	gate_run__free(&r);
	return 0;
}

TEST(fxgate_prog_cost_refused_by_the_kernel_is_a_note_and_enotsup)
{
	pid_t pid;
	int st = 0;

	REQUIRE_BPF();
	fflush(NULL);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0)
		_exit(refused_child());
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		if (pb_in_ci()) {
			PB_FAIL("the engine does not load without CAP_SYS_ADMIN here");
			return;
		}
		SKIP("the engine does not load without CAP_SYS_ADMIN here");
	}
	ASSERT_EQ(WEXITSTATUS(st), 0);
}
