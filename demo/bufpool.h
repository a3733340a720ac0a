/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bufpool.h: a buffer pool of 4 KiB page frames over the data file.
 *
 * Resource demo.pool.page in demo.manifest.yaml. A frame holds one page at
 * a time; callers pin it with bufpool_get() and unpin it with
 * bufpool_put(). Several callers may pin the same frame (shared). Unpinned
 * frames are evicted in LRU order; a miss reads the page from the data file
 * with O_DIRECT.
 */
#ifndef DEMO_BUFPOOL_H
#define DEMO_BUFPOOL_H

#include <stdint.h>

#include "datafile.h"

struct bufpool;
struct bufpool_frame;
struct conn;

struct bufpool_opts {
	unsigned frames;	/* > 0 */
	struct datafile *df;	/* borrowed; outlives the pool */
};

struct bufpool_stats {
	uint64_t gets;		/* successful bufpool_get() calls */
	uint64_t hits;		/* page was resident (or being read by another) */
	uint64_t misses;	/* page read from the data file */
	uint64_t read_ns;	/* time spent in bufpool_read_miss() */
	uint64_t read_errors;
	uint64_t waits;		/* bufpool_wait_free() calls: no unpinned frame */
	uint64_t wait_ns;	/* time spent in them */
	uint64_t puts;
	uint64_t pins;		/* pins outstanding now */
	unsigned pinned_frames;	/* frames with at least one pin now */
	unsigned frames;
};

/* NULL and errno on failure. */
struct bufpool *bufpool_new(const struct bufpool_opts *opts);
/* Frees every frame, pinned or not. NULL is ok. */
void bufpool_free(struct bufpool *pool);

/*
 * Probe sites (demo.manifest.yaml). Argument positions are part of the
 * manifest: do not reorder parameters without updating it.
 */

/* ACQUIRE: pins the frame holding @pageno, reading it on a miss. Returns
 * the frame (the instance), or NULL and errno (EINVAL, EIO, ...). */
struct bufpool_frame *bufpool_get(struct bufpool *pool, uint64_t pageno);
/* WAIT span: the miss path; reads @pageno into @frame (pinned by the
 * caller, not yet visible to others). 0 or -errno. */
int bufpool_read_miss(struct bufpool *pool, struct bufpool_frame *frame, uint64_t pageno);
/* WAIT span: no frame is unpinned; blocks until one is. Called by
 * bufpool_get() with the pool lock held. */
void bufpool_wait_free(struct bufpool *pool);
/* USE: reads the pinned page on behalf of connection @conn (the manifest's
 * target): verifies its checksum, stores its digest in *digest.
 * 0, or -EBADMSG when the page is corrupt. */
int bufpool_use(struct bufpool *pool, struct bufpool_frame *frame, const struct conn *conn,
		uint64_t *digest);
/* RELEASE: unpins @frame. */
void bufpool_put(struct bufpool *pool, struct bufpool_frame *frame);

uint64_t bufpool_frame_pageno(const struct bufpool_frame *frame);
void bufpool_get_stats(struct bufpool *pool, struct bufpool_stats *st);

#endif /* DEMO_BUFPOOL_H */
