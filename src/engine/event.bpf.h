/* SPDX-License-Identifier: GPL-2.0-only */
/* event.bpf.h: one event through the model: guard, decode, judge, record
 * (process_event and its stages). Included by engine.bpf.c.
 */

/* Evaluate a value spec (docs/manifest.md, VALUES). *fault is set when a
 * user-memory load fails. */
static __always_inline __u64 eval_value(const struct pb_val_spec *s, const __u64 *args,
					__u64 retval, bool *fault)
{
	__u64 v = 0;
	int i;

	switch (s->base) {
	case PB_VB_CONST: v = (__u64)s->constant; break;
	case PB_VB_ARG:
		if (s->arg >= PB_NARGS)	/* the plan never emits one */
			return 0;
		v = args[s->arg];
		break;
	case PB_VB_RETVAL: v = retval; break;
	default: return 0;
	}
#pragma unroll
	for (i = 0; i < 3; i++) {
		__u64 addr, out = 0;	/* little-endian: a narrower read zero-extends */
		long err;

		if (i >= s->n_deref)
			break;
		addr = v + (__u64)s->deref_off[i];
		switch (s->deref_size[i]) {
		case 1: err = bpf_probe_read_user(&out, 1, (void *)addr); break;
		case 2: err = bpf_probe_read_user(&out, 2, (void *)addr); break;
		case 4: err = bpf_probe_read_user(&out, 4, (void *)addr); break;
		default: err = bpf_probe_read_user(&out, 8, (void *)addr); break;
		}
		if (err) {
			*fault = true;
			return 0;
		}
		v = out;
	}
	v += (__u64)s->final_offset;
	switch (s->cast_size) {
	case 1: v = s->cast_signed ? (__u64)(__s64)(__s8)v : (__u8)v; break;
	case 2: v = s->cast_signed ? (__u64)(__s64)(__s16)v : (__u16)v; break;
	case 4: v = s->cast_signed ? (__u64)(__s64)(__s32)v : (__u32)v; break;
	default: break;
	}
	return v;
}

static __always_inline bool guard_holds(const struct pb_descriptor *d, __u64 v)
{
	bool sgn = d->flags & PB_DF_GUARD_SIGNED;
	__s64 sv = (__s64)v, sr = d->guard_rhs;
	__u64 ur = (__u64)d->guard_rhs;

	switch (d->guard_op) {
	case CMP_EQ: return v == ur;
	case CMP_NE: return v != ur;
	case CMP_LT: return sgn ? sv < sr : v < ur;
	case CMP_LE: return sgn ? sv <= sr : v <= ur;
	case CMP_GT: return sgn ? sv > sr : v > ur;
	case CMP_GE: return sgn ? sv >= sr : v >= ur;
	}
	return false;
}

/* One event on its way through process_event: what it decoded to and how
 * the model placed it (the fields of its pb_rec_resource record). */
struct ev_out {
	__u64 instance, units, target, gen, dur;
	__u32 res;		/* d->resource */
	__u32 flags;		/* PB_RF_* */
	__u32 owner;		/* thread that owns the lifetime */
};

/* The descriptor's guard: false when it drops the event (counted as a
 * fault when unreadable, as rejected when false). */
static __always_inline bool guard_passes(const struct pb_descriptor *d, const struct ev_ctx *c,
					 struct pb_desc_stats *ds)
{
	bool fault = false;
	__u64 g;

	if (!(d->flags & PB_DF_GUARD))
		return true;
	g = eval_value(&d->guard, c->args, c->retval, &fault);
	if (fault) {
		ds->deref_faults++;
		return false;
	}
	if (!guard_holds(d, g)) {
		ds->guard_rejected++;
		return false;
	}
	return true;
}

/* Instance, units, target and generation from the arguments, the return
 * value and user memory; false when a load faulted. */
static __always_inline bool decode_values(const struct pb_descriptor *d, const struct ev_ctx *c,
					  struct ev_out *o)
{
	bool fault = false;

	o->instance = eval_value(&d->instance, c->args, c->retval, &fault);
	o->units = eval_value(&d->units, c->args, c->retval, &fault);
	if (d->flags & PB_DF_HAS_TARGET)
		o->target = eval_value(&d->target, c->args, c->retval, &fault);
	if ((d->flags & PB_DF_GEN_COUNTER) && d->kind != EV_WAIT)
		o->gen = eval_value(&d->generation, c->args, c->retval, &fault);
	return !fault;
}

/* WAIT: a span's end adds its length to the descriptor's time and
 * histogram, and its I/O and release-woken marks. */
static __always_inline void judge_wait(const struct pb_descriptor *d, const struct ev_ctx *c,
				       struct pb_desc_stats *ds, struct ev_out *o)
{
	if (d->at != AT_SPAN)
		return;
	o->dur = c->duration;
	o->flags |= PB_RF_SPAN_END;
	ds->total_ns += o->dur;
	ds->hist[log2_bucket(o->dur)]++;
	if (c->span_flags & WF_IO) {
		ds->io_spans++;
		ds->io_span_ns += o->dur;
	}
	if (c->span_flags & WF_RELEASE_WOKEN)
		ds->release_woken_spans++;
}

/* ACQUIRE on a key holding a tombstone (a USE/RELEASE held back before
 * it). A return probe's ACQUIRE is late only relative to what happened
 * during the acquiring call: held-back events since the call's entry
 * (call_entry_ts) were only reordered; one from before the call began is a
 * violation whatever follows (docs/validation.md, "Ordering"). With the
 * entry time the order is exact however late the return probe fired (a
 * thread descheduled between publishing the instance and its return:
 * over 50 ms on two loaded CPUs, whereupon the lifetime, already ended,
 * was opened again and the address's next ACQUIRE read as a double
 * acquire); PB_REORDER_NS, which caps the tombstones' memory (the
 * snapshot's sweep), bounds the rest. With no entry time (the return
 * probe missed its entry) the order is unknown: held-back events up to
 * PB_REORDER_NS old are counted unjudged (lost_unjudged), neither
 * forgiven as reordered nor charged.
 * The tombstone goes. *met when the held-back events came after this
 * ACQUIRE began and meet its expectation (an allowed kind). True when a
 * held-back RELEASE already ended this lifetime: nothing is left to open. */
static __always_inline bool acquire_tombstone(const struct pb_descriptor *d,
					      const struct ev_ctx *c, struct inst_key *key,
					      struct inst_state *st, struct ev_out *o, bool *met)
{
	__u64 entry = call_entry_ts(c);
	bool in_call = entry ? st->pending_ts >= entry :
			       ns_since(c->now, st->pending_ts) <= PB_REORDER_NS;
	bool released;
	__u32 n[2];

	/* out of the map first, then its counts: an event that adds to it
	 * after this sees the seal and is judged again (hold_back) */
	bpf_map_delete_elem(&instances, key);
	tomb_take(st, n);
	/* its last held-back RELEASE came during this call (even if older
	 * events did not): the lifetime ended already; open nothing */
	released = n[1] != 0 && (entry ? TOMB_RELEASE_TS(st) >= entry :
				 ns_since(c->now, TOMB_RELEASE_TS(st)) <= PB_REORDER_NS);
	if (in_call && ((n[0] && d->expect_within[EV_USE]) ||
			(released && d->expect_within[EV_RELEASE])))
		*met = true;
	if (in_call) {
		struct pb_engine_stats *es = estats();

		if (es && entry)
			es->reordered++;
		else if (es)
			es->lost_unjudged++;
	} else {
		charge_tombstone(st, c, o->instance, o->res, n);
	}
	if (in_call)	/* not holds an open cut, if a window is open */
		open_uncut(o->res, TOMB_RELEASE_TS(st), n[1]);
	if (!released)
		return false;
	/* observed late: the lifetime already ended */
	if (!(d->flags & PB_DF_GEN_COUNTER))
		o->gen = next_generation(o->res);
	o->owner = (__u32)c->pid_tgid;
	o->flags |= PB_RF_REORDERED;
	return true;
}

/* Settle the key's entry for an ACQUIRE (a small loop; the accounting
 * comes after): join a live shared generation, replace an unreleased
 * lifetime or open a new one (ns). Concurrent events on one key (a shared
 * frame pinned by two threads at once, or pinned while its last holder
 * releases it) race between lookup, insert and delete: retry until the
 * entry is settled, at most ACQ_TRIES times. Returns how (ACQ_*), 0 when
 * it did not settle; *stp is the entry joined or replaced. */
static __always_inline int acquire_settle(const struct pb_descriptor *d, struct inst_key *key,
					  struct inst_state *ns, __u64 gen,
					  struct inst_state **stp)
{
	struct inst_state *st = *stp;
	int i, how = 0;

	for (i = 0; i < ACQ_TRIES; i++) {
		long err;

		if (st && st->pending_ts)
			break;	/* a tombstone appeared meanwhile */
		if (st && st->holders <= 0) {
			/* its last RELEASE ended it and is deleting it */
			settle_wait(key);
			st = bpf_map_lookup_elem(&instances, key);
			continue;
		}
		if (st && (d->flags & PB_DF_SHARED) &&
		    (!(d->flags & PB_DF_GEN_COUNTER) || st->generation == gen)) {
			if (__sync_fetch_and_add(&st->holders, 1) > 0) {
				how = ACQ_JOINED;
				break;
			}
			/* ended between the check and the add */
			__sync_fetch_and_add(&st->holders, -1);
			settle_wait(key);
			st = bpf_map_lookup_elem(&instances, key);
			continue;
		}
		if (st) {
			how = ACQ_REPLACE;
			break;
		}
		err = bpf_map_update_elem(&instances, key, ns, BPF_NOEXIST);
		if (!err) {
			how = ACQ_OPENED;
			break;
		}
		if (err != -EEXIST) {
			how = ACQ_FULL;
			break;
		}
		/* opened (or still being deleted) on another CPU */
		st = bpf_map_lookup_elem(&instances, key);
	}
	*stp = st;
	return how;
}

/* ACQUIRE joined a live shared generation: another holder of units already
 * counted against the capacity, so it takes none more. */
static __always_inline void acquire_joined(const struct pb_descriptor *d, const struct ev_ctx *c,
					   struct pb_res_stats *rs, struct inst_state *st,
					   struct ev_out *o)
{
	__sync_fetch_and_add(&st->units, (__s64)o->units);
	st->touch_ts = c->now;
	o->gen = st->generation;
	o->owner = st->owner_tid;
	o->flags |= PB_RF_SHARED_HOLD;
	rs->outstanding_units += (__s64)o->units;
	expect_check(st, EV_ACQUIRE, false, c, o->instance);
	expect_arm(st, d, c);
}

/* ACQUIRE replaced a lifetime never released: the model says the instance
 * was still owned. With a generation counter, a different generation means
 * two lifetimes overlap. The replaced lifetime ends here. */
static __always_inline void acquire_replaced(const struct pb_descriptor *d,
					     const struct ev_ctx *c, struct pb_desc_stats *ds,
					     struct pb_res_stats *rs, struct inst_state *st,
					     struct ev_out *o)
{
	if ((d->flags & PB_DF_GEN_COUNTER) && st->generation != o->gen)
		violation(d, c, ds, PB_INV_GEN_OVERLAP, o->instance, st->generation,
			  o->gen, st->owner_tid);
	else
		violation(d, c, ds, PB_INV_DOUBLE_ACQUIRE, o->instance, st->generation,
			  o->gen, st->owner_tid);
	expect_check(st, EV_ACQUIRE, true, c, o->instance);
	rs->outstanding_units += (__s64)o->units - st->units;
	cap_add(d, c, ds, o->res, (__s64)o->units - st->cap_units, o->instance, o->gen);
	st->generation = o->gen;
	st->acquire_ts = c->now;
	st->touch_ts = c->now;
	st->units = (__s64)o->units;
	st->cap_units = (__s64)o->units;
	st->owner_tid = (__u32)c->pid_tgid;
	st->owner_tgid = (__u32)(c->pid_tgid >> 32);
	st->outlived = 0;
	st->holders = 1;
	o->flags |= PB_RF_NEW_GENERATION;
	ds->new_generations++;
	expect_arm(st, d, c);
}

/* ACQUIRE opened a new generation. */
static __always_inline void acquire_opened(const struct pb_descriptor *d, const struct ev_ctx *c,
					   struct pb_desc_stats *ds, struct pb_res_stats *rs,
					   struct ev_out *o)
{
	rs->live_instances++;
	rs->outstanding_units += (__s64)o->units;
	o->flags |= PB_RF_NEW_GENERATION;
	ds->new_generations++;
	cap_add(d, c, ds, o->res, (__s64)o->units, o->instance, o->gen);
}

/* ACQUIRE: settle the instance's entry, then account for how it settled.
 * An entry that does not settle counts the identity as lost
 * (instance_map_full), never guessed. */
static __always_inline void judge_acquire(const struct pb_descriptor *d, const struct ev_ctx *c,
					  struct pb_desc_stats *ds, struct pb_res_stats *rs,
					  struct inst_key *key, struct ev_out *o)
{
	__u32 tid = (__u32)c->pid_tgid;
	struct inst_state ns = {};
	struct inst_state *st;
	bool met = false;
	int how;

	st = bpf_map_lookup_elem(&instances, key);
	if (st && st->pending_ts) {
		if (acquire_tombstone(d, c, key, st, o, &met))
			return;
		st = NULL;
	}
	if (!(d->flags & PB_DF_GEN_COUNTER))
		o->gen = next_generation(o->res);	/* unused when it joins */
	ns.generation = o->gen;
	ns.acquire_ts = c->now;
	ns.touch_ts = c->now;
	ns.units = (__s64)o->units;
	ns.cap_units = (__s64)o->units;
	ns.owner_tid = tid;
	ns.owner_tgid = (__u32)(c->pid_tgid >> 32);
	ns.holders = 1;
	if ((d->flags & PB_DF_EXPECT) && !met) {
		ns.expect_ts = c->now;
		ns.expect_tid = tid;
		ns.expect_desc = c->descriptor + 1;
	}
	how = acquire_settle(d, key, &ns, o->gen, &st);
	if (!how && st && st->pending_ts) {
		/* a USE/RELEASE was held back between the lookup and the
		 * insert: another CPU ran it while this (return) probe was
		 * starting. Consume it as above, then settle again. */
		if (acquire_tombstone(d, c, key, st, o, &met))
			return;
		if (met)
			ns.expect_ts = ns.expect_tid = ns.expect_desc = 0;
		st = NULL;
		how = acquire_settle(d, key, &ns, o->gen, &st);
	}
	o->owner = tid;
	if (how == ACQ_JOINED && st) {
		acquire_joined(d, c, rs, st, o);
	} else if (how == ACQ_REPLACE && st) {
		acquire_replaced(d, c, ds, rs, st, o);
	} else if (how == ACQ_OPENED) {
		acquire_opened(d, c, ds, rs, o);
	} else {
		struct pb_engine_stats *es = estats();

		if (es)
			es->instance_map_full++;
		rs->state_full++;
		if (how == ACQ_FULL)	/* not a race that did not settle */
			mark_lost(o->res);
		o->flags |= PB_RF_STATE_FULL;
		o->owner = tid;
	}
	hold_add(tid, o->res, 1);
}

/* The key's entry for a USE or RELEASE; a tombstone on it older than
 * PB_REORDER_NS is charged and dropped first (NULL then). */
static __always_inline struct inst_state *lookup_live(const struct ev_ctx *c,
						      struct inst_key *key,
						      const struct ev_out *o)
{
	struct inst_state *st = bpf_map_lookup_elem(&instances, key);

	if (st && st->pending_ts && ns_since(c->now, st->pending_ts) > PB_REORDER_NS) {
		__u32 n[2];

		bpf_map_delete_elem(&instances, key);
		tomb_take(st, n);
		charge_tombstone(st, c, o->instance, o->res, n);
		st = NULL;
	}
	return st;
}

static __always_inline void lost_unjudged(void)
{
	struct pb_engine_stats *es = estats();

	if (es)
		__sync_fetch_and_add(&es->lost_unjudged, 1);
}

/* A USE (k = 0) or RELEASE (k = 1) found no live entry: hold it back
 * (NULL). An entry inserted between our lookup and our insert is its
 * ACQUIRE's on another CPU (a return probe publishes the instance before
 * it fires, so a worker can USE it while the ACQUIRE is being recorded):
 * then the event is judged on that live entry, returned. Without this the
 * USE/RELEASE was dropped and the lifetime later read as a broken
 * expectation or a double ACQUIRE. A tombstone inserted meanwhile takes
 * the event; an entry gone again (a race of three) is counted unjudged. */
static __always_inline struct inst_state *not_active(struct pb_desc_stats *ds,
						     struct pb_res_stats *rs, struct inst_key *key,
						     struct inst_state *st, int k,
						     const struct ev_ctx *c, struct ev_out *o)
{
	__u32 flags = 0;
	int i;

	for (i = 0; i < 2; i++) {
		if (hold_back(st, key, c->descriptor, k, c, &flags, rs) != -EEXIST)
			break;
		st = bpf_map_lookup_elem(&instances, key);
		if (st && !st->pending_ts && st->holders > 0)
			return st;	/* raced with its ACQUIRE: live now */
		if ((st && !st->pending_ts) || i == 1) {
			lost_unjudged();	/* being deleted, or a race of three */
			break;
		}
	}
	o->flags |= flags | PB_RF_NOT_ACTIVE;
	ds->not_active++;
	return NULL;
}

/* USE: of a live generation, or held back as not active (a violation
 * unless its ACQUIRE shows up late), unless the instance is owned outside
 * the model. */
static __always_inline void judge_use(const struct pb_descriptor *d, const struct ev_ctx *c,
				      struct pb_desc_stats *ds, struct pb_res_stats *rs,
				      struct inst_key *key, struct ev_out *o)
{
	struct inst_state *st = lookup_live(c, key, o);

	if (!st || st->pending_ts) {
		if (d->flags & PB_DF_EXT_OWNED)
			return;
		/* a violation unless its ACQUIRE shows up late */
		st = not_active(ds, rs, key, st, 0, c, o);
		if (!st)
			return;
	}
	if (!(d->flags & PB_DF_GEN_COUNTER))
		o->gen = st->generation;
	o->owner = st->owner_tid;
	st->touch_ts = c->now;
	expect_check(st, EV_USE, false, c, o->instance);
	expect_arm(st, d, c);
}

/* The RELEASE drops one hold of the resource: the releasing thread's, else
 * the acquirer's; the thread is its latest releaser (for wakeups). */
static __always_inline void release_thread_hold(const struct ev_ctx *c, const struct ev_out *o)
{
	__u32 tid = (__u32)c->pid_tgid, res = o->res;
	struct thread_state *t = thread_get(tid, false);

	if (res < PB_THREAD_HOLD_RES && t && t->hold[res & (PB_THREAD_HOLD_RES - 1)] > 0)
		hold_add(tid, res, -1);
	else
		hold_add(o->owner, res, -1);
	t = thread_get(tid, true);
	if (t) {
		t->last_release_res = res + 1;
		t->last_release_ts = c->now;
	}
}

/* RELEASE: drop one holder of a live generation; the last one ends the
 * lifetime (duration, expectation, capacity, entry deleted). A RELEASE of
 * an instance not active is held back (a violation unless its ACQUIRE
 * shows up late). */
static __always_inline void judge_release(const struct pb_descriptor *d, const struct ev_ctx *c,
					  struct pb_desc_stats *ds, struct pb_res_stats *rs,
					  struct inst_key *key, struct ev_out *o)
{
	struct inst_state *st = lookup_live(c, key, o);
	__s32 old_holders;

	if (!st || st->pending_ts) {
		st = not_active(ds, rs, key, st, 1, c, o);
		if (!st)
			return;
	}
	old_holders = __sync_fetch_and_add(&st->holders, -1);
	if (old_holders <= 0) {
		/* ended by a concurrent RELEASE, being deleted: this
		 * one has no lifetime left to end */
		__sync_fetch_and_add(&st->holders, 1);
		ds->not_active++;
		o->flags |= PB_RF_NOT_ACTIVE;
		if (hold_back(NULL, key, c->descriptor, 1, c, &o->flags, rs) == -EEXIST)
			lost_unjudged();	/* still being deleted: not judged */
		return;
	}
	if (!(d->flags & PB_DF_GEN_COUNTER))
		o->gen = st->generation;
	o->owner = st->owner_tid;
	rs->outstanding_units -= (__s64)o->units;
	__sync_fetch_and_add(&st->units, -(__s64)o->units);
	if (old_holders <= 1) {
		o->dur = ns_since(c->now, st->acquire_ts);
		ds->total_ns += o->dur;
		ds->hist[log2_bucket(o->dur)]++;
		expect_check(st, EV_RELEASE, true, c, o->instance);
		cap_add(d, c, ds, o->res, -st->cap_units, o->instance, o->gen);
		bpf_map_delete_elem(&instances, key);
		rs->live_instances--;
	} else {
		st->touch_ts = c->now;
		expect_check(st, EV_RELEASE, false, c, o->instance);
	}
	release_thread_hold(c, o);
}

/* A decoded event against the model: counters, cross-layer predictions,
 * then identity per kind. */
static __always_inline void judge_event(const struct pb_descriptor *d, const struct ev_ctx *c,
					struct pb_desc_stats *ds, struct pb_res_stats *rs,
					struct ev_out *o)
{
	struct inst_key key = {};

	ds->events++;
	ds->units += o->units;
	key.resource = o->res;
	/* scope: process (the default): the same value in two processes is
	 * two instances; scope: shared names one instance across them */
	key.tgid = (d->flags & PB_DF_SCOPE_SHARED) ? 0 : (__u32)(c->pid_tgid >> 32);
	key.instance = o->instance;
	if (d->fx_mask & PB_FX_CALL_MASK)
		judge_call_effects(d, c, ds, o->instance, c->duration);
	if ((d->fx_mask & (1u << PB_FX_WAKES_WAITER_BIT)) && d->kind == EV_RELEASE)
		judge_release_wake(d, c, ds, o->instance);

	switch (d->kind) {
	case EV_WAIT:
		judge_wait(d, c, ds, o);
		break;
	case EV_ACQUIRE:
		judge_acquire(d, c, ds, rs, &key, o);
		break;
	case EV_USE:
		judge_use(d, c, ds, rs, &key, o);
		break;
	case EV_RELEASE:
		judge_release(d, c, ds, rs, &key, o);
		break;
	}
}

/* The event's pb_rec_resource record, when events are streamed. */
static __always_inline void emit_resource(const struct pb_descriptor *d, const struct ev_ctx *c,
					  const struct ev_out *o)
{
	struct pb_rec_resource *r;

	if (!emit_events)
		return;
	r = rec_reserve(sizeof(*r));
	if (!r)
		return;
	rec_fill_hdr(&r->hdr, PB_REC_RESOURCE, sizeof(*r), c->now, c->pid_tgid);
	r->descriptor = c->descriptor;
	r->resource = o->res;
	r->kind = d->kind;
	r->res_class = d->res_class;
	r->flags = o->flags;
	r->_pad = 0;
	r->instance = o->instance;
	r->generation = o->gen;
	r->units = o->units;
	r->target = o->target;
	r->duration_ns = o->dur;
	r->owner_tid = o->owner;
	r->_pad2 = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* One event: guard, decode, judge against the model, optional record. */
static __noinline int process_event(const struct pb_descriptor *d, struct ev_ctx *c)
{
	struct pb_desc_stats *ds;
	struct pb_res_stats *rs;
	struct ev_out o = {};
	__u32 di = c->descriptor, res = d->resource;

	ds = bpf_map_lookup_elem(&desc_stats, &di);
	rs = bpf_map_lookup_elem(&res_stats, &res);
	if (!ds || !rs)
		return 0;
	o.res = res;
	ds->hits++;
	if (!guard_passes(d, c, ds))
		return 0;
	if (track_mode != PB_TRACK_ANY) {
		struct pb_proc *p = proc_known((__u32)(c->pid_tgid >> 32));

		if (p)
			__sync_fetch_and_add(&p->events, 1);
	}
	if (decode_values(d, c, &o)) {
		judge_event(d, c, ds, rs, &o);
	} else {
		/* unreadable: counted, never guessed */
		ds->deref_faults++;
		o.flags |= PB_RF_DEREF_FAULT;
	}
	emit_resource(d, c, &o);
	stack_note(c, d->kind, res, o.instance, o.gen, o.dur);	/* stacks.bpf.h */
	return 0;
}
