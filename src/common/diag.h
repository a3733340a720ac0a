/* SPDX-License-Identifier: BSD-2-Clause */
/* diag.h: positioned findings ("file:line:col: error: field: message").
 *
 * Every parser and checker in probity reports problems through a diag
 * list, so the CLI prints them the same way in text and JSON and tests
 * can compare them.
 */
#ifndef PROBITY_DIAG_H
#define PROBITY_DIAG_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

enum diag_severity {
	DIAG_ERROR = 0,
	DIAG_WARNING,
	DIAG_NOTE,
};

struct diag {
	enum diag_severity severity;
	char *file;	/* may be NULL */
	int line;	/* 1-based, 0 = unknown */
	int col;	/* 1-based, 0 = unknown */
	char *field;	/* dotted path, e.g. "events[2].site.symbol"; may be NULL */
	char *msg;	/* "expected X, found Y" */
};

struct diags;

struct diags *diags__new(void);
void diags__free(struct diags *d);

/* Append a finding; returns 0 or -ENOMEM. */
int diags__add(struct diags *d, enum diag_severity sev, const char *file,
	       int line, int col, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

size_t diags__count(const struct diags *d);
size_t diags__count_severity(const struct diags *d, enum diag_severity sev);
const struct diag *diags__get(const struct diags *d, size_t i);

/* Sort by (file, line, col) keeping insertion order for ties. */
void diags__sort(struct diags *d);

/* "file:line:col: error: field: msg\n" for each finding. */
void diags__print(const struct diags *d, FILE *out);
/* Format one finding into buf (same text as diags__print, no newline). */
int diag__format(const struct diag *g, char *buf, size_t sz);
/* JSON array of {"file","line","col","severity","field","message"}. */
json_t *diags__to_json(const struct diags *d);

const char *diag_severity_str(enum diag_severity sev);

#endif
