/* SPDX-License-Identifier: BSD-2-Clause */
/* script.h: `probity script TRACE`, the `perf script` of probity: every
 * item of a trace file in file order, one line each (text), or one JSON
 * object per line (JSON Lines, for jq and DuckDB's read_json). Records of
 * every type are decoded with the embedded manifest's names; a record type
 * or chunk type this build does not know is shown as such (type, size),
 * never dropped silently. docs/report.md lists the fields.
 */
#ifndef PROBITY_ANALYZE_SCRIPT_H
#define PROBITY_ANALYZE_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/analyze.h"
#include "engine/events.h"

struct trace_script_stats {
	uint64_t items;			/* lines written */
	uint64_t records;
	uint64_t by_type[PB_REC__MAX];
	uint64_t unknown_records;	/* type or version this build does not read */
	uint64_t short_records;		/* shorter than their type needs */
	uint64_t snapshots, notes;
	uint64_t unknown_chunks;	/* chunk types skipped by the reader */
	bool ended;			/* the trace's end chunk was seen */
	char cut_reason[160];		/* why reading stopped early; "" when clean */
};

struct trace_script_opts {
	bool json;			/* JSON Lines instead of text */
	analysis_comm_fn comm;		/* optional names for pid/tid */
	void *comm_ctx;
};

/* Print every item of the trace at path to out. 0, or -errno with a
 * message in err: -EBADMSG not a trace (or its embedded manifest does
 * not parse), the open(2) errno, -EIO when out reports a write error. */
int trace_script__run(const char *path, const struct trace_script_opts *o, FILE *out,
		      struct trace_script_stats *st, char *err, size_t err_sz);

#endif
