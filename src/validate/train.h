/* SPDX-License-Identifier: BSD-2-Clause */
/* train.h: training a distribution envelope (src/validate/envelope.h,
 * docs/validation.md) on clean recordings, as `probity train` does.
 *
 * The first trace fixes the manifest (the one embedded in it) and the
 * binding (manifest digest and every target's build-id); each later
 * trace must match them. Each trace is replayed through the confidence
 * controller too: only a clean run (no descriptor suspect or stale, even
 * once) may define "normal".
 */
#ifndef PROBITY_TRAIN_H
#define PROBITY_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include "common/log.h"
#include "validate/envelope.h"

struct trainer;
struct manifest;

struct trainer_opts {
	/* why a trace is refused (without a trailing newline); NULL: pr_err */
	void (*message)(enum pb_log_level level, const char *msg, void *ctx);
	void *ctx;
};

/* What one trace added. */
struct trainer_trace_stats {
	size_t windows;			/* training windows it closed */
	size_t events;			/* counted in its last snapshot */
	bool records;			/* recorded with --events */
	const char *cut_reason;		/* the trace is cut (trained on what it
					 * holds), or NULL; valid until the next
					 * trainer__add_trace */
};

/* NULL + errno. */
struct trainer *trainer__new(const struct trainer_opts *opts);
/* Train on the trace at path. 0; -EINVAL it does not fit (unreadable, not
 * a trace, another manifest or build); -EUCLEAN not a clean run (a
 * descriptor went suspect or stale); any other -errno is a runtime
 * failure (memory, I/O). The message says why. */
int trainer__add_trace(struct trainer *t, const char *path, struct trainer_trace_stats *st);
/* Close the training: -ENODATA when no metric was seen in
 * ENVELOPE_MIN_WINDOWS windows, 0 or -errno. */
int trainer__finish(struct trainer *t);

/* After the first trace: its embedded manifest, the binding, its path. */
const struct manifest *trainer__manifest(const struct trainer *t);
const struct envelope_binding *trainer__binding(const struct trainer *t);
const char *trainer__first(const struct trainer *t);
/* The envelope trained so far (NULL before the first trace). */
const struct pb_envelope *trainer__envelope(const struct trainer *t);
void trainer__free(struct trainer *t);

#endif
