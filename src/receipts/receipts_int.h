/* SPDX-License-Identifier: BSD-2-Clause */
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
	/* group commit (group.c): objects and entries are written without
	 * fsync; pb_store__group_sync makes them durable with one syncfs */
	bool group;
	bool group_dirty;		/* written since the last sync */
	char **group_paths;		/* objects written since the last sync */
	size_t n_group_paths, cap_group_paths;
};

/* group.c: remember an object written without fsync (its final path). */
int store__group_note(struct pb_store *s, const char *path);

/* ---- the size-tagged opts of include/probity/receipts.h ----
 * The one check, libbpf's OPTS_VALID: NULL opts are valid; otherwise sz
 * covers at least sz itself, and bytes past the struct this build knows
 * (a caller built against a newer header) are zero. Tail padding inside
 * the struct is not checked: callers initialize opts with designated
 * initializers, which do not zero padding. Fields are read only when sz
 * covers them. */
#define pb_offsetofend(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))

static inline bool pb_opts_valid(const void *opts, size_t sz, size_t known)
{
	const char *p = opts;
	size_t i;

	if (!opts)
		return true;
	if (sz < sizeof(size_t))
		return false;
	for (i = known; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

#define PB_OPTS_VALID(o, type) pb_opts_valid((o), (o) ? (o)->sz : 0, sizeof(struct type))
#define PB_OPTS_GET(o, type, f, def) \
	((o) && (o)->sz >= pb_offsetofend(struct type, f) ? (o)->f : (def))

/* ---- generation.c, record.c: one generation ---- */
struct gen_opts {		/* what begin() was told, owned copies */
	char *parent;		/* NULL: a root generation */
	char *source_build_id;	/* NULL: unknown */
	char *optimizer_name, *optimizer_version, *optimizer_build_id;
	char *provenance;	/* "recorded" / "unknown" */
};

struct pb_generation {
	struct pb_store *s;
	struct gen_opts opts;
	json_t *transforms;
	json_t *assumptions;
	char gen_id[PB_DIGEST_HEX_LEN];
	char receipt[PB_DIGEST_HEX_LEN];
	char native[PB_DIGEST_HEX_LEN];
	uint32_t prog_id;
	json_t *jit_ranges;
	bool captured;
	char *log_buf;
	struct { char hex[PB_DIGEST_HEX_LEN]; void *buf; size_t len; } *ev;
	size_t n_ev;
};

struct capture_in {
	int prog_fd;
	const void *submitted;		/* insns as submitted, or NULL */
	size_t submitted_len;
	const char *log;
	uint32_t log_level;
	const char *source;		/* "library", "observer" */
	uint64_t load_ns;		/* verifier + JIT time seen by the caller */
};

/* record.c: capture in->prog_fd, write artifacts + receipt, log 'loaded'
 * (or hand the entry to *loaded_out). */
int generation__capture_and_record(struct pb_generation *g, const struct capture_in *in,
				   json_t **loaded_out);

/* The verifier result digest: canonical {accepted, log_level,
 * verified_insns, log_normalized_digest} (written by generation.c,
 * recomputed by verify.c). */
int receipt__verifier_result_digest(bool accepted, int64_t log_level, int64_t verified_insns,
				    const char *log_normalized_digest, char hex[PB_DIGEST_HEX_LEN]);

/* ---- lifelog.c ---- */
void lifelog__close(struct pb_store *s);

#endif
