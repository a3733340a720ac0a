/* SPDX-License-Identifier: BSD-2-Clause */
/* trace_load.h: read a probity trace file (src/trace/trace.h) into an
 * analysis -- the embedded manifest, the plan's effective confidence per
 * descriptor, every record and snapshot -- for `probity report` and
 * `probity export`. A trace cut short (SIGKILL) loads up to its last
 * complete chunk; `cut_reason` says why it stopped.
 *
 * The snapshots and violation samples are also replayed through the
 * confidence controller (validate/confidence.h) with the thresholds
 * `record` used; its final state per descriptor is handed to the analysis
 * (analysis__set_confidence) before the findings are computed, so a
 * finding resting on a descriptor that went suspect or stale reads
 * "model suspect/stale". Violation records are not passed to the analysis.
 */
#ifndef PROBITY_TRACE_LOAD_H
#define PROBITY_TRACE_LOAD_H

#include <stdbool.h>
#include "analyze/analyze.h"
#include "analyze/stacks.h"
#include "trace/trace.h"
#include "validate/confidence.h"

#define TRACE_LOAD_MAX_NOTES	32

struct loaded_trace {
	struct trace_reader *reader;
	struct manifest *manifest;
	struct analysis *analysis;
	struct confidence *conf;	/* indexed by plan descriptor */
	const struct trace_plan_desc *descs;	/* plan descriptors (owned by reader) */
	size_t n_descs;
	struct trace_header header;
	bool ended;			/* TRACE_CHUNK_END seen */
	struct trace_end end;		/* valid when ended */
	char *cut_reason;		/* why reading stopped early; NULL when clean */
	char *notes[TRACE_LOAD_MAX_NOTES];
	size_t n_notes, notes_dropped;
	char error[256];		/* on failure: what was wrong */
	/* processes and threads recorded (TRACE_CHUNK_PROCS, the last table
	 * in the file); none in traces before it existed */
	struct trace_proc *procs;
	size_t n_procs;
	/* user stacks (PB_REC_STACK) and the mappings to name their frames */
	struct stack_set *stacks;
	/* the probes' cost model (TRACE_CHUNK_COST, the last one in the file);
	 * has_cost false in traces before it existed */
	bool has_cost;
	struct trace_cost_hdr cost;
	struct trace_cost_class cost_classes[TRACE_COST_CLASSES];
	struct trace_cost_desc *cost_desc;	/* cost.n_desc entries */
};

/* Load path and finish the analysis. 0, or -errno with lt->error set:
 * -EBADMSG corrupt or not a trace / invalid embedded manifest, -ENOMEM,
 * or the open(2) errno. lt is always to be released with
 * loaded_trace__free. */
int loaded_trace__load(struct loaded_trace *lt, const char *path,
		       const struct analysis_opts *opts);
void loaded_trace__free(struct loaded_trace *lt);
/* The trace's stacks folded by WAIT time or hold time (stacks.h; holds
 * shorter than min_ns left out); the leaf frame names the manifest event.
 * 0 or -ENOMEM. */
int loaded_trace__fold(const struct loaded_trace *lt, enum stack_value what, uint64_t min_ns,
		       struct stack_folds *out);

/* The name (comm) of thread tid of process pid: the thread's own when
 * recorded, else its process's; NULL when the trace does not name it
 * (older traces, threads that came and went between snapshots). */
const char *loaded_trace__comm(const struct loaded_trace *lt, uint32_t pid, uint32_t tid);
/* The recorded entry of process pid (tid == pid), or NULL. */
const struct trace_proc *loaded_trace__proc(const struct loaded_trace *lt, uint32_t pid);

#endif
