/* SPDX-License-Identifier: BSD-2-Clause */
/* sample.c (cli): `probity sample -o FILE [-d S] [-F HZ]`: system-wide
 * cpu-clock sampling with the kernel's JIT symbol records, into a sample
 * file that `probity attribute` maps to program generations
 * (src/attribute/sampler.c, docs/attribution.md). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/clock.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "attribute/sampler.h"

static void sample_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] sample -o FILE [-d SECONDS] [-F HZ]\n"
		"\n"
		"Sample every CPU (software cpu-clock event, CLOCK_MONOTONIC time\n"
		"stamps) together with the kernel's ksymbol and bpf_event records, so\n"
		"that 'probity attribute' can tell which generation of a BPF program\n"
		"each sample in JIT code belongs to. The BPF programs alive when\n"
		"sampling starts are enumerated into the file too. Lost records are\n"
		"counted and written where they happened.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE    sample file to write (mode 0600)\n"
		"  -d, --duration S     stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  -F, --freq HZ        samples per second per CPU (default 997)\n"
		"      --pages N        ring buffer data pages per CPU, a power of 2\n"
		"                       (default 64)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Prints 'probity sample: sampling' on stderr once running, progress\n"
		"every second when stderr is a terminal, and a summary (samples, how\n"
		"many in BPF JIT code, lost).\n"
		"\n"
		"Exit status: 0 ok; 2 usage error; 3 perf_event or I/O failure.\n",
		bin_name);
}

/* Options into so and *duration_ns: -1 to go on, else the exit status
 * (help shown, or a usage error printed). */
static int parse_sample_args(int argc, char **argv, struct pb_sampler_opts *so, uint64_t *duration_ns)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'F' },
		{ "pages", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:d:F:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'o': so->path = optarg; break;
		case 'd':
			if (cli_parse_duration("--duration", optarg, false, 86400 * 365, duration_ns))
				return EXIT_USAGE;
			break;
		case 'F':
			if (cli_parse_count("--freq", optarg, false, 100000, &v))
				return EXIT_USAGE;
			so->freq = (unsigned int)v;
			break;
		case 'P':
			if (cli_parse_count("--pages", optarg, false, 1 << 16, &v))
				return EXIT_USAGE;
			if (v & (v - 1)) {
				p_err("--pages: expected a power of 2, found %llu", (unsigned long long)v);
				return EXIT_USAGE;
			}
			so->pages = (unsigned int)v;
			break;
		case 'h': sample_help(stdout); return EXIT_OK;
		default: sample_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc || !so->path) {
		p_err(!so->path ? "'sample' needs -o FILE (see '%s sample --help')" :
				  "'sample' takes no arguments (see '%s sample --help')", bin_name);
		return EXIT_USAGE;
	}
	return -1;
}

static bool stop_requested(void *ctx)
{
	return cli_stop_signal;
}

/* progress is for a person watching: on a terminal only, one line
 * rewritten in place (a log or a pipe gets the summary alone) */
static void print_progress(void *ctx, uint64_t elapsed_ns, const struct pb_sampler_stats *st)
{
	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rprobity sample: %llus, %llu samples, %llu in BPF JIT, %llu lost\033[K",
		(unsigned long long)(elapsed_ns / PB_NSEC_PER_SEC), (unsigned long long)st->samples,
		(unsigned long long)st->in_bpf_jit, (unsigned long long)st->lost);
}

static void print_summary(const char *path, const char *stopped_by, const struct pb_sampler_stats *st)
{
	if (json_output)
		json_print_and_free(json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "output",
					      path, "stopped_by", stopped_by,
					      "samples", (json_int_t)st->samples, "in_bpf_jit", (json_int_t)st->in_bpf_jit,
					      "kernel", (json_int_t)st->kernel, "user", (json_int_t)st->user,
					      "ksymbol_records", (json_int_t)st->ksymbols,
					      "bpf_event_records", (json_int_t)st->bpf_events,
					      "lost", (json_int_t)st->lost, "snapshot_progs", (json_int_t)st->snapshot_progs,
					      "bad_records", (json_int_t)st->bad_records,
					      "sideband_time_estimated", (json_int_t)st->time_estimated));
	else
		printf("sample: %llu samples (%llu kernel, %llu user), %llu in BPF JIT code; %llu ksymbol and %llu bpf_event records; %llu programs alive at start; %llu records lost; stopped by %s\n",
		       (unsigned long long)st->samples, (unsigned long long)st->kernel, (unsigned long long)st->user,
		       (unsigned long long)st->in_bpf_jit, (unsigned long long)st->ksymbols,
		       (unsigned long long)st->bpf_events, (unsigned long long)st->snapshot_progs,
		       (unsigned long long)st->lost, stopped_by);
	if (st->bad_records)
		p_warn("%llu malformed ring records: the rest of those rings' data was skipped",
		       (unsigned long long)st->bad_records);
	if (st->time_estimated && !json_output)
		printf("sample: %llu side-band records came without a kernel time stamp; their times are bounded by the records around them\n",
		       (unsigned long long)st->time_estimated);
}

int do_sample(int argc, char **argv)
{
	struct pb_sampler_opts so = { 0 };
	struct pb_sampler_run_opts ro = { .should_stop = stop_requested, .progress = print_progress };
	struct pb_sampler_stats st;
	struct pb_sampler *s = NULL;
	const char *stopped_by = "duration";
	int err, ret;

	ret = parse_sample_args(argc, argv, &so, &ro.duration_ns);
	if (ret >= 0)
		return ret;
	err = pb_sampler__new(&so, &s);
	if (err) {
		p_err("cannot start sampling into '%s': %s%s", so.path, strerror(-err),
		      err == -EACCES || err == -EPERM ? " (needs root or perf_event_paranoid <= -1)" : "");
		return err == -ENOENT || err == -EISDIR ? EXIT_USAGE : EXIT_FAILURE_RT;
	}
	cli_stop_install();
	fprintf(stderr, "probity sample: sampling into %s\n", so.path);
	err = pb_sampler__run(s, &ro);
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);	/* end the progress line */
	if (err) {
		p_err("sampling: %s", strerror(-err));
		stopped_by = "error";
	}
	if (cli_stop_signal)
		stopped_by = cli_stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
	err = pb_sampler__finish(s, stopped_by) ?: err;
	pb_sampler__stats(s, &st);
	if (err) {
		p_err("writing '%s': %s", so.path, strerror(-err));
		ret = EXIT_FAILURE_RT;
	} else {
		print_summary(so.path, stopped_by, &st);
		ret = EXIT_OK;
	}
	pb_sampler__free(s);
	return ret;
}
