/* SPDX-License-Identifier: BSD-2-Clause */
/* dsse.h: DSSE envelopes (github.com/secure-systems-lab/dsse, v1) and
 * the signers behind them, for handing receipts and log checkpoints to
 * an auditor who trusts only standard tools (docs/receipts.md "Signed
 * export").
 *
 * Keys: a PEM private key (Ed25519, or ECDSA P-256 signing SHA-256 with a
 * DER signature), used through OpenSSL EVP; or an OpenSSH private key,
 * used through `ssh-keygen -Y sign -n DSSE_SSH_NAMESPACE` (the signature
 * is the armored SSHSIG text). Every signature covers PAE(payloadType,
 * payload) = "DSSEv1 LEN(type) type LEN(body) body".
 */
#ifndef PROBITY_RECEIPTS_DSSE_H
#define PROBITY_RECEIPTS_DSSE_H

#include <stddef.h>
#include <jansson.h>

#define DSSE_PAYLOAD_TYPE_INTOTO	"application/vnd.in-toto+json"
#define DSSE_SSH_NAMESPACE		"probity-receipt@probity.dev"

enum dsse_scheme {
	DSSE_ED25519 = 1,
	DSSE_ECDSA_P256,	/* ECDSA over SHA-256, DER signature */
	DSSE_SSHSIG,		/* ssh-keygen -Y sign, armored SSHSIG */
};

struct dsse_signer;

/* Open the private key at path (type detected from its contents).
 * -ENOENT/-EACCES (unreadable), -EINVAL (not a supported key; err names
 * what was found), -ENOMEM. */
int dsse_signer__open(const char *path, struct dsse_signer **out, char *err, size_t err_sz);
/* A PEM private key from memory (no OpenSSH keys). Same errors. */
int dsse_signer__from_pem(const char *text, size_t len, struct dsse_signer **out, char *err,
			  size_t err_sz);
void dsse_signer__free(struct dsse_signer *s);
/* keyid of one OpenSSH public key line ("TYPE BASE64 [comment]"): 0, or
 * -EINVAL when the second field is not base64 of a non-empty blob. */
int dsse__ssh_keyid(const char *line, char keyid[7 + 65]);
enum dsse_scheme dsse_signer__scheme(const struct dsse_signer *s);
const char *dsse_scheme_str(enum dsse_scheme s);
/* keyid: "sha256:" + hex SHA-256 of the public key (DER SubjectPublicKeyInfo;
 * for SSH keys the key blob), as written into signatures[].keyid. */
const char *dsse_signer__keyid(const struct dsse_signer *s);
/* The public key as text: PEM SubjectPublicKeyInfo, or one OpenSSH
 * public key line ("ssh-ed25519 AAAA... comment"). Borrowed. */
const char *dsse_signer__public_key(const struct dsse_signer *s);

/* PAE(type, body), malloc'ed. 0 or -ENOMEM. */
int dsse__pae(const char *type, const void *body, size_t len, unsigned char **out, size_t *out_len);
/* Sign len bytes at msg (the PAE). *sig malloc'ed. 0 or -errno. */
int dsse_signer__sign(struct dsse_signer *s, const void *msg, size_t len,
		      unsigned char **sig, size_t *sig_len);
/* {"payloadType", "payload": base64, "signatures": [{"keyid", "sig": base64}]}
 * (new reference), or NULL with errno. */
json_t *dsse__envelope(struct dsse_signer *s, const char *payload_type, const void *payload,
		       size_t len);
/* Standard base64 (with padding), malloc'ed; NULL on ENOMEM. */
char *dsse__base64(const void *buf, size_t len);

#endif
