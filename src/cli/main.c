/* SPDX-License-Identifier: BSD-2-Clause */
/* main.c: the probity command line: global flags and the noun table
 * (bpftool-style). Each noun lives in its own file and parses its own
 * arguments; this file only dispatches.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "common/log.h"
#include "common/version.h"

bool json_output;
bool pretty_output;
bool json_lines;
int verbose;
const char *bin_name = "probity";

static const struct cmd main_cmds[] = {
	{ "manifest", do_manifest, "check (lint) and show resource manifests" },
	{ "plan",     do_plan,     "compile a manifest into an attach plan for a binary or process" },
	{ "probes",   do_probes,   "list USDT probes and functions a manifest can probe (bpftrace -l)" },
	{ "record",   do_record,   "record resource events and OS effects into a trace file" },
	{ "train",    do_train,    "train a distribution envelope from clean runs or traces" },
	{ "health",   do_health,   "per-descriptor confidence (validated/suspect/stale), live or from a trace" },
	{ "report",   do_report,   "diagnose a trace: contention, leaks, churn, long holds" },
	{ "export",   do_export,   "export a trace (Perfetto JSON)" },
	{ "script",   do_script,   "print every record of a trace, one per line (-j: JSON Lines)" },
	{ "receipts", do_receipts, "execution receipts: log, show, verify, diff, gc" },
	{ "watch",    do_watch,    "observe every BPF program load and link update on the machine" },
	{ "rejit",    do_rejit,    "reference specializer: profile, rewrite, swap and deopt an XDP program" },
	{ "sample",   do_sample,   "sample every CPU with the kernel's JIT symbol records" },
	{ "attribute", do_attribute, "attribute samples or a time window to program generations" },
	{ "metrics",  do_metrics,  "a trace as Prometheus metrics (stdout, textfile, HTTP)" },
	{ "agent",    do_agent,    "record every manifest's running targets, rotated, as a daemon (systemd)" },
	{ "version",  do_version,  "print the version and the libraries in use" },
	{ 0 },
};

static void usage(FILE *out)
{
	const struct cmd *c;

	fprintf(out,
		"Usage: %s [OPTIONS] COMMAND [ARGS...]\n"
		"\n"
		"Evidence-bearing eBPF observability: resource contracts checked at run time.\n"
		"\n"
		"Commands:\n", bin_name);
	for (c = main_cmds; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out,
		"  help       show this help\n"
		"\n"
		"Options:\n"
		"  -j, --json     JSON output (errors too)\n"
		"      --pretty   pretty-printed JSON (implies -j)\n"
		"  -v, --verbose  more messages on stderr (repeatable)\n"
		"  -h, --help     show this help\n"
		"  -V, --version  print the version\n"
		"-j, --pretty and -v may also follow the command (before any '--').\n"
		"\n"
		"Exit status: 0 ok, 1 findings (lint errors, refused plan, suspect or stale\n"
		"descriptors), 2 usage or unreadable input, 3 runtime failure, 4 'record'\n"
		"recorded but some descriptor went stale.\n"
		"Run '%s COMMAND --help' for a command's options; see probity(1).\n",
		bin_name);
}

int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       const char *noun, void (*help)(FILE *out))
{
	const struct cmd *c;

	if (argc < 1 || !strcmp(argv[0], "help") || !strcmp(argv[0], "--help") ||
	    !strcmp(argv[0], "-h")) {
		/* no command is a usage error: the help goes to stderr then */
		help(argc < 1 ? stderr : stdout);
		return argc < 1 ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(argv[0], "__complete")) {	/* hidden: the table, for scripts/gen-completion.sh */
		for (c = cmds; c->name; c++)
			printf("%s\n", c->name);
		return EXIT_OK;
	}
	for (c = cmds; c->name; c++)
		if (!strcmp(argv[0], c->name))
			return c->fn(argc, argv);
	p_err("unknown %s%scommand '%s' (try '%s %s%shelp')", noun ? noun : "",
	      noun ? " " : "", argv[0], bin_name, noun ? noun : "", noun ? " " : "");
	return EXIT_USAGE;
}

/* Under -j stdout carries exactly one JSON document per command. The first
 * error waits for it: json_print_and_free() puts it into the document as
 * "error" (unless the document has its own), or main() prints it alone as
 * {"error": ...} when the command printed nothing. Warnings, later errors
 * and anything after the document go to stderr as text. */
#define JSON_ERROR_KEY	"error"
static char *pending_error;
static bool json_doc_printed;

static void vp_msg(const char *kind, const char *fmt, va_list ap)
{
	if (json_output && !strcmp(kind, "error") && !pending_error && !json_doc_printed) {
		if (vasprintf(&pending_error, fmt, ap) < 0)
			pending_error = NULL;
		return;
	}
	fprintf(stderr, "%s: %s: ", bin_name, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vp_msg("error", fmt, ap);
	va_end(ap);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vp_msg("warning", fmt, ap);
	va_end(ap);
}

void json_print_and_free(json_t *doc)
{
	char *s;

	if (!doc)
		return;
	if (json_doc_printed && !json_lines) {
		/* a second document would break `-j | jq`: stderr instead */
		s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s)
			fprintf(stderr, "%s: extra JSON output: %s\n", bin_name, s);
		free(s);
		json_decref(doc);
		return;
	}
	json_doc_printed = true;
	if (pending_error && json_is_object(doc) && !json_object_get(doc, JSON_ERROR_KEY))
		json_object_set_new(doc, "error", json_string(pending_error));
	else if (pending_error)
		fprintf(stderr, "%s: error: %s\n", bin_name, pending_error);
	free(pending_error);
	pending_error = NULL;
	s = json_dumps(doc, (pretty_output && !json_lines ? JSON_INDENT(2) : JSON_COMPACT) |
				    JSON_PRESERVE_ORDER);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
	json_decref(doc);
}

int do_version(int argc, char **argv)
{
	if (json_output) {
		json_print_and_free(json_pack("{s:s, s:s, s:s}", "version", PROBITY_VERSION,
					      "libbpf", pb_libbpf_version(),
					      "manifest_schema", "1"));
		return EXIT_OK;
	}
	printf("probity %s (libbpf %s, manifest schema 1)\n", PROBITY_VERSION,
	       pb_libbpf_version());
	return EXIT_OK;
}

/* Take the global flags out of argv wherever they appear before "--", so
 * `probity plan -j M` works like `probity -j plan M` (as bpftool does). */
static int strip_global_flags(int argc, char **argv)
{
	int i, n = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json_output = true;
		} else if (!strcmp(argv[i], "--pretty")) {
			json_output = pretty_output = true;
		} else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose++;
		} else {
			argv[n++] = argv[i];
		}
	}
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int opt, ret;

	/* global options come before the command; stop at the first non-option */
	argc = strip_global_flags(argc, argv);
	while ((opt = getopt_long(argc, argv, "+hV", opts, NULL)) >= 0) {
		switch (opt) {
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': return do_version(0, NULL);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	pb_set_log_level(verbose >= 2 ? PB_LOG_DEBUG : verbose ? PB_LOG_INFO : PB_LOG_WARN);
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	optind = 0; /* subcommands run getopt again on their own argv */
	ret = cmd_select(main_cmds, argc, argv, NULL, usage);
	/* a failure that printed no document (an error, or getopt's own
	 * message about a bad option) still gets one: the error */
	if (json_output && !json_doc_printed && (pending_error || ret != EXIT_OK)) {
		char generic[64];

		snprintf(generic, sizeof(generic), "failed with exit status %d (see stderr)", ret);
		json_print_and_free(json_pack("{s:s, s:i}", JSON_ERROR_KEY,
					      pending_error ? pending_error : generic, "exit_status", ret));
	}
	return ret;
}
