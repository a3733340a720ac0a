// SPDX-License-Identifier: GPL-2.0-only
/* engine.bpf.c: the one BPF object behind every manifest.
 *
 * Entry (uprobe.multi), return (uretprobe.multi) and USDT programs look up
 * the attach cookie's descriptor (filled by engine.c from the plan), decode
 * instance / units / target / generation / guard from arguments, the
 * return value and bounded user-memory dereferences, keep generation-scoped
 * identity per (resource, instance), pair WAIT spans per thread, and
 * aggregate per-CPU counters; with `emit_events` set they also stream
 * struct pb_rec_* records to a ring buffer (BPF_RB_NO_WAKEUP: user space
 * polls). The OS-effect programs (scheduler, block I/O, faults, exit) live
 * in effects.bpf.h, included at the end so both share the per-thread state
 * in one object. Nothing here knows any application.
 *
 * This file holds the configuration and the programs; the rest is in the
 * pieces it includes, in order: maps.bpf.h (maps, per-thread state),
 * invariants.bpf.h, predictions.bpf.h, stacks.bpf.h (user stacks),
 * event.bpf.h (process_event and its stages), stash.bpf.h (WAIT spans,
 * argument stashes), effects.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "engine/events.h"

#define PLAN_COOKIE_RETURN	(1ULL << 32)
#define PLAN_COOKIE_STASH	(1ULL << 33)

/* enum values of contract/manifest.h, restated for the BPF side */
#define EV_WAIT		0
#define EV_ACQUIRE	1
#define EV_USE		2
#define EV_RELEASE	3
#define AT_ENTRY	0
#define AT_RETURN	1
#define AT_SPAN		2
#define CMP_EQ		0
#define CMP_NE		1
#define CMP_LT		2
#define CMP_LE		3
#define CMP_GT		4
#define CMP_GE		5

#define WAKE_WINDOW_NS	(500 * 1000ULL)	/* "recently released": 500 us */
#define ACQ_TRIES	4	/* ACQUIRE retries while a concurrent event settles the entry */
#define SETTLE_SPINS	512	/* lookups waiting for an ended entry's delete */
#define ACQ_JOINED	1	/* how an ACQUIRE settled: joined a live shared generation */
#define ACQ_REPLACE	2	/* replaced an unreleased lifetime */
#define ACQ_OPENED	3	/* opened a generation */
#define ACQ_FULL	4	/* the instance map is full: identity lost */

/* Which processes are recorded (engine.c sets it; docs/record.md):
 * ANY: every process the links fire in, no OS effects (no pid given);
 * SET: the processes in map "procs" (--pid, the spawned command; with
 *      follow_fork also their descendants);
 * ALL: every process the links fire in, added to "procs" at its first
 *      probe hit (inside --cgroup when filter_cgroup). */
const volatile __u32 track_mode = PB_TRACK_ANY;
const volatile bool follow_fork = false;	/* forked children of tracked processes */
const volatile bool filter_cgroup = false;	/* ALL: only tasks under cgroup_filter[0] */
const volatile bool emit_events = false;
/* effects whose tracepoints are attached (bit PB_FX_*_BIT): engine.c sets
 * it; a prediction of an effect that cannot be seen is unjudged */
const volatile __u32 fx_avail = 0;
/* effects some descriptor predicts (engine.c): no cost without predictions */
const volatile __u32 fx_want = 0;
/* The effects gate and its epoch (engine__set_effects, docs/validation.md
 * "Cross-layer checks"): odd = the OS-effect programs run, even = gated
 * off (each returns after this one load). Bumped on every toggle by user
 * space through the skeleton's mmap of .bss (engine.c starts it at 1), so
 * it also names the on period effect state was seen in: state stamped
 * with another epoch spans an off period and is unknown. */
volatile __u32 fx_epoch = 0;
#define FX_ON(ep)	((ep) & 1)

/* ---- maps and per-thread state ---------------------------------------- */
#include "engine/maps.bpf.h"
/* ---- invariants: violations, expectations, capacity, tombstones ------- */
#include "engine/invariants.bpf.h"
/* ---- cross-layer predictions (docs/validation.md "Cross-layer checks") ---- */
#include "engine/predictions.bpf.h"
/* ---- user stacks of WAIT ends and ACQUIREs (record --stacks) ---------- */
#include "engine/stacks.bpf.h"
/* ---- one event: guard, decode, judge, record -------------------------- */
#include "engine/event.bpf.h"
/* ---- WAIT spans and argument stashes ---------------------------------- */
#include "engine/stash.bpf.h"

/* ---- probe programs ---------------------------------------------------- */

/* A hit of a paused descriptor (record --budget closing its window): its
 * trap's cost still counts (the governor's ledger), its event does not. */
static __always_inline int paused_hit(__u32 di)
{
	struct pb_desc_stats *ds = bpf_map_lookup_elem(&desc_stats, &di);

	if (ds)
		ds->hits++;
	return 0;
}

SEC("uprobe.multi")
int pb_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), pid_tgid = bpf_get_current_pid_tgid();
	__u32 di = (__u32)cookie, tid = (__u32)pid_tgid;
	const struct pb_descriptor *d;
	struct ev_ctx c = {};

	d = bpf_map_lookup_elem(&descs, &di);
	if (!d || !(d->flags & PB_DF_VALID))
		return 0;
	if (d->flags & PB_DF_PAUSED)	/* a span's hit is counted at its return */
		return (cookie & PLAN_COOKIE_STASH) || d->at == AT_SPAN ? 0 : paused_hit(di);
	c.now = bpf_ktime_get_ns();
	if (!probe_tracked(pid_tgid >> 32, c.now))
		return 0;
	regs_args(ctx, c.args);
	c.pid_tgid = pid_tgid;
	if (fx_want & (1u << PB_FX_WAKES_WAITER_BIT))
		resolve_pending_wake(tid, &c);
	if ((cookie & PLAN_COOKIE_STASH) || d->at == AT_SPAN) {
		stash_push(tid, di, c.args, c.now, d->fx_mask & PB_FX_CALL_MASK);
		if (d->at == AT_SPAN)
			wait_push(tid, d->resource, di);
		return 0;
	}
	c.descriptor = di;
	process_event(d, &c);
	return stack_emit(ctx, &c);
}

SEC("uretprobe.multi")
int pb_return(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), pid_tgid = bpf_get_current_pid_tgid();
	__u32 di = (__u32)cookie, tid = (__u32)pid_tgid;
	const struct pb_descriptor *d;
	struct ev_ctx c = {};
	__u64 ts = 0;
	bool have;

	d = bpf_map_lookup_elem(&descs, &di);
	if (!d || !(d->flags & PB_DF_VALID))
		return 0;
	if (d->flags & PB_DF_PAUSED)
		return paused_hit(di);
	c.now = bpf_ktime_get_ns();
	if (!probe_tracked(pid_tgid >> 32, c.now))
		return 0;
	c.retval = PT_REGS_RC(ctx);
	c.pid_tgid = pid_tgid;
	c.descriptor = di;
	if (fx_want & (1u << PB_FX_WAKES_WAITER_BIT))
		resolve_pending_wake(tid, &c);
	/* span ends, argument-reading return events, return events with
	 * in-call predictions and ACQUIREs have an entry stash */
	if (return_has_stash(d)) {
		have = stash_pop(tid, di, c.args, &ts, &c.fx);
		if (d->at == AT_SPAN)
			c.span_flags = wait_pop(tid);
		if (!have) {
			struct pb_engine_stats *es = estats();

			if (es)
				es->stash_missing++;
			if (return_needs_args(d))
				return 0;
			c.span_flags |= EVF_NO_ENTRY;
		} else {
			c.duration = c.now - ts;
		}
	}
	process_event(d, &c);
	return stack_emit(ctx, &c);
}

SEC("usdt")
int pb_usdt(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 di = (__u32)bpf_usdt_cookie(ctx);
	const struct pb_descriptor *d;
	struct ev_ctx c = {};
	int i, n;

	d = bpf_map_lookup_elem(&descs, &di);
	if (!d || !(d->flags & PB_DF_VALID))
		return 0;
	if (d->flags & PB_DF_PAUSED)
		return paused_hit(di);
	c.now = bpf_ktime_get_ns();
	if (!probe_tracked(pid_tgid >> 32, c.now))
		return 0;
	n = bpf_usdt_arg_cnt(ctx);
	for (i = 0; i < PB_NARGS && i < n; i++) {
		long v = 0;

		bpf_usdt_arg(ctx, i, &v);
		c.args[i] = (__u64)v;
	}
	c.pid_tgid = pid_tgid;
	c.descriptor = di;
	if (fx_want & (1u << PB_FX_WAKES_WAITER_BIT))
		resolve_pending_wake((__u32)pid_tgid, &c);
	process_event(d, &c);
	return stack_emit(ctx, &c);
}

/* ---- expectation sweep (run by user space at each snapshot) ----
 * Instances never touched again after an event that set an expectation
 * are only seen here: engine__snapshot runs this program with
 * BPF_PROG_TEST_RUN, so a miss is charged at most one snapshot interval
 * after its bound. The claim is the same compare-and-swap as on the event
 * path, so a miss is charged once whichever sees it first. */
struct sweep_ctx {
	struct ev_ctx c;
};

__u64 expect_swept = 0;	/* misses charged by the sweep (read by engine.c) */

static long sweep_expect_one(struct bpf_map *map, struct inst_key *key, struct inst_state *st,
			     struct sweep_ctx *sc)
{
	const struct pb_descriptor *e;
	__u32 ed = st->expect_desc, edi;
	__u64 waited;

	if (!ed || st->pending_ts)
		return 0;
	edi = ed - 1;
	e = bpf_map_lookup_elem(&descs, &edi);
	if (!e || sc->c.now <= st->expect_ts)
		return 0;
	waited = sc->c.now - st->expect_ts;
	if (waited <= e->expect_max)
		return 0;
	sc->c.pid_tgid = (__u64)st->owner_tgid << 32;
	if (__sync_val_compare_and_swap(&st->expect_desc, ed, 0) != ed)
		return 0;
	charge_expect(edi, e, st, &sc->c, key->instance, waited);
	__sync_fetch_and_add(&expect_swept, 1);
	return 0;
}

SEC("syscall")
int pb_sweep_expect(void *ctx)
{
	struct sweep_ctx sc = {};

	sc.c.now = bpf_ktime_get_ns();
	bpf_for_each_map_elem(&instances, sweep_expect_one, &sc, 0);
	return 0;
}

#include "engine/effects.bpf.h"

char LICENSE[] SEC("license") = "GPL";
