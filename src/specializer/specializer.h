/* SPDX-License-Identifier: BSD-2-Clause */
/* specializer.h: probity's reference specializer (docs/rejit.md), the
 * library behind `probity rejit`: attach the generic generation of lb_xdp
 * on a veth in a network namespace, drive traffic, profile, specialize
 * (src/bpfrewrite/), swap with bpf_link_update, deoptimize on guard
 * failures or configuration changes, and record every step in a receipt
 * store through include/probity/receipts.h.
 *
 *   specializer__new()      store, netns, generation 0 attached
 *   specializer__run()      the loop, until the duration ends or *stop
 *   specializer__stop()     retire, detach, unload, delete the netns
 *   specializer__summary()  every generation, swap and counter (typed);
 *                           sp_summary__to_json() is its JSON form
 *
 * Errors: -errno, with a message through pr_err() (src/common/log.h).
 */
#ifndef PROBITY_SPECIALIZER_H
#define PROBITY_SPECIALIZER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "specializer/script.h"

struct specializer;

struct specializer_opts {
	const char *store_dir;
	uint32_t duration_ms;		/* 0: until *stop */
	const char *netns;		/* existing netns; NULL: create one */
	const char *dev;		/* XDP device (default pbrj1) */
	const char *peer;		/* traffic source device (default pbrj0) */
	uint32_t rate_pps;		/* default 4000 */
	uint32_t profile_interval_ms;	/* default 1000 */
	uint32_t bias_permille;		/* default 950 */
	uint64_t guard_threshold;	/* failures per interval, default 200 */
	uint32_t min_samples;		/* per site and epoch, default 100 */
	const uint32_t *cfg_field;	/* initial configuration (index into sp_cfg_fields) */
	const uint32_t *cfg_value;
	size_t n_cfg;
	const struct sp_script *script;
	uint32_t inject_drop_handoff;	/* test only: K-th handoff unlogged, 0 none */
	uint32_t plant_spike;		/* K-th specialized generation is slow, 0 none */
	uint32_t spike_rounds;		/* default 16384 */
	volatile sig_atomic_t *stop;	/* set by a signal handler */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* ---- the summary: what happened, typed ---------------------------------- */

/* A growable list of strings (transform ids, retirement reasons). */
struct sp_strs {
	char **v;
	size_t n, cap;
};

/* One bpf_link swap (or the first attach: from -1). */
struct sp_swap {
	uint64_t t_ms;
	int from, to;
	char *reason;
	bool logged;
};

/* One profile epoch's decision. */
struct sp_epoch_plan {
	uint32_t epoch, spec_mask, hot_mask;
	int active;
};

/* One script step that ran. */
struct sp_step_done {
	uint64_t t_ms;
	uint32_t line;
	uint32_t kind;		/* SP_STEP_CONFIG / SP_STEP_TRAFFIC */
};

struct sp_gen_summary {
	int ordinal;
	bool generic;			/* kind: "generic" / "specialized" */
	const char *generation_id;	/* NULL: unlogged */
	const char *receipt;		/* receipt digest; NULL: none */
	uint32_t prog_id, insns;
	bool logged, unloaded, planted_spike;
	const struct sp_strs *transforms, *assumptions, *retired;
	int activations;
	uint64_t loaded_t_ms, run_cnt, run_time_ns;
	/* the verdict check (BPF_PROG_TEST_RUN rows), the JSON the receipt
	 * holds as evidence; NULL for generation 0 */
	const json_t *equivalence;
};

#define SP_NSITES 4

struct sp_summary {
	const char *store, *netns, *dev;
	int ifindex;
	uint64_t epochs;
	const struct sp_gen_summary *gens;
	size_t n_gens;
	const struct sp_swap *swaps;
	size_t n_swaps;
	const char *const *site_names;		/* SP_NSITES */
	uint64_t guard_fail[SP_NSITES];
	uint64_t fallback_failed;
	uint64_t deopts, rejected_candidates, specialized;
	const struct sp_epoch_plan *profile;
	size_t n_profile;
	const struct sp_step_done *script_steps;
	size_t n_script_steps;
	uint64_t sent, send_errors;
};

/* Open the store, set up the namespace, load and attach generation 0.
 * *out is set even on failure (free it with specializer__free). -EINVAL
 * for bad options (names), else what failed. */
int specializer__new(const struct specializer_opts *opts, struct specializer **out);
/* The loop, until the duration ends or *stop. */
int specializer__run(struct specializer *s);
/* Retire the active generation ("stopped"), detach, unload everything
 * (logging each unload), delete the namespace if created. Idempotent. */
int specializer__stop(struct specializer *s);
/* Every generation, swap and counter (see docs/rejit.md); valid until the
 * next call or specializer__free. NULL and errno on failure. */
const struct sp_summary *specializer__summary(struct specializer *s);
void specializer__free(struct specializer *s);

/* The summary as `probity -j rejit` prints it (new reference). */
json_t *sp_summary__to_json(const struct sp_summary *sum);

#endif
