/* SPDX-License-Identifier: BSD-2-Clause */
/* rejit.c (cli): `probity rejit`: parse the options, run the reference
 * specializer (src/specializer/specializer.h) on its XDP program with
 * progress on stderr, print the summary of every generation at the end
 * (text, or its JSON form with -j; docs/rejit.md).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "common/io.h"
#include "common/log.h"
#include "specializer/script.h"
#include "specializer/specializer.h"

#define MAX_CFG 32
#define MAX_SCRIPT (1u << 20)

struct rejit_args {
	struct specializer_opts ro;
	uint32_t cfg_field[MAX_CFG], cfg_value[MAX_CFG];
	struct sp_script script;
	bool create, have_script;
};

static void rejit_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] rejit [--store DIR] [--duration S] [--netns NAME | --create-netns]\n"
		"                     [--traffic RATE] [--profile-interval S] [--bias-threshold F]\n"
		"                     [--guard-threshold N] [--config KEY=VAL ...] [--script FILE]\n"
		"\n"
		"Run probity's reference specializer on its XDP load balancer (lb_xdp): attach\n"
		"the generic program (generation 0) to a veth in a network namespace, send\n"
		"traffic through it, profile its branch counters, rewrite its bytecode (constant\n"
		"inlining of the configuration map, dead-path elimination, guarded branch\n"
		"specialization), load each candidate through the verifier, check its verdicts\n"
		"against generation 0 (BPF_PROG_TEST_RUN), swap it in with bpf_link_update, and\n"
		"deoptimize back to generation 0 on guard failures or a configuration change.\n"
		"Every generation gets a receipt and lifecycle entries in the store.\n"
		"\n"
		"Options:\n"
		"  -s, --store DIR            receipt store (default $PROBITY_STORE, else\n"
		"                             ./probity-store; created if missing)\n"
		"  -d, --duration S           stop after S seconds (default: at SIGINT/SIGTERM)\n"
		"      --netns NAME           use an existing netns holding --dev and --peer\n"
		"      --create-netns         create (and at the end delete) a netns with a veth\n"
		"                             pair (the default)\n"
		"      --dev IF               XDP device (default pbrj1)\n"
		"      --peer IF              traffic source, the veth peer of --dev (default pbrj0)\n"
		"      --traffic RATE         packets per second (default 4000)\n"
		"      --profile-interval S   profile epoch length (default 1)\n"
		"      --bias-threshold F     specialize a branch taken (or not) in >= F of the\n"
		"                             epoch's packets (0.5..1, default 0.95)\n"
		"      --guard-threshold N    deoptimize after more than N guard failures in an\n"
		"                             epoch (default 200)\n"
		"      --min-samples N        ignore sites with fewer packets in an epoch (default 100)\n"
		"      --config KEY=VAL       initial configuration (repeatable): feature_acl,\n"
		"                             feature_stats, n_backends, vip_port, acl_prefix,\n"
		"                             default_verdict\n"
		"      --script FILE          timed steps, one per line: 't=S config KEY=VAL',\n"
		"                             't=S traffic normal|shift'\n"
		"      --plant-spike K        the K-th specialized generation also carries a slow\n"
		"                             transform (hash-unroll, for the attribution demo)\n"
		"      --spike-rounds N       rounds of that transform (default 16384)\n"
		"      --inject-drop-handoff K  TEST ONLY: the K-th handoff swaps without any\n"
		"                             lifecycle record or receipt (a swapper that crashed)\n"
		"  -h, --help                 show this help\n"
		"\n"
		"Progress goes to stderr; the summary (every generation: id, prog id, transforms,\n"
		"why it was retired) to stdout, JSON with -j.\n"
		"\n"
		"Exit status: 0 ok; 2 usage error; 3 BPF, namespace or store failure.\n",
		bin_name);
}

static void on_progress(void *ctx, const char *line)
{
	fprintf(stderr, "probity rejit: %s\n", line);
}

/* The specializer's errors are this command's errors (p_err: JSON under
 * -j); the rest goes to the default printer. */
static int on_log(enum pb_log_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t n;

	if (level != PB_LOG_ERROR)
		return pb_default_print(level, fmt, ap);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	p_err("%s", msg);
	return 0;
}

/* --duration / --profile-interval: the runtime counts milliseconds */
static int parse_ms(const char *opt, const char *s, uint32_t *ms)
{
	uint64_t ns;

	if (cli_parse_duration(opt, s, false, 86400 * 7, &ns))
		return -EINVAL;
	*ms = (uint32_t)((ns + 500000) / 1000000);
	if (!*ms) {
		p_err("%s: expected at least 1 ms, found '%s'", opt, s);
		return -EINVAL;
	}
	return 0;
}

static int read_script(const char *path, struct sp_script *s)
{
	struct pb_errtext err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int rc;

	rc = pb_read_file(path, MAX_SCRIPT, &buf, &len);
	if (rc) {
		p_err("cannot read script '%s': %s", path, strerror(-rc));
		return rc;
	}
	if (len >= MAX_SCRIPT) {
		p_err("%s: expected a script of at most 1 MiB", path);
		free(buf);
		return -E2BIG;
	}
	rc = sp_script_parse(buf, len, path, s, &err);
	free(buf);
	if (rc)
		p_err("%s", err.msg);
	return rc;
}

static void print_strs(const struct sp_strs *l, const char *sep, const char *first_sep)
{
	size_t k;

	for (k = 0; k < l->n; k++)
		printf("%s%s", k ? sep : first_sep, l->v[k]);
}

static void print_summary(const struct sp_summary *sum)
{
	size_t i;
	int s;

	printf("%-4s %-14s %-8s %-11s %-6s %s\n", "gen", "generation", "prog", "kind", "insns",
	       "transforms / retired");
	for (i = 0; i < sum->n_gens; i++) {
		const struct sp_gen_summary *g = &sum->gens[i];

		printf("%-4lld %-14.12s %-8lld %-11s %-6lld ", (long long)g->ordinal,
		       g->generation_id ? g->generation_id : "(unlogged)", (long long)g->prog_id,
		       g->generic ? "generic" : "specialized", (long long)g->insns);
		print_strs(g->transforms, " ", "");
		if (!g->transforms->n)
			printf("(none)");
		printf("\n%-4s retired:", "");
		print_strs(g->retired, "; ", " ");
		printf("\n");
	}
	printf("guard failures:");
	for (s = 0; s < SP_NSITES; s++)
		printf(" %s %lld", sum->site_names[s], (long long)sum->guard_fail[s]);
	printf("; fallback tail calls failed: %lld\n", (long long)sum->fallback_failed);
	printf("%lld generations, %lld specialized, %lld deopts, %lld candidates refused, "
	       "%lld epochs, %lld packets sent (%lld send errors)\n",
	       (long long)sum->n_gens, (long long)sum->specialized, (long long)sum->deopts,
	       (long long)sum->rejected_candidates, (long long)sum->epochs, (long long)sum->sent,
	       (long long)sum->send_errors);
}

enum {
	OPT_NETNS = 256, OPT_CREATE_NETNS, OPT_DEV, OPT_PEER, OPT_TRAFFIC, OPT_INTERVAL, OPT_BIAS,
	OPT_GUARD, OPT_MIN, OPT_CONFIG, OPT_SCRIPT, OPT_SPIKE, OPT_SPIKE_ROUNDS, OPT_INJECT,
};

static const struct option rejit_opts[] = {
	{ "store", required_argument, NULL, 's' },
	{ "duration", required_argument, NULL, 'd' },
	{ "netns", required_argument, NULL, OPT_NETNS },
	{ "create-netns", no_argument, NULL, OPT_CREATE_NETNS },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "traffic", required_argument, NULL, OPT_TRAFFIC },
	{ "profile-interval", required_argument, NULL, OPT_INTERVAL },
	{ "bias-threshold", required_argument, NULL, OPT_BIAS },
	{ "guard-threshold", required_argument, NULL, OPT_GUARD },
	{ "min-samples", required_argument, NULL, OPT_MIN },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "script", required_argument, NULL, OPT_SCRIPT },
	{ "plant-spike", required_argument, NULL, OPT_SPIKE },
	{ "spike-rounds", required_argument, NULL, OPT_SPIKE_ROUNDS },
	{ "inject-drop-handoff", required_argument, NULL, OPT_INJECT },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_bias(const char *arg, uint32_t *permille)
{
	char *end;
	double f;

	errno = 0;
	f = strtod(arg, &end);
	if (errno || end == arg || *end || !(f >= 0.5 && f <= 1.0)) {
		p_err("--bias-threshold: expected a fraction 0.5..1, found '%s'", arg);
		return -EINVAL;
	}
	*permille = (uint32_t)(f * 1000 + 0.5);
	return 0;
}

static int parse_config(const char *arg, struct rejit_args *a)
{
	struct pb_errtext err = { 0 };

	if (a->ro.n_cfg == MAX_CFG) {
		p_err("--config: at most %d assignments", MAX_CFG);
		return -EINVAL;
	}
	if (sp_config_parse(arg, &a->cfg_field[a->ro.n_cfg], &a->cfg_value[a->ro.n_cfg], &err)) {
		p_err("--config: %s", err.msg);
		return -EINVAL;
	}
	a->ro.n_cfg++;
	return 0;
}

/* A count option into a uint32_t field. */
static int parse_u32_opt(const char *opt, const char *arg, uint64_t max, uint32_t *out)
{
	uint64_t n;

	if (cli_parse_count(opt, arg, false, max, &n))
		return -EINVAL;
	*out = (uint32_t)n;
	return 0;
}

/* One option (not -h or an unknown one); 0 or -EINVAL (said). */
static int parse_option(int opt, const char *arg, struct rejit_args *a)
{
	struct specializer_opts *ro = &a->ro;

	switch (opt) {
	case 's': ro->store_dir = arg; return 0;
	case 'd': return parse_ms("--duration", arg, &ro->duration_ms);
	case OPT_NETNS: ro->netns = arg; return 0;
	case OPT_CREATE_NETNS: a->create = true; return 0;
	case OPT_DEV: ro->dev = arg; return 0;
	case OPT_PEER: ro->peer = arg; return 0;
	case OPT_TRAFFIC: return parse_u32_opt("--traffic", arg, 200000, &ro->rate_pps);
	case OPT_INTERVAL:
		if (parse_ms("--profile-interval", arg, &ro->profile_interval_ms))
			return -EINVAL;
		if (ro->profile_interval_ms < 50) {
			p_err("--profile-interval: expected at least 0.05 seconds, found '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_BIAS: return parse_bias(arg, &ro->bias_permille);
	case OPT_GUARD:
		return cli_parse_count("--guard-threshold", arg, false, UINT32_MAX,
				       &ro->guard_threshold) ? -EINVAL : 0;
	case OPT_MIN: return parse_u32_opt("--min-samples", arg, UINT32_MAX, &ro->min_samples);
	case OPT_CONFIG: return parse_config(arg, a);
	case OPT_SCRIPT:
		if (a->have_script) {
			p_err("--script: given twice");
			return -EINVAL;
		}
		if (read_script(arg, &a->script))
			return -EINVAL;
		a->have_script = true;
		return 0;
	case OPT_SPIKE: return parse_u32_opt("--plant-spike", arg, 1000000, &ro->plant_spike);
	case OPT_SPIKE_ROUNDS: return parse_u32_opt("--spike-rounds", arg, 100000, &ro->spike_rounds);
	case OPT_INJECT:
		return parse_u32_opt("--inject-drop-handoff", arg, 1000000, &ro->inject_drop_handoff);
	}
	return -EINVAL;
}

/* -1: go on and run; else the exit code. */
static int parse_args(int argc, char **argv, struct rejit_args *a)
{
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "s:d:h", rejit_opts, NULL)) >= 0) {
		if (opt == 'h') {
			rejit_help(stdout);
			return EXIT_OK;
		}
		if (opt == '?' || opt == ':') {
			rejit_help(stderr);
			return EXIT_USAGE;
		}
		if (parse_option(opt, optarg, a))
			return EXIT_USAGE;
	}
	if (optind != argc) {
		p_err("'rejit' takes no arguments, found '%s' (see '%s rejit --help')", argv[optind],
		      bin_name);
		return EXIT_USAGE;
	}
	if (a->create && a->ro.netns) {
		p_err("--netns and --create-netns exclude each other");
		return EXIT_USAGE;
	}
	if (a->have_script && a->ro.duration_ms && a->script.n &&
	    a->script.steps[a->script.n - 1].t_ms >= a->ro.duration_ms)
		/* stderr even under -j: stdout holds one JSON document */
		fprintf(stderr, "probity rejit: warning: --script: steps at or after --duration "
			"%.3gs (line %u) will not run\n", a->ro.duration_ms / 1000.0,
			a->script.steps[a->script.n - 1].line);
	return -1;
}

/* new -> run -> stop -> summary; the exit code. */
static int run(struct specializer_opts *ro)
{
	struct specializer *s = NULL;
	const struct sp_summary *sum;
	pb_print_fn_t old_print = pb_set_print(on_log);
	int e, ret = EXIT_FAILURE_RT;

	cli_stop_install();
	e = specializer__new(ro, &s);
	if (e) {
		if (e == -EINVAL)
			ret = EXIT_USAGE;
		goto out;
	}
	e = specializer__run(s);
	if (specializer__stop(s))
		fprintf(stderr, "probity rejit: warning: could not log every retirement/unload "
			"(see above)\n");
	sum = specializer__summary(s);
	if (sum && json_output)
		json_print_and_free(sp_summary__to_json(sum));
	else if (sum)
		print_summary(sum);
	ret = e ? EXIT_FAILURE_RT : EXIT_OK;
out:
	specializer__free(s);
	pb_set_print(old_print);
	return ret;
}

int do_rejit(int argc, char **argv)
{
	struct rejit_args a = { .ro = { .stop = &cli_stop_signal, .progress = on_progress,
					.store_dir = cli_default_store() } };
	int ret;

	ret = parse_args(argc, argv, &a);
	if (ret < 0) {
		a.ro.cfg_field = a.cfg_field;
		a.ro.cfg_value = a.cfg_value;
		a.ro.script = a.have_script ? &a.script : NULL;
		ret = run(&a.ro);
	}
	sp_script_release(&a.script);
	return ret;
}
