/* SPDX-License-Identifier: BSD-2-Clause */
/* rebind.h: a manifest re-bound to another build of its target
 * (`probity manifest rebind`, docs/manifest.md "Rebind and promotion").
 *
 * Every site is re-resolved by name on the new build with the checks of
 * `plan --rebind` (plan.h); when the manifest's own build is still on disk
 * (the target's `binary` with the manifest's build-id), each USDT probe's
 * argument shape (count and sizes) is compared between the two builds. A
 * site that vanished or changed shape is a refusal naming the event. The
 * new file is the old text with only the build_id, confidence and
 * provenance values edited (at libyaml's positions: every semantic field
 * and comment keeps its bytes), checked by re-parsing it: the model must
 * be the same but for those fields.
 *
 * Confidence comes from evidence: a descriptor promoted by a trace of the
 * new build (validate/revalidate.h turns a trace into struct
 * rebind_evidence) is `validated` with provenance `runtime` (events,
 * windows, date); without evidence it is `candidate`; a descriptor the
 * trace found suspect is written `suspect`; one it found stale is refused.
 */
#ifndef PROBITY_REBIND_H
#define PROBITY_REBIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "contract/manifest.h"
#include "common/diag.h"

#define REBIND_TEXT_MAX	192

/* What a trace of the new build says about one event. */
struct rebind_evidence {
	bool judged;			/* the trace had the descriptor */
	enum pb_confidence initial;	/* at the start of the trace */
	enum pb_confidence state;	/* at its end */
	uint32_t windows;		/* the clean run that promoted it */
	uint64_t events;		/* events in that run */
	uint64_t checked;		/* predictions checked in it (none failed) */
	uint64_t total_events;		/* over the whole trace */
	char reason[REBIND_TEXT_MAX];	/* the last change's reason, "" none */
};

/* A trace's evidence for every event of the manifest. */
struct rebind_trace {
	const char *name;		/* as the user gave it (for provenance) */
	char date[11];			/* YYYY-MM-DD (UTC) the trace started */
	uint8_t manifest_sha256[32];	/* the manifest it recorded */
	size_t n_targets;
	char build_ids[8][2 * PB_BUILD_ID_MAX + 1];	/* per manifest target, hex */
	size_t n_events;
	struct rebind_evidence *events;	/* per manifest event */
};

struct rebind_opts {
	const char **binaries;		/* "PATH" or "ID=PATH", as plan --binary */
	size_t n_binaries;
	const struct rebind_trace *trace;	/* NULL: no runtime evidence */
	const char *date;		/* YYYY-MM-DD for provenance without a trace;
					 * NULL: today (UTC) */
};

enum rebind_event_status {
	REBIND_EV_OK = 0,
	REBIND_EV_REFUSED,
};

struct rebind_event {
	const char *id;			/* borrowed from the manifest */
	enum rebind_event_status status;
	enum pb_confidence confidence;	/* written */
	bool rebound;			/* its target's build-id changed */
	bool shape_checked;		/* USDT: compared with the old build */
	char shape[REBIND_TEXT_MAX];	/* e.g. "usdt args 2 (8,4) on both builds" */
	char *reason;			/* why refused, or a note; NULL none */
};

struct rebind_result {
	struct manifest *manifest;	/* the input, parsed */
	char *text;			/* the new manifest (NUL-terminated) */
	size_t len;
	size_t n_targets;
	char (*old_ids)[2 * PB_BUILD_ID_MAX + 1];
	char (*new_ids)[2 * PB_BUILD_ID_MAX + 1];
	struct rebind_event *events;	/* per manifest event */
	size_t n_events;
	size_t n_refused, n_validated, n_candidate, n_suspect;
	size_t n_shape_checked, n_shape_unchecked;	/* USDT events */
	bool from_trace;
};

/* Re-bind the manifest at path. 0: res->text is the new file; -EPERM:
 * some event was refused (res says which and why; no text); -EINVAL: the
 * manifest, the binary or the trace cannot be used (why in diags); other
 * -errno. *out is set for 0 and -EPERM. */
int manifest_rebind__build(const char *path, const struct rebind_opts *o,
			   struct rebind_result **out, struct diags *diags);
void rebind_result__free(struct rebind_result *r);
/* Write res->text to path atomically (temp file, fsync, rename). */
int rebind_result__write(const struct rebind_result *r, const char *path);
json_t *rebind_result__to_json(const struct rebind_result *r);
void rebind_result__print(const struct rebind_result *r, FILE *out);

#endif
