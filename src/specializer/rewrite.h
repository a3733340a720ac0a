/* SPDX-License-Identifier: BSD-2-Clause */
/* rewrite.h: one plan (an epoch's profile) turned into instructions:
 * generation 0's relocated instructions through the passes of
 * src/bpfrewrite/ (constant inlining, dead paths, guarded branches, the
 * planted slow transform), with the receipt steps (transforms and
 * assumptions, each with its JSON evidence) that say what was done.
 */
#ifndef PROBITY_SPECIALIZER_REWRITE_H
#define PROBITY_SPECIALIZER_REWRITE_H

#include <stdbool.h>
#include "bpfrewrite/bpfrewrite.h"
#include "specializer/state.h"

#define SP_MAX_RECEIPT_STEPS 24

/* A receipt step, added to the generation once it is loaded. */
struct sp_receipt_step {
	bool transform;		/* else an assumption */
	char id[64];
	char desc[256];
	char *evidence;		/* JSON, malloc'ed */
};

struct sp_receipt_steps {
	struct sp_receipt_step s[SP_MAX_RECEIPT_STEPS];
	int n;
};

/* Rewrite generation 0 by pl under configuration cfg into p (initialized
 * here; release it with rw_insns__release even on failure) and list the
 * steps in st. 0 or -errno (a "rewrite refused" progress line). */
int sp_rewrite(struct specializer *s, const struct spec_plan *pl, const struct lb_cfg *cfg,
	       struct rw_insns *p, struct sp_receipt_steps *st);
void sp_receipt_steps__release(struct sp_receipt_steps *st);

#endif
