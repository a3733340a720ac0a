/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest.c (cli): `probity manifest lint FILE...` and
 * `probity manifest show FILE`: parsing and printing only; the reader and
 * every check live in src/contract/.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "common/digest.h"
#include "contract/manifest.h"
#include "contract/manifest_schema.h"

static void manifest_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] manifest COMMAND [ARGS...]\n"
		"\n"
		"Check and inspect resource manifests (docs/manifest.md).\n"
		"\n"
		"Commands:\n"
		"  lint FILE...   check manifests; print every finding as file:line:col\n"
		"  show FILE      print the parsed model (a table, or JSON with -j)\n"
		"  init BINARY -o FILE  write a manifest skeleton from the binary's probe\n"
		"                 sites (see 'probes'); lint then lists what is left to fill\n"
		"  schema         print the JSON Schema of manifest v1 (for editors)\n"
		"  help           show this help\n"
		"\n"
		"Exit status: 0 clean, 1 findings, 2 usage error or unreadable file.\n",
		bin_name);
}

static void lint_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] manifest lint FILE...\n"
		"\n"
		"Parse each manifest and run every check of docs/manifest.md. Findings go\n"
		"to stderr, one per line:\n"
		"\n"
		"  FILE:LINE:COL: error: FIELD: MESSAGE\n"
		"\n"
		"A clean file prints 'FILE: ok (N resources, M events)' on stdout.\n"
		"With -j, stdout gets one JSON object per file (an array for several files):\n"
		"{\"file\", \"ok\", \"errors\", \"warnings\", \"findings\": [{\"file\", \"line\",\n"
		"\"col\", \"severity\", \"field\", \"message\"}]}.\n"
		"\n"
		"Options:\n"
		"  -h, --help     show this help\n"
		"\n"
		"Exit status: 0 every file clean (warnings allowed), 1 findings in some\n"
		"file, 2 usage error or a file that cannot be read.\n",
		bin_name);
}

static void show_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] manifest show FILE\n"
		"\n"
		"Print the parsed model of a clean manifest: targets, resources and events\n"
		"with defaults filled in and value expressions in canonical form. With -j,\n"
		"the model as one JSON object (shape in docs/manifest.md).\n"
		"\n"
		"Options:\n"
		"  -h, --help     show this help\n"
		"\n"
		"Exit status: 0 shown, 1 the manifest has errors (printed as by lint),\n"
		"2 usage error or unreadable file.\n",
		bin_name);
}

/* Only --help; anything else is a usage error. Returns -1 to go on. */
static int parse_help_only(int argc, char **argv, void (*help)(FILE *out))
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			help(stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

static int lint_one(const char *path, json_t *results)
{
	struct diags *diags = diags__new();
	struct manifest *m = NULL;
	size_t n_err, n_warn;
	int err, ret;

	if (!diags) {
		p_err("out of memory");
		return EXIT_FAILURE_RT;
	}
	err = manifest__load(path, &m, diags);
	n_err = diags__count_severity(diags, DIAG_ERROR);
	n_warn = diags__count_severity(diags, DIAG_WARNING);
	if (err == -ENOMEM) {
		p_err("%s: out of memory", path);
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	ret = !err ? EXIT_OK : err == -EINVAL ? EXIT_FINDINGS : EXIT_USAGE;
	if (json_output) {
		json_array_append_new(results,
				      json_pack("{s:s, s:b, s:I, s:I, s:o}", "file", path, "ok", !err,
						"errors", (json_int_t)n_err, "warnings",
						(json_int_t)n_warn, "findings", diags__to_json(diags)));
		goto out;
	}
	diags__print(diags, stderr);
	if (!err)
		printf("%s: ok (%zu resource%s, %zu event%s", path, m->n_resources,
		       m->n_resources == 1 ? "" : "s", m->n_events, m->n_events == 1 ? "" : "s");
	if (!err && n_warn)
		printf(", %zu warning%s", n_warn, n_warn == 1 ? "" : "s");
	if (!err)
		printf(")\n");
out:
	manifest__free(m);
	diags__free(diags);
	return ret;
}

static int do_lint(int argc, char **argv)
{
	json_t *results = NULL;
	int i, rc, ret = EXIT_OK;

	rc = parse_help_only(argc, argv, lint_help);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		p_err("expected at least one FILE (see '%s manifest lint --help')", bin_name);
		return EXIT_USAGE;
	}
	if (json_output) {
		results = json_array();
		if (!results) {
			p_err("out of memory");
			return EXIT_FAILURE_RT;
		}
	}
	for (i = optind; i < argc; i++) {
		rc = lint_one(argv[i], results);
		if (rc > ret)
			ret = rc;
	}
	if (json_output) {
		if (json_array_size(results) == 1)
			json_print_and_free(json_incref(json_array_get(results, 0)));
		else
			json_print_and_free(json_incref(results));
		json_decref(results);
	}
	return ret;
}

/* ---- init and schema ------------------------------------------------------- */

static void init_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] manifest init BINARY [--usdt GLOB] [--symbol GLOB] -o FILE\n"
		"\n"
		"Write a manifest skeleton for BINARY: the target with its build-id, a stub\n"
		"resource, and one candidate event per matched probe site (USDT probes\n"
		"matching --usdt, functions matching --symbol; with neither, every USDT\n"
		"probe) with provenance {source: static_analysis, evidence: what `probity\n"
		"probes` saw}. Where only a person can choose (the resource, the event's\n"
		"kind, its instance) the file says TODO, with the choices in a comment;\n"
		"`probity manifest lint FILE` reports each TODO left, and the file lints\n"
		"clean once they are filled.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE    the manifest to write ('-' for stdout, not with -j);\n"
		"                       an existing file is kept unless --force\n"
		"  -u, --usdt GLOB      USDT probes to include (PROVIDER:NAME, fnmatch)\n"
		"  -s, --symbol GLOB    functions to include (mangled or demangled name)\n"
		"  -n, --name NAME      the manifest's name (default: the binary's name)\n"
		"  -f, --force          overwrite FILE\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 written, 1 nothing matched or too many sites (over 500),\n"
		"2 usage error, unreadable binary or FILE exists.\n",
		bin_name);
}

static void schema_help(FILE *out)
{
	fprintf(out,
		"Usage: %s manifest schema\n"
		"\n"
		"Print the JSON Schema (draft 2020-12) of manifest v1, generated from the\n"
		"parser's own field tables: field names, types, enums, required fields.\n"
		"Point yaml-language-server at it to complete and check manifests in an\n"
		"editor (first line: # yaml-language-server: $schema=PATH). Cross-field\n"
		"rules (references, at/kind combinations, ...) are lint's alone.\n"
		"\n"
		"Options:\n"
		"  -h, --help     show this help\n",
		bin_name);
}

struct init_args {
	struct manifest_init_opts o;
	const char *output;
	bool force;
};

/* -1 to go on, else an exit status */
static int parse_init(int argc, char **argv, struct init_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "usdt", required_argument, NULL, 'u' },
		{ "symbol", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "o:u:s:n:fh", opts, NULL)) >= 0) {
		switch (opt) {
		case 'o': a->output = optarg; break;
		case 'u': a->o.usdt_glob = optarg; break;
		case 's': a->o.symbol_glob = optarg; break;
		case 'n': a->o.name = optarg; break;
		case 'f': a->force = true; break;
		case 'h':
			init_help(stdout);
			return EXIT_OK;
		default:
			init_help(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !a->output) {
		p_err("expected BINARY and -o FILE (see '%s manifest init --help')", bin_name);
		return EXIT_USAGE;
	}
	if (json_output && !strcmp(a->output, "-")) {
		p_err("-o - writes the manifest to stdout, where -j prints JSON: give a FILE");
		return EXIT_USAGE;
	}
	a->o.binary = argv[optind];
	return -1;
}

static int init_error(const struct init_args *a, int err, const struct manifest_init_result *r)
{
	if (err == -ENOENT && r->n_skipped)
		p_err("%s: the %zu matching function%s only in its debug file (plan resolves symbols in the binary's own tables)",
		      a->o.binary, r->n_skipped, r->n_skipped == 1 ? " is" : "s are");
	else if (err == -ENOENT)
		p_err("%s: no probe site matches%s%s%s%s (list them with '%s probes %s')", a->o.binary,
		      a->o.usdt_glob ? " --usdt " : "", a->o.usdt_glob ? a->o.usdt_glob : "",
		      a->o.symbol_glob ? " --symbol " : "", a->o.symbol_glob ? a->o.symbol_glob : "",
		      bin_name, a->o.binary);
	else if (err == -E2BIG)
		p_err("%s: %zu sites match: narrow --usdt/--symbol (a manifest names the few sites of one resource)",
		      a->o.binary, r->n_events);
	else
		p_err("%s: %s", a->o.binary, err == -ENOEXEC ? "not an ELF file" : strerror(-err));
	return err == -ENOENT || err == -E2BIG ? EXIT_FINDINGS
	       : err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
}

static int do_init(int argc, char **argv)
{
	struct init_args a = { 0 };
	struct manifest_init_result r;
	bool to_stdout;
	char *tmp = NULL;
	FILE *out;
	int ret, err;

	ret = parse_init(argc, argv, &a);
	if (ret >= 0)
		return ret;
	to_stdout = !strcmp(a.output, "-");
	if (!to_stdout && !a.force && access(a.output, F_OK) == 0) {
		p_err("%s exists: keeping it (--force overwrites)", a.output);
		return EXIT_USAGE;
	}
	if (!to_stdout && asprintf(&tmp, "%s.tmp.%d", a.output, (int)getpid()) < 0) {
		p_err("out of memory");
		return EXIT_FAILURE_RT;
	}
	out = to_stdout ? stdout : fopen(tmp, "w");
	if (!out) {
		p_err("%s: %s", tmp, strerror(errno));
		free(tmp);
		return EXIT_USAGE;
	}
	err = manifest_init__write(&a.o, out, &r);
	if (!to_stdout && fclose(out) && !err)
		err = -EIO;
	if (!err && !to_stdout && rename(tmp, a.output))
		err = -errno;
	if (tmp && err)
		unlink(tmp);
	free(tmp);
	if (err)
		return init_error(&a, err, &r);
	if (json_output)
		json_print_and_free(json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "file", a.output,
					      "build_id", r.build_id, "events", (json_int_t)r.n_events,
					      "usdt", (json_int_t)r.n_usdt,
					      "functions", (json_int_t)r.n_symbols,
					      "skipped_debug_only", (json_int_t)r.n_skipped,
					      "todo", (json_int_t)r.n_placeholders));
	else
		fprintf(to_stdout ? stderr : stdout,
			"%s: %zu event%s (%zu USDT, %zu function%s), %zu TODO to fill; next: %s manifest lint %s\n",
			a.output, r.n_events, r.n_events == 1 ? "" : "s", r.n_usdt, r.n_symbols,
			r.n_symbols == 1 ? "" : "s", r.n_placeholders, bin_name, a.output);
	return EXIT_OK;
}

static int do_schema(int argc, char **argv)
{
	json_t *schema;
	int rc;

	rc = parse_help_only(argc, argv, schema_help);
	if (rc >= 0)
		return rc;
	if (optind != argc) {
		p_err("unexpected argument '%s' (see '%s manifest schema --help')", argv[optind],
		      bin_name);
		return EXIT_USAGE;
	}
	schema = manifest__schema();
	if (!schema) {
		p_err("out of memory");
		return EXIT_FAILURE_RT;
	}
	/* the schema is JSON whatever -j says; pretty unless -j asks for one line */
	if (json_output)
		json_print_and_free(schema);
	else {
		json_dumpf(schema, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(schema);
	}
	return EXIT_OK;
}

/* ---- show: plain tables ---------------------------------------------------- */

static void site_str(const struct pb_site *s, char *buf, size_t sz)
{
	if (s->usdt_provider)
		snprintf(buf, sz, "usdt %s:%s", s->usdt_provider, s->usdt_name);
	else if (s->offset)
		snprintf(buf, sz, "%s+0x%" PRIx64, s->symbol, s->offset);
	else
		snprintf(buf, sz, "%s", s->symbol);
}

static const char *target_of(const struct manifest *m, const struct pb_site *s)
{
	return s->target_idx >= 0 && (size_t)s->target_idx < m->n_targets
		       ? m->targets[s->target_idx].id : "?";
}

static int width(int cur, const char *s)
{
	int n = s ? (int)strlen(s) : 1;

	return n > cur ? n : cur;
}

static void show_targets(const struct manifest *m)
{
	char bid[2 * PB_BUILD_ID_MAX + 1];
	int w1 = 2, w2 = 6;
	size_t i;

	printf("\ntargets:\n");
	for (i = 0; i < m->n_targets; i++) {
		w1 = width(w1, m->targets[i].id);
		w2 = width(w2, m->targets[i].binary);
	}
	printf("  %-*s  %-*s  %s\n", w1, "ID", w2, "BINARY", "BUILD-ID");
	for (i = 0; i < m->n_targets; i++) {
		pb_hex(m->targets[i].build_id, m->targets[i].build_id_len, bid);
		printf("  %-*s  %-*s  %s\n", w1, m->targets[i].id, w2, m->targets[i].binary, bid);
	}
}

static void show_resources(const struct manifest *m)
{
	int w1 = 4, w2 = 5;
	size_t i;

	printf("\nresources:\n");
	for (i = 0; i < m->n_resources; i++) {
		w1 = width(w1, m->resources[i].name);
		w2 = width(w2, m->resources[i].units);
	}
	printf("  %-*s  %-10s  %-*s  %-8s  %-6s  %-8s  %s\n", w1, "NAME", "CLASS", w2, "UNITS",
	       "CAPACITY", "SHARED", "EXTERNAL", "GENERATION");
	for (i = 0; i < m->n_resources; i++) {
		const struct pb_resource *r = &m->resources[i];
		char cap[24] = "-";

		if (r->has_capacity)
			snprintf(cap, sizeof(cap), "%" PRIu64, r->capacity);
		printf("  %-*s  %-10s  %-*s  %-8s  %-6s  %-8s  %s\n", w1, r->name,
		       pb_res_class_str(r->class), w2, r->units, cap, r->shared ? "yes" : "no",
		       r->externally_owned ? "yes" : "no", pb_gen_rule_str(r->generation));
	}
}

/* the DETAILS column of an event: units, guard, target, generation,
 * returns, expected transitions, predictions */
static void event_details(const struct manifest *m, const struct pb_event *e, char *extra,
			  size_t sz)
{
	char units[256], when[300];
	size_t o = 0;

	pb_value__format(&e->units, units, sizeof(units));
	o += snprintf(extra + o, sz - o, "units %s", units);
	if (e->when.present) {
		pb_guard__format(&e->when, when, sizeof(when));
		o += snprintf(extra + o, sz - o, ", when %s", when);
	}
	if (e->target.base != PB_VAL_NONE && o < sz) {
		pb_value__format(&e->target, units, sizeof(units));
		o += snprintf(extra + o, sz - o, ", target %s%s%s", units,
			      e->target_resource ? " of " : "",
			      e->target_resource ? e->target_resource : "");
	}
	if (e->generation.base != PB_VAL_NONE && o < sz) {
		pb_value__format(&e->generation, units, sizeof(units));
		o += snprintf(extra + o, sz - o, ", generation %s", units);
	}
	if (e->returns != PB_RET_UNSPECIFIED && o < sz)
		o += snprintf(extra + o, sz - o, ", returns %s", pb_returns_str(e->returns));
	if (e->n_expect && o < sz)
		o += snprintf(extra + o, sz - o, ", %zu expected transition%s",
			      e->n_expect, e->n_expect == 1 ? "" : "s");
	for (size_t k = 0; k < e->n_predicts && o < sz; k++) {
		const struct pb_prediction *p = &e->predicts[k];

		o += snprintf(extra + o, sz - o, "%s%s", k ? "+" : ", predicts ",
			      pb_effect_str(p->effect));
		if (p->min_duration_ns && o < sz)
			o += snprintf(extra + o, sz - o, ">=%lluns",
				      (unsigned long long)p->min_duration_ns);
		if (p->waiter_idx >= 0 && m->events[p->waiter_idx].id && o < sz)
			o += snprintf(extra + o, sz - o, "(%s)", m->events[p->waiter_idx].id);
	}
}

static void show_events(const struct manifest *m)
{
	char site[300], inst[256], extra[1024];
	int w1 = 2, w2 = 8, w3 = 4, w4 = 8, wt = 6;
	size_t i;

	printf("\nevents:\n");
	for (i = 0; i < m->n_events; i++) {
		w1 = width(w1, m->events[i].id);
		w2 = width(w2, m->events[i].resource);
		site_str(&m->events[i].site, site, sizeof(site));
		w3 = width(w3, site);
		wt = width(wt, target_of(m, &m->events[i].site));
		pb_value__format(&m->events[i].instance, inst, sizeof(inst));
		w4 = width(w4, inst);
	}
	/* the target column only says something when there are several */
	if (m->n_targets < 2)
		wt = 0;
	printf("  %-*s  %-8s  %-*s  %-*s%s%-*s  %-6s  %-*s  %-10s  %s\n", w1, "ID", "KIND", w2,
	       "RESOURCE", wt, wt ? "TARGET" : "", wt ? "  " : "", w3, "SITE", "AT", w4,
	       "INSTANCE", "CONFIDENCE", "DETAILS");
	for (i = 0; i < m->n_events; i++) {
		const struct pb_event *e = &m->events[i];

		site_str(&e->site, site, sizeof(site));
		pb_value__format(&e->instance, inst, sizeof(inst));
		event_details(m, e, extra, sizeof(extra));
		printf("  %-*s  %-8s  %-*s  %-*s%s%-*s  %-6s  %-*s  %-10s  %s\n", w1, e->id,
		       pb_event_kind_str(e->kind), w2, e->resource, wt,
		       wt ? target_of(m, &e->site) : "", wt ? "  " : "", w3, site,
		       pb_site_at_str(e->site.at), w4, inst, pb_confidence_str(e->confidence),
		       extra);
	}
}

static void show_text(const struct manifest *m)
{
	char digest[PB_DIGEST_HEX_LEN];

	pb_hex(m->digest, sizeof(m->digest), digest);
	printf("manifest %s (schema %d)\n", m->name, m->version);
	printf("  file    %s\n  sha256  %s\n", m->path, digest);
	if (m->description)
		printf("  about   %s\n", m->description);
	show_targets(m);
	show_resources(m);
	show_events(m);
}

static int do_show(int argc, char **argv)
{
	struct diags *diags;
	struct manifest *m = NULL;
	int rc, err, ret;

	rc = parse_help_only(argc, argv, show_help);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1) {
		p_err("expected exactly one FILE (see '%s manifest show --help')", bin_name);
		return EXIT_USAGE;
	}
	diags = diags__new();
	if (!diags) {
		p_err("out of memory");
		return EXIT_FAILURE_RT;
	}
	err = manifest__load(argv[optind], &m, diags);
	if (err) {
		ret = err == -EINVAL ? EXIT_FINDINGS
		      : err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o}", "error",
						      err == -EINVAL ? "invalid manifest"
								     : "unreadable manifest",
						      "findings", diags__to_json(diags)));
		else
			diags__print(diags, stderr);
		goto out;
	}
	/* warnings of a clean manifest still deserve to be seen */
	if (!json_output)
		diags__print(diags, stderr);
	if (json_output)
		json_print_and_free(manifest__to_json(m));
	else
		show_text(m);
	ret = EXIT_OK;
out:
	manifest__free(m);
	diags__free(diags);
	return ret;
}

static const struct cmd manifest_cmds[] = {
	{ "lint", do_lint, "check manifests, print every finding" },
	{ "show", do_show, "print the parsed model" },
	{ "init", do_init, "write a manifest skeleton from a binary's probe sites" },
	{ "schema", do_schema, "print the JSON Schema of manifest v1" },
	{ 0 },
};

int do_manifest(int argc, char **argv)
{
	return cmd_select(manifest_cmds, argc - 1, argv + 1, "manifest", manifest_help);
}
