/* SPDX-License-Identifier: BSD-2-Clause */
/* checkpoint.c: sign the lifecycle log head (see export.h). The statement
 * names the log file's bytes by SHA-256 and the newest entry's hash: once
 * the envelope has left the machine, rewriting any entry up to that head
 * (even with fresh CRCs and a re-computed chain) changes the bytes an
 * auditor hashes, and cutting the tail off drops below log_bytes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "common/clock.h"
#include "common/io.h"
#include "receipts/canon.h"
#include "receipts/export.h"
#include "receipts/lifelog.h"

struct log_head {
	char *bytes;
	size_t len;
	long long entries;
	const char *head_hash;	/* borrowed from entries_json */
	json_t *entries_json;
};

/* Under LOCK_SH on the log's lock file: the bytes and the decoded entries
 * describe the same log (writers hold LOCK_EX to append). */
static int read_head(struct pb_store *s, struct log_head *h)
{
	char path[PATH_MAX];
	struct lifelog_entry le;
	json_error_t jerr;
	int lfd, n, err;

	snprintf(path, sizeof(path), "%s/%s", pb_store__dir(s), PB_LIFELOG_LOCK);
	lfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, LOCK_SH)) {
		err = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", pb_store__dir(s), PB_LIFELOG_NAME);
	err = pb_read_file(path, 0, &h->bytes, &h->len);
	if (err)
		goto out;
	n = lifelog__read(s, &h->entries_json, NULL);
	if (n != 0) {
		err = n < 0 ? n : -EBADMSG;
		goto out;
	}
	h->entries = (long long)json_array_size(h->entries_json);
	if (!h->entries) {
		err = -ENODATA;
		goto out;
	}
	err = lifelog_entry__decode(json_array_get(h->entries_json, h->entries - 1), &le, &jerr);
	if (!err && !le.hash)
		err = -EBADMSG;
	h->head_hash = le.hash;
out:
	close(lfd);
	return err;
}

int checkpoint__sign(struct pb_store *s, struct dsse_signer *sg, json_t **envelope,
		     json_t **statement, char **log_bytes, size_t *log_len)
{
	struct log_head h = { 0 };
	char digest[PB_DIGEST_HEX_LEN], host[256] = "";
	char *payload = NULL;
	size_t plen;
	json_t *st = NULL;
	int err;

	*envelope = NULL;
	if (statement)
		*statement = NULL;
	err = read_head(s, &h);
	if (!err)
		err = pb_sha256_hex(h.bytes, h.len, digest);
	if (err)
		goto out;
	gethostname(host, sizeof(host) - 1);
	st = json_pack("{s:s, s:[{s:s, s:{s:s}}], s:s, s:{s:s, s:I, s:I, s:I, s:s, s:I, s:s}}",
		       RK_TYPE, PB_INTOTO_STATEMENT_TYPE,
		       RK_SUBJECT, SUBJ_NAME, PB_LIFELOG_NAME, SUBJ_DIGEST, SUBJ_DIGEST_SHA256, digest,
		       RK_PREDICATE_TYPE, PB_CHECKPOINT_PREDICATE_TYPE,
		       RK_PREDICATE, CPK_SCHEMA, "probity.log-checkpoint/v1",
		       CPK_LOG_BYTES, (json_int_t)h.len, CPK_ENTRIES, (json_int_t)h.entries,
		       CPK_HEAD_SEQ, (json_int_t)(h.entries - 1), CPK_HEAD_HASH, h.head_hash,
		       CPK_REALTIME_NS, (json_int_t)pb_realtime_ns(), CPK_HOSTNAME, host);
	if (!st) {
		err = -ENOMEM;
		goto out;
	}
	err = canon__encode(st, &payload, &plen);
	if (err)
		goto out;
	*envelope = dsse__envelope(sg, DSSE_PAYLOAD_TYPE_INTOTO, payload, plen);
	if (!*envelope)
		err = -errno;
	else if (statement)
		*statement = json_incref(st);
	if (*envelope && log_bytes) {
		*log_bytes = h.bytes;
		*log_len = h.len;
		h.bytes = NULL;
	}
out:
	free(payload);
	free(h.bytes);
	json_decref(h.entries_json);
	json_decref(st);
	return err;
}
