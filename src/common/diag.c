/* SPDX-License-Identifier: BSD-2-Clause */
/* diag.c: positioned findings list (see diag.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "common/diag.h"
#include "common/array.h"

struct diags {
	struct diag *v;
	size_t n, cap;
};

struct diags *diags__new(void)
{
	return calloc(1, sizeof(struct diags));
}

void diags__free(struct diags *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].field);
		free(d->v[i].msg);
	}
	free(d->v);
	free(d);
}

int diags__add(struct diags *d, enum diag_severity sev, const char *file,
	       int line, int col, const char *field, const char *fmt, ...)
{
	struct diag *g;
	va_list ap;
	char *msg = NULL;
	int n;

	if (PB_ARRAY_RESERVE_ONE(d->v, d->n, d->cap))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	g = &d->v[d->n];
	memset(g, 0, sizeof(*g));
	g->severity = sev;
	g->line = line;
	g->col = col;
	g->msg = msg;
	g->file = file ? strdup(file) : NULL;
	g->field = field ? strdup(field) : NULL;
	if ((file && !g->file) || (field && !g->field)) {
		free(g->file);
		free(g->field);
		free(msg);
		return -ENOMEM;
	}
	d->n++;
	return 0;
}

size_t diags__count(const struct diags *d)
{
	return d ? d->n : 0;
}

size_t diags__count_severity(const struct diags *d, enum diag_severity sev)
{
	size_t i, n = 0;

	for (i = 0; d && i < d->n; i++)
		n += d->v[i].severity == sev;
	return n;
}

const struct diag *diags__get(const struct diags *d, size_t i)
{
	return d && i < d->n ? &d->v[i] : NULL;
}

static int diag_cmp(const struct diag *a, const struct diag *b)
{
	int c = strcmp(a->file ? a->file : "", b->file ? b->file : "");

	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return 0;
}

void diags__sort(struct diags *d)
{
	size_t i, j;

	/* insertion sort: stable, and lists are short */
	for (i = 1; d && i < d->n; i++) {
		struct diag t = d->v[i];

		for (j = i; j > 0 && diag_cmp(&d->v[j - 1], &t) > 0; j--)
			d->v[j] = d->v[j - 1];
		d->v[j] = t;
	}
}

const char *diag_severity_str(enum diag_severity sev)
{
	switch (sev) {
	case DIAG_ERROR: return "error";
	case DIAG_WARNING: return "warning";
	default: return "note";
	}
}

int diag__format(const struct diag *g, char *buf, size_t sz)
{
	char pos[64] = "";

	if (g->line > 0 && g->col > 0)
		snprintf(pos, sizeof(pos), ":%d:%d", g->line, g->col);
	else if (g->line > 0)
		snprintf(pos, sizeof(pos), ":%d", g->line);
	return snprintf(buf, sz, "%s%s: %s: %s%s%s", g->file ? g->file : "<input>",
			pos, diag_severity_str(g->severity),
			g->field ? g->field : "", g->field ? ": " : "", g->msg);
}

void diags__print(const struct diags *d, FILE *out)
{
	char buf[4096];
	size_t i;

	for (i = 0; d && i < d->n; i++) {
		diag__format(&d->v[i], buf, sizeof(buf));
		fprintf(out, "%s\n", buf);
	}
}

json_t *diags__to_json(const struct diags *d)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && d && i < d->n; i++) {
		const struct diag *g = &d->v[i];

		json_array_append_new(arr, json_pack("{s:s?, s:i, s:i, s:s, s:s?, s:s}",
			"file", g->file, "line", g->line, "col", g->col,
			"severity", diag_severity_str(g->severity),
			"field", g->field, "message", g->msg));
	}
	return arr;
}
