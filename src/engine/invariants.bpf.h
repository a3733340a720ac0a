/* SPDX-License-Identifier: GPL-2.0-only */
/* invariants.bpf.h: the model's invariants (docs/validation.md):
 * violation samples and counters, expectations (invariant 4), capacity
 * (invariant 5), tombstones of held-back USE/RELEASE and the wait for an
 * ended entry's delete. Included by engine.bpf.c.
 */

struct ev_ctx {
	__u64 args[PB_NARGS];	/* 6 registers or 12 USDT arguments */
	__u64 retval;
	__u64 duration;		/* WAIT span length */
	__u64 now;
	__u64 pid_tgid;
	__u32 descriptor;
	__u32 span_flags;	/* WAIT span end: WF_* of the popped span; EVF_* */
	struct fx_snap fx;	/* effect counters at the call's entry */
};
/* ev_ctx.span_flags above the WF_* byte: a return probe that found no
 * entry stash (the call's entry time is unknown) */
#define EVF_NO_ENTRY	(1u << 16)

/* Time from then to now, 0 when then is later: a program's `now` is read
 * at its start, so another CPU's program that started after it may have
 * stored a later time (a USE held back while a slow ACQUIRE return probe
 * was still running) -- an unsigned difference would be ~2^64. */
static __always_inline __u64 ns_since(__u64 now, __u64 then)
{
	return now > then ? now - then : 0;
}

/* When the event's call began: its entry probe's time at a return site
 * (now - duration), now at an entry or USDT site (duration 0); 0 when a
 * return probe missed its entry (unknown). Orders an ACQUIRE against the
 * USE/RELEASE held back before it (event.bpf.h acquire_tombstone). The
 * stack has no room for one more field (512 bytes, two calls deep). */
static __always_inline __u64 call_entry_ts(const struct ev_ctx *c)
{
	return (c->span_flags & EVF_NO_ENTRY) ? 0 : c->now - c->duration;
}

/* Send one violation sample, at most PB_VIOL_SAMPLES_PER_SEC per descriptor
 * per second, whether or not events are streamed. */
static __always_inline void viol_sample(__u32 di, __u16 res, __u8 kind, __u32 inv,
					const struct ev_ctx *c, __u32 tid, __u64 instance,
					__u64 gen, __u64 new_gen, __u32 owner, bool with_args,
					__u32 detail)
{
	struct pb_rec_violation *v;
	struct viol_rate *rl;
	__u64 sec = c->now / 1000000000ULL;

	rl = bpf_map_lookup_elem(&viol_rate, &di);
	if (!rl)
		return;
	if (rl->second != sec) {
		rl->second = sec;
		rl->sent = 0;
	}
	if (rl->sent >= PB_VIOL_SAMPLES_PER_SEC)
		return;
	__sync_fetch_and_add(&rl->sent, 1);
	v = rec_reserve(sizeof(*v));
	if (!v)
		return;
	rec_fill_hdr(&v->hdr, PB_REC_VIOLATION, sizeof(*v), c->now, c->pid_tgid);
	v->hdr.tid = tid;
	v->descriptor = di;
	v->resource = res;
	v->invariant = (__u8)inv;
	v->kind = kind;
	v->instance = instance;
	v->generation = gen;
	v->new_generation = new_gen;
	v->owner_tid = owner;
	v->detail = detail;
	v->args[0] = with_args ? c->args[0] : 0;
	v->args[1] = with_args ? c->args[1] : 0;
	v->args[2] = with_args ? c->args[2] : 0;
	bpf_ringbuf_submit(v, BPF_RB_NO_WAKEUP);
}

/* An invariant of the model broke (docs/validation.md): count it per
 * descriptor, always, and sample it. */
static __always_inline void violation(const struct pb_descriptor *d, const struct ev_ctx *c,
				      struct pb_desc_stats *ds, __u32 inv, __u64 instance,
				      __u64 gen, __u64 new_gen, __u32 owner)
{
	if (!ds || inv >= PB_INV_SLOTS)
		return;
	ds->violations[inv & (PB_INV_SLOTS - 1)]++;
	viol_sample(c->descriptor, d->resource, d->kind, inv, c, (__u32)c->pid_tgid, instance,
		    gen, new_gen, owner, true, 0);
}

/* res_lost: PB_LOST_FULL (an identity was lost: map full) and/or
 * PB_LOST_WINDOW (record --budget windows the resource: user space sets it
 * and forgets the resource's instances at each detach). 0 = judged. */
static __always_inline __u64 res_lost_identity(__u32 res)
{
	__u64 *l = bpf_map_lookup_elem(&res_lost, &res);

	return l ? *l : 0;
}

/* record --budget: could a window edge have hidden the event an
 * expectation set at armed_ts waited for? Yes unless the resource's window
 * is open and was open when it was armed: an expectation armed while the
 * window's probes were still attaching, or missed while they detach (a
 * close detaches them in parallel: a USE probe may go before the RELEASE
 * that ends the lifetime), is unknown. */
static __always_inline bool expect_edge_cut(__u32 res, __u64 armed_ts)
{
	__u64 *open;

	if (!(res_lost_identity(res) & PB_LOST_WINDOW))
		return false;
	open = bpf_map_lookup_elem(&win_open, &res);
	return !open || !*open || armed_ts < *open;
}

/* An expectation missed (docs/validation.md, invariant 4): charge it to the
 * descriptor that set it, once (the caller claimed expect_desc); one a
 * window edge may have cut is counted window_unjudged instead. */
static __always_inline void charge_expect(__u32 edi, const struct pb_descriptor *e,
					  const struct inst_state *st, const struct ev_ctx *c,
					  __u64 instance, __u64 waited)
{
	struct pb_desc_stats *ds = bpf_map_lookup_elem(&desc_stats, &edi);

	if (!ds)
		return;
	if (expect_edge_cut(e->resource, st->expect_ts)) {
		struct pb_engine_stats *es = estats();

		if (es)
			es->window_unjudged++;
		return;
	}
	__sync_fetch_and_add(&ds->violations[PB_INV_EXPECT_TIMEOUT], 1);
	viol_sample(edi, e->resource, e->kind, PB_INV_EXPECT_TIMEOUT, c, st->expect_tid, instance,
		    st->generation, waited, st->owner_tid, false, 0);
}

/* An event of `kind` on a live instance: meet its pending expectation
 * (an allowed kind within that kind's bound), or charge it when it can no
 * longer be met: past its largest bound, or the lifetime ends here
 * (`ending`). Another kind in bound leaves it pending. */
static __always_inline void expect_check(struct inst_state *st, __u32 kind, bool ending,
					 const struct ev_ctx *c, __u64 instance)
{
	const struct pb_descriptor *e;
	__u32 ed = st->expect_desc, edi;
	__u64 waited, lim;

	if (!ed)
		return;
	edi = ed - 1;
	e = bpf_map_lookup_elem(&descs, &edi);
	if (!e) {
		__sync_val_compare_and_swap(&st->expect_desc, ed, 0);
		return;
	}
	waited = c->now > st->expect_ts ? c->now - st->expect_ts : 0;
	lim = e->expect_within[kind & 3];
	if (lim && waited <= lim) {
		__sync_val_compare_and_swap(&st->expect_desc, ed, 0);
		return;
	}
	if (!ending && waited <= e->expect_max)
		return;
	if (__sync_val_compare_and_swap(&st->expect_desc, ed, 0) == ed)
		charge_expect(edi, e, st, c, instance, waited);
}

/* Arm the expectation of descriptor di on a live entry, unless one is
 * pending (the oldest stands: a stream of events never meeting it still
 * misses). */
static __always_inline void expect_arm(struct inst_state *st, const struct pb_descriptor *d,
				       const struct ev_ctx *c)
{
	if (!(d->flags & PB_DF_EXPECT) || st->expect_desc)
		return;
	st->expect_ts = c->now;
	st->expect_tid = (__u32)c->pid_tgid;
	__sync_val_compare_and_swap(&st->expect_desc, 0, c->descriptor + 1);
}

/* Units held by live generations of the resource change by delta
 * (invariant 5): an ACQUIRE adding units that leaves the total over the
 * declared capacity is a violation of its descriptor. */
static __always_inline void cap_add(const struct pb_descriptor *d, const struct ev_ctx *c,
				    struct pb_desc_stats *ds, __u32 res, __s64 delta,
				    __u64 instance, __u64 gen)
{
	__s64 *held, after;

	if (!(d->flags & PB_DF_CAPACITY) || !delta)
		return;
	held = bpf_map_lookup_elem(&res_cap, &res);
	if (!held)
		return;
	after = __sync_fetch_and_add(held, delta) + delta;
	if (delta > 0 && after > (__s64)d->capacity)
		violation(d, c, ds, PB_INV_OVER_CAPACITY, instance, gen, (__u64)after,
			  (__u32)c->pid_tgid);
}

/* A tombstone's counters once an ACQUIRE or the expiry consumed it
 * (deleted it from the map): sealed, so a USE/RELEASE on another CPU that
 * still holds the entry and adds to it afterwards sees it was too late
 * (hold_back returns -EEXIST and the event is judged again). */
#define PB_TOMB_SEALED	0x80000000u

/* In a tombstone, acquire_ts (a live entry's field) is the time of the
 * last held-back RELEASE: a tombstone may hold a USE left from an
 * earlier lifetime (its ACQUIRE unseen) and then the whole lifetime of a
 * reused address, USE and RELEASE, before that lifetime's late ACQUIRE. */
#define TOMB_RELEASE_TS(st)	((st)->acquire_ts)

/* Take a deleted tombstone's counts (n[2]) and seal it. */
static __always_inline void tomb_take(struct inst_state *st, __u32 *n)
{
	n[0] = __sync_lock_test_and_set(&st->pending_n[0], PB_TOMB_SEALED) & ~PB_TOMB_SEALED;
	n[1] = __sync_lock_test_and_set(&st->pending_n[1], PB_TOMB_SEALED) & ~PB_TOMB_SEALED;
}

/* A tombstone expired (or its events came before the ACQUIRE's call): its
 * held-back USE/RELEASE (n[0], n[1]) never got their ACQUIRE. Charge them
 * to the descriptors that saw them. */
static __always_inline void charge_tombstone(const struct inst_state *st, const struct ev_ctx *c,
					     __u64 instance, __u16 res, const __u32 *n)
{
	int k;

#pragma unroll
	for (k = 0; k < 2; k++) {
		__u32 di, inv = k ? PB_INV_RELEASE_NOT_ACTIVE : PB_INV_USE_NOT_ACQUIRED;
		struct pb_desc_stats *ds;

		if (!n[k] || !st->pending_desc[k])
			continue;
		di = st->pending_desc[k] - 1;
		ds = bpf_map_lookup_elem(&desc_stats, &di);
		if (!ds)
			continue;
		if (res_lost_identity(res) & PB_LOST_WINDOW) {
			/* record --budget: its ACQUIRE may have fallen in a gap */
			struct pb_engine_stats *es = estats();

			if (es)
				es->window_unjudged += n[k];
			continue;
		}
		ds->violations[inv] += n[k];
		viol_sample(di, res, k ? EV_RELEASE : EV_USE, inv, c, st->pending_tid, instance,
			    0, 0, 0, false, 0);
	}
}

/* An identity of res was lost (the instance map was full). */
static __always_inline void mark_lost(__u32 res)
{
	__u64 *l = bpf_map_lookup_elem(&res_lost, &res);

	if (l && !(*l & PB_LOST_FULL))
		__sync_fetch_and_or(l, PB_LOST_FULL);
}

/* record --budget: a RELEASE of a windowed resource's unit not active
 * while a window is open is a hold the open cut (acquired before it,
 * unseen): its part inside the window, now - open, as the close's cut
 * ages (engine_window.c reads them at the close). */
static __always_inline void open_cut(__u32 res, __u64 lost, __u64 now)
{
	struct pb_win_edge *w;
	__u64 *open, part;

	if (!(lost & PB_LOST_WINDOW))
		return;
	open = bpf_map_lookup_elem(&win_open, &res);
	w = bpf_map_lookup_elem(&win_edge, &res);
	if (!open || !w || !*open || now <= *open)
		return;
	part = now - *open;
	__sync_fetch_and_add(&w->n, 1);
	__sync_fetch_and_add(&w->sum_ns, part);
	__sync_fetch_and_add(&w->hist[log2_bucket(part)], 1);
	if (part > w->max_ns)
		w->max_ns = part;	/* racy max: a bound for display only */
}

/* Its ACQUIRE came after all, within PB_REORDER_NS (a return probe that
 * fired after the RELEASE on another thread): the n RELEASEs held back
 * until rel_ts (the last one) were no holds the open cut; taken back from
 * the open window's counts (if it is still the one they went to). */
static __always_inline void open_uncut(__u32 res, __u64 rel_ts, __u32 n)
{
	struct pb_win_edge *w;
	__u64 *open, part;
	__u32 b;

	if (!n || !(res_lost_identity(res) & PB_LOST_WINDOW))
		return;
	open = bpf_map_lookup_elem(&win_open, &res);
	w = bpf_map_lookup_elem(&win_edge, &res);
	if (!open || !w || !*open || rel_ts <= *open)
		return;
	part = rel_ts - *open;
	b = log2_bucket(part);
	if (w->n < n || w->hist[b] < n || w->sum_ns < part * n)
		return;
	__sync_fetch_and_add(&w->n, -(__u64)n);
	__sync_fetch_and_add(&w->sum_ns, -(part * n));
	__sync_fetch_and_add(&w->hist[b], -(__u64)n);
}

/* USE (k = 0) / RELEASE (k = 1) of an instance not active: hold it back in
 * a tombstone (st, or a new one) for PB_REORDER_NS. -EEXIST when the
 * key changed under the caller: an entry was inserted between its lookup
 * and this insert, or st was consumed (sealed) meanwhile; not_active() in
 * event.bpf.h then judges the event again. */
static __always_inline int hold_back(struct inst_state *st, struct inst_key *key, __u32 di,
				     int k, const struct ev_ctx *c, __u32 *flags,
				     struct pb_res_stats *rs)
{
	struct inst_state ns = {};
	__u64 lost;
	long err;

	k &= 1;
	lost = res_lost_identity(key->resource);
	if (lost & PB_LOST_FULL) {
		struct pb_engine_stats *es = estats();

		if (es)
			es->lost_unjudged++;
		*flags |= PB_RF_STATE_FULL;
		return 0;
	}
	if (st && ((st->pending_n[0] | st->pending_n[1]) & PB_TOMB_SEALED))
		return -EEXIST;	/* consumed meanwhile: judge again */
	if (st && st->pending_n[1]) {
		/* a held-back RELEASE ended the lifetime the tombstone held
		 * back: this event starts another (an address reused at once,
		 * e.g. by malloc). Judge the old one now and keep this one
		 * with its own time, so a late ACQUIRE is ordered against
		 * its own events, not the first ever held back on the key. */
		__u32 n[2];

		n[0] = __sync_lock_test_and_set(&st->pending_n[0], 0);
		n[1] = __sync_lock_test_and_set(&st->pending_n[1], 0);
		if ((n[0] | n[1]) & PB_TOMB_SEALED)
			return -EEXIST;
		charge_tombstone(st, c, key->instance, (__u16)key->resource, n);
		st->pending_desc[0] = st->pending_desc[1] = 0;
		st->pending_desc[k] = di + 1;
		st->pending_tid = (__u32)c->pid_tgid;
		st->pending_ts = c->now;
		TOMB_RELEASE_TS(st) = 0;
	}
	if (st) {
		if (!st->pending_desc[k])
			st->pending_desc[k] = di + 1;
		if (k)
			st->acquire_ts = c->now;	/* TOMB_RELEASE_TS */
		if (__sync_fetch_and_add(&st->pending_n[k], 1) & PB_TOMB_SEALED)
			return -EEXIST;	/* consumed meanwhile: judge again */
		if (k)
			open_cut(key->resource, lost, c->now);
		return 0;
	}
	ns.pending_ts = c->now;
	ns.acquire_ts = k ? c->now : 0;	/* TOMB_RELEASE_TS */
	ns.pending_desc[k] = di + 1;
	ns.pending_n[k] = 1;
	ns.pending_tid = (__u32)c->pid_tgid;
	ns.owner_tgid = (__u32)(c->pid_tgid >> 32);
	err = bpf_map_update_elem(&instances, key, &ns, BPF_NOEXIST);
	if (err == -EEXIST)	/* inserted meanwhile, e.g. by its ACQUIRE on another CPU */
		return -EEXIST;
	if (err == -E2BIG) {
		struct pb_engine_stats *es = estats();

		if (es)
			es->instance_map_full++;
		rs->state_full++;
		mark_lost(key->resource);
		*flags |= PB_RF_STATE_FULL;
	}
	if (k)
		open_cut(key->resource, lost, c->now);
	return 0;
}

/* An entry whose last RELEASE ended it (holders <= 0) is deleted by that
 * RELEASE a moment later; an ACQUIRE of the key waits for that (a few
 * lookups, bounded: SETTLE_SPINS) before it opens the next generation. */
static long settle_one(__u64 i, struct inst_key *key)
{
	struct inst_state *st = bpf_map_lookup_elem(&instances, key);

	return !st || st->pending_ts || st->holders > 0;	/* 1: stop */
}

static __always_inline void settle_wait(struct inst_key *key)
{
	bpf_loop(SETTLE_SPINS, settle_one, key, 0);
}
