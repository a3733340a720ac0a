/* SPDX-License-Identifier: BSD-2-Clause */
/* sync.h: pthread and clock helpers shared by the demo's modules. */
#ifndef DEMO_SYNC_H
#define DEMO_SYNC_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Locking and clock calls fail only on programming errors (an invalid or
 * foreign mutex, a bad clock id); there is no sensible recovery, so they
 * stop the process loudly instead of spreading error paths everywhere.
 */
static inline void demo_check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "probity-demo: %s: %s\n", what, strerror(err));
		abort();
	}
}

static inline void mutex_lock(pthread_mutex_t *m)
{
	demo_check(pthread_mutex_lock(m), "pthread_mutex_lock");
}

static inline void mutex_unlock(pthread_mutex_t *m)
{
	demo_check(pthread_mutex_unlock(m), "pthread_mutex_unlock");
}

static inline void cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	demo_check(pthread_cond_wait(c, m), "pthread_cond_wait");
}

static inline void cond_signal(pthread_cond_t *c)
{
	demo_check(pthread_cond_signal(c), "pthread_cond_signal");
}

static inline void cond_broadcast(pthread_cond_t *c)
{
	demo_check(pthread_cond_broadcast(c), "pthread_cond_broadcast");
}

/* A condition variable whose timed waits use CLOCK_MONOTONIC. 0 or errno. */
static inline int cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t attr;
	int err;

	err = pthread_condattr_init(&attr);
	if (err)
		return err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(c, &attr);
	pthread_condattr_destroy(&attr);
	return err;
}

/* Waits on @c (made by cond_init_monotonic) until CLOCK_MONOTONIC @deadline_ns. */
static inline void cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000u),
		.tv_nsec = (long)(deadline_ns % 1000000000u),
	};
	int err = pthread_cond_timedwait(c, m, &ts);

	if (err != ETIMEDOUT)
		demo_check(err, "pthread_cond_timedwait");
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0) {
		perror("probity-demo: clock_gettime");
		abort();
	}
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* DEMO_SYNC_H */
