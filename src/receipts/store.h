/* SPDX-License-Identifier: BSD-2-Clause */
/* store.h: the object store of a receipt store beyond the public
 * pb_store__* API of include/probity/receipts.h: JSON objects, batches,
 * walking the objects, garbage collection.
 */
#ifndef PROBITY_RECEIPTS_STORE_H
#define PROBITY_RECEIPTS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "probity/receipts.h"

/* Batch puts: objects are written to tmp/ first; commit fsyncs them all,
 * renames them all into objects/, then fsyncs their directories. Same
 * guarantee as single puts (no object is visible before its bytes are
 * durable, a crash before the renames leaves none of the batch), and no
 * object of a receipt appears long before the others. abort unlinks the
 * temporaries. */
void store__batch_begin(struct pb_store *s);
int store__batch_commit(struct pb_store *s);
void store__batch_abort(struct pb_store *s);
/* Object path into buf ("DIR/objects/ab/cdef..."). */
void store__object_path(const struct pb_store *s, const char *hex, char *buf, size_t sz);
bool store__has(struct pb_store *s, const char *hex);
/* Canonical JSON object: encode, put. */
int store__put_json(struct pb_store *s, const json_t *j, char hex[PB_DIGEST_HEX_LEN]);
int store__get_json(struct pb_store *s, const char *hex, json_t **out);
/* Call fn for each object file (hex name) in the store. */
int store__for_each_object(struct pb_store *s, int (*fn)(const char *hex, const char *path, void *ctx),
			   void *ctx);
/* Call fn for each leftover of an interrupted write in DIR/tmp/ (name
 * without "tmp/"). A store without tmp/ has none. */
int store__for_each_tmp(struct pb_store *s, int (*fn)(const char *name, const char *path, void *ctx),
			void *ctx);
/* gc.c: remove objects no lifecycle entry reaches, and interrupted
 * writes in tmp/, when older than min_age seconds. Holds the log's lock
 * meanwhile; refuses (-EBADMSG, failed = STORE_GC_LOG) on a damaged log.
 * -errno with failed = STORE_GC_LOCK when the lock cannot be taken. */
struct store_gc_opts {
	long min_age;		/* seconds */
	bool dry_run;		/* report, remove nothing */
};

enum store_gc_failure {
	STORE_GC_OK,
	STORE_GC_LOCK,		/* DIR/lifecycle.lock could not be locked */
	STORE_GC_LOG,		/* the log is unreadable or damaged */
};

struct store_gc_result {
	size_t reachable;		/* objects the log reaches */
	size_t removed, bytes_removed;	/* (or would remove, dry run) */
	size_t kept_young;		/* unreachable, younger than min_age */
	json_t *removed_objects;	/* array: hex names, "tmp/NAME" */
	enum store_gc_failure failed;
};
int store__gc(struct pb_store *s, const struct store_gc_opts *o, struct store_gc_result *r);
void store_gc_result__clear(struct store_gc_result *r);

/* Test hook: PROBITY_TEST_CRASH=store-before-rename makes store__put
 * SIGKILL itself after the temporary file is written and fsynced. */
#define PB_CRASH_ENV "PROBITY_TEST_CRASH"
/* Is PB_CRASH_ENV set to point? (the caller then raises SIGKILL) */
bool store__crash_hook(const char *point);

#endif
