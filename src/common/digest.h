/* digest.h: SHA-256 and hex encoding, the one digest module shared by
 * everything content-addressed (manifest digests, receipts, stores).
 */
#ifndef PROBITY_DIGEST_H
#define PROBITY_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define PB_SHA256_LEN	32
#define PB_SHA256_HEX	(2 * PB_SHA256_LEN + 1)	/* with the NUL */

/* SHA-256 of len bytes at data (len may be 0); returns 0 or -ENOMEM/-EIO. */
int pb_sha256(const void *data, size_t len, uint8_t out[PB_SHA256_LEN]);

/* Lower-case hex of len bytes into out, which holds 2 * len + 1 bytes. */
void pb_hex(const uint8_t *bytes, size_t len, char *out);

#endif
