/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main.c: probity-demo's command line: options, the run loop (duration,
 * request limit, SIGINT/SIGTERM) and the exit summary.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service.h"
#include "summary.h"
#include "sync.h"

#define EXIT_USAGE 2

struct cli {
	struct service_opts svc;
	double duration_s;
	int json;
	int quiet;
	/* set by an explicit flag: a pathology must not override them */
	int frames_set, conns_set, hot_set;
	uint64_t data_mib;
};

static const char usage_text[] =
	"Usage: probity-demo [OPTION]...\n"
	"A small multi-threaded storage service with four application resources\n"
	"(buffer pool pages, connections, work-queue slots, rate-limit tokens) and a\n"
	"built-in load generator; the target probity observes. demo/README.md\n"
	"describes the resources and pathologies; demo/demo.manifest.yaml its probes.\n"
	"\n"
	"Load:\n"
	"  -c, --clients N       client threads issuing requests (default 4)\n"
	"  -w, --workers N       worker threads processing queued items (default 2)\n"
	"  -d, --duration SECS   run time, may be fractional; 0 = until SIGINT or\n"
	"                        SIGTERM (default 10)\n"
	"  -n, --requests N      stop after N requests (default: no limit)\n"
	"  -s, --seed N          seed of every random choice (default 1)\n"
	"Resources:\n"
	"      --frames N        buffer pool frames of 4 KiB (default 64)\n"
	"      --conns N         connections in the pool (default 8)\n"
	"      --queue N         work queue slots, items in flight (default 32)\n"
	"      --rate N          token refill per second, 0 = unlimited (default 200000)\n"
	"      --burst N         token bucket capacity (default 256)\n"
	"      --hot-pages N     pages of the hot set that 90% of reads go to (default 48)\n"
	"      --data-dir DIR    create the data file in DIR (default: a new directory\n"
	"                        under $TMPDIR or /var/tmp, removed at exit)\n"
	"      --data-mib N      data file size in MiB (default 128)\n"
	"Pathologies:\n"
	"  -p, --pathology NAME  none, pool-contention, leak, churn, long-hold, all, or\n"
	"                        a comma-separated list (default none); the ground\n"
	"                        truth is printed at start and counted in the summary\n"
	"      --leak-every N    every Nth request reads a catalog page (default 50)\n"
	"      --churn N         churn: acquire/release cycles per request (default 10)\n"
	"      --hold-ms N       long-hold: how long a connection is held (default 300)\n"
	"Output:\n"
	"  -j, --json            print the exit summary as one JSON object\n"
	"  -q, --quiet           no start-up lines on stderr\n"
	"  -V, --version         print the version and exit\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"Exit status: 0 success, 1 a runtime error (a request failed for a reason no\n"
	"planted pathology explains, or setup failed), 2 a usage error.\n";

enum {
	OPT_FRAMES = 256,
	OPT_CONNS,
	OPT_QUEUE,
	OPT_RATE,
	OPT_BURST,
	OPT_HOT_PAGES,
	OPT_DATA_DIR,
	OPT_DATA_MIB,
	OPT_LEAK_EVERY,
	OPT_CHURN,
	OPT_HOLD_MS,
};

static const struct option long_opts[] = {
	{ "clients", required_argument, NULL, 'c' },
	{ "workers", required_argument, NULL, 'w' },
	{ "duration", required_argument, NULL, 'd' },
	{ "requests", required_argument, NULL, 'n' },
	{ "seed", required_argument, NULL, 's' },
	{ "frames", required_argument, NULL, OPT_FRAMES },
	{ "conns", required_argument, NULL, OPT_CONNS },
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "hot-pages", required_argument, NULL, OPT_HOT_PAGES },
	{ "data-dir", required_argument, NULL, OPT_DATA_DIR },
	{ "data-mib", required_argument, NULL, OPT_DATA_MIB },
	{ "pathology", required_argument, NULL, 'p' },
	{ "leak-every", required_argument, NULL, OPT_LEAK_EVERY },
	{ "churn", required_argument, NULL, OPT_CHURN },
	{ "hold-ms", required_argument, NULL, OPT_HOLD_MS },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "probity-demo: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'probity-demo --help'.\n");
	return -EINVAL;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, const char *flag, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || strchr(s, '-') || v < min || v > max) {
		fprintf(stderr,
			"probity-demo: %s: '%s' is not an integer in %llu..%llu\n"
			"Try 'probity-demo --help'.\n",
			flag, s, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned min, unsigned max, const char *flag, unsigned *out)
{
	uint64_t v;
	int err = parse_u64(s, min, max, flag, &v);

	if (!err)
		*out = (unsigned)v;
	return err;
}

static int parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 86400.0 * 365)
		return usage_error("--duration: '%s' is not a number of seconds >= 0", s);
	*out = v;
	return 0;
}

static int parse_pathologies(const char *s, unsigned *out)
{
	char buf[128], *tok, *save = NULL;
	unsigned bits = 0, b;
	const char *name;

	if (strlen(s) >= sizeof(buf))
		return usage_error("--pathology: '%s' is too long", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "none"))
			continue;
		if (!strcmp(tok, "all")) {
			bits |= PATH_ALL;
			continue;
		}
		for (b = 0; (name = pathology_name(b)); b++)
			if (!strcmp(tok, name))
				break;
		if (!name)
			return usage_error("--pathology: unknown pathology '%s' (none, "
					   "pool-contention, leak, churn, long-hold, all)",
					   tok);
		bits |= 1u << b;
	}
	*out = bits;
	return 0;
}

/* Fills @cli from argv. 0 to run, 1 when done (help/version), -EINVAL. */
static int parse_args(int argc, char **argv, struct cli *cli)
{
	struct service_opts *o = &cli->svc;
	uint64_t v;
	int c, err = 0;

	while (!err && (c = getopt_long(argc, argv, "c:w:d:n:s:p:jqVh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			err = parse_uint(optarg, 1, 1024, "--clients", &o->clients);
			break;
		case 'w':
			err = parse_uint(optarg, 1, 256, "--workers", &o->workers);
			break;
		case 'd':
			err = parse_duration(optarg, &cli->duration_s);
			break;
		case 'n':
			err = parse_u64(optarg, 1, UINT64_MAX / 2, "--requests", &o->max_requests);
			break;
		case 's':
			err = parse_u64(optarg, 0, UINT64_MAX, "--seed", &o->seed);
			break;
		case OPT_FRAMES:
			err = parse_uint(optarg, 1, 1u << 20, "--frames", &o->frames);
			cli->frames_set = 1;
			break;
		case OPT_CONNS:
			err = parse_uint(optarg, 1, 4096, "--conns", &o->conns);
			cli->conns_set = 1;
			break;
		case OPT_QUEUE:
			err = parse_uint(optarg, 1, 1u << 20, "--queue", &o->queue);
			break;
		case OPT_RATE:
			err = parse_u64(optarg, 0, 1000000000, "--rate", &v);
			o->rate = (double)v;
			break;
		case OPT_BURST:
			err = parse_u64(optarg, REQUEST_COST, 1000000000, "--burst", &o->burst);
			break;
		case OPT_HOT_PAGES:
			err = parse_uint(optarg, 1, 1u << 30, "--hot-pages", &o->hot_pages);
			cli->hot_set = 1;
			break;
		case OPT_DATA_DIR:
			o->data_dir = optarg;
			break;
		case OPT_DATA_MIB:
			err = parse_u64(optarg, 1, 65536, "--data-mib", &cli->data_mib);
			break;
		case 'p':
			err = parse_pathologies(optarg, &o->pathologies);
			break;
		case OPT_LEAK_EVERY:
			err = parse_uint(optarg, 1, 1000000, "--leak-every", &o->leak_every);
			break;
		case OPT_CHURN:
			err = parse_uint(optarg, 1, 1000000, "--churn", &o->churn_cycles);
			break;
		case OPT_HOLD_MS:
			err = parse_uint(optarg, 1, 3600000, "--hold-ms", &o->hold_ms);
			break;
		case 'j':
			cli->json = 1;
			break;
		case 'q':
			cli->quiet = 1;
			break;
		case 'V':
			printf("probity-demo %s\n", DEMO_VERSION);
			return 1;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		default:
			fprintf(stderr, "Try 'probity-demo --help'.\n");
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

/* Pathology-driven sizing (unless the flag was given) and cross-checks. */
static int finish_opts(struct cli *cli)
{
	struct service_opts *o = &cli->svc;
	unsigned catalog;

	if (o->pathologies & PATH_POOL_CONTENTION) {
		/* Half a frame per client; plus the frame leaked pins will hold. */
		if (!cli->frames_set)
			o->frames = (o->clients >= 2 ? o->clients / 2 : 1) +
				    ((o->pathologies & PATH_LEAK) ? 1 : 0);
		if (!cli->hot_set)
			o->hot_pages = 1024;
	}
	if ((o->pathologies & PATH_LONG_HOLD) && !cli->conns_set)
		o->conns = o->clients;
	o->hold_period_ms = 2 * o->hold_ms;
	o->data_pages = cli->data_mib * (1024 * 1024 / DATAFILE_PAGE_SIZE);

	/* Leaked pins stay on catalog frames: keep most frames usable. */
	catalog = o->frames / 4;
	o->catalog_pages = catalog < 1 ? 1 : catalog > 8 ? 8 : catalog;
	if ((o->pathologies & PATH_LEAK) && o->frames < 2)
		return usage_error("--pathology leak needs --frames >= 2 (the leak would pin "
				   "them all)");
	if ((uint64_t)o->catalog_pages + o->hot_pages > o->data_pages)
		return usage_error("--hot-pages %u does not fit in a %llu-page data file "
				   "(raise --data-mib)",
				   o->hot_pages, (unsigned long long)o->data_pages);
	return 0;
}

/* Runs until the duration ends, the request limit is reached, or SIGINT or
 * SIGTERM arrives (blocked in every thread, taken here with sigtimedwait). */
static void run_until_done(struct service *svc, double duration_s, const sigset_t *sigs)
{
	uint64_t start = now_ns();
	uint64_t deadline = start + (uint64_t)(duration_s * 1e9);
	struct timespec tick = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
	uint64_t now, left;
	int sig;

	for (;;) {
		if (service_clients_done(svc))
			return;
		if (duration_s > 0) {
			now = now_ns();
			if (now >= deadline)
				return;
			left = deadline - now;
			if (left < 50u * 1000 * 1000)
				tick.tv_nsec = (long)left;
		}
		sig = sigtimedwait(sigs, NULL, &tick);
		if (sig > 0)
			return;
		if (sig < 0 && errno != EAGAIN && errno != EINTR) {
			perror("probity-demo: sigtimedwait");
			return;
		}
	}
}

int main(int argc, char **argv)
{
	struct cli cli = {
		.svc = {
			.clients = 4,
			.workers = 2,
			.frames = 64,
			.conns = 8,
			.queue = 32,
			.hot_pages = 48,
			.rate = 200000,
			.burst = 256,
			.seed = 1,
			.leak_every = 50,
			.churn_cycles = 10,
			.hold_ms = 300,
		},
		.duration_s = 10,
		.data_mib = 128,
	};
	struct service_report rep;
	struct service *svc;
	const char *step = "start";
	sigset_t sigs;
	int err;

	err = parse_args(argc, argv, &cli);
	if (err == 0)
		err = finish_opts(&cli);
	if (err)
		return err > 0 ? EXIT_SUCCESS : EXIT_USAGE;

	/* Before any thread exists, so that all of them inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	err = pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (err) {
		fprintf(stderr, "probity-demo: pthread_sigmask: %s\n", strerror(err));
		return EXIT_FAILURE;
	}
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		perror("probity-demo: signal");
		return EXIT_FAILURE;
	}

	svc = service_new(&cli.svc, &step);
	if (!svc) {
		fprintf(stderr, "probity-demo: %s: %s\n", step, strerror(errno));
		return EXIT_FAILURE;
	}
	if (!cli.quiet) {
		service_get_report(svc, &rep);
		fprintf(stderr,
			"probity-demo %s: pid %ld, %u clients, %u workers, %u frames, %u conns, "
			"queue %u, data %s (%llu MiB, %s on %s)\n",
			DEMO_VERSION, (long)getpid(), cli.svc.clients, cli.svc.workers,
			cli.svc.frames, cli.svc.conns, cli.svc.queue, rep.data_path,
			(unsigned long long)cli.data_mib, rep.io_mode, rep.fs_name);
		if (rep.fs_is_memory)
			fprintf(stderr, "probity-demo: warning: %s keeps data in memory; "
					"misses will not reach a block device (use --data-dir)\n",
				rep.fs_name);
		service_describe(&cli.svc, stderr);
	}

	err = service_start(svc);
	if (err) {
		fprintf(stderr, "probity-demo: start threads: %s\n", strerror(-err));
		service_free(svc);
		return EXIT_FAILURE;
	}
	run_until_done(svc, cli.duration_s, &sigs);
	service_stop(svc);
	service_join(svc);

	service_get_report(svc, &rep);
	if (cli.json)
		summary_print_json(stdout, &cli.svc, &rep, cli.duration_s);
	else
		summary_print_text(stdout, &cli.svc, &rep);
	service_free(svc);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("probity-demo: stdout");
		return EXIT_FAILURE;
	}
	return rep.unexpected_errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
