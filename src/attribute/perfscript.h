/* SPDX-License-Identifier: BSD-2-Clause */
/* perfscript.h: samples from the `perf script` text of a `perf record
 * -k mono` session (perfscript.c, docs/attribution.md "perf script input").
 */
#ifndef PROBITY_ATTRIBUTE_PERFSCRIPT_H
#define PROBITY_ATTRIBUTE_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/errtext.h"

struct ps_sample {
	uint64_t time;		/* ns of the session's clock (-k mono: CLOCK_MONOTONIC) */
	uint64_t ip;
	uint32_t pid, tid, cpu;
	bool has_cpu;
	const char *sym;	/* symbol name or NULL ("[unknown]") */
};
/* Parse `perf script` text (-F time,cpu,pid,tid,ip,sym or the default
 * layout); fn gets each sample line. Lines that are not samples (empty,
 * comments) are skipped; a line that looks like a sample but does not
 * parse is an error naming its line. Returns 0 or -EBADMSG (err says
 * "line N: ...") or fn's non-zero return. */
int perfscript__parse(const char *text, size_t len, int (*fn)(void *ctx, const struct ps_sample *s),
		      void *ctx, struct pb_errtext *err);

#endif
