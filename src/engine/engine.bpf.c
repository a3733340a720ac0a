// SPDX-License-Identifier: GPL-2.0
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

const volatile __u32 filter_tgid = 0;	/* 0: every process the links fire in */
const volatile bool emit_events = false;
/* effects whose tracepoints are attached (bit PB_FX_*_BIT): engine.c sets
 * it; a prediction of an effect that cannot be seen is unjudged */
const volatile __u32 fx_avail = 0;
/* effects some descriptor predicts (engine.c): no cost without predictions */
const volatile __u32 fx_want = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_DESCRIPTORS);
	__type(key, __u32);
	__type(value, struct pb_descriptor);
} descs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PB_MAX_DESCRIPTORS);
	__type(key, __u32);
	__type(value, struct pb_desc_stats);
} desc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PB_MAX_RESOURCES);
	__type(key, __u32);
	__type(value, struct pb_res_stats);
} res_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pb_engine_stats);
} engine_stats SEC(".maps");

/* per-resource lifetime counter for `generation: on_acquire` */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_RESOURCES);
	__type(key, __u32);
	__type(value, __u64);
} res_gen SEC(".maps");

/* per-resource units held by live generations, for `capacity` (global,
 * not per-CPU: every CPU's ACQUIRE compares the one total) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_RESOURCES);
	__type(key, __u32);
	__type(value, __s64);
} res_cap SEC(".maps");

#define inst_key pb_inst_key
#define inst_state pb_inst_state

/* live generations and tombstones (events.h): an entry exists from ACQUIRE
 * to the last RELEASE, or from a held-back USE/RELEASE until charged */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct inst_key);
	__type(value, struct inst_state);
} instances SEC(".maps");

struct stash_key {
	__u32 tid;
	__u32 descriptor;
};

/* per-thread effect counters at a call's entry (cross-layer predictions) */
struct fx_snap {
	__u32 blocks, io, faults;
	__u32 ok;		/* 0: no thread state at entry: unjudged */
};

struct stash {
	__u32 depth;
	__u32 _pad;
	__u64 ts[PB_STASH_DEPTH];
	__u64 args[PB_STASH_DEPTH][6];
	struct fx_snap fx[PB_STASH_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct stash_key);
	__type(value, struct stash);
} stashes SEC(".maps");

/* zero values to create map entries from (keeps them off the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stash);
} stash_zero SEC(".maps");

/* per-thread state shared with the OS-effect programs */
/* thread_state.wait_flags[] */
#define WF_IO		(1u << 0)	/* the span issued block I/O */
#define WF_RELEASE_WOKEN (1u << 1)	/* woken by a releaser of its resource */
#define WF_SLEPT_WOKEN	(1u << 2)	/* slept and was woken once: no longer a
					 * sleeper a RELEASE must wake (a later
					 * sleep is e.g. on the re-taken mutex) */

struct thread_state {
	__u64 off_ts;			/* switched out at (0: on CPU) */
	__u64 last_release_ts;
	__u64 last_io_done_ts;		/* last completion of this thread's block I/O */
	__u32 last_release_res;		/* resource + 1, 0 = none */
	__u32 wait_depth;
	__u32 io_pending;		/* block I/Os issued, not completed */
	__u32 _pad;
	__u16 wait_res[PB_WAIT_DEPTH];	/* WAIT span stack (resource) */
	__u32 wait_desc[PB_WAIT_DEPTH];	/* WAIT span stack (descriptor) */
	__u8 wait_flags[PB_WAIT_DEPTH];	/* WF_* per span */
	__s32 hold[PB_THREAD_HOLD_RES];	/* instances held per resource */
	/* cross-layer predictions (v4): monotonic effect counters */
	__u32 n_blocks;			/* switched out asleep (not preempted) */
	__u32 n_io;			/* bios submitted (block_bio_queue) */
	__u32 n_faults;			/* user page faults */
	__u32 blocked_desc;		/* WAIT descriptor + 1 it is counted a blocked waiter of */
	__u32 woke_desc;		/* WAIT descriptor + 1 of the last blocked waiter it woke */
	__u32 pend_desc;		/* RELEASE + 1 whose wakes_waiter is pending */
	__u64 woke_ts;
	__u64 pend_instance;
	__u32 pend_waiter;		/* the WAIT descriptor that RELEASE should wake */
	__u16 pend_res;
	__u16 _pad2;
	__u64 pend_wakes;		/* wait_wakes[pend_waiter] at the RELEASE */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_state);
} thread_zero SEC(".maps");

/* threads blocked (asleep) inside a WAIT span, per WAIT descriptor (global) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_DESCRIPTORS);
	__type(key, __u32);
	__type(value, __s64);
} wait_sleepers SEC(".maps");

/* sleepers of a WAIT descriptor woken so far, by anyone (global) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_DESCRIPTORS);
	__type(key, __u32);
	__type(value, __u64);
} wait_wakes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* engine_opts.ringbuf_bytes */
} events SEC(".maps");

/* Violation sample rate limit: per descriptor, the second the current
 * budget belongs to and the samples sent in it. A global (not per-CPU)
 * array so the limit holds across CPUs; races only let a few extra by. */
struct viol_rate {
	__u64 second;
	__u32 sent;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_DESCRIPTORS);
	__type(key, __u32);
	__type(value, struct viol_rate);
} viol_rate SEC(".maps");

static __always_inline struct pb_engine_stats *estats(void)
{
	__u32 z = 0;

	return bpf_map_lookup_elem(&engine_stats, &z);
}

static __always_inline bool tracked_tgid(__u32 tgid)
{
	return !filter_tgid || tgid == filter_tgid;
}

static __always_inline void *rec_reserve(__u32 size)
{
	struct pb_engine_stats *es;
	void *r = bpf_ringbuf_reserve(&events, size, 0);

	es = estats();
	if (!r) {
		if (es)
			__sync_fetch_and_add(&es->ringbuf_drops, 1);
		return NULL;
	}
	if (es)
		es->records++;
	return r;
}

static __always_inline void rec_fill_hdr(struct pb_rec_hdr *h, __u16 type, __u32 size,
					 __u64 now, __u64 pid_tgid)
{
	h->type = type;
	h->version = PB_EVENTS_VERSION;
	h->size = size;
	h->ts_ns = now;
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->cpu = bpf_get_smp_processor_id();
	h->_pad = 0;
}

static __always_inline struct thread_state *thread_get(__u32 tid, bool create)
{
	struct thread_state *t = bpf_map_lookup_elem(&threads, &tid);

	if (t || !create)
		return t;
	{
		__u32 zk = 0;
		struct thread_state *z = bpf_map_lookup_elem(&thread_zero, &zk);

		if (!z)
			return NULL;
		if (bpf_map_update_elem(&threads, &tid, z, BPF_NOEXIST) == -E2BIG) {
			struct pb_engine_stats *es = estats();

			if (es)
				es->thread_map_full++;
		}
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r < PB_HIST_BUCKETS ? r : PB_HIST_BUCKETS - 1;
}

/* Evaluate a value spec (docs/manifest.md, VALUES). *fault is set when a
 * user-memory load fails. */
static __always_inline __u64 eval_value(const struct pb_val_spec *s, const __u64 *args,
					__u64 retval, bool *fault)
{
	__u64 v = 0;
	int i;

	switch (s->base) {
	case PB_VB_CONST: v = (__u64)s->constant; break;
	case PB_VB_ARG: v = args[s->arg & 15]; break;
	case PB_VB_RETVAL: v = retval; break;
	default: return 0;
	}
#pragma unroll
	for (i = 0; i < 3; i++) {
		__u64 addr, out = 0;
		long err;

		if (i >= s->n_deref)
			break;
		addr = v + (__u64)s->deref_off[i];
		switch (s->deref_size[i]) {
		case 1: { __u8 x = 0; err = bpf_probe_read_user(&x, 1, (void *)addr); out = x; break; }
		case 2: { __u16 x = 0; err = bpf_probe_read_user(&x, 2, (void *)addr); out = x; break; }
		case 4: { __u32 x = 0; err = bpf_probe_read_user(&x, 4, (void *)addr); out = x; break; }
		default: { __u64 x = 0; err = bpf_probe_read_user(&x, 8, (void *)addr); out = x; break; }
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

static __always_inline __u64 next_generation(__u32 res)
{
	__u64 *g = bpf_map_lookup_elem(&res_gen, &res);

	if (!g)
		return 0;
	return __sync_fetch_and_add(g, 1) + 1;
}

static __always_inline void hold_add(__u32 tid, __u32 res, int delta)
{
	struct thread_state *t;

	if (res >= PB_THREAD_HOLD_RES)
		return;
	t = thread_get(tid, delta > 0);
	if (!t)
		return;
	if (delta < 0 && t->hold[res & (PB_THREAD_HOLD_RES - 1)] <= 0)
		return;
	__sync_fetch_and_add(&t->hold[res & (PB_THREAD_HOLD_RES - 1)], delta);
}

struct ev_ctx {
	__u64 args[16];		/* PB_NARGS used; 16 so a masked index stays inside */
	__u64 retval;
	__u64 duration;		/* WAIT span length */
	__u64 now;
	__u64 pid_tgid;
	__u32 descriptor;
	__u32 span_flags;	/* WAIT span end: WF_* of the popped span */
	struct fx_snap fx;	/* effect counters at the call's entry */
};

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

/* An expectation missed (docs/validation.md, invariant 4): charge it to the
 * descriptor that set it, once (the caller claimed expect_desc). */
static __always_inline void charge_expect(__u32 edi, const struct pb_descriptor *e,
					  const struct inst_state *st, const struct ev_ctx *c,
					  __u64 instance, __u64 waited)
{
	struct pb_desc_stats *ds = bpf_map_lookup_elem(&desc_stats, &edi);

	if (!ds)
		return;
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

/* A tombstone expired: its held-back USE/RELEASE never got their ACQUIRE.
 * Charge them to the descriptors that saw them. */
static __always_inline void charge_tombstone(const struct inst_state *st, const struct ev_ctx *c,
					     __u64 instance, __u16 res)
{
	int k;

#pragma unroll
	for (k = 0; k < 2; k++) {
		__u32 di, inv = k ? PB_INV_RELEASE_NOT_ACTIVE : PB_INV_USE_NOT_ACQUIRED;
		struct pb_desc_stats *ds;

		if (!st->pending_n[k] || !st->pending_desc[k])
			continue;
		di = st->pending_desc[k] - 1;
		ds = bpf_map_lookup_elem(&desc_stats, &di);
		if (!ds)
			continue;
		ds->violations[inv] += st->pending_n[k];
		viol_sample(di, res, k ? EV_RELEASE : EV_USE, inv, c, st->pending_tid, instance,
			    0, 0, 0, false, 0);
	}
}

/* USE (k = 0) / RELEASE (k = 1) of an instance not active: hold it back in
 * a tombstone (st, or a new one) for PB_REORDER_NS. */
static __always_inline void hold_back(struct inst_state *st, struct inst_key *key, __u32 di,
				      int k, const struct ev_ctx *c, __u32 *flags,
				      struct pb_res_stats *rs)
{
	struct inst_state ns = {};

	k &= 1;
	if (st) {
		if (!st->pending_desc[k])
			st->pending_desc[k] = di + 1;
		__sync_fetch_and_add(&st->pending_n[k], 1);
		return;
	}
	ns.pending_ts = c->now;
	ns.pending_desc[k] = di + 1;
	ns.pending_n[k] = 1;
	ns.pending_tid = (__u32)c->pid_tgid;
	if (bpf_map_update_elem(&instances, key, &ns, BPF_NOEXIST) == -E2BIG) {
		struct pb_engine_stats *es = estats();

		if (es)
			es->instance_map_full++;
		rs->state_full++;
		*flags |= PB_RF_STATE_FULL;
	}
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

/* ---- cross-layer predictions (docs/validation.md "Cross-layer checks") ---- */

static __always_inline void pred_failed(struct pb_desc_stats *ds, __u32 di, __u16 res,
					__u8 kind, __u32 fx, const struct ev_ctx *c, __u32 tid,
					__u64 instance, __u64 dur, bool with_args)
{
	fx &= PB_FX_SLOTS - 1;
	ds->pred_checked[fx]++;
	ds->pred_failed[fx]++;
	ds->violations[PB_INV_PREDICTION_FAILED]++;
	viol_sample(di, res, kind, PB_INV_PREDICTION_FAILED, c, tid, instance, 0, dur, 0,
		    with_args, fx);
}

/* The thread's pending wakes_waiter (a RELEASE while a waiter was asleep)
 * saw it wake no sleeper before this next probe hit: failed when the
 * sleepers stayed asleep all along (none left, or one woken by another
 * thread, a timeout, a mutex hand-off: this RELEASE's part cannot be told,
 * unjudged). */
static __always_inline void resolve_pending_wake(__u32 tid, struct ev_ctx *c)
{
	struct thread_state *t = thread_get(tid, false);
	struct pb_desc_stats *ds;
	__u32 di, wd;
	__u64 *wk;
	__s64 *w;

	if (!t || !t->pend_desc)
		return;
	di = t->pend_desc - 1;
	wd = t->pend_waiter;
	t->pend_desc = 0;
	ds = bpf_map_lookup_elem(&desc_stats, &di);
	if (!ds)
		return;
	w = bpf_map_lookup_elem(&wait_sleepers, &wd);
	wk = bpf_map_lookup_elem(&wait_wakes, &wd);
	if (!w || *w <= 0 || !wk || *wk != t->pend_wakes) {
		ds->pred_unjudged[PB_FX_WAKES_WAITER_BIT]++;
		return;
	}
	pred_failed(ds, di, t->pend_res, EV_RELEASE, PB_FX_WAKES_WAITER_BIT, c, tid,
		    t->pend_instance, 0, false);
}

/* In-call effects: did the thread block / issue block I/O / fault between
 * the call's entry (c->fx) and now? Calls shorter than the effect's
 * min_duration are not judged. */
static __always_inline void judge_call_effects(const struct pb_descriptor *d,
					       const struct ev_ctx *c, struct pb_desc_stats *ds,
					       __u64 instance, __u64 dur)
{
	struct thread_state *t = thread_get((__u32)c->pid_tgid, false);
	__u32 fx, now_v, then_v;

#pragma unroll
	for (fx = 0; fx < 3; fx++) {
		if (!(d->fx_mask & (1u << fx)) || dur < d->fx_min_ns[fx])
			continue;
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
		if (now_v != then_v)
			ds->pred_checked[fx]++;
		else
			pred_failed(ds, c->descriptor, d->resource, d->kind, fx, c,
				    (__u32)c->pid_tgid, instance, dur, true);
	}
}

/* RELEASE predicted to wake a waiter: held at once when (at: return) the
 * thread woke a blocked waiter of the resource inside the call (< 500 us
 * ago); else, when a waiter is blocked now, pending until the thread's next
 * probe hit; with no blocked waiter there is nothing to judge. */
static __always_inline void judge_release_wake(const struct pb_descriptor *d,
					       const struct ev_ctx *c, struct pb_desc_stats *ds,
					       __u64 instance)
{
	__u32 wd = d->fx_waiter, fx = PB_FX_WAKES_WAITER_BIT;
	struct thread_state *t;
	__u64 *wk;
	__s64 *w;

	if (!(fx_avail & (1u << fx))) {
		ds->pred_unjudged[fx]++;
		return;
	}
	t = thread_get((__u32)c->pid_tgid, true);
	w = bpf_map_lookup_elem(&wait_sleepers, &wd);
	if (!t || !w) {
		ds->pred_unjudged[fx]++;
		return;
	}
	if (d->at == AT_RETURN && t->woke_desc == wd + 1 && c->now - t->woke_ts < WAKE_WINDOW_NS) {
		t->woke_desc = 0;	/* one wakeup credits one RELEASE */
		ds->pred_checked[fx]++;
		return;
	}
	if (*w <= 0)
		return;
	wk = bpf_map_lookup_elem(&wait_wakes, &wd);
	t->woke_desc = 0;
	t->pend_wakes = wk ? *wk : 0;
	t->pend_desc = c->descriptor + 1;
	t->pend_waiter = wd;
	t->pend_res = d->resource;
	t->pend_instance = instance;
}

/* One event: guard, decode, identity, aggregate, optional record. */
static __noinline int process_event(const struct pb_descriptor *d, struct ev_ctx *c)
{
	struct pb_desc_stats *ds;
	struct pb_res_stats *rs;
	struct pb_rec_resource *r;
	struct inst_state *st;
	struct inst_key key = {};
	__u32 di = c->descriptor, res = d->resource, tid = (__u32)c->pid_tgid;
	__u64 instance, units, target = 0, gen = 0, dur = 0;
	__u32 flags = 0, owner = 0;
	bool fault = false, met = false;

	ds = bpf_map_lookup_elem(&desc_stats, &di);
	rs = bpf_map_lookup_elem(&res_stats, &res);
	if (!ds || !rs)
		return 0;
	ds->hits++;
	if (d->flags & PB_DF_GUARD) {
		__u64 g = eval_value(&d->guard, c->args, c->retval, &fault);

		if (fault) {
			ds->deref_faults++;
			return 0;
		}
		if (!guard_holds(d, g)) {
			ds->guard_rejected++;
			return 0;
		}
	}
	instance = eval_value(&d->instance, c->args, c->retval, &fault);
	units = eval_value(&d->units, c->args, c->retval, &fault);
	if (d->flags & PB_DF_HAS_TARGET)
		target = eval_value(&d->target, c->args, c->retval, &fault);
	if ((d->flags & PB_DF_GEN_COUNTER) && d->kind != EV_WAIT)
		gen = eval_value(&d->generation, c->args, c->retval, &fault);
	if (fault) {
		/* unreadable: counted, never guessed */
		ds->deref_faults++;
		flags |= PB_RF_DEREF_FAULT;
		goto emit;
	}
	ds->events++;
	ds->units += units;
	key.resource = res;
	key.instance = instance;
	if (d->fx_mask & PB_FX_CALL_MASK)
		judge_call_effects(d, c, ds, instance, c->duration);
	if ((d->fx_mask & (1u << PB_FX_WAKES_WAITER_BIT)) && d->kind == EV_RELEASE)
		judge_release_wake(d, c, ds, instance);

	switch (d->kind) {
	case EV_WAIT:
		if (d->at == AT_SPAN) {
			dur = c->duration;
			flags |= PB_RF_SPAN_END;
			ds->total_ns += dur;
			ds->hist[log2_bucket(dur)]++;
			if (c->span_flags & WF_IO) {
				ds->io_spans++;
				ds->io_span_ns += dur;
			}
			if (c->span_flags & WF_RELEASE_WOKEN)
				ds->release_woken_spans++;
		}
		break;
	case EV_ACQUIRE: {
		struct inst_state ns = {};
		bool settled = false;
		int i, how = 0;

		st = bpf_map_lookup_elem(&instances, &key);
		if (st && st->pending_ts) {
			bool recent = c->now - st->pending_ts <= PB_REORDER_NS;
			bool released = st->pending_n[1] != 0;

			/* the held-back events came after this ACQUIRE: they
			 * meet its expectation when of an allowed kind */
			if (recent && ((st->pending_n[0] && d->expect_within[EV_USE]) ||
				       (released && d->expect_within[EV_RELEASE])))
				met = true;
			if (recent) {
				struct pb_engine_stats *es = estats();

				if (es)
					es->reordered++;
			} else {
				charge_tombstone(st, c, instance, res);
			}
			bpf_map_delete_elem(&instances, &key);
			st = NULL;
			if (recent && released) {
				/* observed late: the lifetime already ended */
				if (!(d->flags & PB_DF_GEN_COUNTER))
					gen = next_generation(res);
				owner = tid;
				flags |= PB_RF_REORDERED;
				break;
			}
		}
		/* Concurrent events on one key (a shared frame pinned by two
		 * threads at once, or pinned while its last holder releases
		 * it) race between lookup, insert and delete: retry until the
		 * entry is settled, at most ACQ_TRIES times, then count the
		 * identity as lost (instance_map_full), never guessed. */
		if (!(d->flags & PB_DF_GEN_COUNTER))
			gen = next_generation(res);	/* unused when it joins */
		ns.generation = gen;
		ns.acquire_ts = c->now;
		ns.units = (__s64)units;
		ns.cap_units = (__s64)units;
		ns.owner_tid = tid;
		ns.holders = 1;
		if ((d->flags & PB_DF_EXPECT) && !met) {
			ns.expect_ts = c->now;
			ns.expect_tid = tid;
			ns.expect_desc = di + 1;
		}
		/* settle the entry first (small loop), account after */
		for (i = 0; i < ACQ_TRIES; i++) {
			long err;

			if (st && st->pending_ts)
				break;	/* a tombstone appeared meanwhile */
			if (st && st->holders <= 0) {
				/* its last RELEASE ended it and is deleting it */
				settle_wait(&key);
				st = bpf_map_lookup_elem(&instances, &key);
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
				settle_wait(&key);
				st = bpf_map_lookup_elem(&instances, &key);
				continue;
			}
			if (st) {
				how = ACQ_REPLACE;
				break;
			}
			err = bpf_map_update_elem(&instances, &key, &ns, BPF_NOEXIST);
			if (!err) {
				how = ACQ_OPENED;
				break;
			}
			if (err != -EEXIST)
				break;	/* full */
			/* opened (or still being deleted) on another CPU */
			st = bpf_map_lookup_elem(&instances, &key);
		}
		owner = tid;
		if (how == ACQ_JOINED && st) {
			__sync_fetch_and_add(&st->units, (__s64)units);
			gen = st->generation;
			owner = st->owner_tid;
			flags |= PB_RF_SHARED_HOLD;
			rs->outstanding_units += (__s64)units;
			/* another holder of units already counted against the
			 * capacity: it takes none more */
			expect_check(st, EV_ACQUIRE, false, c, instance);
			expect_arm(st, d, c);
			settled = true;
		} else if (how == ACQ_REPLACE && st) {
			/* A new lifetime replaces one never released: the model
			 * says the instance was still owned. With a generation
			 * counter, a different generation means two lifetimes
			 * overlap. */
			if ((d->flags & PB_DF_GEN_COUNTER) && st->generation != gen)
				violation(d, c, ds, PB_INV_GEN_OVERLAP, instance, st->generation,
					  gen, st->owner_tid);
			else
				violation(d, c, ds, PB_INV_DOUBLE_ACQUIRE, instance, st->generation,
					  gen, st->owner_tid);
			/* the replaced lifetime ends here */
			expect_check(st, EV_ACQUIRE, true, c, instance);
			rs->outstanding_units += (__s64)units - st->units;
			cap_add(d, c, ds, res, (__s64)units - st->cap_units, instance, gen);
			st->generation = gen;
			st->acquire_ts = c->now;
			st->units = (__s64)units;
			st->cap_units = (__s64)units;
			st->owner_tid = tid;
			st->holders = 1;
			flags |= PB_RF_NEW_GENERATION;
			ds->new_generations++;
			expect_arm(st, d, c);
			settled = true;
		} else if (how == ACQ_OPENED) {
			rs->live_instances++;
			rs->outstanding_units += (__s64)units;
			flags |= PB_RF_NEW_GENERATION;
			ds->new_generations++;
			cap_add(d, c, ds, res, (__s64)units, instance, gen);
			settled = true;
		}
		if (!settled) {
			struct pb_engine_stats *es = estats();

			if (es)
				es->instance_map_full++;
			rs->state_full++;
			flags |= PB_RF_STATE_FULL;
			owner = tid;
		}
		hold_add(tid, res, 1);
		break;
	}
	case EV_USE:
		st = bpf_map_lookup_elem(&instances, &key);
		if (st && st->pending_ts && c->now - st->pending_ts > PB_REORDER_NS) {
			charge_tombstone(st, c, instance, res);
			bpf_map_delete_elem(&instances, &key);
			st = NULL;
		}
		if (st && !st->pending_ts) {
			if (!(d->flags & PB_DF_GEN_COUNTER))
				gen = st->generation;
			owner = st->owner_tid;
			expect_check(st, EV_USE, false, c, instance);
			expect_arm(st, d, c);
		} else if (!(d->flags & PB_DF_EXT_OWNED)) {
			ds->not_active++;
			flags |= PB_RF_NOT_ACTIVE;
			/* a violation unless its ACQUIRE shows up late */
			hold_back(st, &key, di, 0, c, &flags, rs);
		}
		break;
	case EV_RELEASE: {
		struct thread_state *t;
		__s32 old_holders;

		st = bpf_map_lookup_elem(&instances, &key);
		if (st && st->pending_ts && c->now - st->pending_ts > PB_REORDER_NS) {
			charge_tombstone(st, c, instance, res);
			bpf_map_delete_elem(&instances, &key);
			st = NULL;
		}
		if (!st || st->pending_ts) {
			ds->not_active++;
			flags |= PB_RF_NOT_ACTIVE;
			/* a violation unless its ACQUIRE shows up late */
			hold_back(st, &key, di, 1, c, &flags, rs);
			break;
		}
		old_holders = __sync_fetch_and_add(&st->holders, -1);
		if (old_holders <= 0) {
			/* ended by a concurrent RELEASE, being deleted: this
			 * one has no lifetime left to end */
			__sync_fetch_and_add(&st->holders, 1);
			ds->not_active++;
			flags |= PB_RF_NOT_ACTIVE;
			hold_back(NULL, &key, di, 1, c, &flags, rs);
			break;
		}
		if (!(d->flags & PB_DF_GEN_COUNTER))
			gen = st->generation;
		owner = st->owner_tid;
		rs->outstanding_units -= (__s64)units;
		__sync_fetch_and_add(&st->units, -(__s64)units);
		if (old_holders <= 1) {
			dur = c->now - st->acquire_ts;
			ds->total_ns += dur;
			ds->hist[log2_bucket(dur)]++;
			expect_check(st, EV_RELEASE, true, c, instance);
			cap_add(d, c, ds, res, -st->cap_units, instance, gen);
			bpf_map_delete_elem(&instances, &key);
			rs->live_instances--;
		} else {
			expect_check(st, EV_RELEASE, false, c, instance);
		}
		/* the holder is the releasing thread, else the acquirer */
		t = thread_get(tid, false);
		if (res < PB_THREAD_HOLD_RES && t && t->hold[res & (PB_THREAD_HOLD_RES - 1)] > 0)
			hold_add(tid, res, -1);
		else
			hold_add(owner, res, -1);
		t = thread_get(tid, true);
		if (t) {
			t->last_release_res = res + 1;
			t->last_release_ts = c->now;
		}
		break;
	}
	}
emit:
	if (!emit_events)
		return 0;
	r = rec_reserve(sizeof(*r));
	if (!r)
		return 0;
	rec_fill_hdr(&r->hdr, PB_REC_RESOURCE, sizeof(*r), c->now, c->pid_tgid);
	r->descriptor = di;
	r->resource = res;
	r->kind = d->kind;
	r->res_class = d->res_class;
	r->flags = flags;
	r->_pad = 0;
	r->instance = instance;
	r->generation = gen;
	r->units = units;
	r->target = target;
	r->duration_ns = dur;
	r->owner_tid = owner;
	r->_pad2 = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

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
	if (want_fx) {
		struct thread_state *t = thread_get(tid, true);

		if (t) {
			s->fx[dep].blocks = t->n_blocks;
			s->fx[dep].io = t->n_io;
			s->fx[dep].faults = t->n_faults;
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
#pragma unroll
	for (i = 0; i < 6; i++)
		args[i] = s->args[dep][i];
	if (!s->depth)
		bpf_map_delete_elem(&stashes, &k);
	return true;
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

SEC("uprobe.multi")
int pb_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), pid_tgid = bpf_get_current_pid_tgid();
	__u32 di = (__u32)cookie, tid = (__u32)pid_tgid;
	const struct pb_descriptor *d;
	struct ev_ctx c = {};

	if (!tracked_tgid(pid_tgid >> 32))
		return 0;
	d = bpf_map_lookup_elem(&descs, &di);
	if (!d || !(d->flags & PB_DF_VALID))
		return 0;
	regs_args(ctx, c.args);
	c.now = bpf_ktime_get_ns();
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
	return process_event(d, &c);
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

	if (!tracked_tgid(pid_tgid >> 32))
		return 0;
	d = bpf_map_lookup_elem(&descs, &di);
	if (!d || !(d->flags & PB_DF_VALID))
		return 0;
	c.now = bpf_ktime_get_ns();
	c.retval = PT_REGS_RC(ctx);
	c.pid_tgid = pid_tgid;
	c.descriptor = di;
	if (fx_want & (1u << PB_FX_WAKES_WAITER_BIT))
		resolve_pending_wake(tid, &c);
	/* span ends, argument-reading return events and return events with
	 * in-call predictions have an entry stash */
	if (d->at == AT_SPAN || d->instance.base == PB_VB_ARG || d->units.base == PB_VB_ARG ||
	    d->target.base == PB_VB_ARG || d->generation.base == PB_VB_ARG ||
	    d->guard.base == PB_VB_ARG || (d->fx_mask & PB_FX_CALL_MASK)) {
		have = stash_pop(tid, di, c.args, &ts, &c.fx);
		if (d->at == AT_SPAN)
			c.span_flags = wait_pop(tid);
		if (!have) {
			struct pb_engine_stats *es = estats();

			if (es)
				es->stash_missing++;
			return 0;
		}
		c.duration = c.now - ts;
	}
	return process_event(d, &c);
}

SEC("usdt")
int pb_usdt(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 di = (__u32)bpf_usdt_cookie(ctx);
	const struct pb_descriptor *d;
	struct ev_ctx c = {};
	int i, n;

	if (!tracked_tgid(pid_tgid >> 32))
		return 0;
	d = bpf_map_lookup_elem(&descs, &di);
	if (!d || !(d->flags & PB_DF_VALID))
		return 0;
	n = bpf_usdt_arg_cnt(ctx);
	for (i = 0; i < PB_NARGS && i < n; i++) {
		long v = 0;

		bpf_usdt_arg(ctx, i, &v);
		c.args[i] = (__u64)v;
	}
	c.now = bpf_ktime_get_ns();
	c.pid_tgid = pid_tgid;
	c.descriptor = di;
	if (fx_want & (1u << PB_FX_WAKES_WAITER_BIT))
		resolve_pending_wake((__u32)pid_tgid, &c);
	return process_event(d, &c);
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
	sc.c.pid_tgid = (__u64)filter_tgid << 32;
	bpf_for_each_map_elem(&instances, sweep_expect_one, &sc, 0);
	return 0;
}

#include "engine/effects.bpf.h"

char LICENSE[] SEC("license") = "GPL";
