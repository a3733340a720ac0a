/* SPDX-License-Identifier: GPL-2.0-only */
/* maps.bpf.h: the engine object's maps, per-thread state and the small
 * helpers on them (stats, ring-buffer records, thread state, generations,
 * holds). Included by engine.bpf.c; the other *.bpf.h pieces use these.
 */

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

/* per resource: set once an identity was lost (instance map full); from
 * then on "not active" may be the lost ACQUIRE's and is not judged */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_RESOURCES);
	__type(key, __u32);
	__type(value, __u64);
} res_lost SEC(".maps");

/* record --budget: per resource, the holds its window's open cut
 * (events.h struct pb_win_edge; RELEASEs of units acquired before it
 * opened), and the open window's open (win_open: 0 = none) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_RESOURCES);
	__type(key, __u32);
	__type(value, struct pb_win_edge);
} win_edge SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_RESOURCES);
	__type(key, __u32);
	__type(value, __u64);
} win_open SEC(".maps");

#define inst_key pb_inst_key
#define inst_state pb_inst_state

/* live generations and tombstones (events.h): an entry exists from ACQUIRE
 * to the last RELEASE, or from a held-back USE/RELEASE until charged */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);	/* engine_opts.max_instances */
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
	/* thread_state.queued_us at entry (mod 2^31: the stack has no room
	 * for one more word) and ok (0: no thread state at entry: unjudged) */
	__u32 queued_us : 31, ok : 1;
};
#define FX_QUEUED_MASK	0x7fffffffu

struct stash {
	__u32 depth;
	__u32 _pad;
	__u64 ts[PB_STASH_DEPTH];
	__u64 args[PB_STASH_DEPTH][6];
	struct fx_snap fx[PB_STASH_DEPTH];
	/* fx_epoch at the entry: a call whose return sees another epoch
	 * spanned a gate change and its in-call predictions are unjudged
	 * (kept here, not in fx_snap: ev_ctx has no room on the stack) */
	__u32 fx_ep[PB_STASH_DEPTH];
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
	__u32 queued_us;		/* time switched out runnable (preempted,
					 * yielded), summed (us): a call's in-call
					 * predictions judge only the time it ran
					 * or slept, not the time it queued */
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
	__u8 off_preempted;		/* switched out runnable (off_ts) */
	__u8 _pad2;
	__u32 preempt_last_us;		/* the last preempted interval (us), */
	__u64 preempt_in_ts;		/* and when it ended (back on CPU) */
	__u64 pend_wakes;		/* wait_wakes[pend_waiter] at the RELEASE */
	/* effects gate (fx_epoch): the epoch the effect-program state above
	 * (off_ts, off_preempted, io_pending, last_io_done_ts, blocked_desc,
	 * woke_desc) belongs to; thread_fx_sync() forgets it in a new one */
	__u32 fx_ep;
	__u32 pend_ep;			/* fx_epoch of the pending wakes_waiter */
	__u32 wait_ep[PB_WAIT_DEPTH];	/* fx_epoch at each WAIT span's start: a
					 * span older than the epoch has an unseen
					 * sleep/wake history (not a sleeper) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_state);
} thread_zero SEC(".maps");

/* threads blocked (asleep) inside a WAIT span, per WAIT descriptor
 * (global), counted in one epoch of the effects gate: the first use in
 * another epoch starts it from 0 (the sleepers of an earlier on period may
 * have been woken unseen) */
struct fx_sleepers {
	__s64 n;
	__u32 epoch;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PB_MAX_DESCRIPTORS);
	__type(key, __u32);
	__type(value, struct fx_sleepers);
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

/* Tracked processes (events.h, struct pb_proc); max_entries from
 * engine_opts.max_procs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pb_proc);
} procs SEC(".maps");

/* --cgroup: slot 0 holds the cgroup (v2) whose tasks --all may track */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* zero pb_proc to create entries from (keeps 72 bytes off the stack) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pb_proc);
} proc_zero SEC(".maps");

/* The tracked entry of a process, NULL when not tracked (unknown, or
 * excluded by --cgroup). */
static __always_inline struct pb_proc *proc_known(__u32 tgid)
{
	struct pb_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	if (!p || (p->flags & PB_PROC_EXCLUDED))
		return NULL;
	return p;
}

/* Add tgid with flags (its comm from the current task when it is the
 * current process); a full map is counted. */
static __always_inline struct pb_proc *proc_add(__u32 tgid, __u32 flags, __u32 ppid, __u64 now)
{
	struct pb_engine_stats *es = estats();
	__u32 zk = 0;
	struct pb_proc *z = bpf_map_lookup_elem(&proc_zero, &zk), *p;
	long err;

	if (!z)
		return NULL;
	err = bpf_map_update_elem(&procs, &tgid, z, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p) {
		if (es)
			__sync_fetch_and_add(&es->proc_map_full, 1);
		return NULL;
	}
	if (err)	/* added meanwhile by another CPU */
		return p;
	p->first_ts = now;
	p->flags = flags;
	p->ppid = ppid;
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == tgid)
		bpf_get_current_comm(p->comm, sizeof(p->comm));
	if (es)
		__sync_fetch_and_add(flags & PB_PROC_EXCLUDED ? &es->procs_excluded :
				     &es->procs_tracked, 1);
	return p;
}

/* A probe fired in tgid (the current process): is it recorded? With
 * --all the first hit adds the process (when --cgroup contains it; an
 * excluded process is remembered so the check runs once). */
static __always_inline bool probe_tracked(__u32 tgid, __u64 now)
{
	struct pb_proc *p;

	if (track_mode == PB_TRACK_ANY)
		return true;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		return !(p->flags & PB_PROC_EXCLUDED);
	if (track_mode != PB_TRACK_ALL)
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1) {
		proc_add(tgid, PB_PROC_EXCLUDED, 0, now);
		return false;
	}
	proc_add(tgid, PB_PROC_SEEN, 0, now);
	return true;	/* also when the map is full (counted) */
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

/* ---- effects gate (fx_epoch, engine__set_effects) ---- */

/* Bring t's effect-program state into epoch ep: what it held was seen in
 * another on period (an off period in between hid its switches, wakeups
 * and I/O), so it is forgotten, never carried. Its sleeper count is not
 * decremented: that count is stamped with its own epoch (sleepers_of). */
static __always_inline void thread_fx_sync(struct thread_state *t, __u32 ep)
{
	if (t->fx_ep == ep)
		return;
	t->off_ts = 0;
	t->off_preempted = 0;
	t->io_pending = 0;
	t->last_io_done_ts = 0;
	t->blocked_desc = 0;
	t->woke_desc = 0;
	t->fx_ep = ep;
}

/* The sleeper count of WAIT descriptor wd, to change in epoch ep: reset on
 * its first use in ep. The reset races with another CPU's first change in
 * ep (an increment lost): the count can only come out low, which judges
 * fewer RELEASEs (no sleeper: nothing pending), never fails one. */
static __always_inline __s64 *sleepers_of(__u32 wd, __u32 ep)
{
	struct fx_sleepers *s = bpf_map_lookup_elem(&wait_sleepers, &wd);
	__u32 old;

	if (!s)
		return NULL;
	old = s->epoch;
	if (old != ep && __sync_val_compare_and_swap(&s->epoch, old, ep) == old)
		s->n = 0;
	return &s->n;
}

/* Sleepers of wd now (read only): 0 when the count is another epoch's. */
static __always_inline __s64 sleepers_now(__u32 wd, __u32 ep, bool *found)
{
	struct fx_sleepers *s = bpf_map_lookup_elem(&wait_sleepers, &wd);

	*found = s != NULL;
	return s && s->epoch == ep ? s->n : 0;
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
