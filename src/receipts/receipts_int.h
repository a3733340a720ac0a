/* receipts_int.h: private to src/receipts/: the layout of struct
 * pb_store, the lifecycle writer cache, and the one check of the public
 * size-tagged opts. Everything other folders need is in the public
 * headers included below (receipts/lifelog.h, receipt.h, store.h,
 * canon.h, capture.h, normalize.h, verify.h, schema.h).
 */
#ifndef PROBITY_RECEIPTS_INT_H
#define PROBITY_RECEIPTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "probity/receipts.h"
#include "common/clock.h"
#include "receipts/canon.h"
#include "receipts/capture.h"
#include "receipts/lifelog.h"
#include "receipts/normalize.h"
#include "receipts/receipt.h"
#include "receipts/schema.h"
#include "receipts/store.h"
#include "receipts/verify.h"

/* ---- store.c ---- */
struct store_pending {
	char *tmp;
	char hex[PB_DIGEST_HEX_LEN];
};

struct frame_writer;

struct pb_store {
	char *dir;
	int dir_fd;
	bool batch;			/* between batch_begin and commit/abort */
	struct store_pending *pend;
	size_t n_pend, cap_pend;
	/* lifecycle log writer kept open between appends (lifelog.c): valid
	 * while the file still ends where our last append left it */
	struct frame_writer *log_w;
	uint64_t log_end;
	unsigned long log_ino;
	char log_last[PB_DIGEST_HEX_LEN];
	long long log_seq;
	json_t *known_gens;		/* generation id -> receipt, loaded here */
};

/* ---- lifelog.c ---- */
void lifelog__close(struct pb_store *s);

#endif
