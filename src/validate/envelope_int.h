/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope_int.h: what the envelope files share (private to
 * src/validate/envelope*.c; the public API is envelope.h).
 *
 *   envelope.c          training: new, begin_run, snapshot, record, finish
 *   envelope_metrics.c  the manifest's layout, candidate metrics, windows,
 *                       one metric's value over a closing window
 *   envelope_json.c     the file: to_json, write, parse, load
 *   envelope_check.c    binding and checking a run against an envelope
 */
#ifndef PROBITY_ENVELOPE_INT_H
#define PROBITY_ENVELOPE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "validate/envelope.h"

enum metric_type {
	MT_SHARE,		/* events of the descriptor / events of all */
	MT_RATIO,		/* events of kind K / ACQUIRE events, one resource */
	MT_GUARD_PASS,		/* events / hits (a `when:` guard) */
	MT_NEW_GEN,		/* ACQUIREs that opened a generation / ACQUIREs */
	MT_UNITS_MEAN,		/* decoded units / events */
	MT_DUR_P50,		/* median log2(ns) bucket of WAIT span / hold time */
	MT_KEY_ALIGNED8,	/* records: instance keys that are 8-byte aligned */
	MT_KEY_DISTINCT,	/* records: distinct keys among the first KEY_SEEN */
	MT_TRANSITION,		/* records: next event of an ACQUIREd instance is K / any */
	MT_UNITS_P50,		/* records: median log2 bucket of decoded units */
	MT__COUNT,
};

struct envelope_mtype {
	const char *name;
	double floor;		/* smallest half-width added to the trained range */
	uint64_t min_evidence;	/* denominator needed in a window */
	bool records;		/* needs --events records */
};

/* per metric type: name, band floor, evidence needed (envelope_metrics.c) */
extern const struct envelope_mtype envelope_mtypes[MT__COUNT];

#define BAND_REL	0.2	/* half-width at least 20% of the median */
#define BAND_SPREAD	0.5	/* and at least half the trained range */
#define KEY_SEEN	512	/* key_distinct looks at the first 512 events */
#define KEY_SLOTS	1024	/* open addressing, > 2 x KEY_SEEN */
#define TRANS_SLOTS	8192	/* (resource, instance) -> last kind; lossy cache */
#define MAX_METRICS	65536
#define MAX_NAME	256

struct metric {
	enum metric_type type;
	int desc;		/* descriptor (event index), -1 for ratios */
	int res;		/* resource of a ratio */
	int kind;		/* numerator kind of a ratio */
	char *name;
	/* training: one value per window */
	double *vals;
	size_t n_vals, cap_vals;
	/* band */
	double lo, hi, tmin, tmax, median;
	uint64_t windows;
};

/* what each descriptor is, from the manifest */
struct layout {
	size_t n_desc, n_res;
	uint8_t *kind;
	int *res;
	bool *guard;
	char **desc_id;
	char **res_name;
};

#define UNIT_BUCKETS	65	/* 0, then [2^i, 2^(i+1)) as bucket i + 1 */

struct key_acc {
	uint64_t n, aligned8;
	uint32_t units[UNIT_BUCKETS];	/* log2 histogram of decoded units */
	uint32_t seen, distinct;
	bool zero_seen;
	uint64_t *set;		/* KEY_SLOTS, allocated on first record */
};

/* last event kind per (resource, instance), across windows of a run: a
 * direct-mapped cache (a collision forgets the older instance) */
struct trans_slot {
	uint64_t instance;
	uint32_t resource;	/* + 1; 0 = empty */
	uint32_t kind;
};

/* one window of evidence: cumulative counters at its start, records since */
struct window {
	size_t n_desc, n_res;
	struct pb_desc_stats *base;
	uint64_t open_ts;
	bool started;
	struct key_acc *keys;
	struct trans_slot *trans;	/* TRANS_SLOTS, on the first record */
	uint64_t (*after_acq)[4];	/* per resource: next kind after an ACQUIRE */
};

struct pb_envelope {
	char *manifest_name;
	uint8_t sha256[32];
	size_t n_targets;
	char *target_id[ENVELOPE_MAX_TARGETS];
	char build_id[ENVELOPE_MAX_TARGETS][129];
	uint64_t window_ns;
	size_t runs, windows, n_untrained;
	bool key_metrics;	/* every training run had records */
	bool finished;
	struct metric *metrics;
	size_t n_metrics;
	/* training */
	struct layout lay;
	struct window win;
	bool in_run;
};

struct check_metric {
	const struct metric *band;	/* in the envelope */
	struct metric def;		/* type/desc/res/kind from this manifest */
	uint64_t checked, outside;
	uint32_t run;
	int warning;			/* index into warnings, -1 none */
};

struct envelope_check {
	const struct pb_envelope *env;
	struct layout lay;
	struct window win;
	struct check_metric *m;
	size_t n_m;
	struct envelope_warning *warnings;
	size_t n_warnings, cap_warnings;
	uint64_t windows;
	uint64_t key_windows;		/* windows in which a key metric had evidence */
};

/* ---- layout and candidate metrics (envelope_metrics.c) ---- */

int env_layout_init(struct layout *l, const struct manifest *m);
void env_layout_free(struct layout *l);
void env_metrics_free(struct metric *ms, size_t n);
/* Every metric this manifest can have, in a fixed order. 0 or -errno. */
int env_gen_candidates(const struct layout *l, struct metric **out, size_t *n_out);

/* ---- windows (envelope_metrics.c) ---- */

int env_window_init(struct window *w, size_t n_desc, size_t n_res);
void env_window_free(struct window *w);
/* a new run: counters start from zero */
void env_window_restart(struct window *w);
/* One ring-buffer record into the open window. 0 or -errno. */
int env_window_record(struct window *w, const void *rec, size_t len);
/* Feed a snapshot to a window. Returns 1 when the window closed (the
 * caller evaluates the metrics against cum, then calls env_window_advance),
 * 0 when it stays open. */
int env_window_snapshot(struct window *w, uint64_t ts, const struct pb_desc_stats *cum,
			size_t n_desc, uint64_t window_ns);
void env_window_advance(struct window *w, uint64_t ts, const struct pb_desc_stats *cum);
/* The value of one metric over the closing window; false when the window
 * holds too little evidence for it. */
bool env_metric_value(const struct metric *mt, const struct layout *l, const struct window *w,
		      const struct pb_desc_stats *cum, double *out);

#endif
