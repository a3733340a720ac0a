/* SPDX-License-Identifier: BSD-2-Clause */
/* recorder.h: one recording of a process, in-process: the manifest's plan
 * (refusing exactly as `probity plan` does), the BPF engine attached to a
 * running pid or to a command spawned held until every probe is attached,
 * and a trace file of periodic snapshots (plus every event with
 * opts.events), judged by the confidence controller and, with
 * opts.envelope, checked against a distribution envelope
 * (docs/record.md, docs/trace-format.md, docs/validation.md).
 *
 * `probity record` and `probity train` drive it; so can a daemon. The
 * library never prints, never exits, holds no global state and installs
 * no signal handler: messages go to opts.message, progress to
 * opts.progress, and a stop comes from recorder__stop() (async-signal-safe)
 * or the opts.should_stop poll.
 *
 *	r = recorder__new(&opts);
 *	err = recorder__run(r);		// blocks: duration, target exit or stop
 *	res = recorder__result(r);	// what was recorded
 *	recorder__free(r);
 */
#ifndef PROBITY_RECORDER_H
#define PROBITY_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "common/log.h"
#include "contract/manifest.h"
#include "engine/calib.h"
#include "engine/events.h"
#include "trace/trace.h"

#define RECORDER_MAX_BINARIES		16
#define RECORDER_DEFAULT_INTERVAL_MS	250

struct recorder;
struct manifest;
struct plan;
struct diags;

/* A message for the user (without a trailing newline): errors that end
 * the run, warnings as they happen (confidence changes, envelope
 * warnings, "cannot lock ..."). */
typedef void (*recorder_message_fn)(enum pb_log_level level, const char *msg, void *ctx);

/* What `record` shows on its status line, once per snapshot. */
struct recorder_progress {
	uint64_t elapsed_ns;		/* since the trace started */
	double events_per_s;		/* since the previous progress */
	uint64_t records;		/* written to the trace so far */
	uint64_t drops;			/* ring-buffer drops so far */
	const char *top_wait;		/* resource with most WAIT time, or NULL */
	uint64_t top_wait_ns;
};

/* "recording 1.5s: 2806 events/s, 0 records, 0 drops, top wait: demo.pool
 * (12.0 ms)": the status line `record` shows on a terminal. */
void recorder_progress__format(const struct recorder_progress *p, char *buf, size_t sz);

struct recorder_opts {
	const char *manifest;		/* path (required unless loaded_manifest) */
	const struct manifest *loaded_manifest;	/* already loaded (borrowed: must
						 * outlive the recorder), or NULL */
	const char *output;		/* trace file (required; re-created 0600) */
	const char *const *binaries;	/* probe these files (plan --binary) */
	size_t n_binaries;		/* at most RECORDER_MAX_BINARIES */
	pid_t pid;			/* record this running process, and/or */
	const pid_t *pids;		/* these (record --pid repeated), or */
	size_t n_pids;
	char *const *cmd;		/* spawn this command (NULL-terminated) and
					 * follow the processes it forks, and/or */
	bool all;			/* every process the probes fire in (the
					 * target file mapped), also ones started
					 * later; until stopped or duration */
	const char *cgroup;		/* like all, inside this cgroup v2 directory */
	bool follow_forks;		/* pid/pids: also the processes they fork
					 * from now on (as -- CMD does) */
	uint32_t max_instances;		/* instance-map entries; 0 = from the
					 * manifest's capacities (at least 65,536) */
	bool cmd_stdout_to_stderr;	/* the command's stdout goes to stderr */
	uint64_t duration_ns;		/* 0 = until stopped or the target exits */
	uint64_t interval_ns;		/* snapshot interval; 0 = 250 ms */
	size_t ringbuf_bytes;		/* 0 = engine default */
	bool events;			/* stream every event to the trace */
	uint32_t stacks_per_sec;	/* user stacks of WAIT ends / ACQUIREs per
					 * second (PB_REC_STACK, with the processes'
					 * mappings in TRACE_CHUNK_MAPS); 0 = none */
	const char *envelope;		/* check against this envelope; NULL none */
	double budget;			/* record --budget: keep the estimated probe
					 * overhead under this fraction of the
					 * target's CPU time (0 = off; see
					 * docs/record.md "Overhead budget") */
	bool rebind;			/* plan --rebind: a build-id mismatch re-resolves by
					 * name; descriptors start degraded */

	bool no_calibrate;		/* skip the cost self-test: default figures */
	const char *calibration;	/* calibration file: reused when it was made
					 * on this kernel, else measured and written */
	recorder_message_fn message;	/* NULL: pr_err / pr_warn */
	void (*progress)(const struct recorder_progress *p, void *ctx);
	bool (*should_stop)(void *ctx);	/* polled every 50 ms; NULL never */
	void *ctx;			/* passed to the three callbacks */
};

/* Why recorder__run() failed: tells the caller what to show and which
 * exit status `record` uses. */
enum recorder_failure {
	RECORDER_FAILED_NOT = 0,
	RECORDER_FAILED_MANIFEST,	/* invalid or unreadable: recorder__diags() */
	RECORDER_FAILED_PLAN,		/* no plan: recorder__diags() */
	RECORDER_FAILED_REFUSED,	/* plan refused descriptors: recorder__plan() */
	RECORDER_FAILED_INPUT,		/* envelope unreadable or bound elsewhere */
	RECORDER_FAILED_RUNTIME,	/* BPF load/attach, I/O, the target, memory */
};

/* A descriptor whose confidence left its initial state. */
struct recorder_confidence {
	const char *id;			/* manifest event id */
	enum pb_confidence state;
	const char *reason;		/* may be NULL */
};

/* The probes' estimated cost over a run (docs/record.md "Cost model"). */
struct recorder_cost {
	struct pb_calib calib;		/* per site class, this kernel */
	double est_ns;			/* sum over descriptors of events x cost */
	uint64_t wall_ns;		/* the recording's wall time */
	uint64_t target_cpu_ns;		/* the target's CPU time over it */
	bool cpu_known;			/* false: --all, or /proc unreadable */
	const struct trace_cost_desc *desc;	/* per descriptor with sites */
	size_t n_desc;
};

/* What a run recorded; valid after recorder__run() returned 0. */
struct recorder_result {
	enum trace_stop_reason stopped_by;	/* TRACE_STOP_ERROR: a snapshot failed;
						 * the trace was still ended */
	int pid;			/* the target */
	int target_status;		/* wait status of a spawned target once
					 * stopped (the trace's end chunk has -1
					 * when it outlived the recording), else -1 */
	uint64_t duration_ns;
	uint64_t events;		/* counted in the kernel */
	uint64_t records, bytes;	/* written to the trace */
	uint64_t snapshots;
	uint64_t write_errors;
	struct pb_engine_stats engine;	/* drops and lost-evidence counters */
	const char *top_wait;		/* resource with most WAIT time, or NULL */
	uint64_t top_wait_ns;
	const struct recorder_confidence *confidence;	/* changed descriptors */
	size_t n_confidence;
	bool any_stale;			/* the model no longer holds somewhere */
	size_t envelope_warnings;	/* metrics that left the envelope */
	/* processes (record --all / --pid ... / -- CMD) */
	const struct trace_proc *procs;	/* processes (tid == pid) and threads */
	size_t n_procs;
	uint64_t exit_ended;		/* instances ended by their process's exit */
	uint64_t exit_outlived;		/* shared ones outliving their process */
	uint64_t max_instances;		/* instance-map entries */
	uint64_t peak_live;		/* most live instances seen in a snapshot */
	uint64_t instance_map_bytes;	/* its locked memory */
	uint64_t maps_bytes;		/* all the engine's maps */
	struct recorder_cost cost;	/* estimated probe overhead */
};

/* Copies opts (the strings and arrays it points to must outlive the
 * recorder). NULL + errno (EINVAL: no manifest or output, both pid and
 * cmd, or none of pid, pids, cmd, all and cgroup). */
struct recorder *recorder__new(const struct recorder_opts *opts);
/* plan -> envelope -> spawn (held) -> engine -> trace header -> confidence
 * -> release the target -> poll/snapshot loop -> end chunk -> stop the
 * target. 0 when the trace was written and closed, else -errno and
 * recorder__failure() says where. Runs once. */
int recorder__run(struct recorder *r);
/* Ask a running recorder__run() to stop (at its next poll, <= 50 ms):
 * safe from another thread and from a signal handler. */
void recorder__stop(struct recorder *r);
void recorder__free(struct recorder *r);

enum recorder_failure recorder__failure(const struct recorder *r);
/* The manifest findings (RECORDER_FAILED_MANIFEST / _PLAN) */
const struct diags *recorder__diags(const struct recorder *r);
/* The plan (RECORDER_FAILED_REFUSED: its notes say why), or NULL */
const struct plan *recorder__plan(const struct recorder *r);
const struct recorder_result *recorder__result(const struct recorder *r);

/* The run as `record -j` prints it (src/record/summary.c). */
json_t *recorder__summary_json(const struct recorder *r);
/* The lines `record` prints on stdout after a run: the summary line, top
 * wait, confidence changes and the envelope check. Warnings are not in
 * it: see recorder__summary_warnings. */
void recorder__summary_print(const struct recorder *r, FILE *out);
/* The summary's warnings (ring-buffer drops, lost evidence, failed
 * writes), one call of fn per warning, in order. A stale model is
 * result->any_stale. */
void recorder__summary_warnings(const struct recorder *r,
				void (*fn)(const char *msg, void *ctx), void *ctx);

#endif
