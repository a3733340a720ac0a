/* runtime.h: the specializer's loop (docs/rejit.md): attach the generic
 * generation of lb_xdp on a veth in a network namespace, drive traffic,
 * profile, specialize, swap with bpf_link_update, deoptimize on guard
 * failures or configuration changes, and record every step in a receipt
 * store through include/probity/receipts.h.
 */
#ifndef PROBITY_REJIT_RUNTIME_H
#define PROBITY_REJIT_RUNTIME_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "rejit/script.h"

struct rejit;

struct rejit_opts {
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
	const uint32_t *cfg_field;	/* initial configuration (index into rj_cfg_fields) */
	const uint32_t *cfg_value;
	size_t n_cfg;
	const struct rj_script *script;
	uint32_t inject_drop_handoff;	/* test only: K-th handoff unlogged, 0 none */
	uint32_t plant_spike;		/* K-th specialized generation is slow, 0 none */
	uint32_t spike_rounds;		/* default 16384 */
	volatile sig_atomic_t *stop;	/* set by a signal handler */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* Open the store, set up the namespace, load and attach generation 0.
 * On failure err gets a message naming what failed. */
int rejit__new(const struct rejit_opts *opts, struct rejit **out, char *err, size_t errsz);
/* The loop, until the duration ends or *stop. */
int rejit__run(struct rejit *r, char *err, size_t errsz);
/* Retire the active generation ("stopped"), detach, unload everything
 * (logging each unload), delete the namespace if created. Idempotent. */
int rejit__stop(struct rejit *r);
/* Every generation, swap and counter (see docs/rejit.md). */
json_t *rejit__summary(const struct rejit *r);
void rejit__free(struct rejit *r);

#endif
