/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics.h: an analysis as Prometheus metrics (text exposition format
 * 0.0.4), the node_exporter textfile collector file, and an HTTP
 * /metrics endpoint (libmicrohttpd). `probity metrics TRACE` renders one
 * trace; the agent (src/agent/agent_metrics.c) renders each manifest's
 * window when it ends, writes the merged text with
 * metrics__write_textfile and hands the same bytes to
 * metrics_server__set (agent --listen). docs/metrics.md lists every series.
 */
#ifndef PROBITY_METRICS_H
#define PROBITY_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/analyze.h"

#define METRICS_TEXTFILE_NAME	"probity.prom"
#define METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

struct metrics_opts {
	bool trace_incomplete;	/* the trace was cut short: lost_evidence{what="trace_cut"} = 1 */
	uint64_t notes_dropped;	/* trace notes beyond what the reader keeps */
};

/* Write every probity_* family of a finished analysis to out, HELP and
 * TYPE first, label values escaped. 0 or -errno (-EIO: out failed). */
int metrics__render(const struct analysis *a, const struct metrics_opts *o, FILE *out);
/* The same into a malloc'ed buffer (*buf NUL-terminated, caller frees). */
int metrics__render_buf(const struct analysis *a, const struct metrics_opts *o,
			char **buf, size_t *len);

/* Replace DIR/name atomically: write DIR/.name.tmp.PID, fsync, rename,
 * fsync DIR. node_exporter reads only *.prom, never the temporary. */
int metrics__write_textfile(const char *dir, const char *name, const void *buf, size_t len);

/* Escape a label value (\\, \", \n) into out; false when it does not fit. */
bool metrics__escape_label(const char *in, char *out, size_t sz);

/* ---- HTTP exposition (metrics_http.c) ---- */
struct metrics_server;
struct sockaddr_in;
/* "IPV4:PORT" (dotted quad, port 0..65535) into *sin; 0 or -EINVAL. */
int metrics__parse_listen(const char *addr, struct sockaddr_in *sin);
/* Listen on addr "IPV4:PORT" (PORT 0: any free port); GET /metrics
 * serves the last bytes set, anything else is 404. NULL and errno:
 * EINVAL (addr malformed), EADDRINUSE, ... */
struct metrics_server *metrics_server__new(const char *addr);
/* The bound port (useful after PORT 0). */
uint16_t metrics_server__port(const struct metrics_server *s);
/* Serve a copy of buf from now on (thread-safe). 0 or -ENOMEM. */
int metrics_server__set(struct metrics_server *s, const void *buf, size_t len);
/* Requests served so far. */
uint64_t metrics_server__requests(const struct metrics_server *s);
void metrics_server__free(struct metrics_server *s);

#endif
