/* SPDX-License-Identifier: BSD-2-Clause */
/* analyze_int.h: the analysis' private state, shared by analyze.c (ingest),
 * diagnose*.c (joins, findings; diagnose_int.h), output.c and perfetto.c
 * (export). */
#ifndef PROBITY_ANALYZE_INT_H
#define PROBITY_ANALYZE_INT_H

#include <stdbool.h>
#include "analyze/analyze.h"

/* a closed interval of one thread: WAIT span or hold */
struct an_span {
	uint64_t start, end;
	uint64_t instance, generation;
	uint32_t pid, tid;
	uint32_t descriptor;
	uint16_t resource;
	uint16_t kind;		/* PB_EV_WAIT or PB_EV_ACQUIRE (a hold) */
};

/* a point event of one thread */
struct an_point {
	uint64_t ts;
	uint64_t a, b;		/* USE: instance, generation; wakeup: wakee tid; io: bytes; release: resource */
	uint32_t pid, tid;
	uint32_t extra;		/* USE: descriptor */
};

/* off-CPU interval of one thread */
struct an_offcpu {
	uint64_t start, end;
	uint32_t tid;
	uint32_t pid;
};

/* one generation (lifetime) of (resource, instance) */
struct an_life {
	uint64_t instance, generation;
	uint64_t t_first, t_open, t_close;	/* first ACQUIRE, current open period, last close */
	uint32_t pid, tid;			/* first acquirer */
	uint32_t pins;				/* open holds */
	uint32_t uses_open;			/* USEs in the current open period */
	uint64_t uses, acquires, releases;
	uint64_t churn_cycles;			/* open periods closed without a USE */
	uint64_t closes;			/* open periods closed */
	uint16_t resource;
	bool open;
	uint32_t spid;				/* process of a scope: process
						 * instance (key), 0 for scope: shared */
};

struct an_vec {
	void *v;
	size_t n, cap, elem;
};

/* per resource, one snapshot point */
struct an_point_res {
	uint64_t ts;
	int64_t imbalance;	/* cumulative ACQUIRE events - RELEASE events */
	int64_t live, units;
};

/* record --budget: one closed window of a resource (PB_REC_WINDOW_STATS) */
struct an_win {
	double w_s;		/* its length */
	double growth;		/* ACQUIRE - RELEASE events in it */
	uint64_t cut_hist[PB_HIST_BUCKETS];	/* ages of the holds its close cut */
};

/* record --budget, per resource: what its windows saw */
struct an_res_win {
	struct an_vec wins;		/* an_win */
	uint64_t obs_ns;		/* time its probes were on in closed windows
					 * (to the end of their detach) */
	uint64_t open_since;		/* an open mark not yet closed (0: none) */
	uint64_t tail_ns;		/* observed after its last open, to the end */
	uint64_t cut_lives, cut_holders, cut_age_max_ns;
	uint64_t cut_hist[PB_HIST_BUCKETS];	/* ages at the close, log2 */
	/* the WAITs that ended in its closed windows (records with the
	 * appended waits, wait_ns: n_wait_win of wins.n) */
	size_t n_wait_win;
	uint64_t waits, wait_ns;
	/* the holds its opens cut: parts inside the window, log2 (records
	 * with the appended open cuts; 0 in older ones) */
	uint64_t open_hist[PB_HIST_BUCKETS];
};

struct analysis {
	const struct manifest *m;
	struct analysis_opts o;
	enum pb_confidence *conf;	/* per descriptor */
	struct confidence_leak *leak;	/* per resource: over_capacity explained by leaks */
	struct analysis_counts c;
	uint64_t win_start, win_end;

	/* aggregates: last snapshot, or derived from events when no snapshot */
	struct pb_desc_stats *snap_desc;	/* n_events */
	struct pb_res_stats *snap_res;		/* n_resources */
	struct pb_desc_stats *ev_desc;		/* derived from records */
	bool have_snap_res;
	uint64_t desc_snapshots;		/* snapshots that carried descriptor stats */
	struct an_vec *series;			/* per resource: an_point_res */

	/* --events evidence */
	struct an_vec waits;		/* an_span, kind WAIT */
	struct an_vec holds;		/* an_span, kind ACQUIRE */
	struct an_vec uses;		/* an_point */
	struct an_vec releases;		/* an_point: a = resource */
	struct an_vec wakeups;		/* an_point: a = wakee tid */
	struct an_vec ios;		/* an_point: a = bytes */
	struct an_vec io_done;		/* an_point at completion: a = latency ns, b = bytes,
					 * extra = write (the export draws I/O slices) */
	struct an_vec faults;		/* an_point */
	struct an_vec offcpu;		/* an_offcpu */
	struct an_vec lives;		/* an_life */
	size_t *life_hash;		/* open addressing: index+1 into lives, 0 = empty */
	size_t life_hash_cap;
	uint64_t *use_unmatched, *release_unmatched;	/* per resource */
	bool *windowed;			/* per resource: record --budget windowed it */
	struct an_res_win *rwin;	/* per resource: its window statistics */
	uint64_t res_state_full_rec;
	uint64_t lives_ended_by_exit;	/* open lifetimes closed by their process's exit */
	const struct trace_proc *procs;	/* names (analysis__set_procs), borrowed */
	size_t n_procs;

	analysis_comm_fn comm;		/* names for pids/tids (analysis__set_comm) */
	void *comm_ctx;

	/* probe-effect correction (probefx.c): per descriptor, the probes'
	 * calibrated cost per event and its error; per resource, the result */
	double *probe_cost_ns, *probe_err_ns;
	struct an_probefx *probefx;
	bool probefx_on, probefx_calibrated;

	bool finished;
	struct finding *findings;
	size_t n_findings;
};

struct an_probefx {
	uint64_t waits;
	double wait_raw_ns, wait_ns;	/* before / after the correction */
	double per_wait_ns;		/* subtracted per WAIT (mean) */
	double err_ns;			/* waits x the probes' p90 - p50 spread */
	double nested_ns;		/* probes of other events inside the WAITs */
	uint64_t nested;		/* ... how many (same thread, from --events) */
	bool nested_known;		/* the trace had WAIT span records to count them */
	double hold_raw_ns, hold_ns;
	bool dominated;			/* corrected WAIT time <= err_ns */
};

/* probefx.c: the report's "probe cost dominates" lines and JSON */
json_t *an_probefx_json(const struct analysis *a);
void an_probefx_print(const struct analysis *a, FILE *out);

void an_fmt_ns(char *buf, size_t sz, double ns);
/* " (NAME, pid P)" for thread tid when the trace names it, else "" */
const char *an_who(const struct analysis *a, uint32_t tid, char *buf, size_t sz);
/* "tid N (COMM)", or "tid N" when no name is known (pid 0: not known) */
const char *an_tid_label(const struct analysis *a, uint32_t pid, uint32_t tid, char *buf, size_t sz);
unsigned an_hist_bucket(uint64_t ns);	/* log2 bucket of a duration */
int an_vec_push(struct an_vec *v, const void *elem, size_t max, uint64_t *truncated);
#define AN_AT(vec, type, i) (&((type *)(vec)->v)[i])

#endif
