/* SPDX-License-Identifier: BSD-2-Clause */
/* engine.h: the resource-event engine, user side.
 *
 * One engine = the engine BPF object (engine.bpf.c + effects.bpf.h) loaded
 * once, its descriptor table filled from an attach plan and its manifest,
 * and every plan link attached through attach.c. Default mode aggregates
 * in the kernel (per-descriptor counters and histograms, per-resource
 * gauges, engine health, invariant violations); with opts.events it also
 * streams records (engine/events.h) to a ring buffer that engine__poll()
 * drains. Violation samples (PB_REC_VIOLATION) go to the ring buffer in
 * both modes.
 */
#ifndef PROBITY_ENGINE_H
#define PROBITY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/events.h"
#include "contract/plan.h"

struct engine;

struct engine_opts {
	pid_t pid;		/* tracked process (tgid); 0 = any process the
				 * links fire in (OS effects are then off),
				 * unless pids / all / cgroup say otherwise */
	const pid_t *pids;	/* more tracked processes (record --pid ...) */
	size_t n_pids;
	bool all;		/* every process the links fire in, tracked
				 * (OS effects joined) from its first probe hit */
	const char *cgroup;	/* cgroup v2 directory: like `all`, but only
				 * tasks in it or below it; NULL = none */
	bool follow_forks;	/* also track processes forked by tracked ones */
	uint32_t max_instances;	/* instance map entries; 0 = 65536 */
	uint32_t max_procs;	/* tracked-process map entries; 0 = 4096 */
	bool events;		/* stream records to the ring buffer */
	size_t ringbuf_bytes;	/* ring buffer size; 0 = 8 MiB; rounded up to
				 * a power of two >= the page size */
	uint32_t stacks_per_sec;	/* user stacks of WAIT ends and ACQUIREs
					 * (PB_REC_STACK) per second; 0 = none */
	bool split_links;	/* one link per descriptor (record --budget):
				 * engine__set_desc() can detach one */
	uint64_t sweep_every_ns;	/* the kernel sweeps (expectations, exits) at
				 * most this often; 0 = every snapshot. The
				 * next snapshot after engine__sweep_next()
				 * always sweeps (the last one of a run) */
	bool prog_stats;	/* hold kernel BPF run-time stats on for the
				 * engine's life (bpf_enable_stats(
				 * BPF_STATS_RUN_TIME)): engine__prog_cost().
				 * System-wide while held: every BPF program
				 * on the machine then pays two clock reads per
				 * run. A refusal is a note, not a failure. */
};

/* Cumulative since load, summed over CPUs. Arrays belong to the engine
 * and stay valid until the next engine__snapshot() or engine__free(). */
struct engine_snapshot {
	uint64_t ts_ns;			/* CLOCK_MONOTONIC */
	uint32_t n_desc;		/* = plan->n_descriptors */
	uint32_t n_res;			/* = manifest resources */
	const struct pb_desc_stats *desc;
	const struct pb_res_stats *res;
	struct pb_engine_stats engine;
};

/* Called once per ring-buffer record (whole record, hdr.size bytes).
 * A non-zero return stops the drain and is returned by engine__poll. */
typedef int (*engine_record_fn)(const void *rec, size_t len, void *ctx);

/* Open and load the BPF object, fill the descriptor table, attach every
 * link of the plan (refused descriptors get no sites and stay off).
 * NULL + errno; the reason is logged (common/log.h). */
struct engine *engine__new(const struct plan *p, const struct engine_opts *opts);

/* Drain the ring buffer (without opts.events it holds only the rate-limited
 * PB_REC_VIOLATION samples). When it is empty and
 * timeout_ms > 0, wait that long once and drain again (records are
 * submitted without wake-ups, so this is a timed poll). Returns records
 * consumed, or -errno / the callback's non-zero value. */
int engine__poll(struct engine *e, int timeout_ms, engine_record_fn fn, void *ctx);

/* Sum the per-CPU stats. 0 or -errno. */
int engine__snapshot(struct engine *e, struct engine_snapshot *out);
/* The next engine__snapshot() sweeps whatever opts.sweep_every_ns says. */
void engine__sweep_next(struct engine *e);

/* Things the engine could not do and that the user must be told about
 * (e.g. "tracepoint page_fault_user missing: faults not joined"). */
size_t engine__n_notes(const struct engine *e);
const char *engine__note(const struct engine *e, size_t i);
size_t engine__n_links(const struct engine *e);


/* Per-descriptor hit counters only (cheaper than a snapshot: no sweep),
 * summed over CPUs into hits[0..n). 0 or -errno. */
int engine__desc_hits(struct engine *e, uint64_t *hits, size_t n);
/* Per-descriptor event counters (pb_desc_stats.events: past the guard),
 * summed over CPUs into events[0..n), and their time (total_ns: WAIT span
 * time, RELEASE hold time) into total_ns[0..n) unless NULL. 0 or -errno. */
int engine__desc_events(struct engine *e, uint64_t *events, uint64_t *total_ns, size_t n);
/* record --budget, before a window's close forgets resource res: its live
 * generations (not tombstones) at now_ns into w (cut_lives, cut_holders,
 * cut_age_sum_ns, cut_age_max_ns, cut_age_hist). 0 or -errno. */
int engine__live_ages(struct engine *e, uint32_t res, uint64_t now_ns,
		      struct pb_rec_window_stats *w);
/* record --budget: a window of res opened at open_ns (after its last
 * attach): from now on a RELEASE of a unit acquired before it is a hold
 * the open cut, counted with its part in the window. 0 or -errno. */
int engine__window_opened(struct engine *e, uint32_t res, uint64_t open_ns);
/* record --budget, at the close of res's window (before its probes
 * go): none open, nothing more is counted. 0 or -errno. */
int engine__window_closing(struct engine *e, uint32_t res);
/* Once its probes are gone: the holds the window's open cut into w
 * (open_cuts, open_cut_sum_ns, open_cut_max_ns, open_cut_hist).
 * 0 or -errno. */
int engine__open_cuts(struct engine *e, uint32_t res, struct pb_rec_window_stats *w);
/* record --budget (opts.split_links): detach (on = false) or re-attach
 * the probes of one descriptor; *changed = kernel links changed. */
int engine__set_desc(struct engine *e, uint32_t desc, bool on, size_t *changed);
/* record --budget: detach the probes of descs[0..n) at once (every link
 * by its own thread: one grace period for all, not one per link), then
 * drop their argument stashes; *changed = links detached. 0 or -errno. */
int engine__detach_descs(struct engine *e, const uint32_t *descs, size_t n, size_t *changed);
/* Pause (or resume) descriptor desc while it stays attached: its probes
 * still trap and count a hit, but no event is decoded or judged. A close
 * pauses a window's ACQUIREs before detaching its links in parallel, so no
 * lifetime opens while its USE or RELEASE probes are going. */
int engine__pause_desc(struct engine *e, uint32_t desc, bool paused);
/* Once a windowed resource's probes are detached: forget its instances
 * (live generations, tombstones, expectations) and mark it windowed, so a
 * USE/RELEASE whose ACQUIRE fell in the gap is unknown (its tombstone is
 * counted window_unjudged when it expires), never a violation, and no
 * generation spans a gap.
 * *forgotten = entries deleted. 0 or -errno. */
int engine__forget_resource(struct engine *e, uint32_t res, uint64_t *forgotten);
/* Only the mark (PB_LOST_WINDOW): from now on a USE/RELEASE of res whose
 * ACQUIRE was not seen is unknown, not a violation. Before a close pauses
 * the ACQUIREs: one paused in between would be charged. 0 or -errno. */
int engine__window_resource(struct engine *e, uint32_t res);

/* Call fn for every tracked process (struct pb_proc, events.h), then
 * forget the exited ones whose instances the last engine__snapshot()
 * swept. 0 or -errno (fn's non-zero return stops the walk). */
typedef int (*engine_proc_fn)(uint32_t tgid, const struct pb_proc *p, void *ctx);
int engine__procs(struct engine *e, engine_proc_fn fn, void *ctx);

/* Memory the kernel charges for the engine's maps (bytes locked, from
 * /proc/self/fdinfo), and for the instance map alone with its size. */
struct engine_memory {
	uint64_t maps_bytes;		/* every map of the object */
	uint64_t instance_bytes;	/* the instance map */
	uint32_t max_instances;		/* its entries */
	uint32_t max_procs;
};
int engine__memory(const struct engine *e, struct engine_memory *out);

/* The effects gate (docs/validation.md "Cross-layer checks"): off, the
 * scheduler, block-I/O and page-fault programs stay attached but return
 * at once (their dispatch and one load); on again, nothing seen before
 * the off period is carried over (an epoch, bumped on every change, stamps
 * their state), so predictions spanning it are unjudged, never failed.
 * One store in the BPF object's .bss: no syscall. On at engine__new.
 * One caller at a time (it keeps the off-time count). 0, or -EINVAL. */
int engine__set_effects(struct engine *e, bool on);
bool engine__effects_on(const struct engine *e);
/* Destroy (false) or create again (true) the gated programs' links
 * (engine_fxlink.c): gated off they still cost their dispatch on every
 * context switch of the machine; detached, nothing. Detach only with the
 * gate off (-EBUSY otherwise). 0 or the first -errno of an attach. */
int engine__effects_link(struct engine *e, bool attached);

/* Run time of the engine's BPF programs since load, from the kernel's
 * run-time stats (bpf_prog_info run_time_ns / run_cnt): only counted
 * while stats are on (opts.prog_stats, or sysctl kernel.bpf_stats_enabled). */
struct engine_prog_group {
	uint64_t run_ns;
	uint64_t run_cnt;
	uint32_t n_progs;	/* loaded programs in the group */
};
struct engine_prog_cost {
	struct engine_prog_group effects;	/* the gated OS-effect tracepoints */
	struct engine_prog_group procs;		/* sched_process_fork/exit (not gated) */
	struct engine_prog_group probes;	/* pb_entry, pb_return, pb_usdt */
	struct engine_prog_group sweeps;	/* the syscall programs (snapshot sweeps) */
};
/* 0; -ENOTSUP when run-time stats are off (the engine does not hold them
 * and the sysctl is 0: the counts would be zeros, not a measurement), or
 * -errno of bpf_prog_get_info_by_fd. */
int engine__prog_cost(const struct engine *e, struct engine_prog_cost *out);

void engine__free(struct engine *e);

#endif
