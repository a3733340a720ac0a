/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * workq.c: the bounded work queue (resource demo.workq.slot).
 *
 * A ring of item pointers under one mutex. The slot count limits items in
 * flight, not only items queued, so a slow worker pushes back on clients.
 */
#include <errno.h>
#include <stdlib.h>

#include "probe.h"
#include "rng.h"
#include "sync.h"
#include "workq.h"

/* Rounds of mixing per item: a few microseconds of CPU, like parsing and
 * applying a small write. */
#define PROCESS_ROUNDS 2000

struct workq {
	pthread_mutex_t lock;
	pthread_cond_t space;		/* a slot was given back, or closed */
	pthread_cond_t items;		/* an item was queued, or closed */
	struct work_item **ring;
	unsigned capacity;
	unsigned head;			/* oldest queued item */
	unsigned queued;
	unsigned in_flight;		/* queued + being processed */
	int closed;
	struct workq_stats st;
};

struct workq *workq_new(unsigned capacity)
{
	struct workq *q;
	int err;

	if (capacity == 0) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->ring = calloc(capacity, sizeof(*q->ring));
	if (!q->ring) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->capacity = capacity;
	q->st.capacity = capacity;
	err = pthread_mutex_init(&q->lock, NULL);
	if (err)
		goto fail;
	err = pthread_cond_init(&q->space, NULL);
	if (err)
		goto fail_mutex;
	err = pthread_cond_init(&q->items, NULL);
	if (err)
		goto fail_space;
	return q;
fail_space:
	pthread_cond_destroy(&q->space);
fail_mutex:
	pthread_mutex_destroy(&q->lock);
fail:
	free(q->ring);
	free(q);
	errno = err;
	return NULL;
}

void workq_free(struct workq *q)
{
	if (!q)
		return;
	pthread_cond_destroy(&q->items);
	pthread_cond_destroy(&q->space);
	pthread_mutex_destroy(&q->lock);
	free(q->ring);
	free(q);
}

void workq_close(struct workq *q)
{
	mutex_lock(&q->lock);
	q->closed = 1;
	cond_broadcast(&q->space);
	cond_broadcast(&q->items);
	mutex_unlock(&q->lock);
}

DEMO_PROBE void workq_wait_space(struct workq *q)
{
	while (q->in_flight == q->capacity && !q->closed)
		cond_wait(&q->space, &q->lock);
}

DEMO_PROBE int workq_push(struct workq *q, struct work_item *item)
{
	uint64_t t0;

	mutex_lock(&q->lock);
	if (q->in_flight == q->capacity && !q->closed) {
		q->st.waits++;
		t0 = now_ns();
		workq_wait_space(q);
		q->st.wait_ns += now_ns() - t0;
	}
	if (q->closed) {
		mutex_unlock(&q->lock);
		return -ESHUTDOWN;
	}
	q->ring[(q->head + q->queued) % q->capacity] = item;
	q->queued++;
	q->in_flight++;
	if (q->in_flight > q->st.max_in_flight)
		q->st.max_in_flight = q->in_flight;
	q->st.pushes++;
	cond_signal(&q->items);
	mutex_unlock(&q->lock);
	return 0;
}

DEMO_PROBE struct work_item *workq_pop(struct workq *q)
{
	struct work_item *item = NULL;

	mutex_lock(&q->lock);
	while (q->queued == 0 && !q->closed)
		cond_wait(&q->items, &q->lock);
	if (q->queued > 0) {
		item = q->ring[q->head];
		q->ring[q->head] = NULL;
		q->head = (q->head + 1) % q->capacity;
		q->queued--;
		q->st.pops++;
	}
	mutex_unlock(&q->lock);
	return item;
}

DEMO_PROBE uint64_t workq_process(struct workq *q, struct work_item *item)
{
	uint64_t s = item->digest ^ item->reply ^ item->req_id;
	uint64_t acc = 0;
	int i;

	for (i = 0; i < PROCESS_ROUNDS; i++)
		acc += rng_next(&s);
	item->result = acc;
	mutex_lock(&q->lock);
	q->st.processed++;
	mutex_unlock(&q->lock);
	return acc;
}

DEMO_PROBE void workq_done(struct workq *q, struct work_item *item)
{
	(void)item;
	mutex_lock(&q->lock);
	q->in_flight--;
	q->st.done++;
	cond_signal(&q->space);
	mutex_unlock(&q->lock);
}

void workq_get_stats(struct workq *q, struct workq_stats *st)
{
	mutex_lock(&q->lock);
	*st = q->st;
	st->in_flight = q->in_flight;
	mutex_unlock(&q->lock);
}
