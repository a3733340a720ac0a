/* SPDX-License-Identifier: BSD-2-Clause */
/* script.c (cli): `probity script TRACE`: every item of a trace, one line
 * each, or JSON Lines under -j (src/analyze/script.c). */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "cli/cli.h"
#include "analyze/script.h"

static void script_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] script TRACE\n"
		"\n"
		"Print every item of a trace written by 'probity record', in file order,\n"
		"one per line: the header and plan descriptors, then each record\n"
		"(resource events, sched switches, wakeups, block I/O, faults, exits,\n"
		"invariant violations), snapshot, note and the end chunk, with the\n"
		"embedded manifest's names. The probity counterpart of 'perf script':\n"
		"for grep, awk, jq and DuckDB.\n"
		"\n"
		"Text lines of records read 'SECONDS PID/TID [CPU] TYPE key=value ...'\n"
		"(SECONDS: CLOCK_MONOTONIC). With -j every line is one JSON object (JSON\n"
		"Lines, not one document), each with a \"type\" key. A record or chunk type\n"
		"this build does not know is printed as unknown_record / unknown_chunks\n"
		"with its type and size, never dropped; a trace cut short ends with a\n"
		"'cut' line saying why.\n"
		"\n"
		"Options:\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 printed; 2 usage error, unreadable or corrupt trace;\n"
		"3 the output could not be written.\n",
		bin_name);
}

int do_script(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct trace_script_opts so = { .json = json_output };
	struct trace_script_stats st;
	char msg[512] = "";
	int opt, err;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'h': script_help(stdout); return EXIT_OK;
		default: script_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		p_err("expected exactly one TRACE argument (see '%s script --help')", bin_name);
		return EXIT_USAGE;
	}
	err = trace_script__run(argv[optind], &so, stdout, &st, msg, sizeof(msg));
	if (fflush(stdout) && !err) {
		err = -EIO;
		snprintf(msg, sizeof(msg), "write: %s", strerror(errno));
	}
	if (err) {
		p_err("%s", msg[0] ? msg : strerror(-err));
		return err == -EIO || err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	if (st.unknown_records || st.short_records || st.unknown_chunks)
		p_warn("%llu records of unknown type, %llu too short, %llu chunks of unknown type "
		       "(printed as such)", (unsigned long long)st.unknown_records,
		       (unsigned long long)st.short_records, (unsigned long long)st.unknown_chunks);
	if (st.cut_reason[0])
		p_warn("%s is incomplete (%s): printed up to the last complete chunk", argv[optind],
		       st.cut_reason);
	return EXIT_OK;
}
