/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * connpool.c: the connection pool (resource demo.conn) and its backend.
 *
 * Free connections sit on a LIFO list under one mutex. The backend thread
 * polls the server ends of all socket pairs and answers each request; it
 * exits once every client end is shut down (connpool_free).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connpool.h"
#include "probe.h"
#include "sync.h"

struct conn {
	int fd;			/* client end */
	int backend_fd;		/* server end, owned by the backend thread */
	unsigned id;
	struct conn *next_free;
};

struct connpool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	struct conn *conns;
	unsigned nconns;
	struct conn *free_list;
	pthread_t backend;
	int backend_started;
	int backend_err;	/* errno that stopped the backend, 0 if none */
	struct connpool_stats st;
};

uint64_t connpool_expected(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key;
}

/* Serves one request on @fd. 1 served, 0 peer closed, -errno on error. */
static int backend_serve(int fd)
{
	struct conn_msg msg;
	ssize_t n;

	do {
		n = recv(fd, &msg, sizeof(msg), 0);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(msg))
		return -EPROTO;
	msg.value = connpool_expected(msg.key);
	do {
		n = send(fd, &msg, sizeof(msg), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE ? 0 : -errno;
	return (size_t)n == sizeof(msg) ? 1 : -EPROTO;
}

static void *backend_main(void *arg)
{
	struct connpool *pool = arg;
	struct pollfd *pfd;
	unsigned i, open_fds = pool->nconns;
	int err = 0, n;

	pfd = calloc(pool->nconns, sizeof(*pfd));
	if (!pfd) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < pool->nconns; i++) {
		pfd[i].fd = pool->conns[i].backend_fd;
		pfd[i].events = POLLIN;
	}
	while (open_fds > 0) {
		n = poll(pfd, pool->nconns, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		for (i = 0; i < pool->nconns; i++) {
			int rc;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			rc = backend_serve(pfd[i].fd);
			if (rc > 0)
				continue;
			if (rc < 0 && !err)
				err = -rc;
			/* peer gone (or broken): stop serving this connection */
			if (close(pfd[i].fd) < 0 && !err)
				err = errno;
			pool->conns[i].backend_fd = -1;
			pfd[i].fd = -1;
			open_fds--;
		}
	}
out:
	free(pfd);
	mutex_lock(&pool->lock);
	pool->backend_err = err;
	mutex_unlock(&pool->lock);
	if (err)
		fprintf(stderr, "probity-demo: connpool backend: %s\n", strerror(err));
	return NULL;
}

struct connpool *connpool_new(unsigned conns)
{
	struct connpool *pool;
	unsigned i;
	int err, sv[2];

	if (conns == 0) {
		errno = EINVAL;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->conns = calloc(conns, sizeof(*pool->conns));
	if (!pool->conns) {
		free(pool);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < conns; i++)
		pool->conns[i].fd = pool->conns[i].backend_fd = -1;
	pool->nconns = conns;
	pool->st.conns = conns;
	err = pthread_mutex_init(&pool->lock, NULL);
	if (err) {
		free(pool->conns);
		free(pool);
		errno = err;
		return NULL;
	}
	err = pthread_cond_init(&pool->freed, NULL);
	if (err) {
		pthread_mutex_destroy(&pool->lock);
		free(pool->conns);
		free(pool);
		errno = err;
		return NULL;
	}
	for (i = 0; i < conns; i++) {
		struct conn *c = &pool->conns[i];

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
			err = errno;
			goto fail;
		}
		c->fd = sv[0];
		c->backend_fd = sv[1];
		c->id = i;
		c->next_free = pool->free_list;
		pool->free_list = c;
	}
	err = pthread_create(&pool->backend, NULL, backend_main, pool);
	if (err)
		goto fail;
	pool->backend_started = 1;
	return pool;
fail:
	connpool_free(pool);
	errno = err;
	return NULL;
}

void connpool_free(struct connpool *pool)
{
	unsigned i;
	int err;

	if (!pool)
		return;
	/* EOF on every server end makes the backend exit. */
	for (i = 0; i < pool->nconns; i++)
		if (pool->conns[i].fd >= 0 && shutdown(pool->conns[i].fd, SHUT_WR) < 0)
			fprintf(stderr, "probity-demo: shutdown conn %u: %s\n", i, strerror(errno));
	if (pool->backend_started) {
		err = pthread_join(pool->backend, NULL);
		if (err)
			fprintf(stderr, "probity-demo: join backend: %s\n", strerror(err));
	}
	for (i = 0; i < pool->nconns; i++) {
		struct conn *c = &pool->conns[i];

		if (c->fd >= 0 && close(c->fd) < 0)
			fprintf(stderr, "probity-demo: close conn %u: %s\n", i, strerror(errno));
		/* set only if the backend never ran */
		if (c->backend_fd >= 0 && close(c->backend_fd) < 0)
			fprintf(stderr, "probity-demo: close conn %u: %s\n", i, strerror(errno));
	}
	pthread_cond_destroy(&pool->freed);
	pthread_mutex_destroy(&pool->lock);
	free(pool->conns);
	free(pool);
}

DEMO_PROBE void connpool_wait(struct connpool *pool)
{
	while (!pool->free_list)
		cond_wait(&pool->freed, &pool->lock);
}

DEMO_PROBE struct conn *connpool_acquire(struct connpool *pool)
{
	struct conn *c;
	uint64_t t0;
	unsigned in_use;

	mutex_lock(&pool->lock);
	if (!pool->free_list) {
		pool->st.waits++;
		t0 = now_ns();
		connpool_wait(pool);
		pool->st.wait_ns += now_ns() - t0;
	}
	c = pool->free_list;
	pool->free_list = c->next_free;
	c->next_free = NULL;
	pool->st.acquires++;
	in_use = ++pool->st.in_use;
	if (in_use > pool->st.max_in_use)
		pool->st.max_in_use = in_use;
	mutex_unlock(&pool->lock);
	return c;
}

DEMO_PROBE int connpool_query(struct connpool *pool, struct conn *conn, struct conn_msg *msg)
{
	struct conn_msg reply;
	ssize_t n;
	int err = 0;

	do {
		n = send(conn->fd, msg, sizeof(*msg), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != sizeof(*msg))
		err = -EPROTO;
	if (!err) {
		do {
			n = recv(conn->fd, &reply, sizeof(reply), 0);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			err = -errno;
		else if (n == 0)
			err = -ECONNRESET;
		else if ((size_t)n != sizeof(reply) || reply.id != msg->id)
			err = -EPROTO;
	}
	if (!err)
		*msg = reply;
	mutex_lock(&pool->lock);
	pool->st.queries++;
	if (err)
		pool->st.query_errors++;
	mutex_unlock(&pool->lock);
	return err;
}

DEMO_PROBE void connpool_release(struct connpool *pool, struct conn *conn)
{
	mutex_lock(&pool->lock);
	conn->next_free = pool->free_list;
	pool->free_list = conn;
	pool->st.releases++;
	pool->st.in_use--;
	cond_signal(&pool->freed);
	mutex_unlock(&pool->lock);
}

unsigned conn_id(const struct conn *conn)
{
	return conn->id;
}

void connpool_get_stats(struct connpool *pool, struct connpool_stats *st)
{
	mutex_lock(&pool->lock);
	*st = pool->st;
	mutex_unlock(&pool->lock);
}
