// SPDX-License-Identifier: BSD-2-Clause
/* agent.c: the agent's loop (agent.h): watch processes, start one window
 * (a recorder in its own thread, one trace file) per manifest with live
 * targets while the duty cycle is on, end it at rotation, size cap,
 * reload or stop, then digest it (agent_out.c). Flow of agent__run:
 * process watcher -> manifests -> /proc scan -> READY=1 -> loop { events,
 * reload, per-manifest tick, state, watchdog } -> STOPPING=1 -> last
 * windows ended and digested -> state and metrics written. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include "agent/agent_int.h"
#include "agent/procwatch.h"
#include "common/clock.h"
#include "common/log.h"
#include "metrics/metrics.h"
#include "record/recorder.h"

#define RETRY_NS	(5ull * 1000000000ull)	/* after a failed window */
#define MIN_WINDOW_NS	(1000000000ull)		/* shorter rests are skipped */
#define STATE_EVERY_NS	(10ull * 1000000000ull)
#define CHILDREN_EVERY_NS	(1000000000ull)	/* look for forked targets */

struct agent *agent__new(const struct agent_opts *opts)
{
	struct agent *a;
	uint64_t usec = 0;

	if (!opts || !opts->manifest_dir || !opts->trace_dir || !opts->state_file ||
	    !opts->keep || !opts->rotate_ns || !opts->duty_period_ns || !opts->duty_on_ns ||
	    opts->duty_on_ns > opts->duty_period_ns) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->o = *opts;
	snprintf(a->calib_path, sizeof(a->calib_path), "%s/.calibration.json", opts->trace_dir);
	atomic_init(&a->stop, 0);
	atomic_init(&a->reload, 0);
	a->notify = getenv("NOTIFY_SOCKET") != NULL;
	if (sd_watchdog_enabled(0, &usec) > 0)
		a->watchdog_usec = usec;
	return a;
}

void agent__stop(struct agent *a)
{
	if (a)
		atomic_store_explicit(&a->stop, 1, memory_order_relaxed);
}

void agent__reload(struct agent *a)
{
	if (a)
		atomic_store_explicit(&a->reload, 1, memory_order_relaxed);
}

static void rec_message(enum pb_log_level level, const char *msg, void *ctx)
{
	const struct agent_manifest *am = ctx;

	pb_log(level, "agent: %s: %s\n", am->stem, msg);
}

static void *window_thread(void *arg)
{
	struct agent_manifest *am = arg;

	am->slot.err = recorder__run(am->slot.rec);
	atomic_store(&am->slot.done, true);
	return NULL;
}

/* DIR/STEM/20261201T104512Z-000001.trace, the directory made 0750 */
static int trace_name(struct agent *a, struct agent_manifest *am, char *buf, size_t sz)
{
	char dir[PATH_MAX], stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	snprintf(dir, sizeof(dir), "%s/%s", a->o.trace_dir, am->stem);
	if ((mkdir(a->o.trace_dir, 0750) && errno != EEXIST) || (mkdir(dir, 0750) && errno != EEXIST))
		return -errno;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if ((size_t)snprintf(buf, sz, "%s/%s-%06llu.trace", dir, stamp,
			     (unsigned long long)++a->seq) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

/* Start a window of len_ns on am's binary: a recorder following its live
 * target processes (record --pid ...); a new target ends the window so
 * the next one attaches to it too (record --all would follow new ones
 * by itself, but its engine variant does not load on every kernel). */
static int start_window(struct agent *a, struct agent_manifest *am, uint64_t len_ns)
{
	struct agent_slot *s = &am->slot;
	struct recorder_opts ro = { 0 };
	const char *id = am->m->targets[am->target_idx].id;
	int err;

	err = trace_name(a, am, s->trace, sizeof(s->trace));
	if (err) {
		snprintf(am->error, sizeof(am->error), "cannot make a trace in %s: %s",
			 a->o.trace_dir, strerror(-err));
		goto fail;
	}
	snprintf(s->bin_arg, sizeof(s->bin_arg), "%s%s%s", id ? id : "", id ? "=" : "",
		 am->bin_path);
	s->bins[0] = s->bin_arg;
	s->rebind = am->rebind;
	free(s->pids);
	s->pids = malloc(am->n_pids * sizeof(*s->pids));
	if (!s->pids) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(s->pids, am->pids, am->n_pids * sizeof(*s->pids));
	s->n_pids = am->n_pids;
	am->new_target = false;
	ro.loaded_manifest = am->m;
	ro.output = s->trace;
	ro.binaries = s->bins;
	ro.n_binaries = 1;
	ro.pids = s->pids;
	ro.n_pids = s->n_pids;
	ro.duration_ns = len_ns;
	ro.interval_ns = a->o.interval_ns;
	ro.rebind = am->rebind;
	ro.follow_forks = true;	/* a target's forked workers: this window too */
	ro.budget = a->o.budget;
	ro.calibration = a->calib_path;	/* one self-test, not one per window */
	ro.message = rec_message;
	ro.ctx = am;
	s->rec = recorder__new(&ro);
	if (!s->rec) {
		err = -errno;
		goto fail;
	}
	atomic_store(&s->done, false);
	s->start_ns = pb_mono_ns();
	err = -pthread_create(&s->th, NULL, window_thread, am);
	if (err) {
		recorder__free(s->rec);
		s->rec = NULL;
		goto fail;
	}
	s->running = true;
	am->state = am->rebind ? AGENT_M_DEGRADED : AGENT_M_RECORDING;
	a->state_dirty = true;
	pr_info("agent: %s: window %s (%zu target process%s, %s)\n", am->stem, s->trace,
		am->n_pids, am->n_pids == 1 ? "" : "es", am->bin_path);
	return 0;
fail:
	if (!am->error[0] || err == -ENOMEM)
		snprintf(am->error, sizeof(am->error), "cannot start a window: %s", strerror(-err));
	pr_warn("agent: %s: %s\n", am->stem, am->error);
	am->state = AGENT_M_FAILED;
	am->c.windows++;	/* one that failed at once */
	am->c.windows_failed++;
	am->retry_ns = pb_mono_ns() + RETRY_NS;
	return err;
}

static const char *failure_str(enum recorder_failure f)
{
	switch (f) {
	case RECORDER_FAILED_MANIFEST: return "manifest";
	case RECORDER_FAILED_PLAN: return "no plan";
	case RECORDER_FAILED_REFUSED: return "plan refused";
	case RECORDER_FAILED_INPUT: return "input";
	default: return "runtime";
	}
}

/* Join a finished (or stopped) window, count it, digest its trace. */
static void end_window(struct agent *a, struct agent_manifest *am)
{
	struct agent_slot *s = &am->slot;
	const struct recorder_result *res;
	enum recorder_failure f;

	if (!s->running)
		return;
	pthread_join(s->th, NULL);
	s->running = false;
	res = recorder__result(s->rec);
	f = recorder__failure(s->rec);
	am->c.windows++;
	am->c.write_errors += res->write_errors;
	if (s->err) {
		am->c.windows_failed++;
		am->state = f == RECORDER_FAILED_REFUSED ? AGENT_M_REFUSED : AGENT_M_FAILED;
		am->c.refusals += f == RECORDER_FAILED_REFUSED;
		snprintf(am->error, sizeof(am->error), "window %s failed (%s): %s", s->trace,
			 failure_str(f), strerror(-s->err));
		pr_warn("agent: %s: %s; the agent keeps running\n", am->stem, am->error);
		am->retry_ns = pb_mono_ns() + RETRY_NS;
	} else {
		am->c.records += res->records;
		am->c.bytes += res->bytes;
		am->c.events += res->events;
		am->c.ringbuf_drops += res->engine.ringbuf_drops;
		if (am->state != AGENT_M_REFUSED)
			am->state = AGENT_M_IDLE;
		if (!am->new_build_id[0])	/* a new build's note stays */
			am->error[0] = 0;
	}
	recorder__free(s->rec);
	s->rec = NULL;
	if (access(s->trace, R_OK) == 0) {
		snprintf(am->last_trace, sizeof(am->last_trace), "%s", s->trace);
		agent_window_digest(a, am);
	}
	agent_prune_traces(a, am);
	a->windows++;
	a->state_dirty = true;
}

/* Stop a window now (reload, removal, agent stop) and digest it. */
static void stop_window(struct agent *a, struct agent_manifest *am)
{
	if (am->slot.running)
		recorder__stop(am->slot.rec);
	end_window(a, am);
}

/* Within the duty cycle's on-part? *left: how long it still lasts. */
static bool duty_on(const struct agent *a, uint64_t now, uint64_t *left)
{
	uint64_t ph;

	*left = UINT64_MAX;
	if (a->o.duty_on_ns >= a->o.duty_period_ns)
		return true;
	ph = (now - a->start_ns) % a->o.duty_period_ns;
	if (ph >= a->o.duty_on_ns)
		return false;
	*left = a->o.duty_on_ns - ph;
	return true;
}

static void tick(struct agent *a, struct agent_manifest *am, uint64_t now, bool on, uint64_t left)
{
	struct agent_slot *s = &am->slot;
	enum agent_mstate rest;
	struct stat st;

	if (am->m && am->n_pids && now - am->children_ns >= CHILDREN_EVERY_NS) {
		agent_catalog_children(a, am);
		am->children_ns = now;
	}
	if (s->running) {
		if (!atomic_load(&s->done)) {
			if (am->new_target && on)	/* re-attach: rotate now */
				recorder__stop(s->rec);
			else if (a->o.max_trace_bytes && !stat(s->trace, &st) &&
				 (uint64_t)st.st_size >= a->o.max_trace_bytes)
				recorder__stop(s->rec);	/* rotate early: size cap */
			return;
		}
		end_window(a, am);
	}
	if (!am->m || am->state == AGENT_M_INVALID || now < am->retry_ns)
		return;
	agent_catalog_prune_pids(am);
	if (!on || !am->n_pids) {	/* at rest; refused while a new build is refused */
		rest = am->new_build_id[0] && !am->rebind ? AGENT_M_REFUSED : AGENT_M_IDLE;
		if (am->state != rest && (rest == AGENT_M_REFUSED || am->state == AGENT_M_RECORDING ||
					  am->state == AGENT_M_DEGRADED)) {
			am->state = rest;
			a->state_dirty = true;
		}
		return;
	}
	if (left < MIN_WINDOW_NS)
		return;
	start_window(a, am, left < a->o.rotate_ns ? left : a->o.rotate_ns);
}

static void on_proc(enum procwatch_kind kind, pid_t pid, void *ctx)
{
	struct agent *a = ctx;

	if (kind == PROCWATCH_EXEC)
		agent_catalog_exec(a, pid);
	else
		agent_catalog_exit(a, pid);
}

static void do_reload(struct agent *a)
{
	agent_notify(a, "RELOADING=1\nMONOTONIC_USEC=%llu",
		     (unsigned long long)(pb_mono_ns() / 1000));
	pr_info("agent: reloading manifests from %s\n", a->o.manifest_dir);
	if (agent_catalog_load(a, stop_window))
		pr_warn("agent: reload failed; the manifests loaded before stay in use\n");
	agent_catalog_scan(a);
	a->reloads++;
	a->state_dirty = true;
	agent_notify(a, "READY=1");
	a->status[0] = 0;	/* say it again */
}

static void housekeeping(struct agent *a, uint64_t now)
{
	uint64_t d = procwatch__drops(a->pw);

	if (d != a->pw_drops_seen) {	/* exec/exit events lost: look again */
		pr_warn("agent: %llu process events lost (ring buffer full): rescanning /proc\n",
			(unsigned long long)(d - a->pw_drops_seen));
		a->pw_drops_seen = d;
		agent_catalog_scan(a);
	}
	if ((a->state_dirty && now - a->last_state_ns >= 1000000000ull) ||
	    now - a->last_state_ns >= STATE_EVERY_NS) {
		agent_write_state(a);
		agent_write_metrics(a);
		agent_notify_status(a);
		a->last_state_ns = now;
	}
	if (a->watchdog_usec && now - a->last_watchdog_ns >= a->watchdog_usec * 1000 / 2) {
		agent_notify(a, "WATCHDOG=1");
		a->last_watchdog_ns = now;
	}
}

/* opts.listen: GET /metrics serves what the textfile holds */
static int start_http(struct agent *a)
{
	struct sockaddr_in sin;
	char host[INET_ADDRSTRLEN];
	int err;

	if (!a->o.listen)
		return 0;
	a->http = metrics_server__new(a->o.listen);
	if (!a->http) {
		err = errno ? -errno : -EADDRINUSE;
		pr_err("agent: cannot serve metrics on %s: %s\n", a->o.listen, strerror(-err));
		return err;
	}
	if (metrics__parse_listen(a->o.listen, &sin) ||
	    !inet_ntop(AF_INET, &sin.sin_addr, host, sizeof(host)))
		snprintf(host, sizeof(host), "?");
	snprintf(a->listen_addr, sizeof(a->listen_addr), "%s:%u", host,
		 (unsigned)metrics_server__port(a->http));
	pr_info("agent: metrics at http://%s/metrics\n", a->listen_addr);
	return 0;
}

static int agent_start(struct agent *a)
{
	int err;

	a->start_ns = pb_mono_ns();
	a->start_real_ns = pb_realtime_ns();
	a->pw = procwatch__new();	/* before the scan: no exec falls between */
	if (!a->pw) {
		err = -errno;
		pr_err("agent: cannot watch processes (tp_btf sched_process_exec): %s%s\n",
		       strerror(-err), err == -EPERM ? " (needs CAP_BPF and CAP_PERFMON, or root)" : "");
		return err;
	}
	err = agent_catalog_load(a, stop_window);
	if (!err)
		err = start_http(a);
	if (err)
		return err;
	agent_catalog_scan(a);
	agent_write_state(a);
	agent_write_metrics(a);
	a->last_state_ns = pb_mono_ns();
	agent_notify(a, "READY=1");
	agent_notify_status(a);
	return 0;
}

int agent__run(struct agent *a)
{
	uint64_t now, left;
	bool on;
	int err;

	err = agent_start(a);
	if (err)
		return err;
	while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
		err = procwatch__poll(a->pw, AGENT_POLL_MS, on_proc, a);
		if (err < 0) {
			pr_warn("agent: process events: %s\n", strerror(-err));
			usleep(AGENT_POLL_MS * 1000);
		}
		if (atomic_exchange(&a->reload, 0))
			do_reload(a);
		now = pb_mono_ns();
		on = duty_on(a, now, &left);
		for (size_t i = 0; i < a->n_ms; i++)
			tick(a, a->ms[i], now, on, left);
		housekeeping(a, now);
		if (a->o.duration_ns && now - a->start_ns >= a->o.duration_ns)
			break;
	}
	agent_notify(a, "STOPPING=1");
	pr_info("agent: stopping: ending %zu windows\n", a->n_ms);
	for (size_t i = 0; i < a->n_ms; i++)
		stop_window(a, a->ms[i]);
	agent_write_state(a);
	agent_write_metrics(a);
	return 0;
}

void agent__free(struct agent *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_ms; i++) {
		stop_window(a, a->ms[i]);
		agent_manifest_free(a->ms[i]);
	}
	free(a->ms);
	procwatch__free(a->pw);
	metrics_server__free(a->http);
	free(a);
}
