/* SPDX-License-Identifier: GPL-2.0-only */
/* predictions.bpf.h: cross-layer predictions (docs/validation.md
 * "Cross-layer checks"): in-call effects and wakes_waiter of a RELEASE,
 * judged against the effect counters effects.bpf.h keeps per thread.
 * Included by engine.bpf.c.
 */

/* Per tracked process: when one of its threads last queued block I/O. A
 * failed block_io prediction whose process queued I/O on another thread
 * during the call is marked moved (PB_VIOL_FX_MOVED): the effect moved to
 * another thread, a model change, not "no I/O" (docs/validation.md
 * "Mutation classes"). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} proc_io_ts SEC(".maps");

static __always_inline void pred_failed(struct pb_desc_stats *ds, __u32 di, __u16 res,
					__u8 kind, __u32 fx, const struct ev_ctx *c, __u32 tid,
					__u64 instance, __u64 dur, bool with_args)
{
	__u32 detail = fx;

	fx &= PB_FX_SLOTS - 1;
	ds->pred_checked[fx]++;
	ds->pred_failed[fx]++;
	ds->violations[PB_INV_PREDICTION_FAILED]++;
	viol_sample(di, res, kind, PB_INV_PREDICTION_FAILED, c, tid, instance, 0, dur, 0,
		    with_args, detail);
}

/* The thread's pending wakes_waiter (a RELEASE while a waiter was asleep)
 * saw it wake no sleeper before this next probe hit: failed when the
 * sleepers stayed asleep all along (none left, or one woken by another
 * thread, a timeout, a mutex hand-off: this RELEASE's part cannot be told,
 * unjudged). Pending since another epoch of the effects gate, or resolved
 * with the gate off: its wake may have gone unseen, unjudged. */
static __always_inline void resolve_pending_wake(__u32 tid, struct ev_ctx *c)
{
	struct thread_state *t = thread_get(tid, false);
	struct pb_desc_stats *ds;
	__u32 di, wd, ep = fx_epoch;
	bool found;
	__u64 *wk;
	__s64 w;

	if (!t || !t->pend_desc)
		return;
	di = t->pend_desc - 1;
	wd = t->pend_waiter;
	t->pend_desc = 0;
	ds = bpf_map_lookup_elem(&desc_stats, &di);
	if (!ds)
		return;
	w = sleepers_now(wd, ep, &found);
	wk = bpf_map_lookup_elem(&wait_wakes, &wd);
	/* record --budget windows the resource: the releasing thread's next
	 * probe hit may come after a window closed, too late to judge */
	if (!found || w <= 0 || !wk || *wk != t->pend_wakes || t->pend_ep != ep || !FX_ON(ep) ||
	    (res_lost_identity(t->pend_res) & PB_LOST_WINDOW)) {
		ds->pred_unjudged[PB_FX_WAKES_WAITER_BIT]++;
		return;
	}
	pred_failed(ds, di, t->pend_res, EV_RELEASE, PB_FX_WAKES_WAITER_BIT, c, tid,
		    t->pend_instance, 0, false);
}

/* In-call effects: did the thread block / issue block I/O / fault between
 * the call's entry (c->fx) and now? Calls shorter than the effect's
 * min_duration are not judged, counting only the time the call ran or
 * slept: a call that lasted long because it was preempted (queued for a
 * CPU on a loaded machine) is not a wait that should have blocked. Time
 * the hypervisor stole from the vCPU, or spent in interrupts, is not
 * subtracted: no clock of it is readable here (KVM's per-CPU steal_time
 * has no address in a kernel without KALLSYMS_ALL), so on a VM a rare
 * spinning-looking call remains (docs/validation.md). */
static __always_inline void judge_call_effects(const struct pb_descriptor *d,
					       const struct ev_ctx *c, struct pb_desc_stats *ds,
					       __u64 instance, __u64 dur)
{
	struct thread_state *t = thread_get((__u32)c->pid_tgid, false);
	__u32 fx, now_v, then_v;
	__u64 ran = dur, q;

	if (t && c->fx.ok) {
		q = (__u64)((t->queued_us - c->fx.queued_us) & FX_QUEUED_MASK) * 1000;
		ran = dur > q ? dur - q : 0;
	}
#pragma unroll
	for (fx = 0; fx < 3; fx++) {
		if (!(d->fx_mask & (1u << fx)) || ran < d->fx_min_ns[fx])
			continue;
		/* !ok also for a call whose entry and return saw different
		 * epochs of the effects gate, or the gate off (stash_pop) */
		if (!(fx_avail & (1u << fx)) || !c->fx.ok || !t) {
			ds->pred_unjudged[fx]++;
			continue;
		}
		if (fx == PB_FX_OFF_CPU_BIT) {
			now_v = t->n_blocks;
			then_v = c->fx.blocks;
		} else if (fx == PB_FX_BLOCK_IO_BIT) {
			now_v = t->n_io;
			then_v = c->fx.io;
		} else {
			now_v = t->n_faults;
			then_v = c->fx.faults;
		}
		if (now_v != then_v) {
			ds->pred_checked[fx]++;
		} else {
			__u32 tgid = (__u32)(c->pid_tgid >> 32);
			__u64 *io = fx == PB_FX_BLOCK_IO_BIT ?
				    bpf_map_lookup_elem(&proc_io_ts, &tgid) : NULL;
			__u32 moved = io && *io + dur >= c->now ? PB_VIOL_FX_MOVED : 0;
			struct pb_engine_stats *es = moved ? estats() : NULL;

			if (es)
				es->pred_moved++;
			pred_failed(ds, c->descriptor, d->resource, d->kind, fx | moved, c,
				    (__u32)c->pid_tgid, instance, dur, true);
		}
	}
}

/* RELEASE predicted to wake a waiter: held at once when (at: return) the
 * thread woke a blocked waiter of the resource inside the call (< 500 us
 * ago); else, when a waiter is blocked now, pending until the thread's next
 * probe hit; with no blocked waiter there is nothing to judge. With the
 * effects gate off nobody can say whether a waiter sleeps: unjudged. */
static __always_inline void judge_release_wake(const struct pb_descriptor *d,
					       const struct ev_ctx *c, struct pb_desc_stats *ds,
					       __u64 instance)
{
	__u32 wd = d->fx_waiter, fx = PB_FX_WAKES_WAITER_BIT, ep = fx_epoch;
	struct thread_state *t;
	bool found;
	__u64 *wk;
	__s64 w;

	if (!(fx_avail & (1u << fx)) || !FX_ON(ep)) {
		ds->pred_unjudged[fx]++;
		return;
	}
	t = thread_get((__u32)c->pid_tgid, true);
	w = sleepers_now(wd, ep, &found);
	if (!t || !found) {
		ds->pred_unjudged[fx]++;
		return;
	}
	if (d->at == AT_RETURN && t->fx_ep == ep && t->woke_desc == wd + 1 &&
	    c->now - t->woke_ts < WAKE_WINDOW_NS) {
		t->woke_desc = 0;	/* one wakeup credits one RELEASE */
		ds->pred_checked[fx]++;
		return;
	}
	if (w <= 0)
		return;
	wk = bpf_map_lookup_elem(&wait_wakes, &wd);
	t->woke_desc = 0;
	t->pend_wakes = wk ? *wk : 0;
	t->pend_desc = c->descriptor + 1;
	t->pend_ep = ep;
	t->pend_waiter = wd;
	t->pend_res = d->resource;
	t->pend_instance = instance;
}
