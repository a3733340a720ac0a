/* SPDX-License-Identifier: BSD-2-Clause */
/* recorder_int.h: the recorder's state, shared by the files of
 * src/record/ only (recorder.c runs it, summary.c reports it). */
#ifndef PROBITY_RECORDER_INT_H
#define PROBITY_RECORDER_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"
#include "record/recorder.h"
#include "record/governor.h"

/* maps.c: a process whose mappings were written, and its executable then */
struct rec_maps_seen {
	uint32_t pid;
	bool written;
	uint64_t dev, ino;
};

struct recorder {
	struct recorder_opts o;
	uint64_t interval_ns;
	const struct manifest *m;	/* o.loaded_manifest or own_m */
	struct manifest *own_m;		/* loaded from o.manifest */
	struct plan *p;
	struct diags *diags;
	struct engine *e;
	struct trace_writer *w;
	struct confidence *conf;	/* runtime validation (docs/validation.md) */
	struct envelope_watch *env;	/* opts.envelope, or NULL */
	int live_fd;			/* holds the trace's live lock (trace_live__hold) */
	pid_t child;			/* spawned target, 0 if none */
	int go_fd;			/* write end of the child's start pipe */
	int exec_fd;			/* read end of the child's exec-error pipe */
	int child_status;
	bool child_reaped;
	bool ran;
	atomic_int stop;		/* recorder__stop() */
	enum recorder_failure failure;
	uint64_t start_ns, last_snap_ns;
	uint64_t snapshots;
	uint64_t write_errors;
	struct engine_snapshot snap;
	uint64_t prev_events, prev_ns;	/* progress rate */
	int64_t peak_live;		/* most live instances in a snapshot */
	struct recorder_result res;	/* filled at the end of a run */
	struct recorder_confidence *changed;
	/* processes (procs.c) */
	struct trace_proc *procs;	/* processes and threads seen */
	size_t n_procs, procs_cap;
	bool procs_dirty;		/* a new or exited one since the last write */
	/* executable mappings written (maps.c, with stacks) */
	struct rec_maps_seen *maps_seen;
	size_t n_maps_seen, maps_seen_cap;
	struct engine_memory mem;	/* map memory, read after attach */
	/* record --budget (rec_budget.c) */
	struct governor *gov;
	struct gov_cost_source costs;
	uint64_t cpu_ns, cpu_read_ns;	/* the target's CPU time, last read */
	/* cost model (cost.c) */
	struct pb_calib calib;
	uint64_t cost_t0;		/* CLOCK_MONOTONIC at attach */
	uint64_t cost_cpu0;		/* the target's CPU time at attach */
	uint64_t cost_cpu_last;		/* at the last snapshot it could be read */
	bool cost_cpu_known;
	bool calibrated;		/* recorder_cost_calibrate ran */
	struct trace_cost_desc *cost_desc;	/* res.cost.desc */
};

/* Send a message to msg, or to pr_err/pr_warn when msg is NULL. */
void recorder_say(recorder_message_fn msg, void *ctx, enum pb_log_level level,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* procs.c */
/* Instance-map entries: the override, else every declared capacity live
 * at once plus 65,536 (capped at 64 Mi). */
uint32_t recorder_instance_entries(const struct manifest *m, uint32_t override);
/* Read the engine's tracked processes into r->procs; write the table to
 * the trace when one is new or exited, or when final. 0 or -errno. */
int recorder_procs_update(struct recorder *r, bool final);
/* The mappings of processes new or exec'd since the last call
 * (TRACE_CHUNK_MAPS), when stacks are recorded. 0 or -errno. */
int recorder_maps_update(struct recorder *r);
/* Warn when a --pid process forks workers running the same program. */
void recorder_fork_hint(struct recorder *r);

/* rec_budget.c (record --budget; no-ops without it) */
/* Write every record waiting in the ring buffer to the trace. */
void recorder_drain(struct recorder *r);
int recorder_budget_start(struct recorder *r);
int recorder_budget_tick(struct recorder *r, uint64_t now);
int recorder_budget_timeout(const struct recorder *r, uint64_t now, int cap);
void recorder_budget_finish(struct recorder *r);
void recorder_budget_free(struct recorder *r);
/* cost.c */
/* Calibrate (or load the calibration file, or take the defaults under
 * no_calibrate), once. Always 0: a failed calibration is a warning. */
int recorder_cost_calibrate(struct recorder *r);
/* At attach: the cost model's wall and CPU start; calibrates unless
 * recorder_cost_calibrate ran. Always 0. */
int recorder_cost_start(struct recorder *r);
/* Write a TRACE_CHUNK_COST: the calibration (start), or with the estimates
 * from the last snapshot into r->res.cost (final). 0 or -errno. */
int recorder_cost_write(struct recorder *r, bool final);
/* Read the target's CPU time (each snapshot: a --pid target that exits
 * keeps its last reading). */
void recorder_cost_sample(struct recorder *r);
/* The summary's cost line / object. */
void recorder_cost_print(const struct recorder *r, FILE *out);
json_t *recorder_cost_json(const struct recorder *r);

/* summary.c */
uint64_t recorder_total_events(const struct engine_snapshot *s);
/* the resource whose WAIT spans took the most time, or -1 */
int recorder_top_wait(const struct recorder *r, uint64_t *ns);
/* Fill r->res from the finished run. 0 or -ENOMEM. */
int recorder_fill_result(struct recorder *r, enum trace_stop_reason why);

#endif
