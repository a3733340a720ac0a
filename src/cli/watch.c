/* SPDX-License-Identifier: BSD-2-Clause */
/* watch.c (cli): `probity watch --store DIR [-d SECONDS]`: the
 * independent observer (src/observe/) writing into a receipt store until
 * the duration ends or SIGINT/SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "observe/observer_api.h"
#include "common/clock.h"
#include "receipts/lifelog.h"

static void watch_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] watch [--store DIR] [-d SECONDS]\n"
		"\n"
		"Observe every BPF program load, link creation and link update on the\n"
		"machine, including those of tools that never heard of probity, and\n"
		"record them in a receipt store: 'loaded' (with a receipt whose decision\n"
		"provenance is 'unknown'), 'link-updated' and 'unloaded' lifecycle\n"
		"entries. Sources: tp_btf sys_enter/sys_exit filtered to bpf(), and perf\n"
		"ksymbol/bpf_event records per CPU (CLOCK_MONOTONIC). Programs are\n"
		"captured through the loader's fd (pidfd_getfd) as soon as the load\n"
		"returns, else by id; what could not be captured is counted.\n"
		"\n"
		"Options:\n"
		"  -s, --store DIR      receipt store to write (default $PROBITY_STORE,\n"
		"                       else ./probity-store; created if missing)\n"
		"  -d, --duration S     stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Prints 'probity watch: observing' on stderr once attached, and a summary\n"
		"of what was seen and missed at the end.\n"
		"\n"
		"Exit status: 0 ok; 2 usage error; 3 BPF or I/O failure.\n",
		bin_name);
}

/* Options: -1 to go on, else the exit status to return now. */
static int parse_watch_opts(int argc, char **argv, const char **store, uint64_t *duration_ns)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	*store = cli_default_store();
	if (!*store || !**store)
		*store = "./probity-store";
	*duration_ns = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "s:d:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 's': *store = optarg; break;
		case 'd':
			if (cli_parse_duration("--duration", optarg, false, 1e7, duration_ns))
				return EXIT_USAGE;
			break;
		case 'h': watch_help(stdout); return EXIT_OK;
		default: watch_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		p_err("'watch' takes no arguments (see '%s watch --help')", bin_name);
		return EXIT_USAGE;
	}
	return -1;
}

/* What was seen and missed, from the observer's counters. */
static void print_stats(const char *store, const struct lifelog_observer_stats *st)
{
	if (json_output) {
		json_print_and_free(json_pack("{s:s, s:o}", "store", store, "stats",
					      lifelog_observer_stats__encode(st)));
		return;
	}
	printf("watch: %llu bpf() calls, %llu loads seen, %llu captured (%llu via fd, %llu by id), "
	       "%llu link creates, %llu link updates, %llu unloads\n",
	       (unsigned long long)st->bpf_syscalls, (unsigned long long)st->loads_seen,
	       (unsigned long long)st->captured, (unsigned long long)st->captured_by_fd,
	       (unsigned long long)st->captured_by_id, (unsigned long long)st->link_creates,
	       (unsigned long long)st->link_updates, (unsigned long long)st->unloads);
	printf("missed: %llu gone before capture, %llu perf records lost, %llu ring buffer drops, "
	       "%llu syscalls not followed, %llu links unresolved\n",
	       (unsigned long long)st->missed.gone_before_capture,
	       (unsigned long long)st->missed.perf_records_lost,
	       (unsigned long long)st->missed.ringbuf_dropped,
	       (unsigned long long)st->missed.syscalls_not_followed,
	       (unsigned long long)st->missed.links_unresolved);
}

int do_watch(int argc, char **argv)
{
	const char *store;
	struct pb_observer_opts oo = { 0 };
	struct pb_observer *o = NULL;
	struct pb_store *s = NULL;
	uint64_t duration_ns = 0;
	uint64_t end = 0;
	struct lifelog_observer_stats st;
	int err, ret;

	ret = parse_watch_opts(argc, argv, &store, &duration_ns);
	if (ret >= 0)
		return ret;
	ret = EXIT_FAILURE_RT;
	err = pb_store__open(store, NULL, &s);
	if (err) {
		p_err("cannot open receipt store '%s': %s", store, strerror(-err));
		return EXIT_USAGE;
	}
	oo.store = s;
	err = pb_observer__new(&oo, &o);
	if (err) {
		p_err("cannot start the observer: %s", strerror(-err));
		goto out;
	}
	cli_stop_install();
	fprintf(stderr, "probity watch: observing (store %s)\n", store);
	if (duration_ns)
		end = pb_mono_ns() + duration_ns;
	while (!cli_stop_signal && (!end || pb_mono_ns() < end)) {
		err = pb_observer__poll(o, 100);
		if (err) {
			p_err("observer: %s", strerror(-err));
			goto out;
		}
	}
	err = pb_observer__finish(o);
	if (err)
		p_warn("could not log the observer's stop entry: %s", strerror(-err));
	pb_observer__stats(o, &st);
	print_stats(store, &st);
	ret = EXIT_OK;
out:
	pb_observer__free(o);
	pb_store__free(s);
	return ret;
}
