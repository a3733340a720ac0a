/* SPDX-License-Identifier: BSD-2-Clause */
/* diagnose_int.h: what the diagnosis files share (private to
 * src/analyze/diagnose*.c).
 *
 *   diagnose.c           analysis__finish: per resource, its evidence, the
 *                        weight of its wait time, its findings; the scores
 *   diagnose_joins.c     per-resource evidence: aggregates of snapshots and
 *                        the time joins of --events records
 *   diagnose_findings.c  the four diagnoses with severity and certainty
 *   diagnose_windows.c   record --budget: a windowed resource's leak,
 *                        estimated from its windows
 *
 * Formulas are documented in docs/report.md ("How findings are computed").
 */
#ifndef PROBITY_DIAGNOSE_INT_H
#define PROBITY_DIAGNOSE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "analyze/analyze_int.h"

#define LEAK_MIN_GROWTH		8
#define LEAK_WIN_MIN		2	/* windows with old cut holds a windowed leak needs */
#define CHURN_MIN_CYCLES	100
#define CHURN_MIN_SHARE		0.5
#define CHURN_FULL_RATE		1000.0
#define MIN_SEVERITY		1.0
#define HOLDER_SCAN		256
#define MAX_LONG_HOLDS		4096
#define TOP_N			64

struct tid_ns {
	uint32_t tid;
	uint64_t ns;
};

/* one WAIT descriptor: its spans split into I/O spans (the waiting thread
 * issued block I/O inside the span: a slow path, not waiting for a holder)
 * and the others, of which `woken` were ended by a releaser's wakeup */
struct wait_desc_ev {
	uint64_t spans, ns, io_spans, io_ns, woken;
	uint64_t wakeups, io_wakeups, release_wakeups, off_cpu_ns;
	uint64_t hist[PB_HIST_BUCKETS];
};

struct res_ev {
	struct wait_desc_ev *wd;	/* per manifest event (WAITs of r only) */
	bool wd_known;			/* wd carries I/O and wakeup joins */
	bool wd_spans;			/* ... built from WAIT span records */
	/* aggregates */
	uint64_t waits, wait_ns, acquires, uses, releases, hold_ns, holds;
	uint64_t wait_ns_raw;		/* before the probe-effect correction */
	uint64_t wait_hist[PB_HIST_BUCKETS], hold_hist[PB_HIST_BUCKETS];
	uint64_t long_n_agg;
	double long_ns_agg;
	bool has_use_desc, has_release_desc, has_acquire_desc;
	/* --events joins */
	size_t n_wait_spans, n_hold_spans;
	uint64_t waits_release_woken, wakeups_in_waits, wakeups_from_release;
	uint64_t off_cpu_wait_ns, io_in_waits, waits_with_io;
	uint64_t long_n, long_ns, long_max, explained_ns;
	struct tid_ns holders[TOP_N];
	size_t n_holders;
	uint64_t io_holding, io_bytes_holding, faults_holding;
	/* lifetimes */
	uint64_t lives, lives_closed, cycles, churn_cycles, stuck_lives, stuck_pins;
	uint64_t reused_instances;
	unsigned stuck_slices;
	/* record --budget (traces with window statistics): r was windowed, so its ACQUIRE, USE
	 * and RELEASE counts are what its windows saw; extensive figures are
	 * scaled by 1 / share (diagnose.c an_window_scale) */
	bool est;
	double share;			/* of the run inside its windows */
	size_t n_win;
	uint64_t cut_long_n;		/* holds cut by a close at an age >= long_hold_ns */
	double cut_long_ns;		/* ... their ages (lower bounds) */
	uint64_t open_long_n;		/* holds cut by an open, their part in the
					 * window >= long_hold_ns */
	double open_long_ns;		/* ... those parts (lower bounds) */
	double long_ns_win;		/* long-hold time its windows saw (not scaled) */
};

static inline int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static inline double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* the trace carries per-event resource records (--events) */
static inline bool events_mode(const struct analysis *a)
{
	return a->c.by_type[PB_REC_RESOURCE] > 0;
}

/* ---- per-resource evidence (diagnose_joins.c) ---- */

/* Sort the --events evidence for the joins (waits by thread, holds by
 * resource, points by thread or wakee, off-CPU by thread). */
void an_sort_evidence(struct analysis *a);
/* e's aggregates of resource r from snapshots (or from the records when
 * the trace has no snapshot); e->wd gets r's WAIT descriptors. */
void an_gather_aggregates(const struct analysis *a, size_t r, struct res_ev *e);
/* WAIT spans of r joined with holds (holds_r: r's holds, by start),
 * off-CPU, wakeups and I/O */
void an_join_waits(const struct analysis *a, size_t r, struct res_ev *e,
		   const struct an_span *holds_r, size_t n_holds_r);
/* lifetimes of r: closed, stuck (open for leak_age_ns at t_end), reused */
void an_join_lives(const struct analysis *a, size_t r, struct res_ev *e, uint64_t t_end,
		   uint64_t t_start);

/* ---- findings (diagnose_findings.c) ---- */

/* what the diagnoses share (diagnose_findings.c; diagnose_windows.c uses them) */
double an_hist_quantile(const uint64_t *h, double q);
double an_sqrt(double v);	/* diagnose_windows.c: without libm */
double an_poisson_low95(double n);	/* diagnose_windows.c: a count's 95 % low end */
char *an_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void an_ev_add(struct finding *f, const char *key, double value, const char *unit,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
struct finding *an_new_finding(struct analysis *a, enum finding_kind k, size_t r);
/* attach the descriptors of r of the kinds in mask (only: a subset, or
 * NULL); label and confidence */
void an_rest_on(struct analysis *a, struct finding *f, size_t r, unsigned mask, const bool *only);
void an_lost_evidence(struct analysis *a, struct finding *f, size_t r, uint64_t acquires,
		      bool uses_events);
/* record --budget windowed r: "estimated: N windows covering X %" */
void an_window_estimate(struct finding *f, const struct res_ev *e);

/* explained: by long holds; leak_expl: by leaked units (windowed leaks) */
void an_finding_contention(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			   double w_eff, double share, bool share_known, double explained,
			   double leak_expl);
void an_finding_long_hold(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			  double explained, bool from_events);
/* from: the first snapshot of r's series to use (record --budget: the
 * ones after its probes were attached for good), 0 = all */
void an_finding_leak(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
		     uint64_t t_start, size_t from);
void an_finding_churn(struct analysis *a, size_t r, struct res_ev *e, double dur_ns);
/* diagnose_windows.c: a windowed resource's leak, estimated from the
 * net growth in its windows and the old holds their closes cut. When it
 * is found, *claimed_ns = the age from which cut holds are its evidence
 * (not long holds), and *explained = the wait time (of w_eff) they
 * explain, in its severity as a long hold's is. */
bool an_finding_leak_windowed(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			      double w_eff, double *claimed_ns, double *explained);
/* diagnose.c: the time of n holds seen in a windowed r's windows, scaled
 * to the run at the 95 % lower bound of their count */
double an_window_run_ns(const struct res_ev *e, double n, double ns);
/* a finding resting on a stale or suspect descriptor says so first */
void an_model_summary(struct analysis *a, struct finding *f);

/* probefx.c: correct r's WAIT and hold times for the probes' own cost
 * (e->wait_ns_raw keeps the uncorrected wait time); whether probe cost
 * dominates r's WAITs; the report's lines and JSON: analyze_int.h */
void an_probefx_correct(struct analysis *a, size_t r, struct res_ev *e);
bool an_probefx_dominated(const struct analysis *a, size_t r);


#endif
