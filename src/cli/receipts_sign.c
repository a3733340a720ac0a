/* SPDX-License-Identifier: BSD-2-Clause */
/* receipts_sign.c (cli): `probity receipts export` and `probity receipts
 * checkpoint`, the signed halves of the receipts command (rows in
 * receipts.c's table; src/receipts/export.h, docs/receipts.md "Signed
 * export"). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli/args.h"
#include "cli/cli.h"
#include "receipts/export.h"

static void sign_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] receipts export [GEN...|--all] --key KEY [-o FILE.intoto.jsonl]\n"
		"                                [--bundle FILE.tar] [--store DIR]\n"
		"       %s [-j] receipts checkpoint --key KEY [-o FILE] [--store DIR]\n"
		"\n"
		"export: one DSSE envelope per generation (payloadType\n"
		"application/vnd.in-toto+json) over its receipt, an in-toto Statement v1\n"
		"with predicateType https://probity.dev/receipt/v1; with --bundle, a tar an\n"
		"auditor checks with standard tools (VERIFY.md inside): envelopes, objects,\n"
		"the normalized bytes every digest covers, the log, a signed checkpoint and\n"
		"the public key.\n"
		"checkpoint: sign the lifecycle log head (predicateType\n"
		"https://probity.dev/log-checkpoint/v1); once it has left the machine, the\n"
		"history up to it cannot be rewritten unnoticed.\n"
		"\n"
		"Options:\n"
		"      --key KEY        private key: PEM Ed25519 or ECDSA P-256 (OpenSSL), or\n"
		"                       an OpenSSH key (ssh-keygen -Y sign, namespace\n"
		"                       " DSSE_SSH_NAMESPACE ")\n"
		"      --all            (export) every generation with a receipt in the log\n"
		"  -o, --output FILE    write the envelopes (export) or the checkpoint\n"
		"                       envelope to FILE ('-': stdout, the checkpoint default)\n"
		"      --bundle FILE    (export) write the auditor's tar bundle\n"
		"  -s, --store DIR      the receipt store (default $PROBITY_STORE, else\n"
		"                       ./probity-store)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 written; 1 the log is damaged (run 'receipts verify');\n"
		"2 usage error, unreadable key, no such store or generation; 3 I/O failure.\n",
		bin_name, bin_name);
}

struct sopts {
	const char *store, *key, *output, *bundle;
	bool all;
};

static int parse_sign(int argc, char **argv, struct sopts *o)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "bundle", required_argument, NULL, 'b' },
		{ "store", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->store = cli_default_store();
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:s:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'k': o->key = optarg; break;
		case 'a': o->all = true; break;
		case 'o': o->output = optarg; break;
		case 'b': o->bundle = optarg; break;
		case 's': o->store = optarg; break;
		case 'h': sign_help(stdout); return -2;
		default: sign_help(stderr); return -1;
		}
	}
	if (!o->key) {
		p_err("--key KEY is required (see '%s receipts export --help')", bin_name);
		return -1;
	}
	return optind;
}

/* Store and signer; an EXIT_* code on failure, else -1. */
static int open_both(const struct sopts *o, struct pb_store **s, struct dsse_signer **sg)
{
	struct pb_store_opts so = { .sz = sizeof(so), .no_create = true };
	char why[256];
	int err;

	err = dsse_signer__open(o->key, sg, why, sizeof(why));
	if (err) {
		p_err("--key %s: %s", o->key, why);
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	err = pb_store__open(o->store, &so, s);
	if (err) {
		p_err("cannot open store %s: %s", o->store, strerror(-err));
		return EXIT_USAGE;
	}
	return -1;
}

static int code_of(int err)
{
	return err == -EBADMSG ? EXIT_FINDINGS : err == -ENOENT || err == -ENOTUNIQ || err == -EINVAL ||
		err == -ENODATA ? EXIT_USAGE : EXIT_FAILURE_RT;
}

static int write_envelopes(struct pb_store *s, const json_t *gens, struct dsse_signer *sg,
			   const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	int err;

	if (!f)
		return -errno;
	err = export__envelopes(s, gens, sg, f);
	if (f != stdout && fclose(f) && !err)
		err = -errno;
	return err;
}

int cmd_receipts_export(int argc, char **argv)
{
	struct export_sel sel = { 0 };
	struct dsse_signer *sg = NULL;
	struct pb_store *s = NULL;
	json_t *gens = NULL;
	const char *bad;
	struct sopts o;
	size_t files = 0;
	int rc, err = 0, ret;

	rc = parse_sign(argc, argv, &o);
	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	sel = (struct export_sel){ .gens = argv + rc, .n_gens = (size_t)(argc - rc), .all = o.all };
	if (!sel.all == !sel.n_gens || (!o.output && !o.bundle)) {
		p_err("%s (see '%s receipts export --help')", sel.all && sel.n_gens ?
		      "GEN... and --all exclude each other" : !o.output && !o.bundle ?
		      "say where: -o FILE.intoto.jsonl and/or --bundle FILE.tar" :
		      "name the generations (GEN...) or --all", bin_name);
		return EXIT_USAGE;
	}
	if (o.output && !strcmp(o.output, "-") && json_output) {
		p_err("-j prints a summary on stdout: write the envelopes to a file with -o FILE");
		return EXIT_USAGE;
	}
	ret = open_both(&o, &s, &sg);
	if (ret >= 0)
		goto out;
	err = export__select(s, &sel, &gens, &bad);
	if (err) {
		p_err("%s: %s", bad ? bad : "the lifecycle log", err == -ENOTUNIQ ? "names several generations" :
		      err == -EBADMSG ? "damaged (run 'receipts verify')" : strerror(-err));
		ret = code_of(err);
		goto out;
	}
	if (o.output && (err = write_envelopes(s, gens, sg, o.output))) {
		p_err("%s: %s", o.output, strerror(-err));
		ret = code_of(err);
		goto out;
	}
	if (o.bundle && (err = bundle__write(s, gens, sg, o.bundle, &files))) {
		p_err("%s: %s", o.bundle, err == -EBADMSG ? "the store or log is damaged; nothing written "
		      "(run 'receipts verify')" : err == -ENODATA ? "the lifecycle log is empty" : strerror(-err));
		ret = code_of(err);
		goto out;
	}
	if (json_output)
		json_print_and_free(json_pack("{s:I, s:O, s:s?, s:s?, s:I, s:s, s:s}", "exported",
			(json_int_t)json_array_size(gens), "generations", gens, "output", o.output,
			"bundle", o.bundle, "bundle_files", (json_int_t)files, "keyid",
			dsse_signer__keyid(sg), "scheme", dsse_scheme_str(dsse_signer__scheme(sg))));
	else
		fprintf(stderr, "exported %zu generation%s signed with %s (%s)%s%s%s\n",
			json_array_size(gens), json_array_size(gens) == 1 ? "" : "s",
			dsse_signer__keyid(sg), dsse_scheme_str(dsse_signer__scheme(sg)),
			o.bundle ? "; bundle " : "", o.bundle ? o.bundle : "", o.bundle ? "" : "");
	ret = EXIT_OK;
out:
	json_decref(gens);
	dsse_signer__free(sg);
	pb_store__free(s);
	return ret;
}

int cmd_receipts_checkpoint(int argc, char **argv)
{
	struct dsse_signer *sg = NULL;
	struct pb_store *s = NULL;
	json_t *env = NULL, *st = NULL;
	struct sopts o;
	FILE *f = NULL;
	int rc, err, ret;

	rc = parse_sign(argc, argv, &o);
	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (rc != argc || o.all || o.bundle) {
		p_err("checkpoint takes --key, -o and --store only (see '%s receipts --help')", bin_name);
		return EXIT_USAGE;
	}
	ret = open_both(&o, &s, &sg);
	if (ret >= 0)
		goto out;
	err = checkpoint__sign(s, sg, &env, &st, NULL, NULL);
	if (err) {
		p_err("checkpoint: %s", err == -EBADMSG ? "the lifecycle log is damaged (run 'receipts verify')" :
		      err == -ENODATA ? "the lifecycle log has no entry" : strerror(-err));
		ret = code_of(err);
		goto out;
	}
	if (!o.output || !strcmp(o.output, "-")) {
		json_print_and_free(json_incref(env));	/* the envelope is the document */
		ret = EXIT_OK;
		goto out;
	}
	f = fopen(o.output, "w");
	err = !f ? -errno : json_dumpf(env, f, JSON_COMPACT | JSON_SORT_KEYS) || fputc('\n', f) == EOF ? -EIO : 0;
	if (f && fclose(f) && !err)
		err = -errno;
	if (err) {
		p_err("%s: %s", o.output, strerror(-err));
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	if (json_output)
		json_print_and_free(json_pack("{s:s, s:O}", "output", o.output, "statement", st));
	else
		fprintf(stderr, "wrote checkpoint %s\n", o.output);
	ret = EXIT_OK;
out:
	json_decref(env);
	json_decref(st);
	dsse_signer__free(sg);
	pb_store__free(s);
	return ret;
}
