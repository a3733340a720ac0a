/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics.c (cli): `probity metrics TRACE [--textfile-dir DIR] [--listen
 * ADDR]`: a trace as Prometheus metrics (src/metrics/, docs/metrics.md):
 * on stdout, into node_exporter's textfile directory, or served on
 * GET /metrics until Ctrl-C. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "analyze/trace_load.h"
#include "metrics/metrics.h"

static void metrics_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] metrics TRACE [--textfile-dir DIR] [--listen ADDR:PORT]\n"
		"\n"
		"A trace as Prometheus metrics (text exposition format 0.0.4): events per\n"
		"descriptor, WAIT and hold-time histograms per resource, live instances,\n"
		"outstanding units, descriptor states, invariant violations, finding scores\n"
		"and lost evidence (docs/metrics.md lists every series).\n"
		"\n"
		"Without --textfile-dir or --listen the metrics go to stdout (under -j, as\n"
		"the \"text\" member of one JSON object).\n"
		"\n"
		"Options:\n"
		"      --textfile-dir DIR  write DIR/" METRICS_TEXTFILE_NAME " for node_exporter's textfile\n"
		"                       collector (temporary file, fsync, rename)\n"
		"      --listen ADDR:PORT  serve GET /metrics on ADDR:PORT (IPv4, e.g.\n"
		"                       127.0.0.1:9464; PORT 0 picks a free port) until Ctrl-C\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 ok; 2 usage error, unreadable or corrupt trace; 3 the\n"
		"file could not be written or the address not bound.\n",
		bin_name);
}

struct mopts {
	const char *trace;
	const char *textfile_dir;
	const char *listen;
};

static int parse(int argc, char **argv, struct mopts *o)
{
	static const struct option opts[] = {
		{ "textfile-dir", required_argument, NULL, 'T' },
		{ "listen", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'T': o->textfile_dir = optarg; break;
		case 'L': o->listen = optarg; break;
		case 'h': metrics_help(stdout); return -2;
		default: metrics_help(stderr); return -1;
		}
	}
	if (optind != argc - 1) {
		p_err("expected exactly one TRACE argument (see '%s metrics --help')", bin_name);
		return -1;
	}
	o->trace = argv[optind];
	return 0;
}

/* Serve buf until SIGINT/SIGTERM; returns the requests served or -errno. */
static long serve(const char *addr, const char *buf, size_t len, uint16_t *port)
{
	struct metrics_server *srv;
	long n;

	srv = metrics_server__new(addr);
	if (!srv)
		return -errno;
	if (metrics_server__set(srv, buf, len)) {
		metrics_server__free(srv);
		return -ENOMEM;
	}
	*port = metrics_server__port(srv);
	fprintf(stderr, "%s metrics: serving http://%.*s:%u/metrics (Ctrl-C stops)\n", bin_name,
		(int)(strrchr(addr, ':') - addr), addr, *port);
	cli_stop_install();
	while (!cli_stop_signal)
		pause();
	cli_stop_restore();
	n = (long)metrics_server__requests(srv);
	metrics_server__free(srv);
	return n;
}

static int emit(const struct mopts *o, const char *buf, size_t len)
{
	uint16_t port = 0;
	long served = 0;
	int err;

	if (!o->textfile_dir && !o->listen) {
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:s#}", "format", "prometheus-text-0.0.4",
						      "text", buf, (int)len));
		else if (fwrite(buf, 1, len, stdout) != len || fflush(stdout))
			return -EIO;
		return 0;
	}
	if (o->textfile_dir) {
		err = metrics__write_textfile(o->textfile_dir, METRICS_TEXTFILE_NAME, buf, len);
		if (err) {
			p_err("%s/%s: %s", o->textfile_dir, METRICS_TEXTFILE_NAME, strerror(-err));
			return err;
		}
		if (!json_output)
			fprintf(stderr, "wrote %s/%s (%zu bytes)\n", o->textfile_dir, METRICS_TEXTFILE_NAME, len);
	}
	if (o->listen) {
		served = serve(o->listen, buf, len, &port);
		if (served < 0) {
			p_err("--listen %s: %s", o->listen,
			      served == -EINVAL ? "expected IPV4:PORT, e.g. 127.0.0.1:9464" : strerror((int)-served));
			return (int)served;
		}
	}
	if (json_output)
		json_print_and_free(json_pack("{s:s?, s:s?, s:i, s:I, s:I}", "textfile_dir", o->textfile_dir,
					      "listen", o->listen, "port", (int)port, "requests",
					      (json_int_t)served, "bytes", (json_int_t)len));
	return 0;
}

int do_metrics(int argc, char **argv)
{
	struct metrics_opts mo = { 0 };
	struct loaded_trace lt;
	struct mopts o;
	char *buf = NULL;
	size_t len = 0;
	int err, ret;

	err = parse(argc, argv, &o);
	if (err)
		return err == -2 ? EXIT_OK : EXIT_USAGE;
	err = loaded_trace__load(&lt, o.trace, NULL);
	if (err) {
		p_err("%s", lt.error[0] ? lt.error : strerror(-err));
		ret = err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
		goto out;
	}
	if (lt.cut_reason)
		p_warn("%s is incomplete (%s): metrics up to the last complete chunk", o.trace,
		       lt.cut_reason);
	mo.trace_incomplete = lt.cut_reason != NULL;
	mo.notes_dropped = lt.notes_dropped;
	err = metrics__render_buf(lt.analysis, &mo, &buf, &len);
	if (err) {
		p_err("rendering metrics: %s", strerror(-err));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	err = emit(&o, buf, len);
	ret = !err ? EXIT_OK : err == -EINVAL ? EXIT_USAGE : EXIT_FAILURE_RT;
out:
	free(buf);
	loaded_trace__free(&lt);
	return ret;
}
