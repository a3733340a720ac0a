/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_init.c: the manifest skeleton behind `probity manifest init`
 * (see manifest_schema.h).
 *
 * Everything the binary can tell is filled in: the build-id, one event
 * per matched probe site with the site itself, `confidence: candidate`
 * and `provenance: {source: static_analysis, evidence}` naming what was
 * seen (address, first instruction, USDT argument spec). What only a
 * person can decide (which resource, which transition, which argument is
 * the instance) is the placeholder TODO, each with a comment listing the
 * choices; `manifest lint` reports every TODO left, with its position,
 * and the file lints clean once they are replaced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract/manifest.h"
#include "contract/manifest_schema.h"
#include "elf/probes.h"

#define DEFAULT_MAX_EVENTS 500
#define ID_MAX 96

/* A YAML double-quoted scalar of s. */
static void put_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/* s cut to [A-Za-z0-9_.-] (others become '_'), at most sz - 1 bytes. */
static void sanitize_id(const char *s, char *buf, size_t sz)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < sz; i++) {
		char ch = s[i];

		buf[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-' ? ch : '_';
	}
	buf[i] = '\0';
	if (!i)
		snprintf(buf, sz, "site");
}

/* Event ids are unique: a repeated one gets _2, _3, ... */
static void unique_id(char (*ids)[ID_MAX], size_t n, const char *want, char *buf)
{
	size_t i, k = 1;
	char base[ID_MAX - 8];

	sanitize_id(want, base, sizeof(base));
	snprintf(buf, ID_MAX, "%s", base);
	for (i = 0; i < n; i++) {
		if (strcmp(ids[i], buf))
			continue;
		snprintf(buf, ID_MAX, "%s_%zu", base, ++k);
		i = (size_t)-1;	/* rescan */
	}
}

static void put_header(FILE *out, const struct probe_list *l, const char *name,
		       const char *target_id, const char *binary)
{
	fprintf(out,
		"# Manifest skeleton written by `probity manifest init` from %s\n"
		"# (build-id %s). Replace every TODO (`probity manifest lint FILE` lists\n"
		"# each one left, with its line), then check the sites against the binary\n"
		"# with `probity plan FILE`. Field reference: docs/manifest.md.\n"
		"# Editors: `probity manifest schema > manifest.schema.json` and a first\n"
		"# line `# yaml-language-server: $schema=manifest.schema.json`.\n"
		"manifest: 1\nname: ", binary, l->build_id);
	put_quoted(out, name);
	fprintf(out, "\ntargets:\n  - id: %s\n    binary: ", target_id);
	put_quoted(out, binary);
	fprintf(out, "\n    build_id: %s\n\n", l->build_id);
	fprintf(out,
		"resources:\n"
		"  # One entry per resource the events below concern; copy it for more.\n"
		"  - name: TODO                 # a unique name, e.g. app.pool.page ([A-Za-z0-9_.:-])\n"
		"    class: TODO                # pool | queue | cache | lock | credit | connection | other\n"
		"    units: TODO                # what is counted: pages, bytes, holders, connections\n"
		"    # capacity: 64             # optional: total units, when known\n"
		"    # shared: true             # several holders of one instance at once (read locks)\n"
		"\nevents:\n");
}

/* "arg0 = 8@%rax, arg1 = -4@%edi" from a USDT argument spec */
static void usdt_args(const char *spec, char *buf, size_t sz)
{
	const char *p = spec;
	size_t o = 0;
	int i = 0;

	buf[0] = '\0';
	while (*p && o < sz) {
		size_t len;

		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (!len)
			break;
		o += snprintf(buf + o, sz - o, "%sarg%d = %.*s", i ? ", " : "", i, (int)len, p);
		p += len;
		i++;
	}
	if (!i)
		snprintf(buf, sz, "no arguments");
}

static void put_site_comment(FILE *out, const struct probe_site *s, char *evidence, size_t esz)
{
	char args[400];

	if (s->kind == PROBE_USDT) {
		usdt_args(s->args, args, sizeof(args));
		fprintf(out, "  # USDT %s:%s%s%s: %s (SIZE@LOCATION; a negative size is signed).\n",
			s->provider, s->name, s->function ? " in " : "",
			s->function ? s->function : "", args);
		snprintf(evidence, esz,
			 "probity probes: USDT note %s:%s at 0x%llx%s%s, args '%s'%s; first instruction '%s' (%s)",
			 s->provider, s->name, (unsigned long long)s->vaddr,
			 s->function ? " in " : "", s->function ? s->function : "", s->args,
			 s->semaphore ? ", with a semaphore" : "", s->insn, insn_exec_str(s->exec));
		return;
	}
	fprintf(out, "  # %s: %s function at 0x%llx, %llu bytes; uprobe on '%s': %s.\n",
		s->demangled ? s->demangled : s->name,
		s->global ? "global" : "local", (unsigned long long)s->vaddr,
		(unsigned long long)s->size, s->insn[0] ? s->insn : "not decoded",
		s->note);
	snprintf(evidence, esz,
		 "probity probes: %s function %s at 0x%llx (%llu bytes, %s); first instruction '%s' (%s)",
		 s->global ? "global" : "local", s->name, (unsigned long long)s->vaddr,
		 (unsigned long long)s->size, probe_table_str(s->table), s->insn,
		 insn_exec_str(s->exec));
}

static void put_event(FILE *out, const struct probe_site *s, const char *id, const char *target_id,
		      const char *date)
{
	char evidence[1024];

	put_site_comment(out, s, evidence, sizeof(evidence));
	fprintf(out,
		"  - id: %s\n"
		"    resource: TODO             # the name of a resource above\n"
		"    kind: TODO                 # WAIT | ACQUIRE | USE | RELEASE\n"
		"    site:\n"
		"      target: %s\n", id, target_id);
	if (s->kind == PROBE_USDT) {
		fprintf(out, "      usdt: %s:%s\n", s->provider, s->name);
		fprintf(out, "    instance: TODO             # arg0..arg%d (the USDT arguments above)\n",
			s->n_args > 0 ? s->n_args - 1 : 0);
	} else {
		fprintf(out,
			"      symbol: %s\n"
			"      # at: return             # entry (default) | return (reads retval) | span (a WAIT: the whole call; its default)\n"
			"    instance: TODO             # arg0..arg5 | retval (at: return) | \"*u64(arg0 + 16)\" (probity probes BINARY --struct NAME)\n",
			s->name);
	}
	fprintf(out, "    confidence: candidate\n    provenance:\n      source: static_analysis\n"
		     "      evidence: ");
	put_quoted(out, evidence);
	fprintf(out, "\n      date: %s\n\n", date);
}

static bool same_usdt(const struct probe_site *a, const struct probe_site *b)
{
	return a->kind == PROBE_USDT && b->kind == PROBE_USDT && !strcmp(a->provider, b->provider) &&
	       !strcmp(a->name, b->name);
}

/* Is site i written? A USDT probe listed at several places is one event
 * (the attach covers every place); functions only in the debug file are
 * skipped (plan resolves names in the binary's own tables). */
static bool wanted(const struct probe_list *l, size_t i, struct manifest_init_result *res)
{
	const struct probe_site *s = &l->sites[i];
	const struct probe_site *prev = i ? &l->sites[i - 1] : NULL;

	if (s->kind == PROBE_USDT)
		return !prev || !same_usdt(prev, s);
	if (s->table == PROBE_TABLE_DEBUG) {
		res->n_skipped++;
		return false;
	}
	return true;
}

static int load_sites(const struct manifest_init_opts *o, bool usdt, struct probe_list **out)
{
	struct probe_list_opts po = { 0 };

	po.glob = usdt ? o->usdt_glob : o->symbol_glob;
	po.no_funcs = usdt;
	po.no_usdt = !usdt;
	return probe_list__load(o->binary, &po, out);
}

static void today(char *buf, size_t sz)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || !strftime(buf, sz, "%Y-%m-%d", &tm))
		snprintf(buf, sz, "1970-01-01");
}

/* One linear pass: load both listings, count and cap, header, then one
 * event per wanted site. */
int manifest_init__write(const struct manifest_init_opts *o, FILE *out,
			 struct manifest_init_result *res)
{
	struct probe_list *lists[2] = { NULL, NULL };
	size_t i, k, n = 0, max = o->max_events ? o->max_events : DEFAULT_MAX_EVENTS;
	char (*ids)[ID_MAX] = NULL, target_id[ID_MAX], date[16];
	const struct probe_list *any;
	const char *base, *name;
	char *abs;
	int err = 0;

	memset(res, 0, sizeof(*res));
	/* no glob at all: every USDT probe (a program's own declared points) */
	if (o->usdt_glob || !o->symbol_glob)
		err = load_sites(o, true, &lists[0]);
	if (!err && o->symbol_glob)
		err = load_sites(o, false, &lists[1]);
	if (err)
		goto out;
	any = lists[0] ? lists[0] : lists[1];
	for (k = 0; k < 2; k++)
		for (i = 0; lists[k] && i < lists[k]->n; i++)
			n += wanted(lists[k], i, res);
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	if (n > max) {
		res->n_events = n;
		err = -E2BIG;
		goto out;
	}
	ids = calloc(n, sizeof(*ids));
	if (!ids) {
		err = -ENOMEM;
		goto out;
	}
	res->n_skipped = 0;
	snprintf(res->build_id, sizeof(res->build_id), "%s", any->build_id);
	base = strrchr(o->binary, '/') ? strrchr(o->binary, '/') + 1 : o->binary;
	sanitize_id(base, target_id, sizeof(target_id));
	name = o->name ? o->name : target_id;
	if (o->date)
		snprintf(date, sizeof(date), "%s", o->date);
	else
		today(date, sizeof(date));
	/* the manifest resolves a relative binary from its own directory */
	abs = realpath(o->binary, NULL);
	put_header(out, any, name, target_id, abs ? abs : o->binary);
	free(abs);
	for (k = 0; k < 2; k++) {
		for (i = 0; lists[k] && i < lists[k]->n; i++) {
			const struct probe_site *s = &lists[k]->sites[i];
			char want[ID_MAX];

			if (!wanted(lists[k], i, res))
				continue;
			if (s->kind == PROBE_USDT)
				snprintf(want, sizeof(want), "%s_%s", s->provider, s->name);
			else
				snprintf(want, sizeof(want), "%s", s->name);
			unique_id(ids, res->n_events, want, ids[res->n_events]);
			put_event(out, s, ids[res->n_events], target_id, date);
			res->n_events++;
			res->n_usdt += s->kind == PROBE_USDT;
			res->n_symbols += s->kind == PROBE_FUNC;
		}
	}
	/* per event: resource, kind, instance; plus the stub resource's three */
	res->n_placeholders = 3 * res->n_events + 3;
	err = ferror(out) ? -EIO : 0;
out:
	free(ids);
	probe_list__free(lists[0]);
	probe_list__free(lists[1]);
	return err;
}
