/* SPDX-License-Identifier: BSD-2-Clause */
/* test_dsse.c: src/receipts/dsse.c without a store: the PAE of the DSSE
 * spec's example, base64, an Ed25519 and a P-256 envelope whose signature
 * OpenSSL verifies over the PAE (and not over a changed payload), keys of
 * other types refused with their type named, OpenSSH public key lines.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "harness.h"
#include "receipts/dsse.h"

/* A fresh PEM private key of the given algorithm (NULL on failure). */
static char *gen_pem(const char *alg, const char *curve)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL);
	EVP_PKEY *k = NULL;
	BIO *b = BIO_new(BIO_s_mem());
	char *out = NULL;
	BUF_MEM *mem;

	if (ctx && b && EVP_PKEY_keygen_init(ctx) == 1 &&
	    (!curve || EVP_PKEY_CTX_set_group_name(ctx, curve) == 1) &&
	    (strcmp(alg, "RSA") || EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 1024) == 1) &&
	    EVP_PKEY_generate(ctx, &k) == 1 && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL)) {
		BIO_get_mem_ptr(b, &mem);
		out = strndup(mem->data, mem->length);
	}
	EVP_PKEY_free(k);
	EVP_PKEY_CTX_free(ctx);
	BIO_free(b);
	return out;
}

/* Verify sig over msg with the signer's PEM public key: 1 ok, 0 bad. */
static int verify(const struct dsse_signer *s, const void *msg, size_t len, const void *sig,
		  size_t sig_len)
{
	const char *pub = dsse_signer__public_key(s);
	BIO *b = BIO_new_mem_buf(pub, (int)strlen(pub));
	EVP_PKEY *k = b ? PEM_read_bio_PUBKEY(b, NULL, NULL, NULL) : NULL;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = 0;

	if (k && ctx && EVP_DigestVerifyInit(ctx, NULL, dsse_signer__scheme(s) == DSSE_ED25519 ?
					     NULL : EVP_sha256(), NULL, k) == 1)
		ok = EVP_DigestVerify(ctx, sig, sig_len, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	BIO_free(b);
	return ok;
}

TEST(test_pae_and_base64)
{
	unsigned char *pae = NULL;
	size_t len = 0;
	char *b;

	/* the example of the DSSE protocol document */
	ASSERT_OK(dsse__pae("http://example.com/HelloWorld", "hello world", 11, &pae, &len));
	ASSERT_EQ(len, strlen("DSSEv1 29 http://example.com/HelloWorld 11 hello world"));
	ASSERT_TRUE(!memcmp(pae, "DSSEv1 29 http://example.com/HelloWorld 11 hello world", len));
	free(pae);
	ASSERT_OK(dsse__pae("t", "", 0, &pae, &len));
	ASSERT_TRUE(len == 13 && !memcmp(pae, "DSSEv1 1 t 0 ", 13));
	free(pae);
	b = dsse__base64("hello", 5);
	ASSERT_STREQ(b, "aGVsbG8=");
	free(b);
	b = dsse__base64("", 0);
	ASSERT_STREQ(b, "");
	free(b);
}

static void envelope_roundtrip(const char *alg, const char *curve, enum dsse_scheme want)
{
	static const char payload[] = "{\"_type\":\"https://in-toto.io/Statement/v1\"}";
	struct dsse_signer *s = NULL;
	char *pem = gen_pem(alg, curve), err[256];
	unsigned char *pae = NULL, sig[512];
	const char *p64, *s64, *keyid;
	size_t pae_len, n;
	json_t *env;

	ASSERT_NOT_NULL(pem);
	ASSERT_OK(dsse_signer__from_pem(pem, strlen(pem), &s, err, sizeof(err)));
	ASSERT_EQ(dsse_signer__scheme(s), want);
	ASSERT_EQ(strlen(dsse_signer__keyid(s)), 7 + 64);
	env = dsse__envelope(s, DSSE_PAYLOAD_TYPE_INTOTO, payload, sizeof(payload) - 1);
	ASSERT_NOT_NULL(env);
	ASSERT_OK(json_unpack(env, "{s:s, s:[{s:s, s:s}]}", "payload", &p64, "signatures", "keyid",
			      &keyid, "sig", &s64));
	ASSERT_STREQ(keyid, dsse_signer__keyid(s));
	n = (size_t)EVP_DecodeBlock(sig, (const unsigned char *)s64, (int)strlen(s64));
	n -= s64[strlen(s64) - 1] == '=' ? (s64[strlen(s64) - 2] == '=' ? 2 : 1) : 0;
	ASSERT_OK(dsse__pae(DSSE_PAYLOAD_TYPE_INTOTO, payload, sizeof(payload) - 1, &pae, &pae_len));
	ASSERT_TRUE(verify(s, pae, pae_len, sig, n));
	pae[pae_len - 2] ^= 1;	/* the payload changed: no longer verifies */
	ASSERT_FALSE(verify(s, pae, pae_len, sig, n));
	free(pae);
	json_decref(env);
	dsse_signer__free(s);
	free(pem);
}

TEST(test_ed25519_envelope)
{
	envelope_roundtrip("ED25519", NULL, DSSE_ED25519);
}

TEST(test_p256_envelope)
{
	envelope_roundtrip("EC", "P-256", DSSE_ECDSA_P256);
}

TEST(test_other_keys_refused)
{
	struct dsse_signer *s = NULL;
	char err[256], *pem;

	pem = gen_pem("RSA", NULL);
	ASSERT_NOT_NULL(pem);
	ASSERT_ERR(dsse_signer__from_pem(pem, strlen(pem), &s, err, sizeof(err)), -EINVAL);
	ASSERT_STRSTR(err, "RSA");
	free(pem);
	pem = gen_pem("EC", "P-384");
	ASSERT_NOT_NULL(pem);
	ASSERT_ERR(dsse_signer__from_pem(pem, strlen(pem), &s, err, sizeof(err)), -EINVAL);
	ASSERT_STRSTR(err, "secp384r1");
	free(pem);
	ASSERT_ERR(dsse_signer__from_pem("not a key", 9, &s, err, sizeof(err)), -EINVAL);
	ASSERT_STRSTR(err, "not a PEM private key");
	ASSERT_NULL(s);
	ASSERT_ERR(dsse_signer__open("/nonexistent/key", &s, err, sizeof(err)), -ENOENT);
}

TEST(test_ssh_keyid)
{
	char a[7 + 65], b[7 + 65];

	ASSERT_OK(dsse__ssh_keyid("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDdM9pDYaxo2U9Znuv4aGvvGsh8k8HFgEkmpB0vkkGxH c", a));
	ASSERT_OK(dsse__ssh_keyid("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDdM9pDYaxo2U9Znuv4aGvvGsh8k8HFgEkmpB0vkkGxH", b));
	ASSERT_STREQ(a, b);	/* the comment is not part of the key */
	ASSERT_TRUE(!strncmp(a, "sha256:", 7));
	ASSERT_ERR(dsse__ssh_keyid("ssh-ed25519", a), -EINVAL);
	ASSERT_ERR(dsse__ssh_keyid("ssh-ed25519 not*b64", a), -EINVAL);
	ASSERT_ERR(dsse__ssh_keyid(" AAAA", a), -EINVAL);
}
