/* SPDX-License-Identifier: BSD-2-Clause */
/* verify.h: recompute every digest of a receipt store and its lifecycle
 * log and name what is missing or altered (see verify.c).
 */
#ifndef PROBITY_RECEIPTS_VERIFY_H
#define PROBITY_RECEIPTS_VERIFY_H

#include <stddef.h>
#include <jansson.h>
#include "receipts/schema.h"

struct pb_store;

struct verify_result {
	json_t *problems;	/* array of {"where","what"} */
	json_t *notes;		/* array of {"where","what"} (not failures) */
	size_t n_objects, n_receipts, n_entries;
};
int verify__store(struct pb_store *s, struct verify_result *r);
void verify_result__clear(struct verify_result *r);

/* One element of problems[] or notes[]; strings borrowed from j
 * (lifelog.h's decoder contract). */
struct verify_finding {
	const char *where;
	const char *what;
};
int verify_finding__decode(const json_t *j, struct verify_finding *out, json_error_t *err);

#endif
