/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tokens.h: a token bucket that rate-limits requests.
 *
 * Resource demo.tokens in demo.manifest.yaml (class credit, shared: every
 * client takes from the one bucket). Tokens refill continuously at @rate
 * per second up to @capacity; a request takes its worst-case cost up front
 * and refunds what it did not use.
 */
#ifndef DEMO_TOKENS_H
#define DEMO_TOKENS_H

#include <stdint.h>

struct tokens;

struct tokens_stats {
	uint64_t takes;		/* successful tokens_take() calls */
	uint64_t taken;		/* tokens they took */
	uint64_t empty;		/* tokens_take() calls that found too few */
	uint64_t waits;		/* tokens_wait() calls */
	uint64_t wait_ns;
	uint64_t refunds;
	uint64_t refunded;	/* tokens given back */
	uint64_t capacity;
	double rate;
};

/* @rate tokens per second (0: unlimited), bucket of @capacity tokens,
 * starting full. NULL and errno on failure. */
struct tokens *tokens_new(double rate, uint64_t capacity);
void tokens_free(struct tokens *bucket);

/* Probe sites (demo.manifest.yaml); argument positions are part of it. */

/* ACQUIRE (try): takes @n tokens if the bucket holds them. 1 on success
 * (the manifest's guard: s32(retval) != 0), 0 when too few. */
int tokens_take(struct tokens *bucket, unsigned int n);
/* WAIT span: sleeps until @n tokens should be there (or a refund arrives). */
void tokens_wait(struct tokens *bucket, unsigned int n);
/* RELEASE: gives @n unused tokens back. */
void tokens_refund(struct tokens *bucket, unsigned int n);

void tokens_get_stats(struct tokens *bucket, struct tokens_stats *st);

#endif /* DEMO_TOKENS_H */
