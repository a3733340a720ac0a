/* SPDX-License-Identifier: BSD-2-Clause */
/* tokens.c: the token bucket (resource demo.tokens). */
#include <errno.h>
#include <stdlib.h>

#include "probe.h"
#include "sync.h"
#include "tokens.h"

struct tokens {
	pthread_mutex_t lock;
	pthread_cond_t refunded;	/* wakes sleepers in tokens_wait() early */
	double level;			/* tokens now, <= capacity */
	uint64_t last_ns;		/* when level was last refilled */
	struct tokens_stats st;
};

static void refill(struct tokens *b, uint64_t now)
{
	if (b->st.rate > 0 && now > b->last_ns) {
		b->level += (double)(now - b->last_ns) * b->st.rate / 1e9;
		if (b->level > (double)b->st.capacity)
			b->level = (double)b->st.capacity;
	}
	b->last_ns = now;
}

struct tokens *tokens_new(double rate, uint64_t capacity)
{
	struct tokens *b;
	int err;

	if (rate < 0 || capacity == 0) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	err = pthread_mutex_init(&b->lock, NULL);
	if (err) {
		free(b);
		errno = err;
		return NULL;
	}
	err = cond_init_monotonic(&b->refunded);
	if (err) {
		pthread_mutex_destroy(&b->lock);
		free(b);
		errno = err;
		return NULL;
	}
	b->st.rate = rate;
	b->st.capacity = capacity;
	b->level = (double)capacity;
	b->last_ns = now_ns();
	return b;
}

void tokens_free(struct tokens *b)
{
	if (!b)
		return;
	pthread_cond_destroy(&b->refunded);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

DEMO_PROBE int tokens_take(struct tokens *b, unsigned int n)
{
	int ok;

	mutex_lock(&b->lock);
	refill(b, now_ns());
	ok = b->st.rate == 0 || b->level >= (double)n;
	if (ok) {
		if (b->st.rate > 0)
			b->level -= n;
		b->st.takes++;
		b->st.taken += n;
	} else {
		b->st.empty++;
	}
	mutex_unlock(&b->lock);
	return ok;
}

DEMO_PROBE void tokens_wait(struct tokens *b, unsigned int n)
{
	uint64_t t0 = now_ns(), deadline;
	double deficit;

	mutex_lock(&b->lock);
	refill(b, t0);
	deficit = (double)n - b->level;
	if (b->st.rate > 0 && deficit > 0) {
		deadline = t0 + (uint64_t)(deficit * 1e9 / b->st.rate) + 1;
		cond_wait_until(&b->refunded, &b->lock, deadline);
	}
	b->st.waits++;
	b->st.wait_ns += now_ns() - t0;
	mutex_unlock(&b->lock);
}

DEMO_PROBE void tokens_refund(struct tokens *b, unsigned int n)
{
	mutex_lock(&b->lock);
	refill(b, now_ns());
	if (b->st.rate > 0) {
		b->level += n;
		if (b->level > (double)b->st.capacity)
			b->level = (double)b->st.capacity;
	}
	b->st.refunds++;
	b->st.refunded += n;
	cond_broadcast(&b->refunded);
	mutex_unlock(&b->lock);
}

void tokens_get_stats(struct tokens *b, struct tokens_stats *st)
{
	mutex_lock(&b->lock);
	*st = b->st;
	mutex_unlock(&b->lock);
}
