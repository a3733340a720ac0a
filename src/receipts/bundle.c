/* SPDX-License-Identifier: BSD-2-Clause */
/* bundle.c: the auditor's bundle, a tar written with libarchive (see
 * export.h; what is inside and how to check it: VERIFY.md, bundle_verify.c).
 * The normalized bytes of each receipt subject are recomputed from the raw
 * artifacts here and must hash to the subject's digest, or the bundle is
 * refused (-EBADMSG): a bundle that would not verify is never written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <archive.h>
#include <archive_entry.h>
#include "common/log.h"
#include "receipts/bundle_int.h"
#include "receipts/canon.h"
#include "receipts/export.h"
#include "receipts/normalize.h"
#include "receipts/receipt.h"

struct bundle {
	struct archive *a;
	struct pb_store *s;
	json_t *seen;		/* member name -> true */
	FILE *sums;		/* SHA256SUMS, in memory */
	char *sums_buf;
	size_t sums_len, n_files;
	time_t now;
};

static int member(struct bundle *b, const char *name, const void *buf, size_t len)
{
	struct archive_entry *e;
	int ret = 0;

	if (json_object_get(b->seen, name))
		return 0;
	e = archive_entry_new();
	if (!e)
		return -ENOMEM;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, b->now, 0);
	if (archive_write_header(b->a, e) != ARCHIVE_OK ||
	    (len && archive_write_data(b->a, buf, len) != (la_ssize_t)len)) {
		pr_warn("bundle: %s: %s\n", name, archive_error_string(b->a));
		ret = -EIO;
	}
	archive_entry_free(e);
	if (!ret && json_object_set_new(b->seen, name, json_true()))
		ret = -ENOMEM;
	b->n_files += !ret;
	return ret;
}

/* DIR/HEX whose bytes must hash to HEX; listed in SHA256SUMS. */
static int hashed_member(struct bundle *b, const char *dir, const char *hex, const void *buf,
			 size_t len)
{
	char got[PB_DIGEST_HEX_LEN], name[128];
	int err = pb_sha256_hex(buf, len, got);

	if (err)
		return err;
	if (strcmp(got, hex)) {
		pr_warn("bundle: %s/%s: the bytes hash to %s; run 'probity receipts verify'\n", dir, hex, got);
		return -EBADMSG;
	}
	snprintf(name, sizeof(name), "%s/%s", dir, hex);
	if (json_object_get(b->seen, name))
		return 0;
	fprintf(b->sums, "%s  %s\n", hex, name);
	return member(b, name, buf, len);
}

static int object(struct bundle *b, const char *hex)
{
	void *buf;
	size_t len;
	int err;

	if (!hex)
		return 0;
	err = pb_store__get(b->s, hex, &buf, &len);
	if (err) {
		pr_warn("bundle: object %s: %s\n", hex, strerror(-err));
		return err;
	}
	err = hashed_member(b, "objects", hex, buf, len);
	free(buf);
	return err;
}

/* The bytes a subject digest covers, from the raw artifact. */
static int normalized(struct bundle *b, const struct receipt_view *rv, const struct receipt_subject *sj)
{
	const char *raw = !strcmp(sj->name, "bpf/submitted-insns") ? rv->artifacts.submitted_insns :
			  !strcmp(sj->name, "bpf/xlated-insns") ? rv->artifacts.xlated_insns :
			  !strcmp(sj->name, "jit/native-image") ? rv->artifacts.jit_image : NULL;
	uint32_t *fl = NULL, nr = 0;
	uint8_t *buf = NULL;
	size_t len, i;
	json_t *v;
	int err;

	if (!raw) {
		pr_warn("bundle: subject %s: no artifact holds its bytes\n", sj->name);
		return -EBADMSG;
	}
	err = pb_store__get(b->s, raw, (void **)&buf, &len);
	if (err)
		return err;
	if (!strcmp(sj->name, "bpf/xlated-insns")) {
		normalize__bpf_insns(buf, len);
	} else if (!strcmp(sj->name, "jit/native-image") && json_is_array(rv->jit.func_lens)) {
		nr = (uint32_t)json_array_size(rv->jit.func_lens);
		fl = calloc(nr + 1, sizeof(*fl));
		if (!fl) {
			err = -ENOMEM;
			goto out;
		}
		json_array_foreach(rv->jit.func_lens, i, v)
			fl[i] = (uint32_t)json_integer_value(v);
		normalize__jit_image(buf, len, fl, nr);
	}
	err = hashed_member(b, "normalized", sj->sha256, buf, len);
out:
	free(fl);
	free(buf);
	return err;
}

static int steps(struct bundle *b, const json_t *arr)
{
	struct receipt_step st;
	json_error_t jerr;
	json_t *e;
	size_t i;
	int err = 0;

	json_array_foreach(arr, i, e) {
		if (receipt_step__decode(e, &st, &jerr))
			return -EBADMSG;
		err = object(b, st.evidence);
		if (err)
			return err;
	}
	return 0;
}

/* A receipt, its artifacts, its evidence and its subjects' bytes. */
static int receipt(struct bundle *b, const char *hex)
{
	struct receipt_subject sj;
	struct receipt_view rv;
	json_t *stmt = NULL, *e;
	json_error_t jerr;
	const char *k;
	size_t i;
	int err;

	err = object(b, hex);
	if (!err)
		err = pb_store__get(b->s, hex, (void **)&k, &i) ? -EIO : 0;
	if (err)
		return err;
	stmt = json_loadb(k, i, 0, &jerr);
	free((void *)k);
	if (!stmt || receipt__decode(stmt, &rv, &jerr)) {
		pr_warn("bundle: receipt %s: %s\n", hex, jerr.text);
		err = -EBADMSG;
		goto out;
	}
	json_object_foreach((json_t *)rv.artifacts.all, k, e)
		if ((err = object(b, json_string_value(e))))
			goto out;
	if ((err = steps(b, rv.generation.transforms)) || (err = steps(b, rv.generation.assumptions)))
		goto out;
	json_array_foreach(rv.subjects, i, e) {
		if (receipt_subject__decode(e, &sj, &jerr)) {
			err = -EBADMSG;
			goto out;
		}
		if ((err = normalized(b, &rv, &sj)))
			goto out;
	}
out:
	json_decref(stmt);
	return err;
}

/* VERIFY.md with the tokens of this key type filled in. */
static char *verify_md(enum dsse_scheme sc)
{
	const struct {
		const char *tok, *val;
	} reps[] = {
		{ "%TOOL%", sc == DSSE_SSHSIG ? "`ssh-keygen -Y verify` (OpenSSH)" : "`openssl` (OpenSSL 3)" },
		{ "%KEYFILE%", sc == DSSE_SSHSIG ? "key.pub`, `allowed_signers" : "key.pub.pem" },
		{ "%SIGCHECK%", sc == DSSE_SSHSIG ? bundle_sigcheck_ssh :
				sc == DSSE_ED25519 ? bundle_sigcheck_ed25519 : bundle_sigcheck_ecdsa },
	};
	char *out = NULL, *p;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);
	const char *t = bundle_verify_md;

	if (!f)
		return NULL;
	while ((p = strchr(t, '%'))) {
		for (i = 0; i < sizeof(reps) / sizeof(reps[0]); i++)
			if (!strncmp(p, reps[i].tok, strlen(reps[i].tok)))
				break;
		fwrite(t, 1, (size_t)(p - t), f);
		if (i < sizeof(reps) / sizeof(reps[0])) {
			fputs(reps[i].val, f);
			t = p + strlen(reps[i].tok);
		} else {
			fputc('%', f);
			t = p + 1;
		}
	}
	fputs(t, f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

static int key_members(struct bundle *b, struct dsse_signer *sg)
{
	const char *pub = dsse_signer__public_key(sg);
	char *line = NULL;
	int n, err;

	if (dsse_signer__scheme(sg) != DSSE_SSHSIG)
		return member(b, "key.pub.pem", pub, strlen(pub));
	n = asprintf(&line, "probity namespaces=\"%s\" %s\n", DSSE_SSH_NAMESPACE, pub);
	if (n < 0)
		return -ENOMEM;
	err = member(b, "allowed_signers", line, (size_t)n);
	free(line);
	if (!err)
		err = member(b, "key.pub", pub, strlen(pub));
	return err;
}

/* Envelopes, checkpoint, log, key, VERIFY.md: everything but the objects. */
static int top_members(struct bundle *b, const json_t *gens, struct dsse_signer *sg)
{
	char *envs = NULL, *cp_text = NULL, *log = NULL, *md = NULL;
	size_t envs_len = 0, log_len = 0;
	json_t *cp = NULL;
	FILE *f;
	int err;

	f = open_memstream(&envs, &envs_len);
	if (!f)
		return -errno;
	err = export__envelopes(b->s, gens, sg, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err)
		err = checkpoint__sign(b->s, sg, &cp, NULL, &log, &log_len);
	if (err)
		goto out;
	cp_text = json_dumps(cp, JSON_COMPACT | JSON_SORT_KEYS);
	md = verify_md(dsse_signer__scheme(sg));
	if (!cp_text || !md) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = member(b, "VERIFY.md", md, strlen(md))) ||
	    (err = member(b, "envelopes.intoto.jsonl", envs, envs_len)) ||
	    (err = member(b, "checkpoint.dsse.json", cp_text, strlen(cp_text))) ||
	    (err = member(b, "lifecycle.log", log, log_len)))
		goto out;
	err = key_members(b, sg);
out:
	free(envs);
	free(cp_text);
	free(log);
	free(md);
	json_decref(cp);
	return err;
}

int bundle__write(struct pb_store *s, const json_t *gens, struct dsse_signer *sg,
		  const char *path, size_t *n_files)
{
	struct bundle b = { .s = s, .now = time(NULL) };
	char tmp[4096];
	const char *receipt_hex;
	json_t *e;
	size_t i;
	int err;

	*n_files = 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	b.seen = json_object();
	b.sums = open_memstream(&b.sums_buf, &b.sums_len);
	b.a = archive_write_new();
	if (!b.seen || !b.sums || !b.a) {
		err = -ENOMEM;
		goto out;
	}
	if (archive_write_set_format_pax_restricted(b.a) != ARCHIVE_OK ||
	    archive_write_open_filename(b.a, tmp) != ARCHIVE_OK) {
		pr_warn("bundle: %s: %s\n", tmp, archive_error_string(b.a));
		err = -EIO;
		goto out;
	}
	err = top_members(&b, gens, sg);
	json_array_foreach(gens, i, e) {
		if (err || json_unpack(e, "{s:s}", EXK_RECEIPT, &receipt_hex))
			break;
		err = receipt(&b, receipt_hex);
	}
	if (!err && fflush(b.sums))
		err = -ENOMEM;
	if (!err)
		err = member(&b, "SHA256SUMS", b.sums_buf, b.sums_len);
	if (archive_write_close(b.a) != ARCHIVE_OK && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	*n_files = b.n_files;
out:
	if (err)
		unlink(tmp);
	if (b.a)
		archive_write_free(b.a);
	if (b.sums)
		fclose(b.sums);
	free(b.sums_buf);
	json_decref(b.seen);
	return err;
}
