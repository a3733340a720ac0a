/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope_watch.h: a recording checked against a distribution envelope
 * (`record --envelope FILE`, src/validate/envelope.h). The envelope is
 * loaded and its binding to the plan's manifest and build-ids checked
 * before anything is attached; every snapshot and record of the run is
 * then checked against it. A metric that leaves its band for
 * ENVELOPE_SUSTAIN consecutive windows becomes a warning: a trace note
 * "envelope: ..." and a message. Warnings never touch a descriptor's
 * confidence or the exit status: distributions are weak evidence.
 */
#ifndef PROBITY_RECORD_ENVELOPE_WATCH_H
#define PROBITY_RECORD_ENVELOPE_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "record/recorder.h"

struct envelope_watch;
struct envelope_binding;
struct pb_desc_stats;
struct plan;
struct trace_writer;

/* The binding a recording of plan p would give its envelope. */
void envelope_binding__from_plan(const struct plan *p, struct envelope_binding *b);

/* Load path and check its binding to p; why it cannot goes to msg as an
 * error. NULL + errno: EINVAL unreadable or bound to another manifest or
 * build, ENOMEM, EIO the checker cannot start. */
struct envelope_watch *envelope_watch__new(const char *path, const struct plan *p,
					   recorder_message_fn msg, void *ctx);
void envelope_watch__record(struct envelope_watch *ew, const void *rec, size_t len);
/* Check one snapshot; each new warning becomes a note in w (best effort,
 * as every note) and a warning message. */
void envelope_watch__snapshot(struct envelope_watch *ew, uint64_t ts_ns,
			      const struct pb_desc_stats *desc, size_t n_desc,
			      struct trace_writer *w, recorder_message_fn msg, void *ctx);
/* One closing note in w: what was checked and what left. */
void envelope_watch__finish(struct envelope_watch *ew, struct trace_writer *w);
size_t envelope_watch__n_warnings(const struct envelope_watch *ew);
/* The `envelope` section of the -j summary. */
json_t *envelope_watch__json(const struct envelope_watch *ew);
/* The lines of the text summary. */
void envelope_watch__print(const struct envelope_watch *ew, FILE *out);
void envelope_watch__free(struct envelope_watch *ew);

#endif
