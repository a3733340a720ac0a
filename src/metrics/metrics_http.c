/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics_http.c: GET /metrics over libmicrohttpd (see metrics.h). The
 * daemon runs its own polling thread; the body is swapped under a mutex
 * and each response gets its own copy, so a render never blocks a scrape
 * and a scrape never sees half a render. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "common/log.h"
#include "metrics/metrics.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_Result_t;
#else
typedef enum MHD_Result MHD_Result_t;
#endif

struct metrics_server {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *body;
	size_t len;
	uint16_t port;
	uint64_t requests;
};

static MHD_Result_t reply(struct MHD_Connection *conn, unsigned status, void *buf, size_t len,
			  const char *type)
{
	struct MHD_Response *r;
	MHD_Result_t ret;

	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static MHD_Result_t handle(void *cls, struct MHD_Connection *conn, const char *url,
			   const char *method, const char *version, const char *upload,
			   size_t *upload_len, void **state)
{
	struct metrics_server *s = cls;
	char *copy;
	size_t len;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET /metrics\n"), 13,
			     "text/plain");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, strdup("probity: only /metrics\n"), 23,
			     "text/plain");
	pthread_mutex_lock(&s->lock);
	len = s->len;
	copy = malloc(len ? len : 1);
	if (copy)
		memcpy(copy, s->body ? s->body : "", len);
	s->requests++;
	pthread_mutex_unlock(&s->lock);
	if (!copy)
		return MHD_NO;
	return reply(conn, MHD_HTTP_OK, copy, len, METRICS_CONTENT_TYPE);
}

int metrics__parse_listen(const char *addr, struct sockaddr_in *sin)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	char *end;
	long port;

	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host))
		return -EINVAL;
	memcpy(host, addr, colon - addr);
	host[colon - addr] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 0 || port > 65535)
		return -EINVAL;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -EINVAL;
}

struct metrics_server *metrics_server__new(const char *addr)
{
	struct metrics_server *s;
	struct sockaddr_in sin;
	const union MHD_DaemonInfo *info;
	int err;

	err = metrics__parse_listen(addr, &sin);
	if (err) {
		errno = -err;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
				handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!s->d) {
		err = errno ? errno : EADDRINUSE;
		pr_warn("metrics: cannot listen on %s: %s\n", addr, strerror(err));
		metrics_server__free(s);
		errno = err;
		return NULL;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : ntohs(sin.sin_port);
	return s;
}

uint16_t metrics_server__port(const struct metrics_server *s)
{
	return s->port;
}

int metrics_server__set(struct metrics_server *s, const void *buf, size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	pthread_mutex_lock(&s->lock);
	free(s->body);
	s->body = copy;
	s->len = len;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

uint64_t metrics_server__requests(const struct metrics_server *s)
{
	uint64_t n;

	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	n = s->requests;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return n;
}

void metrics_server__free(struct metrics_server *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d);
	pthread_mutex_destroy(&s->lock);
	free(s->body);
	free(s);
}
