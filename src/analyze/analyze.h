/* SPDX-License-Identifier: BSD-2-Clause */
/* analyze.h: offline diagnosis of a recording. An analysis consumes the two
 * evidence sources of a trace -- aggregate snapshots (default mode: per
 * descriptor counters and log2 histograms, per resource gauges and system
 * joins) and, when recorded with --events, the per-event records (resource
 * events with generation-scoped identity, sched switches, wakeups, block
 * I/O, faults) -- and turns them into ranked findings: contention, leak,
 * churn and long holds, each with its evidence and the confidence of every
 * descriptor it rests on. docs/report.md documents how each finding is
 * computed and scored. Nothing here knows about trace files or BPF.
 */
#ifndef PROBITY_ANALYZE_H
#define PROBITY_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "contract/manifest.h"
#include "engine/events.h"
#include "validate/confidence.h"

struct analysis;

struct analysis_opts {
	uint64_t long_hold_ns;		/* a hold at least this long is "long" (default 50 ms) */
	uint64_t leak_age_ns;		/* --events: a lifetime open this long at the end is stuck (default 100 ms) */
	uint64_t wakeup_window_ns;	/* a RELEASE this close before a wakeup explains it (default 2 ms) */
	size_t max_items;		/* per kind of stored event (default 4M; beyond: counted as truncated) */
	/* The target started after the engine attached (`record -- CMD`): the
	 * cumulative counters were 0 at the start, so growth is measured from
	 * 0 rather than from the first snapshot (which a leak can race). */
	bool counters_from_zero;
};

enum finding_kind {
	FINDING_LONG_HOLD = 0,
	FINDING_CONTENTION,
	FINDING_LEAK,
	FINDING_CHURN,
	FINDING_MODEL_SUSPECT,	/* would be one of the above, but rests on a suspect descriptor */
	FINDING_MODEL_STALE,	/* same, on a stale descriptor */
	FINDING__COUNT,
};

struct finding_evidence {
	char *key;		/* machine name, e.g. "wait_ns" */
	double value;
	char *unit;		/* "ns", "events", "instances", "%", ... */
	char *text;		/* one human line */
};

struct finding_desc {
	uint32_t descriptor;	/* = manifest event index */
	const char *id;		/* manifest event id */
	enum pb_event_kind kind;
	enum pb_confidence confidence;
};

struct finding {
	enum finding_kind kind;
	enum finding_kind diagnosis;	/* what the evidence reads as (== kind unless model_*) */
	int resource;			/* manifest resource index */
	const char *resource_name;
	double severity;		/* 0..100, before certainty */
	double certainty;		/* 0..1: descriptor confidence x lost evidence */
	double score;			/* severity x certainty: the ranking key */
	char *summary;			/* one line */
	char *label;			/* e.g. "(rests on candidate descriptor x)"; NULL if none */
	struct finding_evidence *evidence;
	size_t n_evidence;
	struct finding_desc *descs;
	size_t n_descs;
};

/* What the analysis saw, for the report header. */
struct analysis_counts {
	uint64_t records;		/* records accepted */
	uint64_t by_type[PB_REC__MAX];
	uint64_t unknown_type;		/* skipped: type tag not known */
	uint64_t malformed;		/* skipped: shorter than its type needs, bad index, ... */
	uint64_t truncated;		/* stored evidence beyond max_items (counted, not kept) */
	uint64_t snapshots;
	uint64_t first_ts, last_ts;	/* ns, over records and snapshots; 0 when none */
	/* lost evidence, from the last engine snapshot */
	uint64_t ringbuf_drops, instance_map_full, thread_map_full, span_overflow;
	uint64_t engine_records;
	uint64_t state_full;		/* records flagged PB_RF_STATE_FULL + res state_full */
	/* user stacks (record --stacks), from the last engine snapshot:
	 * sent, not taken (rate limit), lost (ring buffer full), failed (no
	 * user stack), truncated (deeper than PB_STACK_DEPTH) */
	uint64_t stacks, stacks_rate_limited, stacks_lost, stacks_failed, stacks_truncated;
	/* record --budget windows (PB_REC_WINDOW): unknown, never leaks or
	 * violations (docs/record.md "Overhead budget") */
	uint64_t window_marks;		/* window boundaries */
	uint64_t window_cut_lives;	/* lifetimes open at a window's close */
	uint64_t window_unmatched;	/* USE/RELEASE of a windowed resource with no
					 * lifetime seen (its ACQUIRE in a gap), and
					 * ACQUIREs between a close and the next open */
};

/* NULL and errno on failure. The manifest must outlive the analysis. */
struct analysis *analysis__new(const struct manifest *m, const struct analysis_opts *opts);
void analysis__free(struct analysis *a);

/* Any record, as read from a trace: unknown types are counted and skipped;
 * a record shorter than its type needs (or than len) is counted as
 * malformed and never read past. Returns 0, or -EINVAL when skipped. */
int analysis__add_record(struct analysis *a, const struct pb_rec_hdr *rec, size_t len);

/* One aggregate snapshot; counters are cumulative since the recording
 * started, gauges are the value at ts_ns. per_desc has one entry per
 * descriptor (n_desc <= manifest events), per_res per resource. eng may be
 * NULL. Returns 0 or -errno. */
int analysis__add_snapshot(struct analysis *a, uint64_t ts_ns,
			   const struct pb_desc_stats *per_desc, size_t n_desc,
			   const struct pb_res_stats *per_res, size_t n_res,
			   const struct pb_engine_stats *eng);

/* The probes' cost model (trace TRACE_CHUNK_COST): per site class and per
 * descriptor. WAIT and hold times are then corrected for the probes' own
 * cost, and a resource whose WAITs are within the probe-effect error gets
 * no contention finding (docs/report.md "Probe-effect correction"; probefx.c).
 * Optional; may be called again (the last call wins). 0 or -ENOMEM. */
struct trace_cost_class;
struct trace_cost_desc;
int analysis__set_probe_cost(struct analysis *a, const struct trace_cost_class *cls,
			     size_t n_cls, const struct trace_cost_desc *d, size_t n_d,
			     bool calibrated);

/* The recording's window (from the trace header); optional, widens the
 * window seen in records and snapshots. */
void analysis__set_window(struct analysis *a, uint64_t start_ns, uint64_t end_ns);

/* The processes and threads recorded (trace TRACE_CHUNK_PROCS; borrowed:
 * must outlive the analysis), so findings name a holder "tid 123
 * (postgres, pid 120)". Optional. */
struct trace_proc;
void analysis__set_procs(struct analysis *a, const struct trace_proc *p, size_t n);

/* Override a descriptor's confidence (default: the manifest's). */
int analysis__set_confidence(struct analysis *a, uint32_t descriptor, enum pb_confidence c);

/* The confidence controller's leak hypothesis for an ACQUIRE descriptor:
 * over_capacity explained by leaked holdings (docs/validation.md "Leak or
 * broken model"); the leak finding of its resource quotes it. */
int analysis__set_leak(struct analysis *a, uint32_t descriptor, const struct confidence_leak *l);

/* Compute the ranked findings (idempotent; later add_* calls are refused
 * with -EBUSY). Returns the number of findings or -errno. */
int analysis__finish(struct analysis *a);

/* Ranked findings, top first (valid until analysis__free). */
const struct finding *analysis__findings(const struct analysis *a, size_t *n);
const struct analysis_counts *analysis__counts(const struct analysis *a);

/* {"counts", "first_ts_ns", "last_ts_ns", "findings": [...]} (docs/report.md) */
json_t *analysis__to_json(const struct analysis *a);
/* The same with at most max_findings findings, the top ones (0: all). */
json_t *analysis__to_json_top(const struct analysis *a, size_t max_findings);
void analysis__print(const struct analysis *a, FILE *out, size_t top);

const char *finding_kind_str(enum finding_kind k);

/* Read-only aggregates (aggregates.c), for renderers such as
 * src/metrics/: the manifest; a descriptor's counters and log2 histogram
 * (the last snapshot's, or derived from --events records when the trace
 * has no snapshot; NULL past the manifest's events); a resource's gauges
 * at the last snapshot (NULL when no snapshot carried them); the
 * descriptor's effective confidence. */
const struct manifest *analysis__manifest(const struct analysis *a);
const struct pb_desc_stats *analysis__desc_stats(const struct analysis *a, uint32_t descriptor);
const struct pb_res_stats *analysis__res_stats(const struct analysis *a, uint32_t resource);
enum pb_confidence analysis__confidence(const struct analysis *a, uint32_t descriptor);

/* Process and thread names (comm) for what prints a pid or tid: fn returns
 * the name of tid in process pid (tid == pid: the process; pid 0: not
 * known, find the thread by tid), or NULL when the trace does not say.
 * Without one, pids and tids show as numbers. Set it before
 * analysis__finish for the findings' evidence lines to name threads. */
typedef const char *(*analysis_comm_fn)(void *ctx, uint32_t pid, uint32_t tid);
void analysis__set_comm(struct analysis *a, analysis_comm_fn fn, void *ctx);
const char *analysis__comm(const struct analysis *a, uint32_t pid, uint32_t tid);

/* Chrome/Perfetto trace-event JSON (docs/report.md, "probity export"):
 * absolute CLOCK_MONOTONIC timestamps (us, as `perf record -k mono`),
 * process/thread name metadata ("M"), WAIT spans and off-CPU slices per
 * thread ("X", nested: a slice crossing its parent's end is clipped and
 * counted), holds and block I/O as async slices ("b"/"e"), USE instants
 * ("i"), flow arrows ("s"/"f") from a thread that released a resource to
 * the WAIT on it that its wakeup ended, and per-resource counters ("C").
 * Needs analysis__finish first. Returns 0 or -errno. */
struct perfetto_stats {
	size_t spans;		/* WAIT and hold slices */
	size_t offcpu, io;	/* off-CPU and block-I/O slices */
	size_t flows;		/* release -> woken WAIT arrows */
	size_t clipped;		/* slices cut to nest inside their parent */
	size_t threads, named;	/* thread tracks, of which with a name (comm) */
};
int export__perfetto_stats(const struct analysis *a, FILE *out, struct perfetto_stats *st);
/* The same; *n_spans (may be NULL) gets perfetto_stats.spans. */
int export__perfetto(const struct analysis *a, FILE *out, size_t *n_spans);

#endif
