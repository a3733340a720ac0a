/* SPDX-License-Identifier: BSD-2-Clause */
/* errtext.h: the error text of attribution's parsers (the sample file,
 * `perf script` text, TIME expressions). They report what failed and
 * where ("line 3: ...", "chunk at offset 4096: ..."), which only the
 * caller can print with its own prefix ("--at: ...", "FILE: ..."), so
 * they fill one of these next to their -errno return instead of logging.
 */
#ifndef PROBITY_ATTRIBUTE_ERRTEXT_H
#define PROBITY_ATTRIBUTE_ERRTEXT_H

#define ATTR_ERRTEXT_LEN 256

struct attr_errtext {
	char msg[ATTR_ERRTEXT_LEN];	/* NUL-terminated; "" until set */
};

/* Format into e (may be NULL: nothing happens). */
void attr_errtext__set(struct attr_errtext *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
