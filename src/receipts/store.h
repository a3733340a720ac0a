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
/* Test hook: PROBITY_TEST_CRASH=store-before-rename makes store__put
 * SIGKILL itself after the temporary file is written and fsynced. */
#define PB_CRASH_ENV "PROBITY_TEST_CRASH"

#endif
