/* SPDX-License-Identifier: BSD-2-Clause */
/* export.h: receipts and the lifecycle log, signed for an auditor
 * (docs/receipts.md "Signed export"): DSSE envelopes over the stored
 * receipts (export.c), a signed checkpoint of the log head
 * (checkpoint.c), and a self-contained tar bundle with VERIFY.md
 * (bundle.c). Only the public store/log/receipt APIs are used.
 */
#ifndef PROBITY_RECEIPTS_EXPORT_H
#define PROBITY_RECEIPTS_EXPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "probity/receipts.h"
#include "receipts/dsse.h"

#define PB_CHECKPOINT_PREDICATE_TYPE "https://probity.dev/log-checkpoint/v1"

/* key names: export__select's array, the checkpoint predicate */
#define EXK_GENERATION		"generation_id"
#define EXK_RECEIPT		"receipt"
#define CPK_SCHEMA		"schema"
#define CPK_LOG_BYTES		"log_bytes"
#define CPK_ENTRIES		"entries"
#define CPK_HEAD_SEQ		"head_seq"
#define CPK_HEAD_HASH		"head_hash"
#define CPK_REALTIME_NS		"realtime_ns"
#define CPK_HOSTNAME		"hostname"

/* The generations to export: ids/prefixes/receipt digests, or all. */
struct export_sel {
	char *const *gens;
	size_t n_gens;
	bool all;		/* every generation with a receipt in the log */
};

/* Resolve sel to a JSON array of {"generation_id", "receipt"} (new
 * reference, log order, no duplicates). 0, -ENOENT/-ENOTUNIQ/-EINVAL (a
 * GEN; *bad names it), -EBADMSG (damaged log), -ENOMEM. */
int export__select(struct pb_store *s, const struct export_sel *sel, json_t **gens,
		   const char **bad);
/* One DSSE envelope (a line) per selected generation over the receipt's
 * stored bytes (payload sha256 = receipt digest). 0 or -errno. */
int export__envelopes(struct pb_store *s, const json_t *gens, struct dsse_signer *sg, FILE *out);

/* checkpoint.c: the log head, signed. Under a shared lock on the log
 * (writers wait), read the log, refuse a damaged one (-EBADMSG), and sign
 * an in-toto Statement (PB_CHECKPOINT_PREDICATE_TYPE) whose subject is
 * the log file's bytes. *envelope new reference; *statement (may be NULL)
 * the signed statement; *log_bytes (may be NULL) the exact log bytes it
 * covers (malloc'ed). -ENODATA: the log has no entry. */
int checkpoint__sign(struct pb_store *s, struct dsse_signer *sg, json_t **envelope,
		     json_t **statement, char **log_bytes, size_t *log_len);

/* bundle.c: a tar (libarchive) with envelopes.intoto.jsonl,
 * checkpoint.dsse.json, objects/ (receipts, artifacts, evidence),
 * normalized/ (the bytes each subject digest covers), lifecycle.log,
 * the public key and VERIFY.md. *n_files gets the member count. */
int bundle__write(struct pb_store *s, const json_t *gens, struct dsse_signer *sg,
		  const char *path, size_t *n_files);

#endif
