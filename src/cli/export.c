/* SPDX-License-Identifier: BSD-2-Clause */
/* export.c (cli): `probity export --perfetto TRACE -o FILE`: a trace as
 * Chrome/Perfetto trace-event JSON (src/analyze/perfetto.c). */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "cli/cli.h"
#include "analyze/trace_load.h"

static void export_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] export --perfetto TRACE -o FILE\n"
		"\n"
		"Convert a trace into Chrome/Perfetto trace-event JSON, viewable in the\n"
		"Perfetto UI (ui.perfetto.dev) or chrome://tracing. Timestamps are the\n"
		"trace's CLOCK_MONOTONIC in microseconds, so the file lines up with\n"
		"'perf record -k mono' of the same run. Per thread (named by its comm when\n"
		"the trace has it): WAIT spans, holds (ACQUIRE -> RELEASE of one\n"
		"generation), off-CPU and block-I/O slices, USE instants; flow arrows from\n"
		"a thread that released a resource to the WAIT its wakeup ended; counters\n"
		"of live instances and outstanding units per resource.\n"
		"Slices need a trace recorded with 'probity record --events'; from an\n"
		"aggregate-only trace only the counters are written (and a warning says so).\n"
		"\n"
		"Options:\n"
		"      --perfetto       write Chrome/Perfetto trace-event JSON (the only format)\n"
		"  -o, --output FILE    write to FILE ('-' for stdout); required\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 written; 2 usage error, unreadable or corrupt trace;\n"
		"3 the output could not be written.\n",
		bin_name);
}

/* warnings about what could not be drawn, then the summary (stderr, or
 * the one JSON document under -j when the file is not stdout) */
static void print_summary(const struct loaded_trace *lt, const char *trace, const char *output,
			  bool to_stdout, const struct perfetto_stats *st)
{
	if (!st->spans && !(lt->header.flags & TRACE_F_EVENTS))
		p_warn("%s was recorded without --events: no WAIT or hold spans, only counters "
		       "were written (record with 'probity record --events' for spans)", trace);
	else if (!st->spans)
		p_warn("%s has no WAIT or hold spans in its records; only counters were written",
		       trace);
	if (lt->cut_reason)
		p_warn("%s is incomplete (%s): exported up to the last complete chunk", trace,
		       lt->cut_reason);
	if (st->clipped)
		p_warn("%zu slices crossed their parent's end on the same thread and were cut "
		       "(args.clipped_ns says by how much)", st->clipped);
	if (json_output && !to_stdout)
		json_print_and_free(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "output",
					      output, "spans", (json_int_t)st->spans,
					      "off_cpu_slices", (json_int_t)st->offcpu,
					      "block_io_slices", (json_int_t)st->io,
					      "flows", (json_int_t)st->flows, "clipped", (json_int_t)st->clipped,
					      "threads", (json_int_t)st->threads,
					      "named_threads", (json_int_t)st->named,
					      "complete", lt->cut_reason == NULL));
	else if (!to_stdout)
		fprintf(stderr, "wrote %s: %zu spans, %zu off-CPU and %zu block-I/O slices, %zu flows, "
			"%zu threads (%zu named)\n", output, st->spans, st->offcpu, st->io, st->flows,
			st->threads, st->named);
}

int do_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "perfetto", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *output = NULL;
	struct loaded_trace lt;
	bool perfetto = false, to_stdout = false;
	struct perfetto_stats st = { 0 };
	FILE *out = NULL;
	int opt, err, ret;

	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'P': perfetto = true; break;
		case 'o': output = optarg; break;
		case 'h': export_help(stdout); return EXIT_OK;
		default: export_help(stderr); return EXIT_USAGE;
		}
	}
	if (!perfetto) {
		p_err("choose a format: --perfetto (see '%s export --help')", bin_name);
		return EXIT_USAGE;
	}
	if (!output) {
		p_err("-o FILE is required ('-' for stdout)");
		return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		p_err("expected exactly one TRACE argument (see '%s export --help')", bin_name);
		return EXIT_USAGE;
	}
	err = loaded_trace__load(&lt, argv[optind], NULL);
	if (err) {
		p_err("%s", lt.error[0] ? lt.error : strerror(-err));
		ret = err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
		goto out;
	}
	out = strcmp(output, "-") ? fopen(output, "w") : stdout;
	if (!out) {
		p_err("%s: %s", output, strerror(errno));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	to_stdout = out == stdout;
	err = export__perfetto_stats(lt.analysis, out, &st);
	if (!to_stdout && fclose(out) && !err)
		err = -errno;
	else if (to_stdout && fflush(stdout) && !err)
		err = -EIO;
	if (err) {
		p_err("%s: %s", output, strerror(-err));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	print_summary(&lt, argv[optind], output, to_stdout, &st);
	ret = EXIT_OK;
out:
	loaded_trace__free(&lt);
	return ret;
}
