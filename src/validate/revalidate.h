/* SPDX-License-Identifier: BSD-2-Clause */
/* revalidate.h: runtime evidence for `probity manifest rebind
 * --from-trace` (docs/manifest.md, "Rebind and promotion").
 *
 * A trace recorded with `record --rebind` starts every re-bound
 * descriptor `degraded`; replaying its snapshots through the confidence
 * controller (confidence.h, with record's attach grace) tells which were
 * promoted to `validated` by clean evidence, which went suspect or stale,
 * and on how many events and windows. That becomes struct rebind_trace,
 * which contract/rebind.h turns into the new manifest's confidence and
 * provenance.
 */
#ifndef PROBITY_REVALIDATE_H
#define PROBITY_REVALIDATE_H

#include "common/diag.h"
#include "contract/rebind.h"

/* Replay the trace at path. 0 with *out, or -errno with why in diags
 * (-EINVAL: not a usable trace). */
int revalidate__load_trace(const char *path, struct rebind_trace **out, struct diags *diags);
void revalidate__free_trace(struct rebind_trace *t);

/* `manifest rebind` in one call: the trace's evidence (trace_path may be
 * NULL: no evidence), then manifest_rebind__build (o->trace is set here).
 * Returns what manifest_rebind__build returns. */
int revalidate__rebind(const char *manifest_path, const char *trace_path,
		       const struct rebind_opts *o, struct rebind_result **out,
		       struct diags *diags);

#endif
