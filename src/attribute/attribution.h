/* SPDX-License-Identifier: BSD-2-Clause */
/* attribution.h: `probity attribute SAMPLES` as a library (attribution.c):
 * every sample of a sample file (samples.h) or of `perf script` text
 * (perfscript.h) looked up in a generation interval table (itable.h) and
 * counted per generation, and per reason for the samples that stay
 * `unknown` (docs/attribution.md).
 */
#ifndef PROBITY_ATTRIBUTE_ATTRIBUTION_H
#define PROBITY_ATTRIBUTE_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "common/errtext.h"
#include "attribute/itable.h"

struct attribution_prog {
	uint32_t prog_id;
	uint64_t samples;
};

/* The samples of one generation, or of one reason for `unknown`. */
struct attribution_count {
	char *key;			/* generation id, or attr_reason__name() */
	uint64_t samples;
	char *example;			/* unknown: the first such sample's detail */
	struct attribution_prog *progs;	/* in the order their first sample came */
	size_t n_progs, cap_progs;
};

/* One sample in BPF JIT code (attribution_opts.list). */
struct attribution_sample {
	uint64_t time_mono_ns, ip;
	uint32_t cpu, pid, tid;
	struct attr_result r;		/* r.generation_id lives as long as the table */
};

struct attribution {
	const char *format;		/* "probity sample file" / "perf script text" */
	uint64_t total, in_jit, kernel, user;
	uint64_t lost, lost_records;	/* the sample file's LOST records */
	struct attribution_count *gens, *unknown;	/* in order of first sample */
	size_t n_gens, cap_gens, n_unknown, cap_unknown;
	struct attribution_sample *list;
	size_t n_list, cap_list;
	json_t *sampler_stats;		/* the sample file's end chunk counters, or NULL */
	/* a sample file with a torn or corrupt tail: where (the samples
	 * before it were attributed); "" otherwise */
	struct pb_errtext torn;
};

struct attribution_opts {
	const char *input;		/* a sample file, else perf script text */
	bool list;			/* keep every sample in JIT code */
};

/* Attribute opts->input with t (its stores' lifecycle logs added, not yet
 * built: a sample file's snapshot and kernel records go in first; t is
 * built here). 0 and *a filled (release with attribution__clear); or
 * -errno with err saying what failed, naming the input (a->torn may be
 * set even then): -ENOMEM is a runtime failure, any other error means
 * the input could not be read as either format. */
int attribution__run(struct attr_table *t, const struct attribution_opts *opts, struct attribution *a,
		     struct pb_errtext *err);
void attribution__clear(struct attribution *a);

#endif
