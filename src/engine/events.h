/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* events.h: every record the BPF engine shares with user space: ring-buffer
 * records, map keys/values, and the aggregate snapshot layout. Included by
 * the *.bpf.c programs (with vmlinux.h) and by user space (with linux/types.h).
 *
 * Rules: fixed-width types only (no long, no pointers), every ring-buffer
 * record starts with struct pb_rec_hdr (type tag + version + size), and
 * any layout change bumps PB_EVENTS_VERSION. Offline readers (probity
 * report on another machine) decode these bytes from trace files as-is
 * (little-endian, as written on x86-64/arm64).
 */
#ifndef PROBITY_EVENTS_H
#define PROBITY_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PB_EVENTS_VERSION	6	/* 2: pb_desc_stats WAIT joins; wakeups_from_release
					 * counts only wakees inside a WAIT on the resource
					 * 3: pb_desc_stats.violations[], PB_REC_VIOLATION
					 * 4: pb_desc_stats.pred_*[] (cross-layer predictions),
					 *    invariant 6 prediction_failed
					 * 5: pb_res_stats.exit_ended/exit_outlived,
					 *    pb_engine_stats.proc_* (many processes)
					 * 6: PB_REC_STACK, pb_engine_stats.stacks_*,
					 *    pb_res_stats.idle_* (leak hypothesis),
					 *    pb_engine_stats.pred_moved,
					 *    PB_REC_WINDOW (record --budget),
					 *    pb_engine_stats.window_unjudged
					 * (PB_REC_WINDOW_STATS was added to 6 without a
					 * bump: a new record type, which a reader that
					 * does not know it skips; docs/trace-format.md) */

#define PB_MAX_DESCRIPTORS	1024	/* descriptor table size */
#define PB_MAX_RESOURCES	256
#define PB_HIST_BUCKETS		40	/* log2(ns): bucket i counts [2^i, 2^(i+1)) ns */

/* record type tags (pb_rec_hdr.type) */
enum pb_rec_type {
	PB_REC_RESOURCE = 1,	/* struct pb_rec_resource: WAIT/ACQUIRE/USE/RELEASE */
	PB_REC_SCHED_SWITCH = 2,/* struct pb_rec_sched: a tracked thread went off/on CPU */
	PB_REC_WAKEUP = 3,	/* struct pb_rec_wakeup: waker -> wakee edge */
	PB_REC_BLOCK_IO = 4,	/* struct pb_rec_block: I/O issued/completed for a thread */
	PB_REC_FAULT = 5,	/* struct pb_rec_fault: user page fault */
	PB_REC_EXIT = 6,	/* struct pb_rec_exit: thread/process exit */
	PB_REC_VIOLATION = 7,	/* struct pb_rec_violation: an invariant broke (v3;
				 * emitted rate-limited even without --events) */
	PB_REC_STACK = 8,	/* struct pb_rec_stack: user stack of a WAIT end or an
				 * ACQUIRE (v6; rate-limited, record --stacks) */
	PB_REC_WINDOW = 9,	/* struct pb_rec_window: record --budget attached or
				 * detached a windowed resource's probes (v6; written
				 * by user space, never by BPF) */
	PB_REC_WINDOW_STATS = 10,	/* struct pb_rec_window_stats: what a closed
				 * window saw (user space, after its close) */
	PB_REC__MAX,
};

struct pb_rec_hdr {
	__u16 type;		/* enum pb_rec_type */
	__u16 version;		/* PB_EVENTS_VERSION */
	__u32 size;		/* bytes of the whole record */
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 _pad;
};

/* pb_rec_resource.flags */
#define PB_RF_NEW_GENERATION	(1u << 0)	/* this ACQUIRE opened a generation */
#define PB_RF_SPAN_END		(1u << 1)	/* WAIT: end of an entry->return span */
#define PB_RF_SHARED_HOLD	(1u << 2)	/* ACQUIRE on an already-active shared instance */
#define PB_RF_NOT_ACTIVE	(1u << 3)	/* USE/RELEASE of an instance not seen active */
#define PB_RF_DEREF_FAULT	(1u << 4)	/* a user-memory read failed; value is 0 */
#define PB_RF_STATE_FULL	(1u << 5)	/* instance map full: identity not tracked */
#define PB_RF_REORDERED		(1u << 6)	/* ACQUIRE observed after its RELEASE (< PB_REORDER_NS):
						 * the lifetime already ended, none opened (v3) */

struct pb_rec_resource {
	struct pb_rec_hdr hdr;
	__u32 descriptor;	/* index into the descriptor table (= manifest event) */
	__u16 resource;		/* resource index in the manifest */
	__u8 kind;		/* enum pb_event_kind (WAIT=0, ACQUIRE, USE, RELEASE) */
	__u8 res_class;		/* enum pb_res_class */
	__u32 flags;		/* PB_RF_* */
	__u32 _pad;
	__u64 instance;		/* decoded instance key */
	__u64 generation;	/* lifetime generation of (resource, instance) */
	__u64 units;		/* decoded units */
	__u64 target;		/* USE: decoded target, else 0 */
	__u64 duration_ns;	/* WAIT span length; RELEASE: hold time since ACQUIRE */
	__u32 owner_tid;	/* RELEASE/USE: thread that acquired this generation */
	__u32 _pad2;
};

struct pb_rec_sched {
	struct pb_rec_hdr hdr;	/* hdr.tid = the thread switched out */
	__u64 off_cpu_ns;	/* on switch-in: time spent off CPU */
	__u32 prev_state;	/* task state at switch-out (0 = preempted) */
	__u32 in;		/* 0 = switched out, 1 = switched back in */
};

struct pb_rec_wakeup {
	struct pb_rec_hdr hdr;	/* hdr.pid/tid = the waker */
	__u32 wakee_pid;
	__u32 wakee_tid;
};

struct pb_rec_block {
	struct pb_rec_hdr hdr;	/* the thread that issued the I/O */
	__u64 sector;
	__u32 bytes;
	__u32 dev;
	__u64 latency_ns;	/* on completion: issue -> complete */
	__u32 complete;		/* 0 = issue, 1 = complete */
	__u32 write;
};

struct pb_rec_fault {
	struct pb_rec_hdr hdr;
	__u64 address;
	__u64 ip;
	__u32 error_code;
	__u32 _pad;
};

struct pb_rec_exit {
	struct pb_rec_hdr hdr;
	__u32 exit_code;
	__u32 group_dead;	/* 1 when the whole process ended */
};

/* record --budget (docs/record.md "Overhead budget"): a window boundary.
 * hdr.pid/tid/cpu are 0. Between a close and the next open the
 * resource's ACQUIRE/USE/RELEASE probes are detached: lifetimes crossing
 * a boundary are unknown (never leaks or violations). */
struct pb_rec_window {
	struct pb_rec_hdr hdr;
	__u32 resource;		/* the windowed resource (manifest index) */
	__u32 open;		/* 1 = probes attached (window opens), 0 = detached */
	__u32 n_desc;		/* descriptors attached/detached with it */
	__u32 duty_ppm;		/* the share of time its windows get, per million */
};

/* record --budget: what one closed window of a resource saw, written
 * right after its close record (same ts_ns). acquires/releases count the
 * events of its ACQUIRE/RELEASE descriptors between open_ns (after the
 * last attach) and the close (before the first detach): both kinds were
 * on all along, so acquires - releases is the window's net growth (zero
 * in expectation without a leak). The cut generations are those still
 * live at the close (acquired in the window, not yet released): they are
 * forgotten, but their age at the close is a lower bound of their hold. */
struct pb_rec_window_stats {
	struct pb_rec_hdr hdr;
	__u32 resource;		/* manifest index */
	__u32 _pad;
	__u64 open_ns;		/* the window's open (CLOCK_MONOTONIC) */
	__u64 detached_ns;	/* its probes' detach completed (they fired until
				 * then: aggregated counts cover open_ns..this) */
	__u64 acquires;		/* ACQUIRE events in [open_ns, close] */
	__u64 releases;		/* RELEASE events in [open_ns, close] */
	__u64 cut_lives;	/* live generations at the close */
	__u64 cut_holders;	/* their open holds */
	__u64 cut_age_sum_ns;	/* sum of their ages (close - ACQUIRE) */
	__u64 cut_age_max_ns;
	__u64 cut_age_hist[PB_HIST_BUCKETS];	/* log2 of the ages, as hist[] */
	/* appended (still version 6; a 424-byte record reads them as 0):
	 * the resource's WAIT spans that ended in [open_ns, close] and their
	 * time, so the long holds a window saw compare with the wait of the
	 * same stretch (docs/report.md "Windows") */
	__u64 waits;
	__u64 wait_ns;
	/* appended (still version 6; shorter records read them as 0): the
	 * holds the window's open cut, mirror of the cut generations above:
	 * RELEASEs in the window of units acquired before it opened (their
	 * ACQUIRE unseen: while detached, or in an earlier window whose close
	 * forgot them), and the time from the open to each, the part of that
	 * hold inside the window (a lower bound of the hold) */
	__u64 open_cuts;
	__u64 open_cut_sum_ns;
	__u64 open_cut_max_ns;
	__u64 open_cut_hist[PB_HIST_BUCKETS];	/* log2 of those parts, as hist[] */
};
#define PB_REC_WINDOW_STATS_MIN	(104 + 8 * PB_HIST_BUCKETS)	/* without waits, wait_ns */
#define PB_REC_WINDOW_STATS_WAITS (PB_REC_WINDOW_STATS_MIN + 16)	/* without open cuts */

/* record --budget, per resource (engine map win_edge): the holds the
 * open of its window cut so far, as in pb_rec_window_stats. The open time
 * is apart (map win_open; 0: no window open, nothing counted): user space
 * zeroes these and then sets it after a window's last attach, clears it
 * when the window closes, and reads these once its probes are gone. */
struct pb_win_edge {
	__u64 n;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 hist[PB_HIST_BUCKETS];
};

/* Runtime invariants of a manifest's model (docs/validation.md). The value
 * indexes pb_desc_stats.violations[] and is pb_rec_violation.invariant.
 * A full state map is lost evidence (instance_map_full), never one of these. */
enum pb_invariant {
	PB_INV_DOUBLE_ACQUIRE = 0,	/* ACQUIRE of an instance already active (not shared) */
	PB_INV_RELEASE_NOT_ACTIVE = 1,	/* RELEASE of an instance not active */
	PB_INV_USE_NOT_ACQUIRED = 2,	/* USE of an instance never ACQUIREd (not externally_owned) */
	PB_INV_GEN_OVERLAP = 3,		/* ACQUIRE opened a generation while another is live */
	PB_INV_EXPECT_TIMEOUT = 4,	/* `expect: next within` not met: charged to the
					 * descriptor whose event set the expectation */
	PB_INV_OVER_CAPACITY = 5,	/* an ACQUIRE left the units held over the capacity */
	PB_INV_PREDICTION_FAILED = 6,	/* a predicted OS effect did not happen (v4; the
					 * rate is judged over pred_checked, not events) */
	PB_INV_ACQUIRE_BYPASSED = 7,	/* judged in user space, never counted by BPF: RELEASEs
					 * of instances never acquired outnumber the ACQUIREs
					 * (the probed ACQUIRE is bypassed: inlined, split);
					 * charged to the ACQUIRE descriptor */
	PB_INV__COUNT,
};
#define PB_INV_SLOTS		8	/* pb_desc_stats.violations[] length (room to grow) */

/* cross-layer effects (= enum pb_effect in contract/manifest.h) */
#define PB_FX_OFF_CPU_BIT	0	/* blocked (asleep off CPU) inside the call */
#define PB_FX_BLOCK_IO_BIT	1	/* issued block I/O inside the call */
#define PB_FX_PAGE_FAULT_BIT	2	/* took a user page fault inside the call */
#define PB_FX_WAKES_WAITER_BIT	3	/* RELEASE woke a thread blocked in a WAIT on the resource */
#define PB_FX_SLOTS		4
#define PB_FX_CALL_MASK		0x7	/* effects judged over the call (entry -> return) */

#define PB_VIOL_FX_MOVED	0x100u	/* pb_rec_violation.detail of PREDICTION_FAILED: the
					 * effect happened on another thread of the process
					 * during the call (it moved) */
#define PB_VIOL_SAMPLES_PER_SEC	8	/* PB_REC_VIOLATION records per descriptor per second */

struct pb_rec_violation {
	struct pb_rec_hdr hdr;	/* the thread that broke it, when */
	__u32 descriptor;
	__u16 resource;
	__u8 invariant;		/* enum pb_invariant */
	__u8 kind;		/* enum pb_event_kind of the event */
	__u64 instance;
	__u64 generation;	/* the live generation (DOUBLE_ACQUIRE / GEN_OVERLAP /
				 * EXPECT_TIMEOUT), else the event's */
	__u64 new_generation;	/* GEN_OVERLAP: the generation the event carried;
				 * EXPECT_TIMEOUT: ns waited when the miss was seen;
				 * OVER_CAPACITY: units held after the ACQUIRE;
				 * PREDICTION_FAILED: the call's duration (ns), 0
				 * for wakes_waiter */
	__u32 owner_tid;	/* thread that acquired the live generation, or 0 */
	__u32 detail;		/* PREDICTION_FAILED: enum pb_effect (v4); else 0 */
	__u64 args[3];		/* first raw arguments of the event */
};

/* User stack of one resource event (v6): sent at the end of a WAIT span
 * and at an ACQUIRE, at most `record --stacks N` per second (whether or
 * not events are streamed). hdr.ts_ns/pid/tid and descriptor are those of
 * the event's pb_rec_resource (same ts_ns), so a reader ties the two; an
 * ACQUIRE's hold time is that of the RELEASE of the same (resource,
 * instance, generation). ips are user return addresses, innermost first
 * (frame pointers: bpf_get_stack(BPF_F_USER_STACK)); at a return probe
 * the first is the caller's, the probed function has returned. */
#define PB_STACK_DEPTH		32	/* frames kept; deeper stacks are cut (counted) */

struct pb_rec_stack {
	struct pb_rec_hdr hdr;	/* the event's time, process and thread */
	__u32 descriptor;
	__u16 resource;
	__u8 kind;		/* enum pb_event_kind: WAIT or ACQUIRE */
	__u8 n_frames;		/* ips[] used, 1..PB_STACK_DEPTH */
	__u64 instance;		/* ACQUIRE: decoded instance, else 0 */
	__u64 generation;	/* ACQUIRE: its generation, else 0 */
	__u64 duration_ns;	/* WAIT: span length; ACQUIRE: 0 */
	__u64 ips[PB_STACK_DEPTH];
};

/* ---- in-kernel aggregation (default mode) ---- */

/* Per descriptor, summed over CPUs by user space. */
struct pb_desc_stats {
	__u64 hits;		/* probe fired where the event fires (return site of
				 * span/return events; span entries and stash
				 * entries are not counted) */
	__u64 events;		/* passed the guard: counted as an event */
	__u64 guard_rejected;	/* guard said no (e.g. try-acquire failed) */
	__u64 deref_faults;	/* a user-memory read failed */
	__u64 new_generations;	/* ACQUIREs that opened a generation */
	__u64 not_active;	/* USE/RELEASE of an instance not active */
	__u64 units;		/* sum of decoded units */
	__u64 total_ns;		/* WAIT: span time; RELEASE: hold time */
	__u64 hist[PB_HIST_BUCKETS];	/* log2 histogram of the same */
	/* WAIT spans of this descriptor joined to OS effects (version 2,
	 * appended; zero in version 1 traces). A span "did I/O" when its
	 * thread issued block I/O inside it; such spans are a slow path, not
	 * waiting for a holder, whatever thread the completion ran on. */
	__u64 off_cpu_ns;	/* off-CPU time inside its spans */
	__u64 wakeups;		/* wakeups received inside its spans */
	__u64 io_wakeups;	/* of which: ending block I/O the span issued */
	__u64 release_wakeups;	/* of which: from a thread that released the
				 * same resource < 500 us before (not I/O) */
	__u64 io_spans;		/* spans that issued block I/O */
	__u64 io_span_ns;	/* their span time */
	__u64 release_woken_spans;	/* spans with a release wakeup */
	/* version 3, appended: invariant violations by enum pb_invariant */
	__u64 violations[PB_INV_SLOTS];
	/* version 4, appended: cross-layer predictions (manifest `predicts`) by
	 * enum pb_effect. checked = judged (held + failed); failed is also
	 * counted in violations[PB_INV_PREDICTION_FAILED]; unjudged = could not
	 * be judged (effect program off, thread state lost, nested too deep,
	 * thread exited with a RELEASE pending): lost evidence, never a failure */
	__u64 pred_checked[PB_FX_SLOTS];
	__u64 pred_failed[PB_FX_SLOTS];
	__u64 pred_unjudged[PB_FX_SLOTS];
};

#define PB_IDLE_SLOTS		8	/* previous snapshots the idle holdings are counted since */

/* Per resource gauges (kept by the engine, sampled by user space). */
struct pb_res_stats {
	__s64 live_instances;	/* ACQUIREd generations not yet RELEASEd */
	__s64 outstanding_units;
	__u64 off_cpu_wait_ns;	/* off-CPU time of threads inside a WAIT on it */
	__u64 off_cpu_hold_ns;	/* off-CPU time of threads holding an instance */
	__u64 io_while_holding;	/* block I/Os issued while holding/using */
	__u64 io_bytes_while_holding;
	__u64 faults_while_holding;
	__u64 wakeups_from_release;	/* wakeups of a thread inside a WAIT on it whose
					 * waker RELEASEd it < 500 us before, except
					 * wakeups ending block I/O of the span (v2) */
	__u64 state_full;	/* identity lost: instance map full */
	/* v5, appended: processes that exit (docs/record.md "Many processes") */
	__u64 exit_ended;	/* live instances (scope: process) ended with their
				 * process: not leaks, no longer live */
	__u64 exit_outlived;	/* shared-scope instances whose acquiring process
				 * exited while they were held: leak candidates */
	__s64 exit_units;	/* units of the exit_ended instances */
	/* v6, appended: the leak hypothesis (docs/validation.md "Leak or
	 * broken model"). Filled by user space at each snapshot from the
	 * instance map: idle_n[k] live generations not touched (no ACQUIRE,
	 * USE or RELEASE of theirs) since idle_ts[k], the time of the k+1-th
	 * previous snapshot (0 = none yet), holding idle_units[k] units. */
	__u64 idle_ts[PB_IDLE_SLOTS];
	__u64 idle_n[PB_IDLE_SLOTS];
	__s64 idle_units[PB_IDLE_SLOTS];
};

/* Ring-buffer and map health (one entry, summed over CPUs). */
struct pb_engine_stats {
	__u64 ringbuf_drops;	/* bpf_ringbuf_reserve failed: records lost */
	__u64 instance_map_full;
	__u64 thread_map_full;
	__u64 span_overflow;	/* WAIT nesting deeper than tracked */
	__u64 records;		/* records submitted */
	/* added after v1's first draft (append only) */
	__u64 stash_missing;	/* return site without its entry (args lost) */
	__u64 effects_events;	/* OS-effect tracepoint hits for tracked threads */
	/* v3 */
	__u64 reordered;	/* ACQUIREs observed after their USE/RELEASE (not violations) */
	__u64 tombstones_swept;	/* expired tombstones charged by user space at snapshot */
	/* v5 */
	__u64 proc_map_full;	/* a process could not be tracked: its events are
				 * counted, but not joined to OS effects / exits */
	__u64 procs_tracked;	/* processes added to the tracked set */
	__u64 procs_exited;	/* tracked processes that exited */
	__u64 procs_excluded;	/* processes a probe fired in, outside --cgroup */
	__u64 lost_unjudged;	/* USE/RELEASE not active on a resource that lost
				 * identities (full map): maybe the lost ACQUIRE's,
				 * so not judged a violation */
	/* v6: user stacks (PB_REC_STACK, record --stacks) */
	__u64 stacks;		/* stack records sent */
	__u64 stacks_rate_limited;	/* not taken: over the per-second limit */
	__u64 stacks_lost;	/* ring buffer full: stack record dropped */
	__u64 stacks_failed;	/* bpf_get_stack found no user stack */
	__u64 stacks_truncated;	/* deeper than PB_STACK_DEPTH: outer frames cut */
	__u64 pred_moved;	/* failed block_io predictions whose process queued
				 * block I/O on another thread during the call
				 * (PB_VIOL_FX_MOVED) */
	__u64 window_unjudged;	/* USE/RELEASE not active on a windowed resource
				 * (record --budget) whose ACQUIRE never came
				 * (tombstone expired), and its expectations a
				 * window edge may have cut (invariants.bpf.h
				 * expect_edge_cut): unknown, not violations */
	/* appended to 6 without a bump (a shorter reader ignores them):
	 * the effects gate (engine__set_effects), filled by user space */
	__u64 fx_gate_toggles;	/* gate changes (on->off and off->on) */
	__u64 fx_gate_off_ns;	/* time the OS-effect programs were gated off:
				 * effects then were not seen (a sample) */
};

/* Map-only layouts (struct pb_inst_state, struct pb_descriptor) are shared
 * by the BPF object and engine.c of one build, never written to a trace:
 * changing them needs no PB_EVENTS_VERSION bump. */

/* ---- per-instance identity state (map "instances") ----
 * An entry is either a live generation (pending_ts == 0: from ACQUIRE to the
 * last RELEASE) or a tombstone (pending_ts != 0): USE/RELEASE of an instance
 * not active, held back in case its ACQUIRE was merely observed late (a
 * return probe fires after the function already published the instance to
 * another thread). An ACQUIRE consumes the tombstone: held-back events
 * that happened during the acquiring call (after its entry) are no
 * violation, earlier ones are charged (docs/validation.md "Observation
 * order"). PB_REORDER_NS only bounds how long a tombstone is kept: then it
 * is charged when the key is next touched, or by user space at snapshot
 * time (engine__snapshot sweeps expired tombstones). */
#define PB_REORDER_NS		(50 * 1000 * 1000ULL)

/* map "res_lost" values (bits), per resource */
#define PB_LOST_FULL		1ULL	/* an identity was lost (instance map full) */
#define PB_LOST_WINDOW		2ULL	/* windowed by record --budget (v6) */

struct pb_inst_key {
	__u32 resource;
	__u32 tgid;		/* the process the instance belongs to (scope:
				 * process, the default); 0 for scope: shared */
	__u64 instance;
};

struct pb_inst_state {
	__u64 generation;
	__u64 acquire_ts;
	__s64 units;
	__u32 owner_tid;
	__s32 holders;
	/* tombstone (v3) */
	__u64 pending_ts;	/* first held-back USE/RELEASE, 0 = live entry */
	__u32 pending_desc[2];	/* descriptor + 1 of the held-back USE [0] / RELEASE [1] */
	__u32 pending_n[2];	/* how many of each */
	__u32 pending_tid;	/* thread of the first */
	__u32 _pad;
	/* expectation: set by an ACQUIRE/USE whose descriptor has a bounded
	 * `expect`, met by the first event of an allowed kind within its
	 * bound; missed ones are charged at the next event on the instance, or
	 * by the sweep program user space runs at each snapshot. Claimed with
	 * compare-and-swap on expect_desc so a miss is charged once. */
	__u64 expect_ts;	/* when it was set */
	__u32 expect_desc;	/* descriptor + 1 that set it, 0 = none */
	__u32 expect_tid;	/* thread of that event */
	__s64 cap_units;	/* units this generation holds against the capacity */
	__u32 owner_tgid;	/* process of owner_tid */
	__u32 outlived;		/* shared scope: counted in exit_outlived */
	__u64 touch_ts;		/* last ACQUIRE/USE/RELEASE of this generation
				 * (idle holdings: the leak hypothesis) */
};

/* ---- tracked processes (map "procs", keyed by tgid) ----
 * Filled by user space (--pid, the spawned command), by the first probe
 * hit of a process (--all, inside --cgroup) and by fork (descendants of
 * the command). An exited process is marked and stays until user space
 * has swept its instances and read it at the next snapshot. */
/* engine.bpf.c track_mode: which processes are recorded */
#define PB_TRACK_ANY		0	/* any the links fire in; no OS effects */
#define PB_TRACK_SET		1	/* those in "procs" (given, or forked) */
#define PB_TRACK_ALL		2	/* any, added to "procs" at the first hit */

#define PB_PROC_GIVEN		(1u << 0)	/* named by user space */
#define PB_PROC_SEEN		(1u << 1)	/* added at its first probe hit (--all) */
#define PB_PROC_FORKED		(1u << 2)	/* a descendant of a tracked process */
#define PB_PROC_EXCLUDED	(1u << 3)	/* outside --cgroup: not tracked */
#define PB_PROC_EXITED		(1u << 4)	/* the whole process exited */
#define PB_COMM_LEN		16

struct pb_proc {
	__u64 first_ts;		/* added at */
	__u64 exit_ts;		/* 0 = alive */
	__u64 events;		/* events that passed the guard, in this process */
	__u64 held_at_exit;	/* scope: process instances ended by its exit */
	__u32 ppid;		/* PB_PROC_FORKED: the parent's tgid */
	__u32 flags;		/* PB_PROC_* */
	__s32 exit_code;
	__u32 _pad;
	char comm[PB_COMM_LEN];	/* at first sight; at exit the last one */
};

/* ---- descriptor table (user space fills it from the plan) ----
 * One struct pb_descriptor per manifest event in the BPF array map
 * "descs", indexed by the low 32 bits of the attach cookie. */

#define PB_STASH_DEPTH		4	/* nested calls of one function per thread */
#define PB_WAIT_DEPTH		4	/* nested WAIT spans per thread */
#define PB_THREAD_HOLD_RES	32	/* resources 0..31 are joined to OS effects */
#define PB_NARGS		12	/* arguments read (6 registers, 12 USDT) */

/* pb_val_spec.base (= enum pb_val_base in contract/manifest.h) */
#define PB_VB_NONE	0
#define PB_VB_CONST	1
#define PB_VB_ARG	2
#define PB_VB_RETVAL	3

struct pb_val_spec {
	__u8 base;		/* PB_VB_* */
	__u8 arg;		/* argument index */
	__u8 n_deref;		/* 0..3 */
	__u8 cast_size;		/* 0, 1, 2, 4, 8 */
	__u8 cast_signed;
	__u8 deref_size[3];	/* 1, 2, 4, 8 */
	__s64 constant;
	__s64 deref_off[3];	/* added before each load */
	__s64 final_offset;
};

/* pb_descriptor.flags */
#define PB_DF_VALID		(1u << 0)	/* planned (not refused) */
#define PB_DF_SHARED		(1u << 1)
#define PB_DF_EXT_OWNED		(1u << 2)
#define PB_DF_GEN_COUNTER	(1u << 3)	/* generation from a value */
#define PB_DF_GUARD		(1u << 4)
#define PB_DF_GUARD_SIGNED	(1u << 5)
#define PB_DF_HAS_TARGET	(1u << 6)
#define PB_DF_CAPACITY		(1u << 7)	/* the resource declares a capacity */
#define PB_DF_EXPECT		(1u << 8)	/* a bounded expectation (expect_*) */
#define PB_DF_SCOPE_SHARED	(1u << 9)	/* `scope: shared`: instances keyed by value
						 * alone, across processes */
#define PB_DF_PAUSED		(1u << 10)	/* record --budget is detaching it: a hit
						 * is counted (its trap cost) and ignored */

struct pb_descriptor {
	__u8 kind;		/* enum pb_event_kind */
	__u8 at;		/* enum pb_site_at */
	__u8 res_class;		/* enum pb_res_class */
	__u8 guard_op;		/* enum pb_cmp_op */
	__u16 resource;
	__u16 target_resource;	/* 0xffff = none */
	__u32 flags;		/* PB_DF_* */
	__u32 _pad;
	__s64 guard_rhs;
	struct pb_val_spec instance;
	struct pb_val_spec units;
	struct pb_val_spec target;
	struct pb_val_spec generation;
	struct pb_val_spec guard;
	/* map-only (never in a trace, so no version bump) */
	__u64 capacity;		/* PB_DF_CAPACITY: the resource's capacity in units */
	__u64 expect_within[4];	/* PB_DF_EXPECT: per next kind (enum pb_event_kind),
				 * the bound in ns; 0 = kind not allowed next */
	__u64 expect_max;	/* the largest bound: past it the expectation missed */
	/* cross-layer predictions (v4; docs/validation.md "Cross-layer checks") */
	__u8 fx_mask;		/* bit PB_FX_*_BIT per predicted effect */
	__u8 _fx_pad[3];
	__u32 fx_waiter;	/* wakes_waiter: descriptor of the WAIT span woken */
	__u64 fx_min_ns[PB_FX_SLOTS];	/* per effect: only calls at least this long are judged */
};

#ifndef __VMLINUX_H__
/* Decoders read these layouts from files: pin them. */
_Static_assert(sizeof(struct pb_rec_violation) == 96, "pb_rec_violation layout");
_Static_assert(sizeof(struct pb_desc_stats) ==
		       8 * (8 + PB_HIST_BUCKETS + 7 + PB_INV_SLOTS + 3 * PB_FX_SLOTS),
	       "pb_desc_stats layout");
_Static_assert(PB_INV__COUNT <= PB_INV_SLOTS, "violation slots");
_Static_assert(sizeof(struct pb_rec_stack) == 64 + 8 * PB_STACK_DEPTH, "pb_rec_stack layout");
_Static_assert(sizeof(struct pb_rec_window_stats) ==
		       PB_REC_WINDOW_STATS_WAITS + 24 + 8 * PB_HIST_BUCKETS,
	       "pb_rec_window_stats layout");
#endif

/* Any one record, for a reader that copies a record out of the trace
 * (aligned) before looking at its type: analyze, script. */
union pb_rec_any {
	struct pb_rec_hdr h;
	struct pb_rec_resource r;
	struct pb_rec_sched s;
	struct pb_rec_wakeup w;
	struct pb_rec_block b;
	struct pb_rec_fault f;
	struct pb_rec_exit e;
	struct pb_rec_violation v;
	struct pb_rec_stack k;
	struct pb_rec_window win;
	struct pb_rec_window_stats wst;
};

#endif
