/* SPDX-License-Identifier: BSD-2-Clause */
/* rebind_int.h: what rebind.c and rebind_edit.c share (private to
 * src/contract/rebind*.c; the public API is rebind.h). */
#ifndef PROBITY_REBIND_INT_H
#define PROBITY_REBIND_INT_H

#include <stddef.h>

/* A new provenance for one event; source NULL = leave it as it is. */
struct rebind_prov_text {
	const char *source;
	const char *evidence;
	const char *date;
};

/* What to change in the manifest text. Arrays are per target / event of
 * the manifest, in file order; a NULL entry leaves that field alone. */
struct rebind_edit_req {
	size_t n_targets;
	const char *const *build_ids;		/* new hex build-id */
	size_t n_events;
	const char *const *confidence;		/* new confidence word */
	const struct rebind_prov_text *prov;	/* new provenance */
};

/* Apply req to the YAML text buf by editing it at the positions libyaml
 * reports (build_id, confidence and provenance values; a missing
 * confidence/provenance is inserted after the event's last field), never
 * re-serializing: every other byte, comments included, stays as it is.
 * 0 with *out (malloc'ed, NUL-terminated) and *out_len, -EINVAL with why
 * in err (a document shape it cannot edit), -ENOMEM. */
int rebind_edit__apply(const char *buf, size_t len, const struct rebind_edit_req *req,
		       char **out, size_t *out_len, char *err, size_t err_sz);

#endif
