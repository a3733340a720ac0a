/* SPDX-License-Identifier: BSD-2-Clause */
/* governor_int.h: the governor's state, shared by governor.c (model and
 * windows) and gov_report.c (costs, CPU time, estimates, report) only. */
#ifndef PROBITY_GOVERNOR_INT_H
#define PROBITY_GOVERNOR_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "record/governor.h"
#include "engine/engine.h"
#include "engine/events.h"
#include "contract/manifest.h"

#define GOV_GROUP_MAX_DESC	16
#define GOV_SHARE_CAP		0.9	/* window_share()'s ceiling (governor.c) */
/* A window lasts at least this long: a close forgets the resource's
 * instances, so the oldest hold a window can show is its own length, and
 * report's leak test needs closes that cut holds older than the leak age
 * (100 ms by default) and its long holds are >= 50 ms; 2.5x the leak age.
 * For the same duty, longer windows come less often, and each close's
 * fixed cost is paid less often too. Longer when the closes cut holds
 * older than half their window (gov_hold.c). */
#define GOV_HOLD_WINDOW_NS	250000000ull
#define GOV_METER_POLL_NS	200000000ull	/* effects statistics read at most every 200 ms */

enum gov_phase { GOV_WARMUP = 0, GOV_GOVERNED };

/* the ACQUIRE/USE/RELEASE descriptors of one resource: windowed together */
/* a group's cumulative counts at one instant (gov_group_events) */
struct gov_win_ev {
	uint64_t acq, rel;		/* ACQUIRE, RELEASE events */
	uint64_t waits, wait_ns;	/* WAIT events (spans ended) and their time */
};

struct gov_group {
	uint32_t res;
	uint32_t descs[GOV_GROUP_MAX_DESC];
	size_t n_desc;
	bool windowed, attached, closing;
	bool ext;			/* kept open past the joint close (gov_extend) */
	double ext_c0;			/* ... its probes' cost (hits x cost) then */
	unsigned on_streak;		/* consecutive plans that kept it always on */
	double full_rate;		/* probe ns per s with every probe on (warm-up) */
	double warm_hits_rate;		/* events per s in the warm-up */
	/* the open window, and one sample per window of its rates */
	uint64_t win_open_ns, win_acq0, win_ev0;
	size_t n_win;
	uint64_t win_ns;		/* time inside windows */
	uint64_t att_ns;		/* attached since (0: detached) */
	uint64_t on_ns_dec;		/* attached time since the last decision
					 * (closed windows; the open one is added) */
	size_t n_move;			/* descriptors its last mark moved */
	double acq_sum, acq_sumsq;	/* ACQUIREs per s, per window (corrected) */
	double acq_raw_sum;		/* ... as counted in the windows */
	double ev_sum, ev_sumsq;	/* events per s, per window */
	uint64_t acq_in, ev_in;		/* counted inside windows */
	/* gov_report.c's estimator (docs/record.md "Estimates"): the
	 * Poisson variance of each window's rates, the counted ACQUIRE
	 * rates' sum of squares (the uncorrected bound), the largest
	 * slowdown share a window was corrected by, and the one sample
	 * that spanned the warm-up (a program's start, every probe on:
	 * kept apart, used only when no window followed) */
	double acq_pois, ev_pois, acq_raw_sumsq, share_max;
	bool share_capped;		/* a window's share hit GOV_SHARE_CAP */
	bool has_warm;
	double warm_acq, warm_acq_raw, warm_ev, warm_s;
	/* the open window's counts at its open, and what its close saw
	 * (PB_REC_WINDOW_STATS: net growth, waits, cut generations) */
	struct gov_win_ev win_at0;
	struct pb_rec_window_stats cut;	/* .detached_ns: set by the close */
	/* gov_hold.c: the window length its closes' cut holds ask for, the
	 * close that asked, and its windows' growth and old cut holds after
	 * the warm-up (leak-like: its ask is withdrawn) */
	uint64_t hold_want_ns, hold_age_ns, hold_win_ns, hold_old;
	int64_t hold_growth;
	bool hold_leaky;
};

/* the OS effects in a plan (gov_meter.c gov_fx_plan) */
struct gov_fx {
	bool gate;			/* the engine can turn them off */
	bool windowed;			/* on only inside the windows */
	double rate;			/* ns per s of wall while on (measured) */
	double fixed;			/* ... that no plan can avoid (no gate) */
};

/* gov_meter.c: the engine programs' measured run time and the recorder's
 * CPU, besides the traps the cost source prices */
struct gov_meter {
	bool stats;			/* kernel run-time statistics readable */
	bool gate, fx_on;		/* the effects gate exists; it is on */
	struct engine_prog_cost at0, last;	/* at the start, at the last read */
	double *trap;			/* calibrated trap cost per hit, per descriptor */
	double *runs;			/* probe programs one hit runs, per descriptor */
	double prog_ns;			/* measured ns per probe-program run (0: none) */
	uint64_t dec_probe_ns, dec_probe_runs;	/* at the last plan */
	double effects_ns;		/* effects program time, charged so far */
	double dec_effects_ns;		/* ... at the last plan */
	double fx_on_ns, fx_off_ns;	/* ... with the gate on / off */
	uint64_t fx_on_wall_ns;		/* wall time with the gate on */
	uint64_t fx_edge_ns;		/* the last read or toggle */
	uint64_t fx_off_since, fx_off_total_ns;
	size_t n_toggles;
	double fx_rate;			/* effects ns per s while on (run's mean) */
	struct gov_fx fx;		/* the last plan's verdict */
	uint64_t self_cpu0, self_cpu;	/* the recorder's CPU (getrusage) */
	uint64_t read_ns;		/* the last statistics read */
};

struct gov_cpu_seen {
	pid_t pid;
	uint64_t ns;			/* its last CPU time reading */
};

struct governor {
	const struct plan *p;
	struct gov_opts o;
	size_t n_desc;
	const double *cost;		/* ns per hit, per descriptor: cost_own */
	double *cost_own;		/* the cost source's traps + the measured
					 * probe programs (gov_meter_plan) */
	struct gov_meter meter;
	const char *origin;
	int *group_of;			/* descriptor -> group, -1 = not probed */
	bool *pin;			/* WAIT kept attached across its group's
					 * windows: must-keep (rare) or fits */
	bool *pin_old;			/* ... at the decision before */
	bool *must;			/* ... must-keep: rare, never detached */
	double *rate;			/* probe ns per s while attached (last known) */
	double *hz;			/* hits per s while attached (last known) */
	struct gov_group *groups;
	size_t n_groups;
	uint64_t *hits, *prev, *warm_hits;
	uint64_t *events;		/* per descriptor, read at window edges */
	uint64_t *total_ns;		/* ... their time (WAIT span, RELEASE hold) */
	uint64_t *open_hits;		/* hits when the windows last opened */
	uint64_t *det_hits;		/* hits while a close detached it (not in
					 * its rate); [n_desc + i]: at the last plan */
	uint64_t win_ts;		/* ... at this time */
	double win_share;		/* the probes' share of the target's CPU
					 * in the last window (rates / (1 - it)) */
	double *desc_cost_ns;		/* estimated probe cost so far, per descriptor */
	enum gov_phase phase;
	uint64_t start_ns, gov_start_ns, last_ns, end_ns, next_ns, cycle_start;
	uint64_t cpu_start, cpu_gov_start, cpu_first, cpu_last, cpu_end;
	double warm_cost_ns, gov_cost_ns;
	double cpu_rate, allowed_rate, always_on_rate, duty;
	bool cpu_known, over_budget, was_over, decided;
	uint64_t dec_ns, dec_cpu;	/* the last decision; warm_hits = its hits */
	double base_rate;		/* CPU ns/s net of the probes, at it */
	double must_rate;
	double hot_rate;		/* probe ns/s of the windowed ones, all on */
	uint64_t close_lat_ns;		/* the last close took this long */
	double close_cost_total_ns;	/* every close's, summed */
	double close_cost_ns;		/* ... and its probes' hits while the
					 * links were being destroyed cost this
					 * (counted, not close_lat_ns at full rate:
					 * the kernel removes the breakpoints
					 * before its RCU wait) */
	uint64_t close_end_ns;		/* ... and ended then */
	uint64_t cpu_last_ns;		/* when cpu_last was read */
	struct gov_cpu_seen *cpu_seen;	/* governor__cpu_ns's processes */
	size_t n_cpu_seen;		/* probe ns/s of the must-keep WAITs */
	uint64_t n_debt_waits;		/* window openings postponed by the ledger */
	uint64_t window_ns, cycle_ns;
	/* gov_hold.c: the window length the closes' cut holds ask for (0:
	 * none), the close that set it, and how often it grew */
	uint64_t hold_want_ns, hold_age_ns, hold_win_ns;
	uint64_t hold_seen_ns, hold_close_ts;	/* all closed windows' length */
	uint32_t hold_res;
	size_t hold_grows, hold_closes, hold_withdrawn;
	size_t n_open;			/* windows opened after the warm-up */
	/* gov_window.c gov_extend: cheap resources kept open past a joint
	 * close, until ext_end_ns; ext_ok: the close due now may extend */
	uint64_t ext_end_ns, ext_last_ns;
	double ext_cost_ns;		/* the last extension's probe cost, its
					 * close's included: the ledger's guess */
	size_t n_ext;
	bool ext_ok;
	/* the slowdown a window causes as the ACQUIREs of resources not
	 * windowed see it (gov_report.c; reported, not used): their hits
	 * inside the windows and between them (a close to the next open) */
	uint64_t ref_close_ts, ref_close_sum, ref_sig;
	bool ref_have_close;
	double ref_in_n, ref_in_s, ref_out_n, ref_out_s;
};

static inline enum pb_event_kind gov_desc_kind(const struct governor *g, size_t d)
{
	return g->p->manifest->events[g->p->descriptors[d].event].kind;
}

/* gov_window.c: the window edges */
struct engine;
size_t gov_movable(const struct governor *g, const struct gov_group *gr);
void gov_window_mark(struct governor *g, struct gov_group *gr, bool on, uint64_t ts,
		     gov_emit_fn emit, void *ctx);
/* the group's ACQUIRE and RELEASE events, WAIT events and time, in
 * g->events and g->total_ns */
void gov_group_events(const struct governor *g, const struct gov_group *gr,
		      struct gov_win_ev *out);
void gov_window_stats(struct governor *g, struct gov_group *gr, uint64_t ts, gov_emit_fn emit,
		      void *ctx);
/* attach one group (ts: after its last attach); the window's counts start */
int gov_open_group(struct governor *g, struct engine *e, struct gov_group *gr, uint64_t *ts);
/* close every open windowed group in parallel (ts: before the first detach),
 * except those gov_extend keeps open */
int gov_close_groups(struct governor *g, struct engine *e, uint64_t ts);
/* at a joint close at now: keep the cheap windowed resources open for
 * longer (gr->ext, until g->ext_end_ns), for at most room ns of probe
 * cost (the ledger's); returns how many */
size_t gov_extend(struct governor *g, uint64_t now, double room);
/* the extended groups: true if any (their flags cleared: they close now;
 * g->hits read since: their extension's cost to g->ext_cost_ns) */
bool gov_ext_close(struct governor *g);
bool gov_ext_open(const struct governor *g);
/* the next window's expected extension cost (its window's: win_cost) */
double gov_ext_expect(const struct governor *g, double win_cost);
/* the probes' share of the target's CPU since the windows opened */
void gov_window_share(struct governor *g);
/* the cost of the hits since g->hits was read before a close */
int gov_close_cost(struct governor *g, struct engine *e);

/* gov_meter.c */
int gov_meter_init(struct governor *g, const double *trap);
void gov_meter_free(struct governor *g);
void gov_meter_start(struct governor *g, struct engine *e, uint64_t now);
double gov_meter_read(struct governor *g, struct engine *e, uint64_t now);
double gov_meter_poll(struct governor *g, struct engine *e, uint64_t now);
void gov_meter_effects(struct governor *g, struct engine *e, uint64_t now, bool on);
double gov_meter_plan(struct governor *g);
void gov_fx_plan(struct gov_fx *f, double allowed, double *on, double *hot);
json_t *gov_meter_json(const struct governor *g);
void gov_meter_print(const struct governor *g, FILE *out);

/* gov_hold.c: the window length a close's oldest cut hold (age_max_ns,
 * in a window of win_ns) asks for, given the length asked so far (cur_ns):
 * never shorter than cur_ns */
uint64_t gov_hold_demand(uint64_t win_ns, uint64_t age_max_ns, uint64_t cur_ns);
/* the window length that rule gives, capped by all closed windows' length */
uint64_t gov_hold_window(uint64_t want_ns, uint64_t seen_ns);
/* after a close's stats: lengthen the next windows if it cut old holds */
void gov_hold_close(struct governor *g, struct gov_group *gr, uint64_t close_ns,
		    gov_emit_fn emit, void *ctx);

/* gov_report.c */
void gov_group_hits(const struct governor *g, const struct gov_group *gr, const uint64_t *hits,
		    uint64_t *acq, uint64_t *ev);
void gov_sample_window(struct governor *g, struct gov_group *gr, uint64_t close_ts);
bool gov_any_windowed(const struct governor *g);
bool gov_any_open(const struct governor *g);
bool gov_any_detached(const struct governor *g);
/* the i-th group by cost, dearest first when dear_first, else cheapest */
size_t gov_order(const struct governor *g, size_t i, bool dear_first);
void gov_over_budget_note(const struct governor *g, double base, char *buf, size_t sz);

#endif
