/* SPDX-License-Identifier: BSD-2-Clause */
/* digest.c: SHA-256 through OpenSSL's EVP interface (see digest.h). The
 * EVP API rather than SHA256() because the low-level calls are deprecated
 * in OpenSSL 3 and -Werror would turn that into a build break.
 */
#include <errno.h>
#include <pthread.h>
#include <openssl/evp.h>
#include "common/digest.h"

static const EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

/* EVP_sha256() is a legacy handle: OpenSSL 3 fetches the provider's
 * implementation by name (a locked lookup in the method store) on every
 * EVP_DigestInit_ex with it. Fetch it once per process and keep it (never
 * freed: it lives as long as the process, like OpenSSL's own tables). */
static void sha256_fetch(void)
{
	EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);

	sha256_md = md ? md : EVP_sha256();
}

int pb_sha256(const void *data, size_t len, uint8_t out[PB_SHA256_LEN])
{
	EVP_MD_CTX *ctx;
	unsigned int n = 0;
	int err = -EIO;

	if (pthread_once(&sha256_once, sha256_fetch) != 0)
		return -EIO;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, sha256_md, NULL) != 1 ||
	    EVP_DigestUpdate(ctx, data, len) != 1 ||
	    EVP_DigestFinal_ex(ctx, out, &n) != 1 || n != PB_SHA256_LEN)
		goto out;
	err = 0;
out:
	EVP_MD_CTX_free(ctx);
	return err;
}

void pb_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 0xf];
	}
	out[2 * len] = '\0';
}
