/* SPDX-License-Identifier: BSD-2-Clause */
/* dsse.c: DSSE envelopes and their signers (see dsse.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "common/digest.h"
#include "common/io.h"
#include "receipts/dsse.h"

#define SSH_PRIV_MARK "-----BEGIN OPENSSH PRIVATE KEY-----"

struct dsse_signer {
	enum dsse_scheme scheme;
	EVP_PKEY *pkey;		/* PEM keys */
	char *path;		/* SSH keys: the private key file */
	char *pub;		/* PEM or one OpenSSH line */
	char keyid[7 + PB_DIGEST_HEX_LEN];
};

const char *dsse_scheme_str(enum dsse_scheme s)
{
	switch (s) {
	case DSSE_ED25519: return "ed25519";
	case DSSE_ECDSA_P256: return "ecdsa-p256-sha256";
	case DSSE_SSHSIG: return "sshsig";
	}
	return "unknown";
}

char *dsse__base64(const void *buf, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1);

	if (out)
		EVP_EncodeBlock((unsigned char *)out, buf, (int)len);
	return out;
}

static void set_keyid(struct dsse_signer *s, const void *blob, size_t len)
{
	uint8_t d[PB_SHA256_LEN];

	strcpy(s->keyid, "sha256:");
	if (pb_sha256(blob, len, d) == 0)
		pb_hex(d, sizeof(d), s->keyid + 7);
}

/* Run argv with stdout to out_path (may be NULL: /dev/null); 0 or -errno. */
static int run_tool(char *const argv[], const char *out_path)
{
	int st, fd;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		fd = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 1);
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0)
			dup2(fd, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st))
		return -EINTR;
	return WEXITSTATUS(st) == 127 ? -ENOENT : WEXITSTATUS(st) ? -EPERM : 0;
}

int dsse__ssh_keyid(const char *line, char keyid[7 + PB_DIGEST_HEX_LEN])
{
	const char *sp = strchr(line, ' ');
	unsigned char *blob;
	uint8_t d[PB_SHA256_LEN];
	char *b64;
	int n;

	if (!sp || sp == line)
		return -EINVAL;
	b64 = strndup(sp + 1, strcspn(sp + 1, " \n"));
	blob = b64 ? malloc(strlen(b64) + 1) : NULL;
	if (!blob) {
		free(b64);
		return -ENOMEM;
	}
	/* EVP_DecodeBlock counts padding as zero bytes: a key blob is never
	 * empty, and a length not a multiple of 4 is not base64 */
	n = strlen(b64) % 4 ? -1 : EVP_DecodeBlock(blob, (unsigned char *)b64, (int)strlen(b64));
	if (n > 0 && pb_sha256(blob, (size_t)n, d) == 0) {
		strcpy(keyid, "sha256:");
		pb_hex(d, sizeof(d), keyid + 7);
	}
	free(blob);
	free(b64);
	return n > 0 ? 0 : -EINVAL;
}

/* The OpenSSH public key: PATH.pub, else `ssh-keygen -y -f PATH`. */
static int ssh_public(struct dsse_signer *s)
{
	char pubp[4096], tmp[] = "/tmp/probity-sshpub.XXXXXX";
	size_t len;
	int err, fd;

	snprintf(pubp, sizeof(pubp), "%s.pub", s->path);
	if (pb_read_file(pubp, 1 << 16, &s->pub, &len)) {
		char *argv[] = { "ssh-keygen", "-y", "-f", s->path, NULL };

		fd = mkstemp(tmp);
		if (fd < 0)
			return -errno;
		close(fd);
		err = run_tool(argv, tmp);
		if (!err)
			err = pb_read_file(tmp, 1 << 16, &s->pub, &len);
		unlink(tmp);
		if (err)
			return err;
	}
	s->pub[strcspn(s->pub, "\n")] = '\0';
	return dsse__ssh_keyid(s->pub, s->keyid);
}

/* Encrypted keys are refused, never prompted for (no terminal under a
 * daemon or a test). */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

/* PEM private key: Ed25519 or EC P-256. */
static int pem_key(struct dsse_signer *s, const char *text, size_t len, char *err, size_t err_sz)
{
	BIO *in = BIO_new_mem_buf(text, (int)len), *out = NULL;
	unsigned char *der = NULL;
	char group[64] = "";
	BUF_MEM *mem;
	int n, ret = -EINVAL;

	s->pkey = in ? PEM_read_bio_PrivateKey(in, NULL, no_passphrase, NULL) : NULL;
	if (!s->pkey) {
		snprintf(err, err_sz, "not a PEM private key OpenSSL can read (unencrypted PKCS#8 or SEC1)");
		goto out;
	}
	if (EVP_PKEY_get_id(s->pkey) == EVP_PKEY_ED25519) {
		s->scheme = DSSE_ED25519;
	} else if (EVP_PKEY_get_id(s->pkey) == EVP_PKEY_EC &&
		   EVP_PKEY_get_utf8_string_param(s->pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
						  sizeof(group), NULL) &&
		   !strcmp(group, "prime256v1")) {
		s->scheme = DSSE_ECDSA_P256;
	} else {
		snprintf(err, err_sz, "a %s key%s%s; expected Ed25519 or ECDSA P-256",
			 EVP_PKEY_get0_type_name(s->pkey), group[0] ? " on " : "", group);
		goto out;
	}
	out = BIO_new(BIO_s_mem());
	n = i2d_PUBKEY(s->pkey, &der);
	if (!out || n <= 0 || !PEM_write_bio_PUBKEY(out, s->pkey)) {
		ret = -ENOMEM;
		goto out;
	}
	set_keyid(s, der, (size_t)n);
	BIO_get_mem_ptr(out, &mem);
	s->pub = strndup(mem->data, mem->length);
	ret = s->pub ? 0 : -ENOMEM;
out:
	OPENSSL_free(der);
	BIO_free(in);
	BIO_free(out);
	return ret;
}

int dsse_signer__open(const char *path, struct dsse_signer **out, char *err, size_t err_sz)
{
	struct dsse_signer *s;
	char *text = NULL;
	size_t len;
	int ret;

	*out = NULL;
	err[0] = '\0';
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = pb_read_file(path, 1 << 20, &text, &len);
	if (ret) {
		snprintf(err, err_sz, "%s", strerror(-ret));
		goto out;
	}
	if (strstr(text, SSH_PRIV_MARK)) {
		s->scheme = DSSE_SSHSIG;
		s->path = strdup(path);
		ret = s->path ? ssh_public(s) : -ENOMEM;
		if (ret)
			snprintf(err, err_sz, "cannot derive the OpenSSH public key (%s.pub or ssh-keygen -y): %s",
				 path, strerror(-ret));
	} else {
		ret = pem_key(s, text, len, err, err_sz);
	}
out:
	free(text);
	if (ret)
		dsse_signer__free(s);
	else
		*out = s;
	return ret;
}

int dsse_signer__from_pem(const char *text, size_t len, struct dsse_signer **out, char *err,
			  size_t err_sz)
{
	struct dsse_signer *s;
	int ret;

	*out = NULL;
	err[0] = '\0';
	if (len > 1 << 20) {
		snprintf(err, err_sz, "larger than 1 MiB: not a key");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = pem_key(s, text, len, err, err_sz);
	if (ret)
		dsse_signer__free(s);
	else
		*out = s;
	return ret;
}

void dsse_signer__free(struct dsse_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->pkey);
	free(s->path);
	free(s->pub);
	free(s);
}

enum dsse_scheme dsse_signer__scheme(const struct dsse_signer *s) { return s->scheme; }
const char *dsse_signer__keyid(const struct dsse_signer *s) { return s->keyid; }
const char *dsse_signer__public_key(const struct dsse_signer *s) { return s->pub; }

int dsse__pae(const char *type, const void *body, size_t len, unsigned char **out, size_t *out_len)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "DSSEv1 %zu %s %zu ", strlen(type), type, len);

	if (n < 0 || (size_t)n >= sizeof(head))
		return -EINVAL;
	*out = malloc((size_t)n + len + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, head, (size_t)n);
	memcpy(*out + n, body, len);
	*out_len = (size_t)n + len;
	return 0;
}

static int sign_ssh(struct dsse_signer *s, const void *msg, size_t len, unsigned char **sig,
		    size_t *sig_len)
{
	char dir[] = "/tmp/probity-sshsig.XXXXXX", msgp[64], sigp[64];
	char *argv[] = { "ssh-keygen", "-q", "-Y", "sign", "-f", s->path, "-n", DSSE_SSH_NAMESPACE,
			 msgp, NULL };
	int fd, err;

	if (!mkdtemp(dir))
		return -errno;
	snprintf(msgp, sizeof(msgp), "%s/m", dir);
	snprintf(sigp, sizeof(sigp), "%s/m.sig", dir);
	fd = open(msgp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	err = fd < 0 ? -errno : pb_write_all(fd, msg, len);
	if (fd >= 0)
		close(fd);
	if (!err)
		err = run_tool(argv, NULL);
	if (!err)
		err = pb_read_file(sigp, 1 << 16, (char **)sig, sig_len);
	unlink(sigp);
	unlink(msgp);
	rmdir(dir);
	return err;
}

int dsse_signer__sign(struct dsse_signer *s, const void *msg, size_t len,
		      unsigned char **sig, size_t *sig_len)
{
	EVP_MD_CTX *ctx;
	size_t n = 0;
	int ret = -EIO;

	*sig = NULL;
	if (s->scheme == DSSE_SSHSIG)
		return sign_ssh(s, msg, len, sig, sig_len);
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestSignInit(ctx, NULL, s->scheme == DSSE_ED25519 ? NULL : EVP_sha256(), NULL,
			       s->pkey) != 1 ||
	    EVP_DigestSign(ctx, NULL, &n, msg, len) != 1)
		goto out;
	*sig = malloc(n);
	if (!*sig) {
		ret = -ENOMEM;
		goto out;
	}
	if (EVP_DigestSign(ctx, *sig, &n, msg, len) != 1) {
		free(*sig);
		*sig = NULL;
		goto out;
	}
	*sig_len = n;
	ret = 0;
out:
	EVP_MD_CTX_free(ctx);
	return ret;
}

json_t *dsse__envelope(struct dsse_signer *s, const char *payload_type, const void *payload,
		       size_t len)
{
	unsigned char *pae = NULL, *sig = NULL;
	char *b64p = NULL, *b64s = NULL;
	size_t pae_len, sig_len;
	json_t *env = NULL;
	int err;

	err = dsse__pae(payload_type, payload, len, &pae, &pae_len);
	if (!err)
		err = dsse_signer__sign(s, pae, pae_len, &sig, &sig_len);
	if (err)
		goto out;
	b64p = dsse__base64(payload, len);
	b64s = dsse__base64(sig, sig_len);
	if (b64p && b64s)
		env = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payloadType", payload_type, "payload", b64p,
				"signatures", "keyid", s->keyid, "sig", b64s);
	err = env ? 0 : -ENOMEM;
out:
	free(pae);
	free(sig);
	free(b64p);
	free(b64s);
	if (err)
		errno = -err;
	return env;
}
