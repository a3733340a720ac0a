/* SPDX-License-Identifier: BSD-2-Clause */
/* governor.h: record --budget P% (docs/record.md "Overhead budget").
 *
 * A cost model per descriptor (ns per hit, from a gov_cost_source) times
 * its hit rate (the engine's per-descriptor hit counters) is the estimated
 * probe cost; divided by the target's CPU time (/proc/PID/stat utime+stime
 * of the tracked processes, or the cgroup's cpu.stat) it is the estimated
 * overhead. After a warm-up with every probe attached (it ends once it
 * spent the budget of 250 ms), the governor keeps the rare WAITs (must-
 * keep), the WAITs and resources that fit half the budget always on, and
 * samples the other ("hot") resources by time windows, each opened only
 * when the run's cost so far (a ledger) can pay it: it detaches their
 * ACQUIRE/USE/RELEASE (and unpinned WAIT) probes between windows
 * (engine__set_desc, one thread per resource), forgets their instances at
 * each detach (engine__forget_resource: no lifetime spans a gap) and
 * marks every boundary with a PB_REC_WINDOW record. If the must-keep
 * WAITs alone cost more than the budget, it says so and which ones; it
 * never detaches them.
 *	g = governor__new(plan, &costs, &opts);
 *	governor__tick(g, engine, now, cpu_ns, emit, ctx);	// every loop turn
 *	governor__finish(g, engine, now, emit, ctx);		// before the last snapshot
 */
#ifndef PROBITY_GOVERNOR_H
#define PROBITY_GOVERNOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "contract/plan.h"

struct engine;
struct governor;

/* Per-site-class costs in ns per probe hit. THE PLACE CALIBRATION PLUGS
 * IN: gov_costs__default() fills the conservative table below (the
 * machine facts of this VM: 6-8 us trap on an emulated first instruction,
 * ~1.4 us on an optimized 5-byte nop, a return probe = its entry trap +
 * 2 us, USDT as a nop5); at merge, src/engine/calib.h's
 * calib__site_cost_ns() fills the same struct from the measured figures. */
struct gov_site_costs {
	double entry_emulated_ns;	/* first instruction emulated / single-stepped */
	double entry_nop5_ns;		/* 5-byte nop (optimized by the kernel) */
	double ret_extra_ns;		/* a return probe on top of its entry trap */
	double usdt_ns;			/* USDT (nop) site */
	const char *origin;		/* "default table" / "calibration" */
};
#define GOV_DEFAULT_ENTRY_EMULATED_NS	7000.0
#define GOV_DEFAULT_ENTRY_NOP5_NS	1400.0
#define GOV_DEFAULT_RET_EXTRA_NS	2000.0
#define GOV_DEFAULT_USDT_NS		1400.0

/* What the governor reads: ns per hit of each descriptor (indexed like
 * plan->descriptors; a "hit" is one event, which may fire an entry and a
 * return probe), and where the figures came from. */
struct gov_cost_source {
	double *ns_per_hit;
	size_t n;
	const char *origin;
};

void gov_costs__default(struct gov_site_costs *c);
/* Fill src from the site classes of each descriptor's sites. 0 or -ENOMEM;
 * free with gov_cost_source__free(). */
int gov_cost_source__from_plan(struct gov_cost_source *src, const struct plan *p,
			       const struct gov_site_costs *c);
void gov_cost_source__free(struct gov_cost_source *src);

struct gov_opts {
	double budget;			/* fraction of the target's CPU time, (0, 1) */
	uint64_t warmup_ns;		/* every probe on, to measure rates; 0 = 1 s */
	uint64_t period_ns;		/* window period; 0 = 1 s */
	uint64_t min_window_ns;		/* shortest window; 0 = 20 ms */
};
#define GOV_MIN_DUTY	0.01		/* the shortest window: 1 % of a period */
#define GOV_RARE_HZ	100.0		/* a WAIT hit at most this often is must-keep */

/* Parse "2%", "2", "0.5%" into a fraction; -EINVAL unless 0 < P <= 100. */
int gov_parse_budget(const char *s, double *fraction);

/* A record for the trace (a struct pb_rec_window or a note); neither
 * (rec and note NULL): a window is about to close, write out every record
 * the probes produced so far first. */
typedef void (*gov_emit_fn)(const void *rec, size_t len, const char *note, void *ctx);

struct governor *governor__new(const struct plan *p, const struct gov_cost_source *c,
			       const struct gov_opts *o);
/* Advance: decide after the warm-up, open/close windows when due. cpu_ns
 * = the target's cumulative CPU time (0 when unknown). 0 or -errno. */
int governor__tick(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		   gov_emit_fn emit, void *ctx);
/* ms until the next window boundary (for the poll timeout), at most cap */
int governor__next_ms(const struct governor *g, uint64_t now, int cap);
/* The next tick may decide: the caller reads the CPU time afresh. */
bool governor__wants_cpu(const struct governor *g, uint64_t now);
/* Close the open windows (the trace ends with every boundary marked). */
void governor__finish(struct governor *g, struct engine *e, uint64_t now, uint64_t cpu_ns,
		      gov_emit_fn emit, void *ctx);
json_t *governor__report_json(const struct governor *g);
/* the window-length rule's state (gov_hold.c): the summary's budget.hold_window */
json_t *governor__hold_json(const struct governor *g);
void governor__report_print(const struct governor *g, FILE *out);
/* The always-on sites alone exceed the budget. */
bool governor__over_budget(const struct governor *g);
void governor__free(struct governor *g);

/* The target's CPU time in ns: utime+stime of these processes (those that
 * exited count no more), or a cgroup's cpu.stat usage_usec. 0 if unknown. */
uint64_t gov_cpu_ns_pids(const pid_t *pids, size_t n);
uint64_t gov_cpu_ns_cgroup(const char *dir);
/* The same, cumulative over the run: a process that exited keeps its last
 * reading. */
uint64_t governor__cpu_ns(struct governor *g, const pid_t *pids, size_t n);

#endif
