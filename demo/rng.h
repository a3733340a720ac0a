/* SPDX-License-Identifier: BSD-2-Clause */
/* rng.h: the seeded PRNG behind every random choice of the demo (--seed). */
#ifndef DEMO_RNG_H
#define DEMO_RNG_H

#include <stdint.h>

/* splitmix64: one 64-bit state word, good enough for workload choices. */
static inline uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias worth caring about; n > 0. */
static inline uint64_t rng_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(state) * n) >> 64);
}

/* A state derived from (seed, stream), so that e.g. request i draws the same
 * pages in every run with the same seed, whichever thread serves it. */
static inline uint64_t rng_stream(uint64_t seed, uint64_t stream)
{
	uint64_t s = seed ^ (stream * 0xd1b54a32d192ed03ULL);

	return rng_next(&s);
}

#endif /* DEMO_RNG_H */
