/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * service.c: the demo service's request flow, its threads, and the planted
 * pathologies (each marked PATHOLOGY below, with its ground-truth counter).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "latency.h"
#include "rng.h"
#include "service.h"
#include "sync.h"

static const char *const pathology_names[] = {
	"pool-contention", "leak", "churn", "long-hold",
};

const char *pathology_name(unsigned bit)
{
	return bit < sizeof(pathology_names) / sizeof(pathology_names[0]) ?
		       pathology_names[bit] : NULL;
}

struct client {
	struct service *svc;
	pthread_t thread;
	unsigned id;
	int started;
	uint64_t requests;
	uint64_t failed;
	uint64_t unexpected;
	struct lat_hist lat;
};

struct worker {
	struct service *svc;
	pthread_t thread;
	int started;
	uint64_t freed;
};

struct service {
	struct service_opts opts;
	struct datafile *df;
	struct bufpool *pool;
	struct connpool *conns;
	struct workq *queue;
	struct tokens *tokens;

	struct client *clients;
	struct worker *workers;
	pthread_t holder;
	int holder_started;

	atomic_uint_fast64_t next_req;
	atomic_uint clients_done;
	atomic_int stop;
	pthread_mutex_t stop_lock;	/* with stop_cond: interruptible sleeps */
	pthread_cond_t stop_cond;
	int sync_ready;

	uint64_t start_ns, end_ns;
	uint64_t holder_errors;

	atomic_uint_fast64_t leaked_pins;
	atomic_uint_fast64_t checksum_failures;
	atomic_uint_fast64_t churn_cycles;
	atomic_uint_fast64_t long_holds;
	atomic_uint_fast64_t long_hold_ns;
};

static int stopping(struct service *svc)
{
	return atomic_load_explicit(&svc->stop, memory_order_acquire);
}

/* Sleeps @ms unless service_stop() comes first. */
static void sleep_unless_stopped(struct service *svc, unsigned ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000u;

	mutex_lock(&svc->stop_lock);
	while (!stopping(svc) && now_ns() < deadline)
		cond_wait_until(&svc->stop_cond, &svc->stop_lock, deadline);
	mutex_unlock(&svc->stop_lock);
}

static uint64_t pick_page(const struct service_opts *o, uint64_t *rng)
{
	uint64_t first = o->catalog_pages;

	if (rng_below(rng, 100) < HOT_PERCENT)
		return first + rng_below(rng, o->hot_pages);
	return first + rng_below(rng, o->data_pages - first);
}

/*
 * Every leak_every-th request also verifies a catalog page. Under
 * PATHOLOGY leak the catalog pages were written with bad checksums, and
 * the error path below "forgets" bufpool_put(): the pin leaks. The pins
 * pile up on at most catalog_pages frames (which then stay pinned), so the
 * pool keeps working while ACQUIREs outnumber RELEASEs without bound.
 * Ground truth: truth.leaked_pins.
 */
static int check_catalog(struct service *svc, struct conn *conn, uint64_t req_id)
{
	const struct service_opts *o = &svc->opts;
	uint64_t pageno = (req_id / o->leak_every) % o->catalog_pages;
	struct bufpool_frame *f;
	int err;

	f = bufpool_get(svc->pool, pageno);
	if (!f)
		return -errno;
	err = bufpool_use(svc->pool, f, conn, NULL);
	if (err) {
		atomic_fetch_add(&svc->checksum_failures, 1);
		if (o->pathologies & PATH_LEAK) {
			atomic_fetch_add(&svc->leaked_pins, 1);
			return err; /* PATHOLOGY leak: no bufpool_put(f) */
		}
	}
	bufpool_put(svc->pool, f);
	return err;
}

/* One request; 0 or -errno. */
static int run_request(struct service *svc, struct client *cl, uint64_t req_id)
{
	const struct service_opts *o = &svc->opts;
	uint64_t rng = rng_stream(o->seed, req_id);
	unsigned npages = 1 + (unsigned)rng_below(&rng, REQUEST_MAX_PAGES);
	struct conn_msg msg = { .id = req_id, .key = rng_next(&rng) };
	struct bufpool_frame *f;
	struct work_item *item;
	uint64_t digest = 0, d;
	unsigned i, read = 0;
	struct conn *conn;
	int err;

	while (!tokens_take(svc->tokens, REQUEST_COST))
		tokens_wait(svc->tokens, REQUEST_COST);

	/* PATHOLOGY churn: a "connection health check" that acquires and
	 * releases again and again without ever using the connection.
	 * Ground truth: truth.churn_cycles. */
	if (o->pathologies & PATH_CHURN) {
		for (i = 0; i < o->churn_cycles; i++) {
			conn = connpool_acquire(svc->conns);
			connpool_release(svc->conns, conn);
			atomic_fetch_add(&svc->churn_cycles, 1);
		}
	}

	conn = connpool_acquire(svc->conns);
	err = connpool_query(svc->conns, conn, &msg);
	if (!err && msg.value != connpool_expected(msg.key))
		err = -EPROTO;
	if (err)
		goto out;

	if (req_id % o->leak_every == o->leak_every - 1) {
		err = check_catalog(svc, conn, req_id);
		if (err)
			goto out;
	}

	/* One page pinned at a time: with several pinned while waiting for
	 * another frame, a small pool could deadlock. */
	for (i = 0; i < npages; i++) {
		f = bufpool_get(svc->pool, pick_page(o, &rng));
		if (!f) {
			err = -errno;
			goto out;
		}
		err = bufpool_use(svc->pool, f, conn, &d);
		bufpool_put(svc->pool, f);
		read++;
		if (err)
			goto out;
		digest = digest * 0x100000001b3ULL + d;
	}

	item = malloc(sizeof(*item));
	if (!item) {
		err = -ENOMEM;
		goto out;
	}
	*item = (struct work_item){
		.req_id = req_id,
		.digest = digest,
		.reply = msg.value,
		.npages = npages,
		.client = cl->id,
	};
	err = workq_push(svc->queue, item);
	if (err)
		free(item);
out:
	connpool_release(svc->conns, conn);
	if (read < REQUEST_COST)
		tokens_refund(svc->tokens, REQUEST_COST - read);
	return err;
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct service *svc = cl->svc;
	uint64_t req_id, t0;
	int err;

	while (!stopping(svc)) {
		req_id = atomic_fetch_add(&svc->next_req, 1);
		if (svc->opts.max_requests && req_id >= svc->opts.max_requests)
			break;
		t0 = now_ns();
		err = run_request(svc, cl, req_id);
		lat_hist_add(&cl->lat, now_ns() - t0);
		cl->requests++;
		if (err) {
			cl->failed++;
			/* the planted checksum failures are expected; nothing else is */
			if (err != -EBADMSG || !(svc->opts.pathologies & PATH_LEAK)) {
				cl->unexpected++;
				fprintf(stderr, "probity-demo: request %llu: %s\n",
					(unsigned long long)req_id, strerror(-err));
			}
		}
	}
	atomic_fetch_add(&svc->clients_done, 1);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct workq *q = w->svc->queue;
	struct work_item *item;

	while ((item = workq_pop(q))) {
		workq_process(q, item);
		workq_done(q, item);
		free(item);
		w->freed++;
	}
	return NULL;
}

/*
 * PATHOLOGY long-hold: a "report" session that takes a connection, runs
 * one query and then keeps the connection while it sleeps hold_ms, every
 * hold_period_ms. The pool is sized to one connection per client, so while
 * it holds one, some client must wait in connpool_wait().
 * Ground truth: truth.long_holds / long_hold_ms; effect: conn_waits.
 */
static void *holder_main(void *arg)
{
	struct service *svc = arg;
	const struct service_opts *o = &svc->opts;
	struct conn_msg msg = { 0 };
	struct conn *conn;
	uint64_t t0;

	while (!stopping(svc)) {
		conn = connpool_acquire(svc->conns);
		msg.id = ++msg.key;
		if (connpool_query(svc->conns, conn, &msg))
			svc->holder_errors++;
		t0 = now_ns();
		sleep_unless_stopped(svc, o->hold_ms);
		connpool_release(svc->conns, conn);
		atomic_fetch_add(&svc->long_hold_ns, now_ns() - t0);
		atomic_fetch_add(&svc->long_holds, 1);
		sleep_unless_stopped(svc, o->hold_period_ms - o->hold_ms);
	}
	return NULL;
}

struct service *service_new(const struct service_opts *opts, const char **errstep)
{
	struct datafile_opts dopts = {
		.dir = opts->data_dir,
		.pages = opts->data_pages,
		.bad_pages = (opts->pathologies & PATH_LEAK) ? opts->catalog_pages : 0,
		.seed = opts->seed,
	};
	struct bufpool_opts popts = { .frames = opts->frames };
	struct service *svc;
	const char *step = "allocate";
	int err;

	svc = calloc(1, sizeof(*svc));
	if (!svc)
		goto fail;
	svc->opts = *opts;
	svc->clients = calloc(opts->clients, sizeof(*svc->clients));
	svc->workers = calloc(opts->workers, sizeof(*svc->workers));
	if (!svc->clients || !svc->workers)
		goto fail;
	err = pthread_mutex_init(&svc->stop_lock, NULL);
	if (!err) {
		err = cond_init_monotonic(&svc->stop_cond);
		if (err)
			pthread_mutex_destroy(&svc->stop_lock);
	}
	if (err) {
		errno = err;
		goto fail;
	}
	svc->sync_ready = 1;

	svc->df = datafile_new(&dopts, &step);
	if (!svc->df)
		goto fail;
	popts.df = svc->df;
	step = "create the buffer pool";
	svc->pool = bufpool_new(&popts);
	if (!svc->pool)
		goto fail;
	step = "create the connection pool";
	svc->conns = connpool_new(opts->conns);
	if (!svc->conns)
		goto fail;
	step = "create the work queue";
	svc->queue = workq_new(opts->queue);
	if (!svc->queue)
		goto fail;
	step = "create the token bucket";
	svc->tokens = tokens_new(opts->rate, opts->burst);
	if (!svc->tokens)
		goto fail;
	return svc;
fail:
	err = errno;
	if (errstep)
		*errstep = step;
	service_free(svc);
	errno = err;
	return NULL;
}

int service_start(struct service *svc)
{
	unsigned i;
	int err = 0;

	svc->start_ns = now_ns();
	for (i = 0; i < svc->opts.workers && !err; i++) {
		struct worker *w = &svc->workers[i];

		w->svc = svc;
		err = pthread_create(&w->thread, NULL, worker_main, w);
		w->started = !err;
	}
	for (i = 0; i < svc->opts.clients && !err; i++) {
		struct client *cl = &svc->clients[i];

		cl->svc = svc;
		cl->id = i;
		err = pthread_create(&cl->thread, NULL, client_main, cl);
		cl->started = !err;
	}
	if (!err && (svc->opts.pathologies & PATH_LONG_HOLD)) {
		err = pthread_create(&svc->holder, NULL, holder_main, svc);
		svc->holder_started = !err;
	}
	if (err) {
		service_stop(svc);
		service_join(svc);
	}
	return -err;
}

int service_clients_done(struct service *svc)
{
	return atomic_load(&svc->clients_done) == svc->opts.clients;
}

void service_stop(struct service *svc)
{
	mutex_lock(&svc->stop_lock);
	atomic_store_explicit(&svc->stop, 1, memory_order_release);
	cond_broadcast(&svc->stop_cond);
	mutex_unlock(&svc->stop_lock);
}

static void join_thread(pthread_t t, const char *what)
{
	int err = pthread_join(t, NULL);

	if (err)
		fprintf(stderr, "probity-demo: join %s: %s\n", what, strerror(err));
}

void service_join(struct service *svc)
{
	unsigned i;

	for (i = 0; i < svc->opts.clients; i++) {
		if (svc->clients[i].started)
			join_thread(svc->clients[i].thread, "client");
		svc->clients[i].started = 0;
	}
	if (svc->holder_started)
		join_thread(svc->holder, "holder");
	svc->holder_started = 0;
	if (!svc->end_ns)
		svc->end_ns = now_ns();
	/* Clients are gone: let the workers drain the queue, then exit. */
	workq_close(svc->queue);
	for (i = 0; i < svc->opts.workers; i++) {
		if (svc->workers[i].started)
			join_thread(svc->workers[i].thread, "worker");
		svc->workers[i].started = 0;
	}
}

void service_get_report(struct service *svc, struct service_report *rep)
{
	struct lat_hist *lat;
	unsigned i;

	*rep = (struct service_report){ 0 };
	lat = calloc(1, sizeof(*lat));
	for (i = 0; i < svc->opts.clients; i++) {
		const struct client *cl = &svc->clients[i];

		rep->requests += cl->requests;
		rep->failed += cl->failed;
		rep->unexpected_errors += cl->unexpected;
		if (lat)
			lat_hist_merge(lat, &cl->lat);
	}
	if (lat) {
		rep->lat_p50_ns = lat_hist_quantile(lat, 0.50);
		rep->lat_p99_ns = lat_hist_quantile(lat, 0.99);
		rep->lat_max_ns = lat->max_ns;
		rep->lat_mean_ns = lat->count ? lat->sum_ns / lat->count : 0;
		free(lat);
	}
	for (i = 0; i < svc->opts.workers; i++)
		rep->items_freed += svc->workers[i].freed;
	rep->elapsed_s = (double)((svc->end_ns ? svc->end_ns : now_ns()) - svc->start_ns) / 1e9;
	bufpool_get_stats(svc->pool, &rep->pool);
	connpool_get_stats(svc->conns, &rep->conn);
	workq_get_stats(svc->queue, &rep->queue);
	tokens_get_stats(svc->tokens, &rep->tokens);
	/* read and query errors already failed a request (counted above) */
	rep->unexpected_errors += svc->holder_errors;
	rep->truth.leaked_pins = atomic_load(&svc->leaked_pins);
	rep->truth.checksum_failures = atomic_load(&svc->checksum_failures);
	rep->truth.churn_cycles = atomic_load(&svc->churn_cycles);
	rep->truth.long_holds = atomic_load(&svc->long_holds);
	rep->truth.long_hold_ns = atomic_load(&svc->long_hold_ns);
	rep->io_mode = datafile_io_name(datafile_io(svc->df));
	rep->fs_name = datafile_fs_name(svc->df);
	rep->fs_is_memory = datafile_fs_is_memory(svc->df);
	rep->data_path = datafile_path(svc->df);
}

void service_free(struct service *svc)
{
	if (!svc)
		return;
	tokens_free(svc->tokens);
	workq_free(svc->queue);
	connpool_free(svc->conns);
	bufpool_free(svc->pool);
	datafile_free(svc->df);
	if (svc->sync_ready) {
		pthread_cond_destroy(&svc->stop_cond);
		pthread_mutex_destroy(&svc->stop_lock);
	}
	free(svc->workers);
	free(svc->clients);
	free(svc);
}

void service_describe(const struct service_opts *o, FILE *out)
{
	if (!o->pathologies) {
		fprintf(out, "probity-demo: pathology none: every truth.* counter stays 0\n");
		return;
	}
	if (o->pathologies & PATH_POOL_CONTENTION)
		fprintf(out,
			"probity-demo: pathology pool-contention: %u frames for %u clients over a "
			"%u-page working set; clients wait for a free frame in bufpool_wait_free "
			"(truth: frame_waits, frame_wait_ms)\n",
			o->frames, o->clients, o->hot_pages);
	if ((o->pathologies & PATH_POOL_CONTENTION) && o->clients < 2)
		fprintf(out, "probity-demo: warning: with one client, nothing contends for "
			     "frames (use --clients 2 or more)\n");
	if (o->pathologies & PATH_LEAK)
		fprintf(out,
			"probity-demo: pathology leak: the %u catalog page(s) from page 0 have bad "
			"checksums; requests whose id %% %u == %u read one, and that error path "
			"returns without bufpool_put: the leaked pins grow without bound on at most "
			"%u frame(s) (truth: leaked_pins, == bufpool.pins_at_exit)\n",
			o->catalog_pages, o->leak_every, o->leak_every - 1, o->catalog_pages);
	if (o->pathologies & PATH_CHURN)
		fprintf(out,
			"probity-demo: pathology churn: each request first does %u "
			"connpool_acquire/connpool_release cycles with no connpool_query "
			"(truth: churn_cycles)\n",
			o->churn_cycles);
	if (o->pathologies & PATH_LONG_HOLD)
		fprintf(out,
			"probity-demo: pathology long-hold: a holder thread keeps a connection for "
			"%u ms (asleep) every %u ms; %u connections for %u clients, so clients wait "
			"in connpool_wait while it holds (truth: long_holds, long_hold_ms; "
			"effect: conn_waits)\n",
			o->hold_ms, o->hold_period_ms, o->conns, o->clients);
}
