/* SPDX-License-Identifier: BSD-2-Clause */
/* digest.h: SHA-256 and hex encoding, the one digest module shared by
 * everything content-addressed (manifest digests, receipts, stores).
 */
#ifndef PROBITY_DIGEST_H
#define PROBITY_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define PB_SHA256_LEN	32
/* The one name for a hex digest buffer; spelled exactly as in the public
 * include/probity/receipts.h, so both headers may be included. */
#define PB_DIGEST_HEX_LEN 65	/* 64 hex digits + NUL */

/* SHA-256 of len bytes at data (len may be 0); returns 0 or -ENOMEM/-EIO. */
int pb_sha256(const void *data, size_t len, uint8_t out[PB_SHA256_LEN]);

/* Lower-case hex of len bytes into out, which holds 2 * len + 1 bytes. */
void pb_hex(const uint8_t *bytes, size_t len, char *out);

#endif
