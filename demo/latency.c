/* SPDX-License-Identifier: BSD-2-Clause */
/* latency.c: the log-linear latency histogram. */
#include "latency.h"

static unsigned bucket_of(uint64_t v)
{
	unsigned msb;

	if (v < LAT_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return (msb - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned)((v >> (msb - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

/* Largest value that falls into bucket @b. */
static uint64_t bucket_max(unsigned b)
{
	unsigned group = b / LAT_SUB, sub = b % LAT_SUB;

	if (group == 0)
		return b;
	if (group == 64u - LAT_SUB_BITS && sub == LAT_SUB - 1)
		return UINT64_MAX;
	return (((uint64_t)(LAT_SUB + sub + 1)) << (group - 1)) - 1;
}

void lat_hist_add(struct lat_hist *h, uint64_t ns)
{
	h->bucket[bucket_of(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void lat_hist_merge(struct lat_hist *into, const struct lat_hist *from)
{
	unsigned i;

	for (i = 0; i < LAT_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

uint64_t lat_hist_quantile(const struct lat_hist *h, double q)
{
	uint64_t rank, seen = 0, v;
	unsigned i;

	if (h->count == 0)
		return 0;
	/* ceil(q * count) without libm (the demo links only -lpthread) */
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank < 1)
		rank = 1;
	for (i = 0; i < LAT_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			v = bucket_max(i);
			return v < h->max_ns ? v : h->max_ns;
		}
	}
	return h->max_ns;
}
