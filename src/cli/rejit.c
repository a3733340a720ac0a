/* rejit.c (cli): `probity rejit`: the reference specializer
 * (src/rejit/runtime.c) on its XDP program, with progress on stderr and
 * a summary of every generation at the end (docs/rejit.md).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "rejit/runtime.h"
#include "rejit/script.h"

#define MAX_CFG 32

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

static int read_script(const char *path, struct rj_script *s)
{
	char err[512];
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	if (!f) {
		p_err("cannot read script '%s': %s", path, strerror(errno));
		return -errno;
	}
	do {
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				fclose(f);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n && len < (1u << 20));
	fclose(f);
	if (len >= (1u << 20)) {
		p_err("%s: expected a script of at most 1 MiB", path);
		free(buf);
		return -E2BIG;
	}
	rc = rj_script_parse(buf ? buf : "", len, path, s, err, sizeof(err));
	free(buf);
	if (rc)
		p_err("%s", err);
	return rc;
}

static void print_summary(json_t *sum)
{
	json_t *gens = json_object_get(sum, "generations"), *g, *v;
	size_t i, k;

	printf("%-4s %-14s %-8s %-11s %-6s %s\n", "gen", "generation", "prog", "kind", "insns",
	       "transforms / retired");
	json_array_foreach(gens, i, g) {
		const char *id = json_string_value(json_object_get(g, "generation_id"));

		printf("%-4lld %-14.12s %-8lld %-11s %-6lld ",
		       json_integer_value(json_object_get(g, "ordinal")), id ? id : "(unlogged)",
		       json_integer_value(json_object_get(g, "prog_id")),
		       json_string_value(json_object_get(g, "kind")),
		       json_integer_value(json_object_get(g, "insns")));
		json_array_foreach(json_object_get(g, "transforms"), k, v)
			printf("%s%s", k ? " " : "", json_string_value(v));
		if (!json_array_size(json_object_get(g, "transforms")))
			printf("(none)");
		printf("\n%-4s retired:", "");
		json_array_foreach(json_object_get(g, "retired"), k, v)
			printf("%s %s", k ? ";" : "", json_string_value(v));
		printf("\n");
	}
	{
		json_t *gd = json_object_get(sum, "guards"), *f;
		const char *site;

		printf("guard failures:");
		json_object_foreach(json_object_get(gd, "failures"), site, f)
			printf(" %s %lld", site, json_integer_value(f));
		printf("; fallback tail calls failed: %lld\n",
		       json_integer_value(json_object_get(gd, "fallback_failed")));
	}
	printf("%lld generations, %lld specialized, %lld deopts, %lld candidates refused, "
	       "%lld epochs, %lld packets sent (%lld send errors)\n",
	       (long long)json_array_size(gens),
	       json_integer_value(json_object_get(sum, "specialized")),
	       json_integer_value(json_object_get(sum, "deopts")),
	       json_integer_value(json_object_get(sum, "rejected_candidates")),
	       json_integer_value(json_object_get(sum, "epochs")),
	       json_integer_value(json_object_get(json_object_get(sum, "traffic"), "sent")),
	       json_integer_value(json_object_get(json_object_get(sum, "traffic"), "send_errors")));
}

enum {
	OPT_NETNS = 256, OPT_CREATE_NETNS, OPT_DEV, OPT_PEER, OPT_TRAFFIC, OPT_INTERVAL, OPT_BIAS,
	OPT_GUARD, OPT_MIN, OPT_CONFIG, OPT_SCRIPT, OPT_SPIKE, OPT_SPIKE_ROUNDS, OPT_INJECT,
};

int do_rejit(int argc, char **argv)
{
	static const struct option opts[] = {
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
	struct rejit_opts ro = { .stop = &cli_stop_signal, .progress = on_progress };
	uint32_t cfg_field[MAX_CFG], cfg_value[MAX_CFG];
	struct rj_script script = { 0 };
	const char *store = cli_default_store();
	bool create = false, have_script = false;
	struct rejit *r = NULL;
	char err[512] = "";
	uint64_t n;
	int opt, e, ret = EXIT_USAGE;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "s:d:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 's': store = optarg; break;
		case 'd':
			if (parse_ms("--duration", optarg, &ro.duration_ms))
				goto out;
			break;
		case OPT_NETNS: ro.netns = optarg; break;
		case OPT_CREATE_NETNS: create = true; break;
		case OPT_DEV: ro.dev = optarg; break;
		case OPT_PEER: ro.peer = optarg; break;
		case OPT_TRAFFIC:
			if (cli_parse_count("--traffic", optarg, false, 200000, &n))
				goto out;
			ro.rate_pps = (uint32_t)n;
			break;
		case OPT_INTERVAL:
			if (parse_ms("--profile-interval", optarg, &ro.profile_interval_ms))
				goto out;
			if (ro.profile_interval_ms < 50) {
				p_err("--profile-interval: expected at least 0.05 seconds, found '%s'", optarg);
				goto out;
			}
			break;
		case OPT_BIAS: {
			char *end;
			double f;

			errno = 0;
			f = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(f >= 0.5 && f <= 1.0)) {
				p_err("--bias-threshold: expected a fraction 0.5..1, found '%s'", optarg);
				goto out;
			}
			ro.bias_permille = (uint32_t)(f * 1000 + 0.5);
			break;
		}
		case OPT_GUARD:
			if (cli_parse_count("--guard-threshold", optarg, false, UINT32_MAX, &ro.guard_threshold))
				goto out;
			break;
		case OPT_MIN:
			if (cli_parse_count("--min-samples", optarg, false, UINT32_MAX, &n))
				goto out;
			ro.min_samples = (uint32_t)n;
			break;
		case OPT_CONFIG:
			if (ro.n_cfg == MAX_CFG) {
				p_err("--config: at most %d assignments", MAX_CFG);
				goto out;
			}
			if (rj_config_parse(optarg, &cfg_field[ro.n_cfg], &cfg_value[ro.n_cfg], err,
					    sizeof(err))) {
				p_err("--config: %s", err);
				goto out;
			}
			ro.n_cfg++;
			break;
		case OPT_SCRIPT:
			if (have_script) {
				p_err("--script: given twice");
				goto out;
			}
			if (read_script(optarg, &script))
				goto out;
			have_script = true;
			break;
		case OPT_SPIKE:
			if (cli_parse_count("--plant-spike", optarg, false, 1000000, &n))
				goto out;
			ro.plant_spike = (uint32_t)n;
			break;
		case OPT_SPIKE_ROUNDS:
			if (cli_parse_count("--spike-rounds", optarg, false, 100000, &n))
				goto out;
			ro.spike_rounds = (uint32_t)n;
			break;
		case OPT_INJECT:
			if (cli_parse_count("--inject-drop-handoff", optarg, false, 1000000, &n))
				goto out;
			ro.inject_drop_handoff = (uint32_t)n;
			break;
		case 'h': rejit_help(stdout); ret = EXIT_OK; goto out;
		default: rejit_help(stderr); goto out;
		}
	}
	if (optind != argc) {
		p_err("'rejit' takes no arguments, found '%s' (see '%s rejit --help')", argv[optind],
		      bin_name);
		goto out;
	}
	if (create && ro.netns) {
		p_err("--netns and --create-netns exclude each other");
		goto out;
	}
	if (have_script && ro.duration_ms && script.n &&
	    script.steps[script.n - 1].t_ms >= ro.duration_ms)
		/* stderr even under -j: stdout holds one JSON document */
		fprintf(stderr, "probity rejit: warning: --script: steps at or after --duration "
			"%.3gs (line %u) will not run\n", ro.duration_ms / 1000.0,
			script.steps[script.n - 1].line);
	ro.store_dir = store;
	ro.cfg_field = cfg_field;
	ro.cfg_value = cfg_value;
	ro.script = have_script ? &script : NULL;
	cli_stop_install();
	ret = EXIT_FAILURE_RT;
	e = rejit__new(&ro, &r, err, sizeof(err));
	if (e) {
		p_err("%s", err);
		if (e == -EINVAL)
			ret = EXIT_USAGE;
		goto out;
	}
	e = rejit__run(r, err, sizeof(err));
	if (e)
		p_err("%s", err);
	if (rejit__stop(r))
		fprintf(stderr, "probity rejit: warning: could not log every retirement/unload "
			"(see above)\n");
	{
		json_t *sum = rejit__summary(r);

		if (json_output)
			json_print_and_free(sum);
		else {
			print_summary(sum);
			json_decref(sum);
		}
	}
	ret = e ? EXIT_FAILURE_RT : EXIT_OK;
out:
	rejit__free(r);
	rj_script_release(&script);
	return ret;
}
