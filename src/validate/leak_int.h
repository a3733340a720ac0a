/* SPDX-License-Identifier: BSD-2-Clause */
/* leak_int.h: the leak hypothesis of the confidence controller
 * (docs/validation.md "Leak or broken model"), private to src/validate.
 *
 * Before an over_capacity window counts against the model, the window's
 * violations are held back until the holdings it saw have had time to show
 * whether they are leaks: a holding untouched for at least the leak
 * threshold T (16 x the upper edge of the log2 bucket holding the 99.9th
 * percentile of the resource's own completed hold times, or the longest
 * `expect ... within` bound of its events if larger) is a leak candidate.
 * At the first snapshot at least T after the window closed, the units held
 * at its close minus the units of the holdings untouched since then are
 * compared with the declared capacity: within it, the leaked holdings
 * explain the excess (a leak, no model evidence); else, or when the
 * hypothesis cannot be tested (too few completed holds, T longer than the
 * engine's PB_IDLE_SLOTS snapshots of memory, no idle data), the
 * violations are charged to the model as before. Holdings that ended with
 * their process before the test (exit_ended grew) cannot be told apart:
 * their violations are counted untested, charged to neither.
 *
 * The release test (docs/validation.md "Missing RELEASEs") covers what
 * over_capacity and acquire_active cannot see (on `shared: true`
 * resources, those with an ACQUIRE and a RELEASE, not credit): at each
 * snapshot, of the units held two snapshots back, those still held and
 * idle since the previous one are leak candidates, those that ended with their process are
 * set apart, and the rest ("busy") were released or touched since. Holds
 * in flight explain a bounded busy level; its growth beyond its high-water
 * mark (the first test's level is the baseline, never charged; a level
 * counts once it held at LEAK_BUSY_RUN tests in a row) is RELEASEs the
 * model does not see, or a leak on instances still in use (not told
 * apart), charged in RELEASE events (units x ACQUIRE events / units) to
 * the resource's RELEASE descriptors as release_missing. */
#ifndef PROBITY_LEAK_INT_H
#define PROBITY_LEAK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "contract/manifest.h"
#include "engine/events.h"
#include "validate/confidence.h"

#define LEAK_MIN_HOLDS		100	/* completed holds before the distribution counts */
#define LEAK_QUANTILE		0.999	/* of the completed hold times */
#define LEAK_FACTOR_LOG2	4	/* T = 2^4 x that bucket's upper edge */
#define LEAK_PENDING		(2 * PB_IDLE_SLOTS)	/* held-back windows per descriptor */
#define LEAK_BUSY_RUN		2	/* release test: tests a busy level must last */

struct leak_model;

/* desc_event[i]: descriptor i's event in m (NULL: i). NULL + errno. */
struct leak_model *leak_model__new(const struct manifest *m, const uint32_t *desc_event,
				   size_t n_desc);
void leak_model__free(struct leak_model *lm);

/* The snapshot's counters, before its windows are judged. */
void leak_model__snapshot(struct leak_model *lm, uint64_t ts, const struct pb_desc_stats *desc,
			  size_t n_desc, const struct pb_res_stats *res, size_t n_res);

/* A window of descriptor di closed at ts with v over_capacity violations.
 * Holds them back, settles earlier held-back windows whose time has come.
 * Returns the violations to charge to the model now; *held: still held
 * back after this call. */
uint64_t leak_model__window(struct leak_model *lm, uint32_t di, uint64_t ts, uint64_t v,
			    uint64_t *held);

/* The coupled-descriptor view of di's cumulative counters (in place):
 * acquisitions inferred from RELEASEs of instances never acquired
 * (acquire_bypassed, counted as events and as that invariant of the
 * ACQUIRE descriptor) and the RELEASE/USE violations they explain; and
 * the RELEASEs the release test found missing (release_missing, counted as
 * events and as that invariant of a RELEASE descriptor). */
void leak_model__adjust(const struct leak_model *lm, uint32_t di, uint64_t *events,
			uint64_t viol[CONFIDENCE_INV_SLOTS]);

/* The release test of descriptor di's resource (false: di is no RELEASE
 * the test covers). */
bool leak_model__release(const struct leak_model *lm, uint32_t di,
			 struct confidence_release *out);

/* record --budget windows resource res: the release test stops for good
 * (each window's close forgets the resource's instances in the engine,
 * so the units held a snapshot back read as released since: a growth of
 * "busy" units that is the forgetting, not RELEASEs the model misses). */
void leak_model__windowed(struct leak_model *lm, uint32_t res);

/* True while RELEASE descriptor di has missing RELEASEs charged and the
 * resource's busy level is still at its high-water mark: the unexplained
 * growth persists, so its windows are neither clean (no promotion) nor
 * quiet (no recovery from suspect). */
bool leak_model__release_outstanding(const struct leak_model *lm, uint32_t di);

/* What the hypothesis concluded for descriptor di (false: never tested
 * true). */
bool leak_model__get(const struct leak_model *lm, uint32_t di, struct confidence_leak *out);

#endif
