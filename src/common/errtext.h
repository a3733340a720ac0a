/* SPDX-License-Identifier: BSD-2-Clause */
/* errtext.h: the error text of a parser whose caller prints the message
 * with its own prefix. The rule for errors, library-wide:
 *
 * - library functions return -errno (pointer functions: NULL and errno)
 *   and log through pr_* (common/log.h);
 * - a parser whose caller must print a positioned message ("FILE:3: ...",
 *   "line 3: ...", a column in a manifest field) fills a struct pb_errtext
 *   next to its -errno return instead of logging: the sample file and
 *   `perf script` readers, TIME expressions, `probity rejit` scripts,
 *   envelopes, manifest value expressions and guards;
 * - the manifest linter turns those into positioned findings in struct
 *   diags (common/diag.h).
 *
 * Callers start from struct pb_errtext e = { 0 } (or pass NULL: nothing is
 * filled) and read e.msg only after a failure.
 */
#ifndef PROBITY_COMMON_ERRTEXT_H
#define PROBITY_COMMON_ERRTEXT_H

/* the largest buffer any of these parsers' callers used before (rejit
 * scripts, envelopes): a message is never cut shorter than it was */
#define PB_ERRTEXT_LEN 512

struct pb_errtext {
	char msg[PB_ERRTEXT_LEN];	/* NUL-terminated; "" until set */
	/* where the parser knows it (0 otherwise): */
	int line;	/* 1-based line of the input */
	int col;	/* 0-based offset in the parsed text */
};

/* Format into e (may be NULL: nothing happens); line and col unchanged. */
void pb_errtext__set(struct pb_errtext *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, with the position. */
void pb_errtext__set_at(struct pb_errtext *e, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
