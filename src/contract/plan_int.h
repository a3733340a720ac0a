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
	struct elf_image **old_images;	/* per target: the manifest's own build
					 * (plan_ctx__old_build), NULL if absent */
	bool *old_tried;		/* per target: looked for it already */
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

/* The manifest's own build of target ti (its `binary`, absolute or
 * relative to the manifest, with the manifest's build-id), opened once
 * and owned by c; NULL when it is not on disk (a re-bind can then not
 * compare code with it). */
struct elf_image *plan_ctx__old_build(struct plan_ctx *c, int ti);

#endif
