/* SPDX-License-Identifier: BSD-2-Clause */
/* record.c (cli): `probity record -m MANIFEST (--pid PID | -- CMD ARGS...)
 * [-o FILE] [-d SECONDS] [--events] [--binary PATH]`, or --all / --cgroup
 * for every process of the build: parse the options,
 * run the recorder (src/record/recorder.h) and print its summary
 * (docs/record.md, docs/trace-format.md). Ctrl-C / SIGTERM stop it
 * cleanly (src/cli/stop.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "common/diag.h"
#include "contract/plan.h"
#include "record/recorder.h"
#include "record/governor.h"

#define DEFAULT_OUTPUT		"probity.trace"
#define RECORD_DEFAULT_STACKS	1000	/* --stacks: per second */
#define EXIT_STALE		4	/* recorded; some descriptor went stale */
#define MAX_PIDS		64	/* --pid given this many times at most */

struct record_args {
	struct recorder_opts ro;
	const char *binaries[RECORDER_MAX_BINARIES];
	pid_t pids[MAX_PIDS];	/* the second and later --pid */
};

/* the callbacks' context */
struct record_ui {
	bool tty;	/* a status line on stderr */
};

static void record_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] record -m MANIFEST (--pid PID... | --all | --cgroup PATH |\n"
		"              -- CMD [ARGS]...) [-o FILE] [-d SECONDS] [--events]\n"
		"              [--binary PATH]... [--envelope FILE] [--max-instances N]\n"
		"              [--rebind] [--budget P%%]\n"
		"              [--stacks N] [--calibration FILE | --no-calibrate]\n"
		"\n"
		"Attach the resource-event engine to processes as the manifest's attach plan\n"
		"says (refusing exactly as 'plan' does) and write a trace file for 'report'.\n"
		"By default events are aggregated in the kernel and the trace holds periodic\n"
		"snapshots; --events also streams every event and OS effect to the file.\n"
		"\n"
		"Options:\n"
		"  -m, --manifest FILE  the resource manifest (required)\n"
		"  -p, --pid PID        record the running process PID (repeat for more;\n"
		"                       its forked children are not recorded: see --all)\n"
		"  -a, --all            record every process that runs the target file,\n"
		"                       including processes started after attach, until\n"
		"                       Ctrl-C or --duration\n"
		"      --cgroup PATH    like --all, only processes in this cgroup v2\n"
		"                       directory (or below it): one service\n"
		"      --max-instances N  live instances tracked at once (default: the\n"
		"                       manifest's declared capacities + 65536); a full\n"
		"                       map is counted as lost identities\n"
		"  -o, --output FILE    trace file to write (default %s, mode 0600)\n"
		"  -d, --duration SECS  stop after SECS seconds (fractional; default: until\n"
		"                       Ctrl-C / SIGTERM or the target exits)\n"
		"      --events         also record every event in the trace (ring buffer)\n"
		"  -b, --binary PATH    probe this file instead of the manifest's target\n"
		"                       binary (ID=PATH in a multi-target manifest)\n"
		"      --ringbuf-kib N  ring-buffer size in KiB for --events (default 8192)\n"
		"      --stacks N       user stacks of WAIT ends and ACQUIREs, at most N per\n"
		"                       second (default %d; 0 = none): report --folded\n"
		"      --interval MS    snapshot interval, 100..1000 ms (default %d)\n"
		"      --envelope FILE  check the run against a distribution envelope from\n"
		"                       'probity train'; leaving it is a warning only\n"
		"      --rebind         on a build-id mismatch, re-resolve every site by name\n"
		"                       on this build (as 'plan --rebind'); its descriptors\n"
		"                       start 'degraded' and only clean evidence promotes them\n"
		"      --budget P%%      keep the estimated probe overhead under P%% of the\n"
		"                       target's CPU time (0 < P <= 100; default off); the\n"
		"                       budget covers the probes' traps and programs and\n"
		"                       the OS-effect programs (scheduler, block I/O,\n"
		"                       faults) at their measured run time: rare WAITs\n"
		"                       always on, other WAITs and cheap resources while\n"
		"                       they fit, hot resources (and the effects, when they\n"
		"                       do not fit) are sampled by time windows (lifetimes\n"
		"                       crossing a window edge are unknown, never leaks or\n"
		"                       violations)\n"
		"      --calibration FILE  reuse the probe-cost calibration in FILE when it\n"
		"                       was measured on this kernel, else measure and write it\n"
		"      --no-calibrate   skip the ~0.3 s probe-cost self-test: overhead\n"
		"                       estimates use default figures (docs/record.md)\n"
		"  -h, --help           show this help\n"
		"\n"
		"With '-- CMD', CMD is started held until every probe is attached (no early\n"
		"event is missed); it must be (or exec) the manifest's target binary. When\n"
		"the recording stops before CMD exits, CMD gets SIGTERM. The processes CMD\n"
		"forks (a server's workers) are recorded too.\n"
		"\n"
		"Every snapshot also judges each descriptor's runtime invariants (double\n"
		"ACQUIRE, RELEASE/USE of an instance not active, overlapping generations);\n"
		"confidence changes go to the trace ('probity health', docs/validation.md).\n"
		"\n"
		"Exit status: 0 recorded; 1 plan refused (see 'plan'); 2 usage error or\n"
		"unreadable manifest; 3 runtime failure (BPF load/attach, I/O); 4 recorded,\n"
		"but some descriptor went stale (the model no longer holds).\n",
		bin_name, DEFAULT_OUTPUT, RECORD_DEFAULT_STACKS, RECORDER_DEFAULT_INTERVAL_MS);
}


/* A number lo..hi, or the usage error "OPT: expected WHAT, found 'S'". */
static int parse_long(const char *opt, const char *s, long lo, long hi, const char *what,
		      long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		p_err("%s: expected %s, found '%s'", opt, what, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* -m and exactly one of --pid and -- CMD */
static int check_args(int argc, char **argv, struct record_args *a)
{
	struct recorder_opts *o = &a->ro;

	if (!o->manifest) {
		p_err("-m MANIFEST is required (see '%s record --help')", bin_name);
		return -EINVAL;
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->pid && o->cmd) {
		p_err("give --pid PID or -- CMD, not both (see '%s record --help')", bin_name);
		return -EINVAL;
	}
	if (!o->pid && !o->cmd && !o->all && !o->cgroup) {
		p_err("give --pid PID, --all, --cgroup PATH or -- CMD (see '%s record --help')",
		      bin_name);
		return -EINVAL;
	}
	if (o->pid && (o->all || o->cgroup)) {
		p_err("--pid and --all/--cgroup are mutually exclusive");
		return -EINVAL;
	}
	if (o->pid && o->n_binaries) {
		p_err("--pid and --binary are mutually exclusive");
		return -EINVAL;
	}
	return 0;
}

enum { OPT_EVENTS = 256, OPT_RINGBUF, OPT_INTERVAL, OPT_ENVELOPE, OPT_CGROUP,
       OPT_MAX_INST, OPT_REBIND, OPT_STACKS, OPT_BUDGET, OPT_NO_CALIB, OPT_CALIB };
static const struct option record_opts[] = {
	{ "manifest", required_argument, NULL, 'm' },
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "events", no_argument, NULL, OPT_EVENTS },
	{ "binary", required_argument, NULL, 'b' },
	{ "ringbuf-kib", required_argument, NULL, OPT_RINGBUF },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "envelope", required_argument, NULL, OPT_ENVELOPE },
	{ "all", no_argument, NULL, 'a' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "max-instances", required_argument, NULL, OPT_MAX_INST },
	{ "rebind", no_argument, NULL, OPT_REBIND },
	{ "stacks", required_argument, NULL, OPT_STACKS },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "no-calibrate", no_argument, NULL, OPT_NO_CALIB },
	{ "calibration", required_argument, NULL, OPT_CALIB },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* Over 80 lines because it is one flat getopt switch over every option. */
static int parse_args(int argc, char **argv, struct record_args *a)
{
	struct recorder_opts *o = &a->ro;
	uint64_t u;
	int opt, err = 0;
	long v;

	memset(a, 0, sizeof(*a));
	o->output = DEFAULT_OUTPUT;
	o->binaries = a->binaries;
	o->pids = a->pids;
	o->interval_ns = RECORDER_DEFAULT_INTERVAL_MS * 1000000ull;
	o->stacks_per_sec = RECORD_DEFAULT_STACKS;
	while (!err && (opt = getopt_long(argc, argv, "+m:p:o:d:b:ah", record_opts, NULL)) >= 0) {
		switch (opt) {
		case 'm': o->manifest = optarg; break;
		case 'o': o->output = optarg; break;
		case 'p':
			err = parse_long("--pid", optarg, 1, 0x3fffffff, "a process id", &v);
			if (err)
				break;
			if (!o->pid) {
				o->pid = (pid_t)v;
			} else if (o->n_pids < MAX_PIDS) {
				a->pids[o->n_pids++] = (pid_t)v;
			} else {
				p_err("--pid: at most %d processes", MAX_PIDS + 1);
				return -EINVAL;
			}
			break;
		case 'a': o->all = true; break;
		case OPT_CGROUP: o->cgroup = optarg; break;
		case OPT_NO_CALIB: o->no_calibrate = true; break;
		case OPT_CALIB: o->calibration = optarg; break;
		case OPT_MAX_INST:
			err = cli_parse_count("--max-instances", optarg, false, 64u << 20, &u);
			o->max_instances = (uint32_t)u;
			break;
		case 'd':
			err = cli_parse_duration("--duration", optarg, false, 1e7, &o->duration_ns);
			break;
		case 'b':
			if (o->n_binaries == RECORDER_MAX_BINARIES) {
				p_err("at most %d --binary options", RECORDER_MAX_BINARIES);
				return -EINVAL;
			}
			a->binaries[o->n_binaries++] = optarg;
			break;
		case OPT_EVENTS: o->events = true; break;
		case OPT_RINGBUF:
			err = parse_long("--ringbuf-kib", optarg, 4, 1 << 21, "4..2097152", &v);
			o->ringbuf_bytes = (size_t)v << 10;
			break;
		case OPT_INTERVAL:
			err = parse_long("--interval", optarg, 100, 1000, "100..1000 (ms)", &v);
			o->interval_ns = (uint64_t)v * 1000000ull;
			break;
		case OPT_ENVELOPE: o->envelope = optarg; break;
		case OPT_REBIND: o->rebind = true; break;
		case OPT_STACKS:
			err = parse_long("--stacks", optarg, 0, 1000000, "0..1000000 (per second)", &v);
			o->stacks_per_sec = (uint32_t)v;
			break;
		case OPT_BUDGET:
			err = gov_parse_budget(optarg, &o->budget);
			if (err)
				p_err("--budget: expected a percentage 0 < P <= 100 (e.g. 2%%), "
				      "found '%s'", optarg);
			break;
		case 'h': record_help(stdout); return 1;
		default: record_help(stderr); return -EINVAL;
		}
	}
	return err ? -EINVAL : check_args(argc, argv, a);
}

static void on_message(enum pb_log_level level, const char *msg, void *ctx)
{
	const struct record_ui *ui = ctx;

	if (ui->tty)	/* over the status line */
		fprintf(stderr, "\r\033[K");
	if (level == PB_LOG_ERROR)
		p_err("%s", msg);
	else
		p_warn("%s", msg);
}

static void on_progress(const struct recorder_progress *p, void *ctx)
{
	const struct record_ui *ui = ctx;
	char line[512];

	if (!ui->tty)
		return;
	recorder_progress__format(p, line, sizeof(line));
	fprintf(stderr, "\r\033[K%s", line);
}

static bool should_stop(void *ctx)
{
	return cli_stop_signal != 0;
}

static void warn_line(const char *msg, void *ctx)
{
	p_warn("%s", msg);
}

/* Why the recorder did not record, as `plan` says it; the exit code. */
static int print_failure(const struct recorder *r, int err)
{
	const struct diags *d = recorder__diags(r);
	const struct plan *p = recorder__plan(r);

	switch (recorder__failure(r)) {
	case RECORDER_FAILED_MANIFEST:
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o}", "error",
				err == -EINVAL ? "invalid manifest" : "unreadable manifest",
				"findings", diags__to_json(d)));
		else
			diags__print(d, stderr);
		return EXIT_USAGE;
	case RECORDER_FAILED_PLAN:
		if (json_output) {
			json_print_and_free(json_pack("{s:s, s:o}", "error", strerror(-err),
						      "findings", diags__to_json(d)));
		} else {
			diags__print(d, stderr);
			p_err("no plan: %s", strerror(-err));
		}
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_FINDINGS;
	case RECORDER_FAILED_REFUSED:
		if (json_output) {
			json_print_and_free(json_pack("{s:s, s:o, s:o}", "error", "plan refused",
				"findings", diags__to_json(p->notes), "plan", plan__to_json(p)));
		} else {
			diags__print(p->notes, stderr);
			p_err("%zu descriptor(s) refused; not recording (see '%s plan')",
			      p->n_refused, bin_name);
		}
		return EXIT_FINDINGS;
	case RECORDER_FAILED_INPUT:
		return EXIT_USAGE;
	default:	/* the recorder said why */
		return EXIT_FAILURE_RT;
	}
}

static void print_summary(const struct recorder *r, bool tty)
{
	const struct recorder_result *res = recorder__result(r);

	if (tty)
		fprintf(stderr, "\r\033[K");
	if (json_output) {
		json_print_and_free(recorder__summary_json(r));
		return;
	}
	recorder__summary_print(r, stdout);
	recorder__summary_warnings(r, warn_line, NULL);
	if (res->any_stale)
		p_warn("the manifest's model no longer holds for a stale descriptor; "
		       "findings resting on it read 'model stale' (see '%s health')", bin_name);
}

int do_record(int argc, char **argv)
{
	struct record_ui ui = { .tty = isatty(STDERR_FILENO) };
	const struct recorder_result *res;
	struct recorder *r = NULL;
	struct record_args a;
	int err, ret;

	err = parse_args(argc, argv, &a);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	a.ro.message = on_message;
	a.ro.progress = on_progress;
	a.ro.should_stop = should_stop;
	a.ro.ctx = &ui;
	r = recorder__new(&a.ro);
	if (!r) {
		p_err("cannot record: %s", strerror(errno));
		return EXIT_FAILURE_RT;
	}
	cli_stop_install();
	err = recorder__run(r);
	cli_stop_restore();
	if (err) {
		ret = print_failure(r, err);
		goto out;
	}
	print_summary(r, ui.tty);
	res = recorder__result(r);
	ret = res->stopped_by == TRACE_STOP_ERROR ? EXIT_FAILURE_RT :
	      res->any_stale ? EXIT_STALE : EXIT_OK;
out:
	recorder__free(r);
	return ret;
}
