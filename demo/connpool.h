/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * connpool.h: a pool of connections to a loopback "backend".
 *
 * Resource demo.conn in demo.manifest.yaml. Each connection owns one end of
 * an AF_UNIX SOCK_SEQPACKET socket pair; a backend thread serves the other
 * ends with poll(), so a query is a real send/recv round trip.
 */
#ifndef DEMO_CONNPOOL_H
#define DEMO_CONNPOOL_H

#include <stdint.h>

struct connpool;
struct conn;

/* One request or reply; the backend answers value = f(key). */
struct conn_msg {
	uint64_t id;
	uint64_t key;
	uint64_t value;
	uint64_t pad[5];
};

struct connpool_stats {
	uint64_t acquires;
	uint64_t waits;		/* connpool_wait() calls: every connection busy */
	uint64_t wait_ns;
	uint64_t releases;
	uint64_t queries;
	uint64_t query_errors;
	unsigned in_use;	/* now */
	unsigned max_in_use;
	unsigned conns;
};

/* Starts the backend thread. NULL and errno on failure. */
struct connpool *connpool_new(unsigned conns);
/* Closes every connection, stops and joins the backend. NULL is ok. */
void connpool_free(struct connpool *pool);

/* Probe sites (demo.manifest.yaml); argument positions are part of it. */

/* ACQUIRE: takes a free connection (the instance), waiting in
 * connpool_wait() while there is none. Never fails. */
struct conn *connpool_acquire(struct connpool *pool);
/* WAIT span: every connection is in use. Called with the pool lock held. */
void connpool_wait(struct connpool *pool);
/* USE: sends @msg over @conn and replaces it with the backend's reply.
 * 0 or -errno. */
int connpool_query(struct connpool *pool, struct conn *conn, struct conn_msg *msg);
/* RELEASE: returns @conn to the pool. */
void connpool_release(struct connpool *pool, struct conn *conn);

/* The value the backend answers for @key (for checking replies). */
uint64_t connpool_expected(uint64_t key);
unsigned conn_id(const struct conn *conn);
void connpool_get_stats(struct connpool *pool, struct connpool_stats *st);

#endif /* DEMO_CONNPOOL_H */
