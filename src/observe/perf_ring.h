/* SPDX-License-Identifier: BSD-2-Clause */
/* perf_ring.h: the one perf_event module of probity: one event per CPU,
 * each with its mmap'ed ring, read without losing track of what the
 * kernel dropped. The observer (side-band ksymbol/bpf_event records on a
 * dummy event) and the sampler (cpu-clock samples plus the same
 * side-band records) both read through it.
 *
 * Records are handed to the callback whole (a record that wraps around
 * the end of the ring is copied out first), in ring order per CPU.
 * PERF_RECORD_LOST records are passed on like any other (the caller
 * knows where in its own stream they fall) and also summed in
 * perf_ring__lost().
 */
#ifndef PROBITY_PERF_RING_H
#define PROBITY_PERF_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct perf_ring;

/* Called for every record; cpu is the ring's CPU. Return 0 to go on,
 * anything else stops the drain and is returned from it. */
typedef int (*perf_ring_fn)(void *ctx, int cpu, const struct perf_event_header *h);

struct perf_ring_opts {
	unsigned int pages;	/* data pages per CPU, power of 2 (default 16) */
	int group_epoll_fd;	/* > 0: also add each CPU fd to this epoll set */
};

/* perf_event_open(attr) on every online CPU (all tasks), mmap each ring.
 * An offline CPU (ENODEV/EINVAL) is skipped. 0 or -errno. */
int perf_ring__new(const struct perf_event_attr *attr, const struct perf_ring_opts *opts,
		   struct perf_ring **out);
/* Wait up to timeout_ms for a wakeup on any ring, then drain all. */
int perf_ring__poll(struct perf_ring *r, int timeout_ms, perf_ring_fn fn, void *ctx);
/* Hand every complete record of every ring to fn. */
int perf_ring__drain(struct perf_ring *r, perf_ring_fn fn, void *ctx);
int perf_ring__enable(struct perf_ring *r);
int perf_ring__disable(struct perf_ring *r);
int perf_ring__ncpu(const struct perf_ring *r);
int perf_ring__epoll_fd(const struct perf_ring *r);
/* Sum of the counts of every PERF_RECORD_LOST seen so far. */
uint64_t perf_ring__lost(const struct perf_ring *r);
/* Records the ring handed out whose header was malformed (size 0 or
 * larger than the ring): the rest of that ring's data is skipped. */
uint64_t perf_ring__bad(const struct perf_ring *r);

/* Bytes of a side-band record's own body (PERF_RECORD_KSYMBOL: up to its
 * u64-padded name; BPF_EVENT and LOST: 16), where its sample_id_all
 * trailer begins, or SIZE_MAX when the record is malformed. Read the
 * trailer there, never from the record's end: with several side-band
 * sessions open this kernel announces such records longer than it
 * writes them. */
size_t perf_ring__sideband_body(const struct perf_event_header *h);
void perf_ring__free(struct perf_ring *r);

#endif
