/* SPDX-License-Identifier: BSD-2-Clause */
/* canon.h: canonical JSON (RFC 8785, JCS) and the SHA-256 digests
 * every receipt object is named by.
 */
#ifndef PROBITY_RECEIPTS_CANON_H
#define PROBITY_RECEIPTS_CANON_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "probity/receipts.h"

/* canon__jcs flags: accept reals (written as ECMAScript does) and
 * integers beyond +-2^53 (written exactly). */
#define CANON_REALS	0x1u
#define CANON_BIG_INTS	0x2u

/* RFC 8785 encoding of j into *out (malloc'ed, NUL-terminated).
 * -EINVAL for a real without CANON_REALS, -ERANGE for an integer beyond
 * +-2^53 without CANON_BIG_INTS, -ELOOP nested deeper than 64. */
int canon__jcs(const json_t *j, unsigned int flags, char **out, size_t *len);
/* canon__jcs with CANON_BIG_INTS: log entries, checkpoints, digests. */
int canon__encode(const json_t *j, char **out, size_t *len);
/* ECMAScript Number.prototype.toString of a finite v; -EINVAL else. */
int canon__format_double(double v, char out[32]);
/* SHA-256 of the canonical encoding. */
int canon__digest(const json_t *j, char hex[PB_DIGEST_HEX_LEN]);
/* SHA-256 of len bytes as 64 lower-case hex digits; 0 or -errno. */
int pb_sha256_hex(const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN]);
bool pb_is_digest_hex(const char *s);

#endif
