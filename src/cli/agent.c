/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.c (cli): `probity agent`: the long-running recorder of every
 * manifest in a directory (src/agent/, docs/agent.md), as systemd's
 * probity-agent.service runs it. SIGTERM/SIGINT stop it cleanly, SIGHUP
 * reloads the manifests; the library does the rest. */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/args.h"
#include "agent/agent.h"
#include "metrics/metrics.h"
#include "record/governor.h"

#define DEFAULT_STATE	AGENT_DEFAULT_STATE_DIR "/" AGENT_STATE_NAME

static void agent_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] agent [OPTIONS]\n"
		"\n"
		"Record every running process whose executable's build-id matches a manifest\n"
		"of the manifest directory, and the ones started later (process exec/exit\n"
		"events), in rotated trace files, under a duty cycle; keep a JSON state file\n"
		"and a Prometheus textfile up to date. A new build of a manifest's binary\n"
		"(package upgrade) is refused, or recorded degraded with --rebind. SIGHUP\n"
		"re-reads the manifests; SIGTERM or Ctrl-C ends the windows and stops.\n"
		"Under systemd (NOTIFY_SOCKET) it reports READY, WATCHDOG, RELOADING,\n"
		"STOPPING and a STATUS line (dist/systemd/probity-agent.service;\n"
		"docs/agent.md).\n"
		"\n"
		"Options:\n"
		"  -m, --manifest-dir DIR  manifests (*.yaml) (default " AGENT_DEFAULT_MANIFEST_DIR ")\n"
		"      --trace-dir DIR     traces in DIR/MANIFEST/ (default " AGENT_DEFAULT_TRACE_DIR ")\n"
		"      --state-file FILE   JSON state (default " DEFAULT_STATE ")\n"
		"      --metrics-dir DIR   write DIR/" AGENT_METRICS_NAME " for node_exporter's textfile\n"
		"                          collector (default " AGENT_DEFAULT_STATE_DIR "; 'none': off)\n"
		"      --listen ADDR:PORT  also serve the metrics at http://ADDR:PORT/metrics\n"
		"                          (e.g. 127.0.0.1:9464; PORT 0: any free port)\n"
		"      --rotate DUR        longest trace file (window) (default 15m)\n"
		"      --keep N            trace files kept per manifest (default 96)\n"
		"      --max-trace-mib N   rotate a trace early at N MiB (default 256; 0: no cap)\n"
		"      --duty ON/PERIOD    record ON of every PERIOD (default 1m/5m; 'always')\n"
		"      --budget P%%|off     every window under the overhead governor (record\n"
		"                          --budget P%%), within --duty's on-part (default 2%%;\n"
		"                          'off': every probe always attached)\n"
		"      --rebind            record a new build of a manifest's binary rebound by\n"
		"                          symbol name, descriptors degraded (default: refuse)\n"
		"  -i, --interval DUR      snapshot interval (default 250ms)\n"
		"  -d, --duration DUR      stop after DUR (default: until SIGTERM)\n"
		"  -h, --help              show this help\n"
		"\n"
		"Exit status: 0 stopped cleanly; 2 usage error, unreadable manifest\n"
		"directory or --listen address not available; 3 the process watcher could\n"
		"not load (BPF, privileges).\n",
		bin_name);
}

static struct agent *the_agent;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		agent__reload(the_agent);
	else
		agent__stop(the_agent);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* "ON/PERIOD" or "always" */
static int parse_duty(const char *s, struct agent_opts *o)
{
	char on[64];
	const char *slash = strchr(s, '/');

	if (!strcmp(s, "always")) {
		o->duty_on_ns = o->duty_period_ns = 1;
		return 0;
	}
	if (!slash || (size_t)(slash - s) >= sizeof(on)) {
		p_err("--duty: expected ON/PERIOD (e.g. 1m/5m) or 'always', found '%s'", s);
		return -EINVAL;
	}
	snprintf(on, sizeof(on), "%.*s", (int)(slash - s), s);
	if (cli_parse_duration("--duty", on, false, 86400, &o->duty_on_ns) ||
	    cli_parse_duration("--duty", slash + 1, false, 86400, &o->duty_period_ns))
		return -EINVAL;
	if (o->duty_on_ns > o->duty_period_ns) {
		p_err("--duty: ON (%s) is longer than PERIOD (%s)", on, slash + 1);
		return -EINVAL;
	}
	return 0;
}

static int parse_opt(int opt, struct agent_opts *o)
{
	struct sockaddr_in sin;
	uint64_t v;

	switch (opt) {
	case 'm': o->manifest_dir = optarg; return 0;
	case 'T': o->trace_dir = optarg; return 0;
	case 'S': o->state_file = optarg; return 0;
	case 'M': o->metrics_dir = strcmp(optarg, "none") ? optarg : NULL; return 0;
	case 'R': return cli_parse_duration("--rotate", optarg, false, 7 * 86400, &o->rotate_ns);
	case 'K':
		if (cli_parse_count("--keep", optarg, false, 1000000, &v))
			return -EINVAL;
		o->keep = (uint32_t)v;
		return 0;
	case 'Z':
		if (cli_parse_count("--max-trace-mib", optarg, true, 1 << 20, &v))
			return -EINVAL;
		o->max_trace_bytes = v << 20;
		return 0;
	case 'L':
		if (metrics__parse_listen(optarg, &sin)) {
			p_err("--listen: expected IPV4:PORT (e.g. 127.0.0.1:9464), found '%s'", optarg);
			return -EINVAL;
		}
		o->listen = optarg;
		return 0;
	case 'D': return parse_duty(optarg, o);
	case 'B':
		if (!strcmp(optarg, "off")) {
			o->budget = 0;
			return 0;
		}
		if (gov_parse_budget(optarg, &o->budget)) {
			p_err("--budget: expected a percentage 0 < P <= 100 (e.g. 2%%) or 'off', "
			      "found '%s'", optarg);
			return -EINVAL;
		}
		return 0;
	case 'r': o->rebind = true; return 0;
	case 'i': return cli_parse_duration("--interval", optarg, false, 3600, &o->interval_ns);
	case 'd': return cli_parse_duration("--duration", optarg, false, 30 * 86400, &o->duration_ns);
	default: return -EINVAL;
	}
}

static int parse(int argc, char **argv, struct agent_opts *o)
{
	static const struct option opts[] = {
		{ "manifest-dir", required_argument, NULL, 'm' },
		{ "trace-dir", required_argument, NULL, 'T' },
		{ "state-file", required_argument, NULL, 'S' },
		{ "metrics-dir", required_argument, NULL, 'M' },
		{ "listen", required_argument, NULL, 'L' },
		{ "rotate", required_argument, NULL, 'R' },
		{ "keep", required_argument, NULL, 'K' },
		{ "max-trace-mib", required_argument, NULL, 'Z' },
		{ "duty", required_argument, NULL, 'D' },
		{ "budget", required_argument, NULL, 'B' },
		{ "rebind", no_argument, NULL, 'r' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->manifest_dir = AGENT_DEFAULT_MANIFEST_DIR;
	o->trace_dir = AGENT_DEFAULT_TRACE_DIR;
	o->state_file = DEFAULT_STATE;
	o->metrics_dir = AGENT_DEFAULT_STATE_DIR;
	o->rotate_ns = 15ull * 60 * 1000000000ull;
	o->keep = 96;
	o->max_trace_bytes = 256ull << 20;
	o->duty_on_ns = 60ull * 1000000000ull;
	o->duty_period_ns = 300ull * 1000000000ull;
	o->budget = AGENT_DEFAULT_BUDGET;
	while ((opt = getopt_long(argc, argv, "m:i:d:h", opts, NULL)) >= 0) {
		if (opt == 'h') {
			agent_help(stdout);
			return -2;
		}
		if (opt == '?') {
			agent_help(stderr);
			return -1;
		}
		if (parse_opt(opt, o))
			return -1;
	}
	if (optind != argc) {
		p_err("unexpected argument '%s' (see '%s agent --help')", argv[optind], bin_name);
		return -1;
	}
	return 0;
}

int do_agent(int argc, char **argv)
{
	struct agent_opts o;
	int err, ret;

	err = parse(argc, argv, &o);
	if (err)
		return err == -2 ? EXIT_OK : EXIT_USAGE;
	the_agent = agent__new(&o);
	if (!the_agent) {
		p_err("agent: %s", strerror(errno));
		return EXIT_USAGE;
	}
	install_signals();
	err = agent__run(the_agent);
	if (err) {
		p_err("agent: cannot start: %s", strerror(-err));
		ret = err == -ENOENT || err == -ENOTDIR || err == -EACCES || err == -EADDRINUSE ||
		      err == -EADDRNOTAVAIL || err == -EINVAL ? EXIT_USAGE : EXIT_FAILURE_RT;
	} else {
		ret = EXIT_OK;
		if (json_output)
			json_print_and_free(agent__state_json(the_agent));
		else
			fprintf(stdout, "agent stopped; state in %s\n", o.state_file);
	}
	signal(SIGHUP, SIG_DFL);
	cli_stop_restore();
	agent__free(the_agent);
	the_agent = NULL;
	return ret;
}
