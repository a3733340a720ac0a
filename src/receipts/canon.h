/* SPDX-License-Identifier: BSD-2-Clause */
/* canon.h: canonical JSON (sorted keys, compact, no reals) and the
 * SHA-256 digests every receipt object is named by.
 */
#ifndef PROBITY_RECEIPTS_CANON_H
#define PROBITY_RECEIPTS_CANON_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "probity/receipts.h"

/* Encode j canonically into *out (malloc'ed, NUL-terminated). -EINVAL
 * when j holds a real number. */
int canon__encode(const json_t *j, char **out, size_t *len);
/* SHA-256 of the canonical encoding. */
int canon__digest(const json_t *j, char hex[PB_DIGEST_HEX_LEN]);
/* SHA-256 of len bytes as 64 lower-case hex digits; 0 or -errno. */
int pb_sha256_hex(const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN]);
bool pb_is_digest_hex(const char *s);

#endif
