/* SPDX-License-Identifier: BSD-2-Clause */
/* confidence.h: the per-descriptor confidence controller of runtime
 * semantic validation (docs/validation.md).
 *
 * Fed with cumulative per-descriptor counters (aggregate snapshots, as the
 * engine and the trace hold them) and with the rate-limited violation
 * samples (PB_REC_VIOLATION), it judges each descriptor over windows of
 * evidence and moves it between enum pb_confidence states:
 *
 *   candidate / validated / degraded --(rate >= suspect_rate)--> suspect
 *   suspect --(recover_windows quiet windows)--> its initial state
 *   any --(rate >= stale_rate in stale_high_windows consecutive windows, or
 *          suspect_rate in stale_windows consecutive windows)--> stale
 *
 *   degraded --(promote_windows consecutive clean windows)--> validated
 *
 * stale is sticky for the run. Only a degraded descriptor (re-bound by
 * name to another build: `--rebind`) moves up, and only on clean evidence:
 * promote_windows consecutive closed windows (each >= min_events events,
 * so >= promote_windows x min_events events) that closed after the attach
 * grace, with no invariant violation and no failed cross-layer prediction
 * (docs/validation.md, "Promotion"). A candidate stays a candidate (review
 * or `train` promotes it). A promoted descriptor that goes suspect
 * recovers to degraded, not validated: it earns promotion again. Every
 * change records why. The controller never edits the manifest: what it concludes goes to
 * the trace and the report, the next descriptor version comes from review.
 */
#ifndef PROBITY_CONFIDENCE_H
#define PROBITY_CONFIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "contract/manifest.h"
#include "engine/events.h"

struct confidence;

struct confidence_opts {
	uint64_t min_events;		/* a window closes with at least this many events (default 50) */
	double suspect_rate;		/* violations / events in a window (default 0.05) */
	double stale_rate;		/* (default 0.20) */
	uint32_t stale_high_windows;	/* consecutive windows >= stale_rate -> stale (default 2) */
	uint32_t stale_windows;		/* consecutive windows >= suspect_rate -> stale (default 3) */
	uint32_t recover_windows;	/* consecutive quiet windows: suspect -> initial (default 3) */
	uint64_t grace_ns;		/* attached to a running process: RELEASE/USE of instances
					 * not seen acquired are not counted this long after the
					 * first snapshot (they may predate the attach); default 0 */
	uint64_t min_checks;		/* cross-layer predictions: a window's failure rate
					 * (failed / checked) counts once it holds at least this
					 * many checks; fewer carry over (default 20) */
	uint32_t promote_windows;	/* consecutive clean windows: degraded -> validated
					 * (default: recover_windows, the evidence that lets
					 * a suspect descriptor recover) */
	const struct manifest *manifest;	/* the descriptors' manifest: turns the leak
						 * hypothesis on (docs/validation.md "Leak or
						 * broken model"); NULL = off */
	const uint32_t *desc_event;	/* descriptor i's event in manifest (NULL: i);
					 * both read by confidence__new only */
};

/* The leak hypothesis of one ACQUIRE descriptor (confidence__leak): the
 * over_capacity windows that leaked holdings explained, with the latest
 * explanation "units_held exceed capacity because leaked holdings (idle
 * >= threshold_ns) are still counted". */
struct confidence_leak {
	uint64_t windows;		/* over_capacity windows explained: not model evidence */
	uint64_t violations;		/* their over_capacity violations */
	uint64_t charged_windows;	/* held back, not explained: charged to the model */
	uint64_t held;			/* violations still held back (undecided) */
	uint64_t untested;		/* violations whose holdings ended with their process
					 * before the test: neither leak nor model evidence */
	uint64_t leaked;		/* holdings idle since the window closed (latest) */
	uint64_t leaked_units;
	int64_t units_held;		/* units held when that window closed */
	uint64_t capacity;		/* the declared capacity */
	uint64_t threshold_ns;		/* idle at least this long: a leak candidate */
	uint64_t hold_edge_ns;		/* 99.9% of completed holds were shorter */
	uint64_t ts_ns;			/* snapshot that closed that window */
};

/* The release test of one RELEASE descriptor's resource
 * (confidence__release, docs/validation.md "Missing RELEASEs"; shared
 * resources): of the units held two snapshots back, those still held and
 * idle since the previous one are leak candidates; the rest were released
 * or touched since. Holds in flight explain a bounded amount of the rest;
 * its growth beyond the level of the first test that looks back to a
 * snapshot with the resource in use is RELEASEs the model does not
 * see (or a leak on instances still in use: not told apart), charged to
 * the resource's RELEASE descriptors as release_missing. */
struct confidence_release {
	uint64_t tested;		/* snapshots the test ran at */
	uint64_t untested;		/* snapshots it could not: no earlier snapshot in the
					 * engine's idle memory (PB_IDLE_SLOTS), no idle data,
					 * or no baseline yet (no ACQUIRE before the snapshot
					 * looked back to: the load had not started) */
	uint64_t charged;		/* missing RELEASEs charged to this descriptor */
	uint64_t charged_units;		/* growth charged to the resource's RELEASEs (units) */
	int64_t baseline_units;		/* busy units at the first test with the resource
					 * in use: not charged */
	int64_t held_units;		/* latest: units held two snapshots back */
	int64_t idle_units;		/* of which still held and idle since (leak candidates) */
	int64_t busy_units;		/* of which released or touched since */
	uint64_t threshold_ns;		/* the leak threshold T (0: too few completed holds) */
	uint64_t age_ns;		/* how far the latest test looked back */
	uint64_t ts_ns;			/* latest test */
};

/* The clean evidence behind a descriptor's state (confidence__evidence). */
struct confidence_evidence {
	uint64_t windows;		/* windows closed (judged) */
	uint64_t clean_windows;		/* of which clean (no violation, no failed prediction,
					 * after the grace) */
	uint32_t clean_run;		/* the current run of consecutive clean windows */
	uint64_t run_events;		/* events in that run */
	uint64_t run_checked;		/* predictions checked in that run (none failed) */
	bool promoted;			/* degraded -> validated happened (last change) */
	uint64_t promoted_ts_ns;	/* snapshot time of the last promotion */
	uint32_t promoted_windows;	/* the run that promoted it */
	uint64_t promoted_events;
	uint64_t promoted_checked;
};

/* record and report use this grace for an attach to a running process */
#define CONFIDENCE_ATTACH_GRACE_NS	1000000000ull

/* Invariants the controller judges: the engine's (PB_INV_*) and one
 * judged in user space only, from the snapshots (no BPF slot, no sample). */
#define CONFIDENCE_INV_RELEASE_MISSING	PB_INV_SLOTS
#define CONFIDENCE_INV_SLOTS		(PB_INV_SLOTS + 1)

#define CONFIDENCE_SAMPLES	3	/* samples kept per descriptor */
#define CONFIDENCE_REASON_MAX	384

/* One state change. */
struct confidence_change {
	uint32_t descriptor;
	uint64_t ts_ns;			/* snapshot time that closed the window */
	enum pb_confidence from, to;
	int invariant;			/* enum pb_invariant that dominated the window, -1 none */
	uint64_t window_events;
	uint64_t window_violations;	/* all invariants */
	uint64_t invariant_violations;	/* of `invariant` */
	uint64_t window_checked;	/* predictions judged in the window (v4) */
	uint64_t window_failed;		/* of which failed (= prediction_failed) */
	char reason[CONFIDENCE_REASON_MAX];
};

/* initial[i]: descriptor i's starting state (the plan's effective
 * confidence); NULL = all validated. NULL + errno on failure. */
struct confidence *confidence__new(size_t n_desc, const enum pb_confidence *initial,
				   const struct confidence_opts *opts);
void confidence__free(struct confidence *c);

/* Keep a violation sample (the first CONFIDENCE_SAMPLES per descriptor are
 * quoted in reasons). 0, or -EINVAL for a bad descriptor / short record. */
int confidence__sample(struct confidence *c, const struct pb_rec_violation *v, size_t len);

/* A record --budget window mark (PB_REC_WINDOW; other records are
 * ignored): its resource's release test ("Missing RELEASEs") stops, as
 * the engine forgets a windowed resource's instances at each close. */
void confidence__window(struct confidence *c, const struct pb_rec_hdr *rec, size_t len);

/* One snapshot of cumulative counters (n_desc entries). Closes the windows
 * that have enough evidence and judges them. Returns the number of state
 * changes it made (see confidence__changes), or -errno. */
int confidence__snapshot(struct confidence *c, uint64_t ts_ns,
			 const struct pb_desc_stats *cumulative, size_t n_desc);
/* The same with the snapshot's resource gauges (the idle holdings the leak
 * hypothesis tests); res NULL = confidence__snapshot. */
int confidence__snapshot_res(struct confidence *c, uint64_t ts_ns,
			     const struct pb_desc_stats *cumulative, size_t n_desc,
			     const struct pb_res_stats *res, size_t n_res);
/* The leak hypothesis of descriptor di; true when leaks explained at least
 * one over_capacity window (out filled either way, zeroed when off). */
bool confidence__leak(const struct confidence *c, uint32_t descriptor,
		      struct confidence_leak *out);

/* The release test of descriptor di's resource; true when it is a RELEASE
 * whose resource the test covers (out zeroed otherwise). */
bool confidence__release(const struct confidence *c, uint32_t descriptor,
			 struct confidence_release *out);

enum pb_confidence confidence__state(const struct confidence *c, uint32_t descriptor);
enum pb_confidence confidence__initial(const struct confidence *c, uint32_t descriptor);
/* Cumulative violations of one invariant (as last seen, after the grace);
 * invariant < CONFIDENCE_INV_SLOTS (release_missing included). */
uint64_t confidence__violations(const struct confidence *c, uint32_t descriptor, int invariant);
/* Cumulative events as last seen, in the coupled view: the observed ones
 * plus confidence__inferred_events, the events that happened unobserved
 * (acquisitions charged as acquire_bypassed, RELEASEs charged as
 * release_missing). */
uint64_t confidence__events(const struct confidence *c, uint32_t descriptor);
uint64_t confidence__inferred_events(const struct confidence *c, uint32_t descriptor);
/* Cross-layer predictions of one effect (enum pb_effect) as last seen:
 * judged, failed, and unjudged (lost evidence). */
void confidence__predictions(const struct confidence *c, uint32_t descriptor, int effect,
			     uint64_t *checked, uint64_t *failed, uint64_t *unjudged);
/* Why the descriptor is in its state: the last change's reason, or NULL. */
const char *confidence__reason(const struct confidence *c, uint32_t descriptor);
/* The clean evidence so far (zeroed for a bad descriptor). */
void confidence__evidence(const struct confidence *c, uint32_t descriptor,
			  struct confidence_evidence *ev);
/* The promotion rule in force (promote_windows, min_events). */
void confidence__promotion_rule(const struct confidence *c, uint32_t *windows,
				uint64_t *min_events);
/* The first violation samples kept for a descriptor (after the grace). */
const struct pb_rec_violation *confidence__samples(const struct confidence *c,
						   uint32_t descriptor, size_t *n);
/* Every change so far, in order. */
const struct confidence_change *confidence__changes(const struct confidence *c, size_t *n);
bool confidence__any_stale(const struct confidence *c);
size_t confidence__n_desc(const struct confidence *c);

const char *pb_invariant_str(int invariant);

/* Calibrated certainty that a descriptor in state st with `events` events
 * in the run is right (docs/validation.md "Calibrated confidence"): the
 * fraction of such findings right in bench/mutations.sh, smoothed; -1
 * when the shipped table has no such cell. *findings: the cell's size
 * (may be NULL). */
double confidence__calibrated(enum pb_confidence st, uint64_t events, uint32_t *findings);

#endif
