/* SPDX-License-Identifier: BSD-2-Clause */
/* lineage.h: the history of one generation as `receipts show` tells it:
 * its ancestors through the receipts' parent links, and its activation
 * intervals from the lifecycle log.
 */
#ifndef PROBITY_RECEIPTS_LINEAGE_H
#define PROBITY_RECEIPTS_LINEAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "receipts/lifelog.h"

struct pb_store;

enum lineage_kind {
	LINEAGE_SELF,		/* the generation asked about */
	LINEAGE_ANCESTOR,	/* an ancestor with its receipt in the store */
	LINEAGE_MISSING,	/* an ancestor whose receipt is not here (the walk stops) */
};

struct lineage_item {
	enum lineage_kind kind;
	char *generation_id;
	char *receipt;		/* LINEAGE_ANCESTOR only */
};

struct lineage {
	struct lineage_item *items;	/* root first, the generation last */
	size_t n;
};

/* Walk the parents of the receipt stmt (a receipt statement). */
int lineage__build(struct pb_store *s, const json_t *stmt, struct lineage *out);
/* [{generation_id, receipt}], receipt null for a missing ancestor and
 * absent for the generation itself. */
json_t *lineage__to_json(const struct lineage *l);
void lineage__clear(struct lineage *l);

/* One activation interval of a generation: from an 'activated' entry
 * (the swapper's record) or an observed 'link-updated' installing it, to
 * the next 'retired'/'unloaded' of it or observed update replacing it,
 * or still open. Start and end carry the boundary's uncertainty. */
struct activation_interval {
	bool observed;			/* from the observer's link update */
	const json_t *link_json;	/* swapper: the entry's link (borrowed), or NULL */
	bool has_link;			/* link below is known */
	struct lifelog_link link;
	const json_t *jit_ranges;	/* swapper: borrowed from the entry, or NULL */
	uint32_t prog_id;
	int64_t start_mono_ns, start_mono_ns_latest;
	int64_t start_realtime_ns, start_realtime_ns_latest;
	bool ended;
	int64_t end_mono_ns, end_realtime_ns;
	const char *end_reason;		/* borrowed from an entry or static */
};

struct activation_intervals {
	struct activation_interval *iv;
	size_t n;
};

/* The intervals of generation gen in entries (lifelog__read's array,
 * which must outlive out). */
int activation_intervals__build(const json_t *entries, const char *gen,
				 struct activation_intervals *out);
json_t *activation_intervals__to_json(const struct activation_intervals *a);
void activation_intervals__clear(struct activation_intervals *a);

#endif
