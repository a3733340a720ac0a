/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * workq.h: a bounded work queue between client threads and worker threads.
 *
 * Resource demo.workq.slot in demo.manifest.yaml. The capacity bounds the
 * items in flight (queued or being processed): workq_push() takes a slot,
 * workq_done() gives it back after the worker has processed the item.
 */
#ifndef DEMO_WORKQ_H
#define DEMO_WORKQ_H

#include <stdint.h>

struct workq;

struct work_item {
	uint64_t req_id;
	uint64_t digest;	/* combined digest of the request's pages */
	uint64_t reply;		/* the backend's answer for the request */
	uint64_t result;	/* written by workq_process() */
	uint32_t npages;
	uint32_t client;
};

struct workq_stats {
	uint64_t pushes;
	uint64_t waits;		/* workq_wait_space() calls: no free slot */
	uint64_t wait_ns;
	uint64_t pops;
	uint64_t processed;
	uint64_t done;
	unsigned in_flight;	/* now */
	unsigned max_in_flight;
	unsigned capacity;
};

/* NULL and errno on failure. */
struct workq *workq_new(unsigned capacity);
/* After workq_close() and once every item is done. NULL is ok. */
void workq_free(struct workq *q);
/* No more pushes; workq_pop() returns NULL once the queue is empty. */
void workq_close(struct workq *q);

/* Probe sites (demo.manifest.yaml); argument positions are part of it. */

/* ACQUIRE (at return, when 0): takes a slot for @item (the instance) and
 * queues it, waiting in workq_wait_space() while all slots are taken.
 * 0, or -ESHUTDOWN after workq_close(). */
int workq_push(struct workq *q, struct work_item *item);
/* WAIT span: every slot is taken. Called with the queue lock held. */
void workq_wait_space(struct workq *q);
/* Not an event: hands the oldest item to a worker (its slot stays taken);
 * blocks while the queue is empty; NULL once closed and empty. */
struct work_item *workq_pop(struct workq *q);
/* USE: the worker's computation on @item. Returns the result. */
uint64_t workq_process(struct workq *q, struct work_item *item);
/* RELEASE: gives @item's slot back; the caller then owns (frees) @item. */
void workq_done(struct workq *q, struct work_item *item);

void workq_get_stats(struct workq *q, struct workq_stats *st);

#endif /* DEMO_WORKQ_H */
