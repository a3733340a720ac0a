/* SPDX-License-Identifier: BSD-2-Clause */
/* sampler.h: `probity sample` as a library (sampler.c): system-wide
 * cpu-clock samples plus the kernel's ksymbol and bpf_event side-band
 * records, through observe/perf_ring.h, into a sample file (samples.h).
 */
#ifndef PROBITY_ATTRIBUTE_SAMPLER_H
#define PROBITY_ATTRIBUTE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

struct pb_sampler;
struct pb_sampler_opts {
	const char *path;	/* output file */
	unsigned int freq;	/* samples per second per CPU (default 997) */
	unsigned int pages;	/* ring data pages per CPU (default 64) */
};

struct pb_sampler_stats {
	uint64_t samples, in_bpf_jit, kernel, user, ksymbols, bpf_events, lost, lost_records;
	uint64_t snapshot_progs, bad_records, time_estimated;
};

int pb_sampler__new(const struct pb_sampler_opts *opts, struct pb_sampler **out);
/* Wait up to timeout_ms, then write what the rings hold. */
int pb_sampler__poll(struct pb_sampler *s, int timeout_ms);

struct pb_sampler_run_opts {
	uint64_t duration_ns;		/* stop after this long (0: only on should_stop) */
	/* polled every 100 ms; true stops the run (may be NULL) */
	bool (*should_stop)(void *ctx);
	/* once a second with the time since the run began (may be NULL) */
	void (*progress)(void *ctx, uint64_t elapsed_ns, const struct pb_sampler_stats *st);
	void *ctx;
};
/* Poll until the duration is over or should_stop says so. 0, or the
 * -errno of the poll that failed (sampling stopped there; finish still
 * writes the file). */
int pb_sampler__run(struct pb_sampler *s, const struct pb_sampler_run_opts *opts);
void pb_sampler__stats(const struct pb_sampler *s, struct pb_sampler_stats *st);
/* Stop, drain, write the end chunk, close the file. */
int pb_sampler__finish(struct pb_sampler *s, const char *stopped_by);
void pb_sampler__free(struct pb_sampler *s);

#endif
