/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * service.h: the demo service: request flow, threads and planted
 * pathologies on top of the four resource modules.
 *
 * A request takes tokens, acquires a connection and queries the backend,
 * reads 1..4 pages from the buffer pool (one pinned at a time), pushes a
 * work item and releases the connection; workers pop and process items.
 */
#ifndef DEMO_SERVICE_H
#define DEMO_SERVICE_H

#include <stdint.h>
#include <stdio.h>

#include "bufpool.h"
#include "connpool.h"
#include "tokens.h"
#include "workq.h"

enum demo_pathology {
	PATH_POOL_CONTENTION = 1u << 0,
	PATH_LEAK = 1u << 1,
	PATH_CHURN = 1u << 2,
	PATH_LONG_HOLD = 1u << 3,
	PATH_ALL = (1u << 4) - 1,
};

/* Bit @bit's command-line name; NULL past the last one. */
const char *pathology_name(unsigned bit);

#define REQUEST_MAX_PAGES 4u	/* pages per request: 1..4 */
#define REQUEST_COST REQUEST_MAX_PAGES /* tokens taken up front, 1 per page */
#define HOT_PERCENT 90u		/* share of page reads that go to the hot set */

struct service_opts {
	unsigned clients;
	unsigned workers;
	unsigned frames;
	unsigned conns;
	unsigned queue;
	unsigned hot_pages;
	unsigned catalog_pages;	/* pages 0..catalog_pages-1 */
	uint64_t data_pages;
	const char *data_dir;	/* NULL: a temporary directory */
	double rate;		/* tokens per second, 0 = unlimited */
	uint64_t burst;
	uint64_t max_requests;	/* 0 = no limit */
	uint64_t seed;
	unsigned pathologies;	/* enum demo_pathology bits */
	unsigned leak_every;	/* every Nth request checks a catalog page */
	unsigned churn_cycles;	/* churn: acquire/release cycles per request */
	unsigned hold_ms;	/* long-hold: how long the holder keeps a connection */
	unsigned hold_period_ms;
};

/* Ground truth about planted pathologies, counted by the service itself. */
struct service_truth {
	uint64_t leaked_pins;		/* leak: bufpool_get without bufpool_put */
	uint64_t checksum_failures;	/* catalog pages that failed bufpool_use */
	uint64_t churn_cycles;		/* churn: acquire+release with no query */
	uint64_t long_holds;		/* long-hold: completed holds */
	uint64_t long_hold_ns;		/* total time held by them */
};

struct service_report {
	double elapsed_s;		/* load phase: start to last client exit */
	uint64_t requests;		/* finished, including failed */
	uint64_t failed;
	uint64_t unexpected_errors;	/* failures no pathology explains */
	uint64_t lat_p50_ns, lat_p99_ns, lat_max_ns, lat_mean_ns;
	uint64_t items_freed;
	struct bufpool_stats pool;
	struct connpool_stats conn;
	struct workq_stats queue;
	struct tokens_stats tokens;
	struct service_truth truth;
	const char *io_mode;		/* "O_DIRECT" or "fadvise" */
	const char *fs_name;
	int fs_is_memory;
	const char *data_path;
};

struct service;

/* Creates the data file and the resources. NULL and errno on failure;
 * *errstep then names the step. */
struct service *service_new(const struct service_opts *opts, const char **errstep);
/* Starts backend, workers, clients (and the holder). 0 or -errno. */
int service_start(struct service *svc);
/* 1 once every client has stopped on its own (request limit reached). */
int service_clients_done(struct service *svc);
/* Asks everything to stop after its current request. */
void service_stop(struct service *svc);
/* Waits for clients, then drains the queue and joins workers. */
void service_join(struct service *svc);
void service_get_report(struct service *svc, struct service_report *rep);
/* Deletes the data file and frees everything. NULL is ok. */
void service_free(struct service *svc);

/* Prints what each planted pathology does and where its ground truth is. */
void service_describe(const struct service_opts *opts, FILE *out);

#endif /* DEMO_SERVICE_H */
