/* SPDX-License-Identifier: BSD-2-Clause */
/* plan.c (cli): `probity plan MANIFEST [--binary PATH|ID=PATH]... [--pid PID]
 * [--rebind]`: print the attach plan a manifest compiles to. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "engine/calib_estimate.h"

#define MAX_BINARIES 16

static void plan_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] plan MANIFEST [--binary PATH | --binary ID=PATH]... [--pid PID] [--rebind]\n"
		"       %s [-j] plan MANIFEST --estimate --pid PID [-d SECONDS]\n"
		"\n"
		"Compile a resource manifest into an attach plan and print it: each event\n"
		"descriptor -> probe site -> file offset -> uprobe_multi link and cookie.\n"
		"\n"
		"The target's GNU build-id must equal the manifest's: a mismatch is refused.\n"
		"Every site is checked with Capstone to start an instruction inside its\n"
		"function; a mid-instruction site is refused with the disassembly around it.\n"
		"\n"
		"Options:\n"
		"  -b, --binary PATH    probe this file instead of the manifest's target binary\n"
		"                       (ID=PATH selects the target in a multi-target manifest)\n"
		"  -p, --pid PID        resolve targets among the files mapped by process PID\n"
		"                       (/proc/PID/exe and its libraries, matched by build-id)\n"
		"      --rebind         on a build-id mismatch, re-resolve sites by symbol name;\n"
		"                       every re-bound descriptor becomes 'degraded' (never\n"
		"                       'validated'); an offset inside a function is kept\n"
		"                       only if the function's code is the manifest build's\n"
		"                       but for the addresses it reaches, else refused\n"
		"      --estimate       with --pid: count the sites' hits in PID for -d seconds\n"
		"                       with count-only programs and print each site's cost\n"
		"                       class, hits/s and expected overhead, the total, and\n"
		"                       the manifest's cheaper equivalent sites (docs/record.md\n"
		"                       \"COST MODEL\")\n"
		"  -d, --duration SECS  how long --estimate counts (default 2)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Relative target paths are resolved from the manifest's directory; bare\n"
		"names (sonames) also from the system library directories.\n"
		"\n"
		"Exit status: 0 every descriptor planned; 1 some descriptor or target refused;\n"
		"2 usage error, unreadable or invalid manifest; 3 internal failure.\n",
		bin_name, bin_name);
}

/* Options into popts (binaries: MAX_BINARIES slots); -1 to go on, else
 * the exit status (help, usage error). */
struct estimate_args {
	bool on;
	uint64_t dur_ns;
};

static int parse_plan_args(int argc, char **argv, struct plan_opts *popts, const char **binaries,
			   struct estimate_args *ea)
{
	static const struct option opts[] = {
		{ "binary", required_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "rebind", no_argument, NULL, 'r' },
		{ "estimate", no_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	long pid;
	int opt;

	while ((opt = getopt_long(argc, argv, "b:p:d:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'b':
			if (popts->n_binaries == MAX_BINARIES) {
				p_err("at most %d --binary options", MAX_BINARIES);
				return EXIT_USAGE;
			}
			binaries[popts->n_binaries++] = optarg;
			break;
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || pid <= 0 || pid > 0x3fffffff) {
				p_err("--pid: expected a process id, found '%s'", optarg);
				return EXIT_USAGE;
			}
			popts->pid = (pid_t)pid;
			break;
		case 'r': popts->rebind = true; break;
		case 'e': ea->on = true; break;
		case 'd':
			if (cli_parse_duration("--duration", optarg, false, 3600, &ea->dur_ns))
				return EXIT_USAGE;
			break;
		case 'h': plan_help(stdout); return EXIT_OK;
		default: plan_help(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		p_err("expected exactly one MANIFEST argument (see '%s plan --help')", bin_name);
		return EXIT_USAGE;
	}
	if (popts->pid && popts->n_binaries) {
		p_err("--pid and --binary are mutually exclusive");
		return EXIT_USAGE;
	}
	if (ea->on && !popts->pid) {
		p_err("--estimate needs --pid PID (the process to count hits in)");
		return EXIT_USAGE;
	}
	return -1;
}

/* plan --estimate: calibrate, count the plan's hits in its pid, print.
 * The plan JSON gets an "estimate" object. 0 or -errno. */
static int estimate(const struct plan *p, const struct estimate_args *ea, json_t *doc)
{
	struct plan_estimate *e = NULL;
	struct pb_calib c;
	int err;

	if (calib__run(&c, NULL))
		p_warn("calibration failed: pricing hits with default figures");
	err = plan_estimate__run(p, p->pid, ea->dur_ns, &c, &e);
	if (err) {
		p_err("estimate: %s", strerror(-err));
		return err;
	}
	if (doc)
		json_object_set_new(doc, "estimate", plan_estimate__to_json(e, p));
	else
		plan_estimate__print(e, p, stdout);
	plan_estimate__free(e);
	return 0;
}

int do_plan(int argc, char **argv)
{
	const char *binaries[MAX_BINARIES];
	struct plan_opts popts = { .binaries = binaries };
	struct manifest *m = NULL;
	struct diags *diags = NULL;
	struct estimate_args ea = { .dur_ns = 2000000000ull };
	struct plan *p = NULL;
	json_t *doc = NULL;
	int err, ret;

	ret = parse_plan_args(argc, argv, &popts, binaries, &ea);
	if (ret >= 0)
		return ret;
	diags = diags__new();
	if (!diags)
		return EXIT_FAILURE_RT;
	err = manifest__load(argv[optind], &m, diags);
	if (err) {
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o}", "error",
				err == -EINVAL ? "invalid manifest" : "unreadable manifest",
				"findings", diags__to_json(diags)));
		else
			diags__print(diags, stderr);
		ret = EXIT_USAGE;
		goto out;
	}
	err = plan__build(m, &popts, &p, diags);
	if (!p) {
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o}", "error", strerror(-err),
						      "findings", diags__to_json(diags)));
		else {
			diags__print(diags, stderr);
			p_err("no plan: %s", strerror(-err));
		}
		ret = err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_FINDINGS;
		goto out;
	}
	if (json_output)
		doc = plan__to_json(p);
	else
		plan__print(p, stdout);
	if (ea.on && !p->n_refused && estimate(p, &ea, doc)) {
		json_decref(doc);
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	if (doc)
		json_print_and_free(doc);
	if (p->n_refused && !json_output)
		p_err("%zu descriptor(s) refused; see the notes above", p->n_refused);
	ret = p->n_refused ? EXIT_FINDINGS : EXIT_OK;
out:
	plan__free(p);
	manifest__free(m);
	diags__free(diags);
	return ret;
}
