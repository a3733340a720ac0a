/* SPDX-License-Identifier: BSD-2-Clause */
/* latency.h: a log-linear latency histogram (p50/p99 in the exit summary). */
#ifndef DEMO_LATENCY_H
#define DEMO_LATENCY_H

#include <stdint.h>

#define LAT_SUB_BITS 5			/* 32 buckets per power of two: <= 3% error */
#define LAT_SUB (1u << LAT_SUB_BITS)
#define LAT_BUCKETS (64u * LAT_SUB)

/* Fill one per thread (no locking), merge at the end. Zero-initialise. */
struct lat_hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t bucket[LAT_BUCKETS];
};

void lat_hist_add(struct lat_hist *h, uint64_t ns);
void lat_hist_merge(struct lat_hist *into, const struct lat_hist *from);
/* The value at quantile @q (0..1], as the upper bound of its bucket capped
 * at the maximum seen; 0 when empty. */
uint64_t lat_hist_quantile(const struct lat_hist *h, double q);

#endif /* DEMO_LATENCY_H */
