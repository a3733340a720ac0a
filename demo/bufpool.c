/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bufpool.c: the buffer pool (resource demo.pool.page).
 *
 * One mutex guards the hash (page number -> frame), the LRU list of
 * unpinned frames and the pin counts. A miss takes the least recently used
 * unpinned frame, marks it LOADING and reads the page outside the lock;
 * callers that want the same page meanwhile pin it and wait for the read.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "bufpool.h"
#include "probe.h"
#include "sync.h"

#define NO_PAGE UINT64_MAX

enum frame_state {
	FRAME_EMPTY,
	FRAME_LOADING,
	FRAME_VALID,
	FRAME_ERROR,
};

struct bufpool_frame {
	uint64_t pageno;	/* NO_PAGE when empty */
	uint32_t epoch;		/* +1 each time the frame gets a new page */
	int32_t pins;
	uint32_t state;
	struct bufpool_frame *hash_next;
	struct bufpool_frame *lru_prev, *lru_next; /* linked while pins == 0 */
	unsigned char *data;	/* DATAFILE_PAGE_SIZE, aligned for O_DIRECT */
};

/*
 * demo.manifest.yaml reads these fields through the frame pointer
 * (generation: "*u32(retval + 8)" / "*u32(arg1 + 8)"); a layout change
 * must fail the build instead of silently feeding probity garbage.
 */
_Static_assert(offsetof(struct bufpool_frame, pageno) == 0, "manifest: pageno at frame + 0");
_Static_assert(offsetof(struct bufpool_frame, epoch) == 8, "manifest: epoch at frame + 8");
_Static_assert(sizeof(((struct bufpool_frame *)0)->epoch) == 4, "manifest: epoch is a u32");

struct bufpool {
	pthread_mutex_t lock;
	pthread_cond_t frame_freed;	/* some frame's pin count reached 0 */
	pthread_cond_t io_done;		/* a LOADING frame became VALID or ERROR */
	struct datafile *df;
	struct bufpool_frame *frames;
	unsigned nframes;
	unsigned char *data;
	struct bufpool_frame **hash;
	uint64_t hash_mask;
	struct bufpool_frame lru;	/* sentinel; lru.lru_next is the victim */
	struct bufpool_stats st;
};

static struct bufpool_frame **hash_slot(struct bufpool *pool, uint64_t pageno)
{
	return &pool->hash[(pageno * 0x9e3779b97f4a7c15ULL >> 17) & pool->hash_mask];
}

static struct bufpool_frame *hash_find(struct bufpool *pool, uint64_t pageno)
{
	struct bufpool_frame *f;

	for (f = *hash_slot(pool, pageno); f; f = f->hash_next)
		if (f->pageno == pageno)
			return f;
	return NULL;
}

static void hash_insert(struct bufpool *pool, struct bufpool_frame *f)
{
	struct bufpool_frame **slot = hash_slot(pool, f->pageno);

	f->hash_next = *slot;
	*slot = f;
}

static void hash_remove(struct bufpool *pool, struct bufpool_frame *f)
{
	struct bufpool_frame **p;

	for (p = hash_slot(pool, f->pageno); *p; p = &(*p)->hash_next) {
		if (*p == f) {
			*p = f->hash_next;
			f->hash_next = NULL;
			return;
		}
	}
}

static void lru_unlink(struct bufpool_frame *f)
{
	f->lru_prev->lru_next = f->lru_next;
	f->lru_next->lru_prev = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
}

/* Valid frames go to the most-recently-used end, empty ones to the front. */
static void lru_add(struct bufpool *pool, struct bufpool_frame *f)
{
	struct bufpool_frame *head = &pool->lru;

	if (f->state == FRAME_VALID) {
		f->lru_prev = head->lru_prev;
		f->lru_next = head;
	} else {
		f->lru_prev = head;
		f->lru_next = head->lru_next;
	}
	f->lru_prev->lru_next = f;
	f->lru_next->lru_prev = f;
}

static void pin(struct bufpool *pool, struct bufpool_frame *f)
{
	if (f->pins++ == 0)
		lru_unlink(f);
	pool->st.pins++;
}

static void unpin(struct bufpool *pool, struct bufpool_frame *f)
{
	if (f->pins <= 0) {
		fprintf(stderr, "probity-demo: bufpool_put of unpinned frame %p\n", (void *)f);
		abort();
	}
	pool->st.pins--;
	if (--f->pins == 0) {
		lru_add(pool, f);
		cond_signal(&pool->frame_freed);
	}
}

struct bufpool *bufpool_new(const struct bufpool_opts *opts)
{
	struct bufpool *pool;
	uint64_t nslots = 1;
	unsigned i;
	int err;

	if (!opts || !opts->df || opts->frames == 0) {
		errno = EINVAL;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->df = opts->df;
	pool->nframes = opts->frames;
	pool->st.frames = opts->frames;
	while (nslots < 2ull * opts->frames)
		nslots <<= 1;
	pool->hash_mask = nslots - 1;
	pool->frames = calloc(opts->frames, sizeof(*pool->frames));
	pool->hash = calloc(nslots, sizeof(*pool->hash));
	if (!pool->frames || !pool->hash) {
		err = ENOMEM;
		goto fail;
	}
	err = posix_memalign((void **)&pool->data, DATAFILE_PAGE_SIZE,
			     (size_t)opts->frames * DATAFILE_PAGE_SIZE);
	if (err) {
		pool->data = NULL;
		goto fail;
	}
	err = pthread_mutex_init(&pool->lock, NULL);
	if (err)
		goto fail;
	err = pthread_cond_init(&pool->frame_freed, NULL);
	if (err)
		goto fail_mutex;
	err = pthread_cond_init(&pool->io_done, NULL);
	if (err)
		goto fail_cond;
	pool->lru.lru_next = pool->lru.lru_prev = &pool->lru;
	for (i = 0; i < opts->frames; i++) {
		struct bufpool_frame *f = &pool->frames[i];

		f->pageno = NO_PAGE;
		f->state = FRAME_EMPTY;
		f->data = pool->data + (size_t)i * DATAFILE_PAGE_SIZE;
		lru_add(pool, f);
	}
	return pool;
fail_cond:
	pthread_cond_destroy(&pool->frame_freed);
fail_mutex:
	pthread_mutex_destroy(&pool->lock);
fail:
	free(pool->data);
	free(pool->hash);
	free(pool->frames);
	free(pool);
	errno = err;
	return NULL;
}

void bufpool_free(struct bufpool *pool)
{
	if (!pool)
		return;
	pthread_cond_destroy(&pool->io_done);
	pthread_cond_destroy(&pool->frame_freed);
	pthread_mutex_destroy(&pool->lock);
	free(pool->data);
	free(pool->hash);
	free(pool->frames);
	free(pool);
}

DEMO_PROBE void bufpool_wait_free(struct bufpool *pool)
{
	while (pool->lru.lru_next == &pool->lru)
		cond_wait(&pool->frame_freed, &pool->lock);
}

DEMO_PROBE int bufpool_read_miss(struct bufpool *pool, struct bufpool_frame *frame,
				 uint64_t pageno)
{
	return datafile_read(pool->df, pageno, frame->data);
}

DEMO_PROBE struct bufpool_frame *bufpool_get(struct bufpool *pool, uint64_t pageno)
{
	struct bufpool_frame *f;
	uint64_t t0;
	int err;

	if (pageno >= datafile_pages(pool->df)) {
		errno = EINVAL;
		return NULL;
	}
	mutex_lock(&pool->lock);
	for (;;) {
		f = hash_find(pool, pageno);
		if (f) {
			pin(pool, f);
			while (f->state == FRAME_LOADING)
				cond_wait(&pool->io_done, &pool->lock);
			if (f->state != FRAME_VALID) {
				/* the read by whoever loaded it failed */
				unpin(pool, f);
				mutex_unlock(&pool->lock);
				errno = EIO;
				return NULL;
			}
			pool->st.hits++;
			pool->st.gets++;
			mutex_unlock(&pool->lock);
			return f;
		}
		if (pool->lru.lru_next != &pool->lru)
			break;
		pool->st.waits++;
		t0 = now_ns();
		bufpool_wait_free(pool);
		pool->st.wait_ns += now_ns() - t0;
	}

	/* Miss: recycle the least recently used unpinned frame. */
	f = pool->lru.lru_next;
	lru_unlink(f);
	if (f->pageno != NO_PAGE)
		hash_remove(pool, f);
	f->pageno = pageno;
	f->epoch++;
	f->state = FRAME_LOADING;
	f->pins = 1;
	pool->st.pins++;
	hash_insert(pool, f);
	pool->st.misses++;
	mutex_unlock(&pool->lock);

	t0 = now_ns();
	err = bufpool_read_miss(pool, f, pageno);

	mutex_lock(&pool->lock);
	pool->st.read_ns += now_ns() - t0;
	if (err) {
		hash_remove(pool, f);
		f->pageno = NO_PAGE;
		f->state = FRAME_ERROR;
		pool->st.read_errors++;
		cond_broadcast(&pool->io_done);
		unpin(pool, f);
		mutex_unlock(&pool->lock);
		errno = -err;
		return NULL;
	}
	f->state = FRAME_VALID;
	pool->st.gets++;
	cond_broadcast(&pool->io_done);
	mutex_unlock(&pool->lock);
	return f;
}

DEMO_PROBE int bufpool_use(struct bufpool *pool, struct bufpool_frame *frame,
			   const struct conn *conn, uint64_t *digest)
{
	/* Read-only: the pin keeps the frame's page and bytes stable. The
	 * connection is only the manifest's USE target. */
	(void)pool;
	(void)conn;
	return datafile_page_check(frame->data, frame->pageno, digest);
}

DEMO_PROBE void bufpool_put(struct bufpool *pool, struct bufpool_frame *frame)
{
	mutex_lock(&pool->lock);
	pool->st.puts++;
	unpin(pool, frame);
	mutex_unlock(&pool->lock);
}

uint64_t bufpool_frame_pageno(const struct bufpool_frame *frame)
{
	return frame->pageno;
}

void bufpool_get_stats(struct bufpool *pool, struct bufpool_stats *st)
{
	unsigned i, pinned = 0;

	mutex_lock(&pool->lock);
	for (i = 0; i < pool->nframes; i++)
		if (pool->frames[i].pins > 0)
			pinned++;
	*st = pool->st;
	st->pinned_frames = pinned;
	mutex_unlock(&pool->lock);
}
