/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_int.h: the engine's state, shared by the files of src/engine/
 * only (engine.c loads, attaches and snapshots; procs.c keeps the tracked
 * processes, the cgroup filter and the map memory). */
#ifndef PROBITY_ENGINE_INT_H
#define PROBITY_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"

#define ENGINE_DEFAULT_RINGBUF	(8u << 20)
#define ENGINE_SAMPLES_RINGBUF	(256u << 10)	/* aggregate mode: violation samples only */
#define ENGINE_STACKS_RINGBUF	(4u << 20)	/* aggregate mode with stacks (record --stacks) */
#define ENGINE_MAX_NOTES	16
#define ENGINE_SWEEP_MAX	4096	/* expired tombstones charged per snapshot */
#define ENGINE_IDLE_SCAN_MAX	(1u << 20)	/* instance entries read per snapshot */
#define ENGINE_DEFAULT_INSTANCES 65536
#define ENGINE_DEFAULT_PROCS	4096

struct engine_bpf;
struct attacher;
struct ring_buffer;

struct engine {
	struct engine_bpf *skel;
	struct attacher *attacher;
	struct ring_buffer *rb;
	const struct plan *plan;
	int ncpu;
	uint32_t n_desc, n_res;
	struct pb_desc_stats *desc, *desc_pcpu;
	struct pb_res_stats *res, *res_pcpu;
	struct pb_engine_stats *eng_pcpu;
	/* violations of tombstones expired untouched, charged here (cumulative) */
	uint64_t *swept_use, *swept_release, swept;
	bool sweep_expect;	/* the expectation sweep program runs */
	bool sweep_exits;	/* the exit sweep program runs */
	uint64_t sweep_every_ns, sweep_last_ns;	/* opts.sweep_every_ns; the last */
	bool sweep_force;	/* engine__sweep_next() */
	uint32_t mode;		/* PB_TRACK_* (events.h) */
	bool follow;		/* sched_process_fork attached */
	uint64_t exit_swept_ts;	/* exited before this: instances swept */
	int cgroup_fd;		/* --cgroup directory, or -1 */
	struct pb_inst_key *expired;
	uint64_t idle_ring[PB_IDLE_SLOTS];	/* previous snapshot times, newest first */
	/* record --budget: windowed resources (engine__forget_resource); their
	 * expired tombstones are unknown, counted in window_swept */
	bool windowed[PB_MAX_RESOURCES];
	uint64_t window_swept;
	/* the effects gate (engine_fx.c) */
	bool fx_off;
	uint64_t fx_toggles, fx_off_ns, fx_off_since;
	int stats_fd;		/* bpf_enable_stats(), or -1 */
	char *notes[ENGINE_MAX_NOTES];
	size_t n_notes;
	/* current poll */
	engine_record_fn fn;
	void *fn_ctx;
	int fn_ret;
};

/* Log a warning and keep it for engine__note(). */
void engine_note(struct engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* engine_idle.c: the idle holdings of each resource into e->res (after
 * the sums), then now becomes the newest previous snapshot. */
void engine_count_idle(struct engine *e, uint64_t now);

/* engine_fx.c: before load, the gate on (epoch 1) and opts.prog_stats;
 * at a snapshot, the gate's counters; at free, the stats fd. */
int engine_fx_init(struct engine *e, const struct engine_opts *opts);
void engine_fx_stats(const struct engine *e, struct pb_engine_stats *out, uint64_t now);
void engine_fx_free(struct engine *e);

/* procs.c */
/* --cgroup: the directory in slot 0 of cgroup_filter (after load). */
int engine_set_cgroup(struct engine *e, const char *path);
/* The processes user space names: --pid, the spawned command. */
int engine_add_given_procs(struct engine *e, const struct engine_opts *opts);

#endif
