/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest.c: reading a manifest file: bytes -> YAML tree (yaml_tree.c) ->
 * model (manifest_parse.c) -> cross checks (manifest_check.c), plus the
 * model's look-ups, enum names and free.
 *
 * Findings are collected in a private list, sorted by position and only
 * then appended to the caller's list, so output order is the file's order
 * whatever the order of the checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/digest.h"
#include "common/io.h"
#include "contract/manifest_int.h"

/* ---- enum names ------------------------------------------------------------ */

#define ENUM_STR(table, v) \
	((unsigned)(v) < sizeof(table) / sizeof(table[0]) && table[v] ? table[v] : "?")

const char *pb_event_kind_str(enum pb_event_kind k)
{
	static const char *const t[] = { "WAIT", "ACQUIRE", "USE", "RELEASE" };

	return ENUM_STR(t, k);
}

const char *pb_res_class_str(enum pb_res_class c)
{
	static const char *const t[] = { "pool", "queue", "cache", "lock", "credit",
					 "connection", "other" };

	return ENUM_STR(t, c);
}

const char *pb_site_at_str(enum pb_site_at a)
{
	static const char *const t[] = { "entry", "return", "span" };

	return ENUM_STR(t, a);
}

const char *pb_confidence_str(enum pb_confidence c)
{
	static const char *const t[] = { "candidate", "validated", "suspect", "stale",
					 "degraded" };

	return ENUM_STR(t, c);
}

const char *pb_prov_source_str(enum pb_prov_source s)
{
	static const char *const t[] = { "static_analysis", "llm", "developer", "usdt" };

	return ENUM_STR(t, s);
}

const char *pb_returns_str(enum pb_returns r)
{
	static const char *const t[] = { "unspecified", "value", "void" };

	return ENUM_STR(t, r);
}

const char *pb_gen_rule_str(enum pb_gen_rule g)
{
	static const char *const t[] = { "on_acquire", "counter" };

	return ENUM_STR(t, g);
}

const char *pb_scope_str(enum pb_scope s)
{
	static const char *const t[] = { "process", "shared" };

	return ENUM_STR(t, s);
}

const char *pb_effect_str(enum pb_effect fx)
{
	static const char *const t[] = { "off_cpu", "block_io", "page_fault", "wakes_waiter" };

	return ENUM_STR(t, fx);
}

bool pb_effect_in_call(enum pb_effect fx)
{
	return fx == PB_FX_OFF_CPU || fx == PB_FX_BLOCK_IO || fx == PB_FX_PAGE_FAULT;
}

/* ---- findings -------------------------------------------------------------- */

void mctx__report(struct mctx *c, enum diag_severity sev, struct pb_loc loc, const char *parent,
		  const char *key, const char *fmt, ...)
{
	char field[160], *msg = NULL;
	va_list ap;
	int n;

	if (sev == DIAG_ERROR)
		c->n_errors++;
	if (c->capped || c->oom)
		return;
	if (c->n_findings >= MAX_FINDINGS) {
		c->capped = true;
		return;
	}
	if (parent && key)
		snprintf(field, sizeof(field), "%s.%s", parent, key);
	else
		snprintf(field, sizeof(field), "%s", parent ? parent : key ? key : "");
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		c->oom = true;
		return;
	}
	if (diags__add(c->d, sev, c->file, loc.line, loc.col, field[0] ? field : NULL, "%s", msg))
		c->oom = true;
	c->n_findings++;
	free(msg);
}

/* Levenshtein distance, bounded inputs (both <= 64 bytes). */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, bool icase)
{
	size_t row[65], i, j;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			char x = a[i - 1], y = b[j - 1];
			size_t up = row[j], best;

			if (icase) {
				x = (x >= 'A' && x <= 'Z') ? x - 'A' + 'a' : x;
				y = (y >= 'A' && y <= 'Z') ? y - 'A' + 'a' : y;
			}
			best = diag + (x != y);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

int suggest(const char *word, size_t word_len, const char *const *cands, size_t n,
	    bool ignore_case, char *buf, size_t sz)
{
	size_t i, best = (size_t)-1, best_i = 0, limit;

	buf[0] = '\0';
	if (!word_len || word_len > 64)
		return -1;
	/* close enough to be a typo: 1 edit for short words, a third beyond */
	limit = word_len / 3 > 1 ? word_len / 3 : 1;
	if (limit > 3)
		limit = 3;
	for (i = 0; i < n; i++) {
		size_t lc = strlen(cands[i]), d;

		if (lc > 64)
			continue;
		d = edit_distance(word, word_len, cands[i], lc, ignore_case);
		if (d < best) {
			best = d;
			best_i = i;
		}
	}
	if (best > limit)
		return -1;
	snprintf(buf, sz, "; did you mean '%s'?", cands[best_i]);
	return (int)best_i;
}

/* ---- model ----------------------------------------------------------------- */

static void event_free(struct pb_event *e)
{
	free(e->id);
	free(e->resource);
	free(e->site.symbol);
	free(e->site.usdt_provider);
	free(e->site.usdt_name);
	pb_value__free(&e->instance);
	pb_value__free(&e->units);
	pb_value__free(&e->target);
	free(e->target_resource);
	pb_guard__free(&e->when);
	pb_value__free(&e->generation);
	free(e->expect);
	for (size_t i = 0; e->predicts && i < e->n_predicts; i++)
		free(e->predicts[i].waiter);
	free(e->predicts);
	free(e->provenance.evidence);
	free(e->provenance.date);
	free(e->description);
}

void manifest__free(struct manifest *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n_targets; i++) {
		free(m->targets[i].id);
		free(m->targets[i].binary);
	}
	for (i = 0; i < m->n_resources; i++) {
		free(m->resources[i].name);
		free(m->resources[i].units);
		free(m->resources[i].description);
	}
	for (i = 0; i < m->n_events; i++)
		event_free(&m->events[i]);
	free(m->targets);
	free(m->resources);
	free(m->events);
	free(m->path);
	free(m->name);
	free(m->description);
	free(m);
}

int manifest__find_resource(const struct manifest *m, const char *name)
{
	size_t i;

	for (i = 0; m && name && i < m->n_resources; i++)
		if (m->resources[i].name && !strcmp(m->resources[i].name, name))
			return (int)i;
	return -1;
}

int manifest__find_target(const struct manifest *m, const char *id)
{
	size_t i;

	for (i = 0; m && id && i < m->n_targets; i++)
		if (m->targets[i].id && !strcmp(m->targets[i].id, id))
			return (int)i;
	return -1;
}

int manifest__find_event(const struct manifest *m, const char *id)
{
	size_t i;

	for (i = 0; m && id && i < m->n_events; i++)
		if (m->events[i].id && !strcmp(m->events[i].id, id))
			return (int)i;
	return -1;
}

/* ---- reading ----------------------------------------------------------------- */

static int hand_over(struct mctx *c, struct diags *out)
{
	size_t i;

	diags__sort(c->d);
	for (i = 0; i < diags__count(c->d); i++) {
		const struct diag *g = diags__get(c->d, i);

		if (diags__add(out, g->severity, g->file, g->line, g->col, g->field, "%s", g->msg))
			return -ENOMEM;
	}
	if (c->capped &&
	    diags__add(out, DIAG_NOTE, c->file, 0, 0, NULL,
		       "too many findings: stopped after %d (fix these and run again)",
		       MAX_FINDINGS))
		return -ENOMEM;
	return 0;
}

/* bytes -> tree -> model -> checks; problems in the file become findings
 * in c, only allocation failures are returned */
static int read_manifest(struct mctx *c, const char *buf, size_t len, struct ynode **root)
{
	struct ytree_error yerr;
	int err;

	if (len > PB_MANIFEST_MAX_BYTES) {
		merr(c, ((struct pb_loc){ 0, 0 }), NULL, NULL,
		     "file too large: %zu bytes (a manifest is at most %d MiB)", len,
		     PB_MANIFEST_MAX_BYTES >> 20);
		return 0;
	}
	err = pb_sha256(buf, len, c->m->digest);
	if (err)
		return err;
	err = ytree__parse(buf, len, root, &yerr);
	if (err == -ENOMEM)
		return err;
	if (err) {
		merr(c, yerr.loc, NULL, NULL, "%s", yerr.msg);
		return 0;
	}
	err = manifest__build(c, *root);
	if (!err && !c->oom)
		manifest__check(c);
	return err;
}

int manifest__parse(const char *name, const char *buf, size_t len, struct manifest **out,
		    struct diags *diags)
{
	struct ynode *root = NULL;
	struct mctx c;
	int err;

	*out = NULL;
	if (!buf && len)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.file = name ? name : "<input>";
	c.d = diags__new();
	c.m = calloc(1, sizeof(*c.m));
	if (!c.d || !c.m || !(c.m->path = strdup(c.file))) {
		err = -ENOMEM;
		goto out;
	}
	/* libyaml asserts on a NULL input, even an empty one */
	err = read_manifest(&c, buf ? buf : "", len, &root);
	if (!err)
		err = c.oom ? -ENOMEM : hand_over(&c, diags);
	if (!err && c.n_errors)
		err = -EINVAL;
	if (!err) {
		*out = c.m;
		c.m = NULL;
	}
out:
	ynode__free(root);
	free(c.ti);
	free(c.ri);
	for (size_t i = 0; c.ei && i < c.n_ei; i++)
		free(c.ei[i].pred);
	free(c.ei);
	manifest__free(c.m);
	diags__free(c.d);
	return err;
}

int manifest__load(const char *path, struct manifest **out, struct diags *diags)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	/* at most the limit + 1 bytes: enough to tell a file is too large */
	err = pb_read_fd(fd, PB_MANIFEST_MAX_BYTES + 1, &buf, &len);
	if (err)
		goto fail;
	close(fd);
	err = manifest__parse(path, buf, len, out, diags);
	free(buf);
	return err;
fail:
	if (fd >= 0)
		close(fd);
	if (err != -ENOMEM &&
	    diags__add(diags, DIAG_ERROR, path, 0, 0, NULL, "cannot read file: %s", strerror(-err)))
		err = -ENOMEM;
	return err;
}
