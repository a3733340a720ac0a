/* SPDX-License-Identifier: BSD-2-Clause */
/* recorder.c: one recording (recorder.h). Flow of recorder__run: plan ->
 * envelope -> spawn (held) -> engine -> trace header -> confidence ->
 * release the target -> poll/snapshot loop -> end chunk -> stop the
 * target; each stage is one function below.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "common/clock.h"
#include "common/diag.h"
#include "common/io.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "record/envelope_watch.h"
#include "record/recorder_int.h"
#include "validate/confidence.h"

#define POLL_MS			50

void recorder_say(recorder_message_fn msg, void *ctx, enum pb_log_level level,
		  const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (msg)
		msg(level, text, ctx);
	else
		pb_log(level, "%s\n", text);
}

#define say(r, level, fmt, ...) recorder_say((r)->o.message, (r)->o.ctx, level, fmt, ##__VA_ARGS__)

struct recorder *recorder__new(const struct recorder_opts *opts)
{
	struct recorder *r;

	if (!opts || (!opts->manifest && !opts->loaded_manifest) || !opts->output ||
	    ((opts->pid || opts->n_pids) && opts->cmd) ||
	    (!opts->pid && !opts->n_pids && !opts->cmd && !opts->all && !opts->cgroup) ||
	    (opts->cmd && !opts->cmd[0]) || opts->n_binaries > RECORDER_MAX_BINARIES) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *opts;
	r->interval_ns = opts->interval_ns ? opts->interval_ns :
			 RECORDER_DEFAULT_INTERVAL_MS * 1000000ull;
	r->go_fd = -1;
	r->exec_fd = -1;
	r->live_fd = -1;
	atomic_init(&r->stop, 0);
	return r;
}

void recorder__stop(struct recorder *r)
{
	if (r)
		atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
}

/* Load the manifest and build the plan exactly as `probity plan` does. */
static int build_plan(struct recorder *r)
{
	struct plan_opts po = { .binaries = (const char **)r->o.binaries,
				.n_binaries = r->o.n_binaries, .pid = r->o.pid,
				.rebind = r->o.rebind };
	int err;

	r->diags = diags__new();
	if (!r->diags)
		return -ENOMEM;
	if (r->o.loaded_manifest) {
		r->m = r->o.loaded_manifest;
	} else {
		err = manifest__load(r->o.manifest, &r->own_m, r->diags);
		if (err) {
			r->failure = RECORDER_FAILED_MANIFEST;
			return err;
		}
		r->m = r->own_m;
	}
	err = plan__build(r->m, &po, &r->p, r->diags);
	if (!r->p) {
		r->failure = RECORDER_FAILED_PLAN;
		return err ? err : -EINVAL;
	}
	if (r->p->n_refused) {
		r->failure = RECORDER_FAILED_REFUSED;
		return -EPERM;
	}
	return 0;
}

/* Bound to this manifest and build: refused before attaching. */
static int open_envelope(struct recorder *r)
{
	if (!r->o.envelope)
		return 0;
	r->env = envelope_watch__new(r->o.envelope, r->p, r->o.message, r->o.ctx);
	if (!r->env) {
		if (errno == EINVAL)
			r->failure = RECORDER_FAILED_INPUT;
		return -errno;
	}
	return 0;
}

/* Fork CMD held on a pipe: it execs only when start_child() writes. The
 * pid stays the same across exec, so the pid-filtered links see it. A
 * failed exec sends its errno on a close-on-exec pipe (reported when the
 * child is reaped). */
static int spawn_child(struct recorder *r)
{
	int go[2], ex[2] = { -1, -1 }, err;
	pid_t pid;

	if (!r->o.cmd)
		return 0;
	if (pipe2(go, O_CLOEXEC))
		goto fail;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		goto fail;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);	/* recorder gave up before attaching */
		if (r->o.cmd_stdout_to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(r->o.cmd[0], r->o.cmd);
		err = errno;
		if (write(ex[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->exec_fd = ex[0];
	return 0;
fail:
	err = -errno;
	say(r, PB_LOG_ERROR, "cannot start '%s': %s", r->o.cmd[0], strerror(-err));
	return err;
}

static int start_child(struct recorder *r)
{
	int err = 0;

	if (!r->child)
		return 0;
	if (write(r->go_fd, "g", 1) != 1)
		err = -errno;
	close(r->go_fd);
	r->go_fd = -1;
	if (err)
		say(r, PB_LOG_ERROR, "cannot start the target");
	return err;
}

/* The child is reaped: did its exec fail? */
static void child_reaped(struct recorder *r)
{
	int err;

	r->child_reaped = true;
	if (r->exec_fd < 0)
		return;
	if (read(r->exec_fd, &err, sizeof(err)) == (ssize_t)sizeof(err))
		say(r, PB_LOG_WARN, "cannot run '%s': %s", r->o.cmd[0], strerror(err));
	close(r->exec_fd);
	r->exec_fd = -1;
}

static void stop_child(struct recorder *r)
{
	int i;

	if (!r->child || r->child_reaped)
		return;
	if (r->go_fd >= 0) {	/* never started: closing the pipe ends it */
		close(r->go_fd);
		r->go_fd = -1;
	} else {
		kill(r->child, SIGTERM);
	}
	for (i = 0; i < 50; i++) {
		if (waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
			child_reaped(r);
			return;
		}
		usleep(100 * 1000);
	}
	kill(r->child, SIGKILL);
	waitpid(r->child, &r->child_status, 0);
	child_reaped(r);
}

static int load_engine(struct recorder *r)
{
	struct engine_opts eo = { 0 };

	eo.pid = r->child ? r->child : r->o.pid;
	eo.pids = r->o.pids;
	eo.n_pids = r->o.n_pids;
	eo.all = r->o.all;
	eo.cgroup = r->o.cgroup;
	eo.follow_forks = r->child != 0 || r->o.follow_forks;	/* -- CMD: descendants too */
	eo.max_instances = recorder_instance_entries(r->m, r->o.max_instances);
	eo.events = r->o.events;
	eo.ringbuf_bytes = r->o.ringbuf_bytes;
	eo.stacks_per_sec = r->o.stacks_per_sec;
	eo.split_links = r->o.budget > 0;	/* the governor detaches per descriptor */
	eo.prog_stats = r->o.budget > 0;	/* the governor measures the programs */
	/* under a budget the map-walking sweeps run once a second (the
	 * recorder's CPU is beside the target's) */
	eo.sweep_every_ns = r->o.budget > 0 ? 1000000000ull : 0;
	r->e = engine__new(r->p, &eo);
	if (!r->e) {
		int err = -errno;

		say(r, PB_LOG_ERROR, "cannot load or attach the BPF engine: %s%s", strerror(-err),
		    err == -EPERM ? " (run as root)" : "");
		return err;
	}
	engine__memory(r->e, &r->mem);
	if (!r->o.all && !r->o.cgroup && !eo.follow_forks)
		recorder_fork_hint(r);
	return 0;
}

static int hex_to_bytes(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	while (hex[0] && hex[1] && n < max && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		hex += 2;
	}
	return (int)n;
}

static void fill_header(const struct recorder *r, struct trace_header *h)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	memcpy(h->manifest_sha256, r->m->digest, sizeof(h->manifest_sha256));
	h->clock_id = CLOCK_MONOTONIC;
	h->pid = (uint32_t)(r->child ? r->child : r->o.pid);
	h->start_mono_ns = pb_mono_ns();
	h->start_real_ns = pb_realtime_ns();
	h->flags = (r->o.events ? TRACE_F_EVENTS : 0) | (r->child ? TRACE_F_SPAWNED : 0) |
		   (r->child || r->o.all || r->o.cgroup || r->o.n_pids ? TRACE_F_MULTI : 0);
	h->events_version = PB_EVENTS_VERSION;
	for (i = 0; i < r->p->n_targets && i < TRACE_MAX_TARGETS; i++) {
		const struct plan_target *t = &r->p->targets[i];

		h->build_ids[i].len = (uint32_t)hex_to_bytes(t->build_id_found, h->build_ids[i].id,
							     sizeof(h->build_ids[i].id));
	}
	h->n_targets = (uint32_t)i;
}

/* Header, manifest, plan and the engine's notes. */
static int open_trace(struct recorder *r)
{
	struct trace_header h;
	char *mbuf = NULL;
	size_t mlen = 0, i;
	int err;

	fill_header(r, &h);
	r->start_ns = h.start_mono_ns;
	err = pb_read_file(r->m->path, 0, &mbuf, &mlen);
	if (err) {
		say(r, PB_LOG_ERROR, "cannot re-read manifest %s: %s", r->m->path, strerror(-err));
		goto out;
	}
	unlink(r->o.output);	/* a fresh file, created 0600 */
	r->w = trace_writer__create(r->o.output, &h);
	if (!r->w) {
		err = -errno;
		say(r, PB_LOG_ERROR, "cannot create trace file %s: %s", r->o.output, strerror(-err));
		goto out;
	}
	r->live_fd = trace_live__hold(r->o.output);	/* 'health' sees it in progress */
	if (r->live_fd < 0)
		say(r, PB_LOG_WARN, "cannot lock %s for live readers: %s", r->o.output,
		    strerror(-r->live_fd));
	err = trace_writer__manifest(r->w, mbuf, mlen);
	if (!err)
		err = trace_writer__plan(r->w, r->p);
	for (i = 0; !err && i < engine__n_notes(r->e); i++)
		err = trace_writer__note(r->w, engine__note(r->e, i));
	if (!err)
		err = recorder_cost_write(r, false);
	if (err) {
		say(r, PB_LOG_ERROR, "cannot write trace file %s: %s", r->o.output, strerror(-err));
		/* no evidence in it yet: leave no half-written trace behind */
		trace_writer__close(r->w);
		r->w = NULL;
		unlink(r->o.output);
	}
out:
	free(mbuf);
	return err;
}

static int start_confidence(struct recorder *r)
{
	struct confidence_opts co = { 0 };
	enum pb_confidence *init = calloc(r->p->n_descriptors + 1, sizeof(*init));
	uint32_t *ev = calloc(r->p->n_descriptors + 1, sizeof(*ev));
	int err = 0;
	size_t i;

	if (!init || !ev) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->p->n_descriptors; i++) {
		init[i] = r->p->descriptors[i].confidence;
		ev[i] = (uint32_t)r->p->descriptors[i].event;
	}
	co.manifest = r->m;	/* the leak hypothesis */
	co.desc_event = ev;
	if (!r->child)	/* instances may predate the attach (report uses the same) */
		co.grace_ns = CONFIDENCE_ATTACH_GRACE_NS;
	r->conf = confidence__new(r->p->n_descriptors, init, &co);
	if (!r->conf)
		err = -errno;
out:
	if (err)
		say(r, PB_LOG_ERROR, "cannot start the confidence controller: %s", strerror(-err));
	free(init);
	free(ev);
	return err;
}

static int write_record(const void *rec, size_t len, void *ctx)
{
	struct recorder *r = ctx;
	const struct pb_rec_hdr *h = rec;

	if (len >= sizeof(*h) && h->type == PB_REC_VIOLATION)
		confidence__sample(r->conf, rec, len);
	envelope_watch__record(r->env, rec, len);
	if (trace_writer__record(r->w, rec, len))
		r->write_errors++;
	return 0;
}

/* Judge the snapshot's windows; each confidence change becomes a note
 * "confidence: ID FROM -> TO: REASON" in the trace and a warning. */
static void judge_snapshot(struct recorder *r)
{
	const struct confidence_change *ch;
	size_t n, before, i;
	char note[512];

	confidence__changes(r->conf, &before);
	if (confidence__snapshot_res(r->conf, r->snap.ts_ns, r->snap.desc, r->snap.n_desc,
				     r->snap.res, r->snap.n_res) <= 0)
		return;
	ch = confidence__changes(r->conf, &n);
	for (i = before; i < n; i++) {
		const char *id = r->m->events[r->p->descriptors[ch[i].descriptor].event].id;

		snprintf(note, sizeof(note), "confidence: %s %s -> %s: %s", id,
			 pb_confidence_str(ch[i].from), pb_confidence_str(ch[i].to), ch[i].reason);
		if (trace_writer__note(r->w, note))
			r->write_errors++;
		say(r, PB_LOG_WARN, "%s", note);
	}
}

static int take_snapshot(struct recorder *r)
{
	struct trace_snapshot s;
	int err = engine__snapshot(r->e, &r->snap);

	if (err)
		return err;
	recorder_cost_sample(r);
	s.ts_ns = r->snap.ts_ns;
	s.n_desc = r->snap.n_desc;
	s.n_res = r->snap.n_res;
	s.desc = r->snap.desc;
	s.res = r->snap.res;
	s.engine = r->snap.engine;
	if (trace_writer__snapshot(r->w, &s))
		r->write_errors++;
	{
		int64_t live = 0;

		for (uint32_t i = 0; i < s.n_res; i++)
			live += s.res[i].live_instances;
		if (live > r->peak_live)
			r->peak_live = live;
	}
	if (recorder_procs_update(r, false))
		r->write_errors++;
	judge_snapshot(r);
	envelope_watch__snapshot(r->env, r->snap.ts_ns, r->snap.desc, r->snap.n_desc, r->w,
				 r->o.message, r->o.ctx);
	r->snapshots++;
	r->last_snap_ns = r->snap.ts_ns;
	return 0;
}

static void report_progress(struct recorder *r)
{
	struct recorder_progress p = { 0 };
	uint64_t ev = recorder_total_events(&r->snap);
	double dt = (double)(r->snap.ts_ns - r->prev_ns) / 1e9;
	int top;

	if (!r->o.progress || dt <= 0)
		return;
	top = recorder_top_wait(r, &p.top_wait_ns);
	p.elapsed_ns = r->snap.ts_ns - r->start_ns;
	p.events_per_s = (double)(ev - r->prev_events) / dt;
	p.records = trace_writer__records(r->w);
	p.drops = r->snap.engine.ringbuf_drops;
	p.top_wait = top >= 0 ? r->m->resources[top].name : NULL;
	r->o.progress(&p, r->o.ctx);
	r->prev_events = ev;
	r->prev_ns = r->snap.ts_ns;
}

static bool target_gone(struct recorder *r)
{
	if (r->child) {
		pid_t w = waitpid(r->child, &r->child_status, WNOHANG);

		if (w == r->child) {
			child_reaped(r);
			return true;
		}
		return false;
	}
	if (r->o.all || r->o.cgroup)
		return false;	/* processes may still start */
	if (r->o.pid && !(kill(r->o.pid, 0) && errno == ESRCH))
		return false;
	for (size_t i = 0; i < r->o.n_pids; i++)
		if (!(kill(r->o.pids[i], 0) && errno == ESRCH))
			return false;
	return true;
}

static bool stop_requested(struct recorder *r)
{
	if (atomic_load_explicit(&r->stop, memory_order_relaxed))
		return true;
	return r->o.should_stop && r->o.should_stop(r->o.ctx);
}

void recorder_drain(struct recorder *r)
{
	while (engine__poll(r->e, 0, write_record, r) > 0)
		;
}

/* poll, snapshot, progress until a stop condition; returns the reason */
static enum trace_stop_reason record_loop(struct recorder *r)
{
	uint64_t deadline = r->o.duration_ns ? r->start_ns + r->o.duration_ns : UINT64_MAX;
	struct timespec nap = { 0, POLL_MS * 1000000L };

	r->last_snap_ns = r->start_ns;
	r->prev_ns = r->start_ns;
	for (;;) {
		uint64_t now;

		/* without --events only violation samples come */
		if (engine__poll(r->e, recorder_budget_timeout(r, pb_mono_ns(), POLL_MS),
				 write_record, r) < 0)
			nanosleep(&nap, NULL);
		now = pb_mono_ns();
		if (recorder_budget_tick(r, now))
			r->write_errors++;
		if (now - r->last_snap_ns >= r->interval_ns) {
			if (take_snapshot(r))
				return TRACE_STOP_ERROR;
			report_progress(r);
		}
		if (stop_requested(r))
			return TRACE_STOP_SIGNAL;
		if (now >= deadline)
			return TRACE_STOP_DURATION;
		if (target_gone(r))
			return TRACE_STOP_TARGET_EXIT;
	}
}

/* Lost-evidence notes: what the trace cannot show. Best effort. */
static void note_lost_evidence(struct recorder *r)
{
	const struct pb_engine_stats *es = &r->snap.engine;
	char note[256];

	if (es->ringbuf_drops) {
		snprintf(note, sizeof(note), "lost evidence: %llu records dropped (ring buffer full)",
			 (unsigned long long)es->ringbuf_drops);
		trace_writer__note(r->w, note);
	}
	if (es->instance_map_full || es->thread_map_full || es->span_overflow ||
	    es->stash_missing) {
		snprintf(note, sizeof(note),
			 "lost evidence: instance map full %llu, thread map full %llu, "
			 "span overflow %llu, return without entry %llu",
			 (unsigned long long)es->instance_map_full,
			 (unsigned long long)es->thread_map_full,
			 (unsigned long long)es->span_overflow,
			 (unsigned long long)es->stash_missing);
		trace_writer__note(r->w, note);
	}
}

/* last drain, final snapshot, lost-evidence notes, end chunk, close */
static int finish_trace(struct recorder *r, enum trace_stop_reason why)
{
	struct trace_end e = {};
	int err;

	recorder_drain(r);
	recorder_budget_finish(r);	/* every window closed and marked */
	engine__sweep_next(r->e);	/* the last snapshot sweeps, due or not */
	err = take_snapshot(r);
	if (!err)
		err = recorder_procs_update(r, true);
	if (!err)
		err = recorder_cost_write(r, true);
	if (!err) {
		note_lost_evidence(r);
		envelope_watch__finish(r->env, r->w);
		e.end_mono_ns = r->snap.ts_ns;
		e.records = trace_writer__records(r->w);
		e.ringbuf_drops = r->snap.engine.ringbuf_drops;
		e.snapshots = r->snapshots;
		e.stop_reason = why;
		e.target_status = r->child_reaped ? r->child_status : -1;
		err = trace_writer__end(r->w, &e);
	}
	if (err) {
		say(r, PB_LOG_ERROR, "cannot finish trace file %s: %s; %llu trace writes failed "
		    "(the file reads up to its last complete chunk)", r->o.output, strerror(-err),
		    (unsigned long long)r->write_errors);
		return err;
	}
	r->res.records = trace_writer__records(r->w);
	r->res.bytes = trace_writer__bytes(r->w);
	err = trace_writer__close(r->w);
	r->w = NULL;
	if (err)
		say(r, PB_LOG_ERROR, "cannot write trace file %s: %s", r->o.output, strerror(-err));
	return err;
}

int recorder__run(struct recorder *r)
{
	enum trace_stop_reason why;
	int err;

	if (r->ran)
		return -EALREADY;
	r->ran = true;
	err = build_plan(r);
	if (err)
		goto out;
	err = open_envelope(r);
	if (err)
		goto out;
	err = spawn_child(r);
	if (err)
		goto out;
	/* under --budget the self-test (~0.3 s) runs before the probes
	 * attach: after, a running target (--pid, --all) paid it with every
	 * probe on, before the governor's first tick */
	if (r->o.budget > 0)
		recorder_cost_calibrate(r);
	err = load_engine(r);
	if (!err)	/* after attaching: a --pid target may not wait for it */
		err = recorder_cost_start(r);
	if (err)
		goto out;
	err = open_trace(r);
	if (!err)
		err = recorder_budget_start(r);
	if (err)
		goto out;
	err = start_confidence(r);
	if (err)
		goto out;
	err = start_child(r);
	if (err)
		goto out;
	why = record_loop(r);
	err = finish_trace(r, why);
	if (err)
		goto out;
	/* the target shares stdout: its own output comes before the caller's
	 * summary */
	stop_child(r);
	err = recorder_fill_result(r, why);
out:
	r->res.write_errors = r->write_errors;	/* counted even when the run failed */
	if (err && !r->failure)
		r->failure = RECORDER_FAILED_RUNTIME;
	stop_child(r);
	return err;
}

enum recorder_failure recorder__failure(const struct recorder *r)
{
	return r->failure;
}

const struct diags *recorder__diags(const struct recorder *r)
{
	return r->diags;
}

const struct plan *recorder__plan(const struct recorder *r)
{
	return r->p;
}

const struct recorder_result *recorder__result(const struct recorder *r)
{
	return &r->res;
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	recorder_budget_free(r);
	engine__free(r->e);
	confidence__free(r->conf);
	envelope_watch__free(r->env);
	stop_child(r);
	if (r->exec_fd >= 0)
		close(r->exec_fd);
	trace_writer__close(r->w);
	if (r->live_fd >= 0)
		close(r->live_fd);
	plan__free(r->p);
	manifest__free(r->own_m);
	diags__free(r->diags);
	free(r->changed);
	free(r->procs);
	free(r->maps_seen);
	free(r->cost_desc);
	free(r);
}
