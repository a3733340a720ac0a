/* SPDX-License-Identifier: BSD-2-Clause */
/* pictures.h: what `probity report` draws from an analysis: per descriptor
 * log2 histograms of WAIT spans and holds (bars, as bpftrace's hist()
 * prints them) and, per resource, sparklines of the snapshot series the
 * leak verdict rests on (ACQUIRE - RELEASE, live instances, outstanding
 * units). The same data as JSON for `-j report` and the HTML report.
 */
#ifndef PROBITY_ANALYZE_PICTURES_H
#define PROBITY_ANALYZE_PICTURES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "analyze/analyze.h"

/* One histogram: the log2 buckets of one WAIT or RELEASE descriptor.
 * Bucket i counts durations in [2^i, 2^(i+1)) ns. */
struct picture_hist {
	uint32_t descriptor;
	const char *id;			/* manifest event id */
	const char *resource;
	const char *what;		/* "wait" (WAIT spans) or "hold" (ACQUIRE -> RELEASE) */
	uint64_t count, total_ns;
	const uint64_t *buckets;	/* PB_HIST_BUCKETS */
};

/* The histograms with at least one count, in manifest order. Returns how
 * many were written to out (at most max). */
size_t pictures__hists(const struct analysis *a, struct picture_hist *out, size_t max);

/* A resource's snapshot series (NULL and *n = 0 when it has none). */
struct picture_point {
	uint64_t ts;
	int64_t imbalance, live, units;
};
const struct picture_point *pictures__series(const struct analysis *a, size_t resource, size_t *n);

/* "[4.1us, 8.2us)  12 |@@@@   |" lines of one histogram, from its
 * first to its last non-empty bucket; width = bar columns */
void pictures__print_hist(const struct picture_hist *h, FILE *out, unsigned width);
/* "▁▂▃▅▇" of v[0..n) scaled between its min and max, width cells at most
 * (each cell the max of the values it covers); UTF-8 into buf */
void pictures__sparkline(const int64_t *v, size_t n, size_t stride, unsigned width,
			 char *buf, size_t sz);

/* a duration with 3 significant digits: "512ns", "65.5us", "1.05ms" */
void pictures__fmt_dur(char *buf, size_t sz, double ns);

/* Histograms and sparklines as text (report's "pictures" section). */
void pictures__print(const struct analysis *a, FILE *out);
/* {"histograms": [{descriptor, id, resource, what, count, total_ns,
 *  buckets: [{lo_ns, hi_ns, count}]}], "series": [{resource, ts_ns: [],
 *  imbalance: [], live_instances: [], outstanding_units: []}]} */
json_t *pictures__json(const struct analysis *a);

#endif
