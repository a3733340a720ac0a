/* SPDX-License-Identifier: BSD-2-Clause */
/* plan_int.h: what plan.c and plan_targets.c share (private to
 * src/contract/plan*.c; the public API is plan.h). */
#ifndef PROBITY_PLAN_INT_H
#define PROBITY_PLAN_INT_H

#include "contract/plan.h"
#include "common/diag.h"
#include "elf/elf_image.h"

struct plan_ctx {
	const struct manifest *m;
	const struct plan_opts *opts;
	struct plan *p;
	struct elf_image **images;	/* per plan target, NULL when unusable */
	struct proc_mapping *maps;
	int n_maps;
	size_t *n_dynsym;		/* per target: sites found only in .dynsym */
	size_t cap_sites;
};

/* A positioned note in plan->notes. */
void plan_ctx__note(struct plan_ctx *c, enum diag_severity sev, struct pb_loc loc,
		    const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Resolve every target to a file (--binary override, the process' mapping
 * with the expected build-id, the manifest's path, the library
 * directories), open it and check its build-id; c->images gets the usable
 * ones. Problems are notes; 0 or -errno (-ENOMEM). */
int plan_ctx__resolve_targets(struct plan_ctx *c);

#endif
