/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope.h: distribution envelopes of runtime semantic validation
 * (docs/validation.md, "probity train").
 *
 * An envelope says what a clean run of one exact build looks like, in
 * numbers the engine already produces: per window of evidence (a window
 * closes at the first snapshot at least window_ns after it opened), each
 * descriptor's share of all events, the hit-rate ratios between the
 * descriptors of one resource (USE/ACQUIRE, RELEASE/ACQUIRE,
 * WAIT/ACQUIRE), guard pass rates, new-generation rates, mean decoded
 * units per event, the median log2 bucket of WAIT span / hold time, and,
 * when trained on --events traces, properties of the decoded instance keys
 * (8-byte alignment, distinct keys among the first events of a window),
 * the median log2 bucket of decoded units and transition ratios (what kind
 * of event follows an ACQUIRE of the same instance).
 * Training collects one value per metric per window over one or more
 * clean runs and derives a tolerance band [lo, hi] from their spread.
 *
 * It is bound to the manifest's SHA-256 and to every target's build-id;
 * a check against another manifest or build is refused (-EINVAL with a
 * message). Checking a run against it yields *warnings*: distributions are
 * weak evidence, so leaving the envelope never changes a descriptor's
 * confidence and never proves anything by itself.
 *
 *   env = envelope__new(manifest, &binding)    train:
 *   envelope__begin_run(env, has_records)      per training run
 *   envelope__snapshot / envelope__record      its evidence, in file order
 *   envelope__finish(env)                      bands from the windows
 *   envelope__to_json / envelope__write        the file (JSON)
 *
 *   env = envelope__load(path, err)            check:
 *   envelope__check_binding(env, manifest, &binding, err)
 *   chk = envelope_check__new(env, manifest)
 *   envelope_check__snapshot / __record        new warnings as they arise
 */
#ifndef PROBITY_ENVELOPE_H
#define PROBITY_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "common/errtext.h"
#include "contract/manifest.h"
#include "engine/events.h"

#define ENVELOPE_FORMAT		"probity-envelope"
#define ENVELOPE_VERSION	1
#define ENVELOPE_WINDOW_NS	1000000000ull	/* default window: 1 s */
#define ENVELOPE_MIN_WINDOWS	3	/* a metric needs this many training windows */
#define ENVELOPE_SUSTAIN	2	/* consecutive windows outside -> warning */
#define ENVELOPE_MAX_TARGETS	8

struct pb_envelope;
struct envelope_check;

/* What an envelope is bound to: the manifest bytes' SHA-256 and, per
 * manifest target (same order as manifest->targets), the GNU build-id (hex)
 * of the file that was probed. */
struct envelope_binding {
	uint8_t manifest_sha256[32];
	size_t n_targets;
	char build_id[ENVELOPE_MAX_TARGETS][129];
};

/* ---- training ---- */

/* An empty envelope for manifest m (descriptor i = manifest event i),
 * bound to b. NULL + errno. */
struct pb_envelope *envelope__new(const struct manifest *m, const struct envelope_binding *b);
/* Start a training run (its counters start from zero). has_records: the
 * run streams resource records (--events); key metrics are trained only
 * when every run has them. 0 or -errno. */
int envelope__begin_run(struct pb_envelope *env, bool has_records);
/* One cumulative snapshot of the current run (n_desc entries). */
int envelope__snapshot(struct pb_envelope *env, uint64_t ts_ns,
		       const struct pb_desc_stats *cum, size_t n_desc);
/* One ring-buffer record of the current run (others than resource
 * records are ignored). */
int envelope__record(struct pb_envelope *env, const void *rec, size_t len);
/* Derive the bands. -ENODATA when no metric got ENVELOPE_MIN_WINDOWS
 * windows (too little evidence: train longer). */
int envelope__finish(struct pb_envelope *env);

size_t envelope__n_metrics(const struct pb_envelope *env);
size_t envelope__n_runs(const struct pb_envelope *env);
size_t envelope__n_windows(const struct pb_envelope *env);
bool envelope__has_key_metrics(const struct pb_envelope *env);
/* Metrics the training saw in too few windows (not in the envelope). */
size_t envelope__n_untrained(const struct pb_envelope *env);

json_t *envelope__to_json(const struct pb_envelope *env);
/* Write the JSON file (temporary name, then rename). 0 or -errno. */
int envelope__write(const struct pb_envelope *env, const char *path);

/* ---- loading and binding ---- */

/* Parse an envelope. NULL with errno EINVAL and err->msg holding
 * "NAME:LINE:COL: ..." (syntax; err->line is LINE) or "NAME: FIELD:
 * expected ..., found ..." (shape), or another errno (ENOMEM; reading: the
 * open(2) errno). err (common/errtext.h) may be NULL. */
struct pb_envelope *envelope__parse(const char *name, const void *buf, size_t len,
				    struct pb_errtext *err);
struct pb_envelope *envelope__load(const char *path, struct pb_errtext *err);

/* Is env bound to this manifest and these build-ids? 0, or -EINVAL with
 * err naming what differs (manifest digest, a target's build-id, a metric
 * that does not exist in this manifest). */
int envelope__check_binding(const struct pb_envelope *env, const struct manifest *m,
			    const struct envelope_binding *b, struct pb_errtext *err);

void envelope__free(struct pb_envelope *env);

/* ---- checking a run ---- */

struct envelope_warning {
	const char *metric;		/* e.g. "ratio/demo.conn/USE:ACQUIRE" */
	double value;			/* in the window that raised it */
	double lo, hi;			/* the band */
	double trained_min, trained_max;
	uint64_t ts_ns;			/* snapshot that closed that window */
	uint64_t windows_outside;	/* so far, of windows_checked */
	uint64_t windows_checked;
	char text[384];			/* one line: what left the envelope */
};

/* env must have passed envelope__check_binding for m. NULL + errno. */
struct envelope_check *envelope_check__new(const struct pb_envelope *env, const struct manifest *m);
/* Feed one cumulative snapshot / one record, as record takes them. The
 * snapshot returns how many new warnings it raised (see
 * envelope_check__warnings: the last ones), or -errno. */
int envelope_check__snapshot(struct envelope_check *chk, uint64_t ts_ns,
			     const struct pb_desc_stats *cum, size_t n_desc);
int envelope_check__record(struct envelope_check *chk, const void *rec, size_t len);
/* Every warning raised so far (one per metric, first time it left the
 * envelope for ENVELOPE_SUSTAIN windows), counts kept up to date. */
const struct envelope_warning *envelope_check__warnings(const struct envelope_check *chk,
							size_t *n);
uint64_t envelope_check__windows(const struct envelope_check *chk);
size_t envelope_check__n_metrics(const struct envelope_check *chk);
/* {"file"?, "windows", "metrics_checked", "key_metrics", "warnings": [...]} */
json_t *envelope_check__to_json(const struct envelope_check *chk);
void envelope_check__free(struct envelope_check *chk);

#endif
