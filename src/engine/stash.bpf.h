/* SPDX-License-Identifier: GPL-2.0-only */
/* stash.bpf.h: per-thread WAIT span stacks and the per-(thread,
 * descriptor) argument stash that carries entry arguments, time and effect
 * counters to the return probe. Included by engine.bpf.c.
 */

static __always_inline void wait_push(__u32 tid, __u32 res, __u32 di)
{
	struct thread_state *t = thread_get(tid, true);
	__u32 dep;

	if (!t)
		return;
	dep = t->wait_depth;
	if (dep < PB_WAIT_DEPTH) {
		t->wait_res[dep & (PB_WAIT_DEPTH - 1)] = res;
		t->wait_desc[dep & (PB_WAIT_DEPTH - 1)] = di;
		t->wait_flags[dep & (PB_WAIT_DEPTH - 1)] = 0;
		t->wait_ep[dep & (PB_WAIT_DEPTH - 1)] = fx_epoch;
	}
	t->wait_depth = dep + 1;
}

/* end of a span: its WF_* flags (0 for an untracked, too deep span) */
static __always_inline __u32 wait_pop(__u32 tid)
{
	struct thread_state *t = thread_get(tid, false);
	__u32 dep;

	if (!t || !t->wait_depth)
		return 0;
	dep = --t->wait_depth;
	if (dep >= PB_WAIT_DEPTH)
		return 0;
	return t->wait_flags[dep & (PB_WAIT_DEPTH - 1)];
}

/* Entry of a span or of a stash site: save args (and the time) on the
 * per-(thread, descriptor) stack. */
static __always_inline void stash_push(__u32 tid, __u32 di, const __u64 *args, __u64 now,
				       bool want_fx)
{
	struct stash_key k = { .tid = tid, .descriptor = di };
	struct stash *s = bpf_map_lookup_elem(&stashes, &k);
	__u32 dep;
	int i;

	if (!s) {
		__u32 zk = 0;
		struct stash *z = bpf_map_lookup_elem(&stash_zero, &zk);

		if (z)
			bpf_map_update_elem(&stashes, &k, z, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&stashes, &k);
		if (!s) {
			struct pb_engine_stats *es = estats();

			if (es)
				es->thread_map_full++;
			return;
		}
	}
	dep = s->depth;
	s->depth = dep + 1;
	if (dep >= PB_STASH_DEPTH) {
		struct pb_engine_stats *es = estats();

		if (es)
			es->span_overflow++;
		return;
	}
	dep &= PB_STASH_DEPTH - 1;
	s->ts[dep] = now;
#pragma unroll
	for (i = 0; i < 6; i++)
		s->args[dep][i] = args[i];
	s->fx[dep].ok = 0;
	s->fx_ep[dep] = fx_epoch;
	/* gated off: effects are not counted, the call is unjudged */
	if (want_fx && FX_ON(s->fx_ep[dep])) {
		struct thread_state *t = thread_get(tid, true);

		if (t) {
			__u32 q = t->queued_us;

			/* preempted while this entry probe ran, after it read
			 * now: that interval is part of the call */
			if (t->preempt_in_ts > now)
				q -= t->preempt_last_us;
			s->fx[dep].blocks = t->n_blocks;
			s->fx[dep].io = t->n_io;
			s->fx[dep].faults = t->n_faults;
			s->fx[dep].queued_us = q & FX_QUEUED_MASK;
			s->fx[dep].ok = 1;
		}
	}
}

/* Return: pop the matching entry; false when there is none. */
static __always_inline bool stash_pop(__u32 tid, __u32 di, __u64 *args, __u64 *ts,
				      struct fx_snap *fx)
{
	struct stash_key k = { .tid = tid, .descriptor = di };
	struct stash *s = bpf_map_lookup_elem(&stashes, &k);
	__u32 dep;
	int i;

	if (!s || !s->depth)
		return false;
	dep = --s->depth;
	if (dep >= PB_STASH_DEPTH)
		return false;	/* overflowed entry: counted at push */
	dep &= PB_STASH_DEPTH - 1;
	*ts = s->ts[dep];
	*fx = s->fx[dep];
	/* a gate change (or the gate off) since the entry: unjudged */
	if (s->fx_ep[dep] != fx_epoch)
		fx->ok = 0;
#pragma unroll
	for (i = 0; i < 6; i++)
		args[i] = s->args[dep][i];
	if (!s->depth)
		bpf_map_delete_elem(&stashes, &k);
	return true;
}

/* Does the return site of d have an entry stash (contract/plan.c)? Span
 * ends, events reading arguments, in-call predictions, and every
 * ACQUIRE: its call's entry time orders the USE/RELEASE held back before
 * it (docs/validation.md, "Ordering"). */
static __always_inline bool return_has_stash(const struct pb_descriptor *d)
{
	return d->at == AT_SPAN || d->kind == EV_ACQUIRE || d->instance.base == PB_VB_ARG ||
	       d->units.base == PB_VB_ARG || d->target.base == PB_VB_ARG ||
	       d->generation.base == PB_VB_ARG || d->guard.base == PB_VB_ARG ||
	       (d->fx_mask & PB_FX_CALL_MASK);
}

/* Only the return value and constants: decodable without the entry's
 * arguments (an ACQUIRE whose entry the probe missed, e.g. a call already
 * running at attach, still counts; its order is unknown). */
static __always_inline bool return_needs_args(const struct pb_descriptor *d)
{
	return d->at == AT_SPAN || d->instance.base == PB_VB_ARG || d->units.base == PB_VB_ARG ||
	       d->target.base == PB_VB_ARG || d->generation.base == PB_VB_ARG ||
	       d->guard.base == PB_VB_ARG || (d->fx_mask & PB_FX_CALL_MASK);
}

static __always_inline void regs_args(struct pt_regs *ctx, __u64 *args)
{
	args[0] = PT_REGS_PARM1(ctx);
	args[1] = PT_REGS_PARM2(ctx);
	args[2] = PT_REGS_PARM3(ctx);
	args[3] = PT_REGS_PARM4(ctx);
	args[4] = PT_REGS_PARM5(ctx);
	args[5] = PT_REGS_PARM6(ctx);
}
