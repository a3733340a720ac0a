/* SPDX-License-Identifier: BSD-2-Clause */
/* engine.c: load the engine BPF object, fill its descriptor table from a
 * plan, attach, drain records and sum stats (see engine.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "engine/engine.h"
#include "engine/attach.h"
#include "engine/engine_int.h"
#include "common/clock.h"
#include "common/log.h"
#include "engine.skel.h"



void engine_note(struct engine *e, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	pr_warn("engine: %s\n", s);
	if (e->n_notes < ENGINE_MAX_NOTES)
		e->notes[e->n_notes++] = s;
	else
		free(s);
}

static void fill_value(struct pb_val_spec *o, const struct pb_value *v)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->base = (uint8_t)v->base;
	o->arg = v->arg;
	o->constant = v->constant;
	o->n_deref = v->n_deref > PB_MAX_DEREF ? PB_MAX_DEREF : v->n_deref;
	for (i = 0; i < o->n_deref; i++) {
		o->deref_size[i] = v->deref[i].size;
		o->deref_off[i] = v->deref[i].offset;
	}
	o->final_offset = v->final_offset;
	o->cast_size = v->cast_size;
	o->cast_signed = v->cast_signed;
}

/* The event's `expect` as the BPF side checks it (docs/validation.md,
 * invariant 4): per next kind, the largest bound of the entries allowing
 * it. Only ACQUIRE and USE arm an expectation (a RELEASE ending a lifetime
 * leaves no state to keep it; a WAIT's instance is rarely the held one),
 * and only when every entry has a bound: with an unbounded alternative
 * nothing can be called missed. */
static void fill_expect(struct pb_descriptor *d, const struct pb_event *ev)
{
	size_t i;
	int k;

	if (!ev->n_expect || (ev->kind != PB_EV_ACQUIRE && ev->kind != PB_EV_USE))
		return;
	for (i = 0; i < ev->n_expect; i++)
		if (!ev->expect[i].within_ns || !ev->expect[i].next_mask)
			return;
	for (i = 0; i < ev->n_expect; i++) {
		const struct pb_transition *t = &ev->expect[i];

		for (k = 0; k < PB_EV__COUNT && k < 4; k++)
			if ((t->next_mask & (1u << k)) && t->within_ns > d->expect_within[k])
				d->expect_within[k] = t->within_ns;
		if (t->within_ns > d->expect_max)
			d->expect_max = t->within_ns;
	}
	d->flags |= PB_DF_EXPECT;
}

static int fill_descriptors(struct engine *e)
{
	const struct plan *p = e->plan;
	const struct manifest *m = p->manifest;
	int fd = bpf_map__fd(e->skel->maps.descs);
	size_t i;

	for (i = 0; i < p->n_descriptors; i++) {
		const struct plan_descriptor *pd = &p->descriptors[i];
		const struct pb_event *ev = &m->events[pd->event];
		const struct pb_resource *r = &m->resources[ev->resource_idx];
		struct pb_descriptor d = {};
		uint32_t key = (uint32_t)i;

		d.kind = (uint8_t)ev->kind;
		d.at = (uint8_t)ev->site.at;
		d.res_class = (uint8_t)r->class;
		d.resource = (uint16_t)ev->resource_idx;
		d.target_resource = ev->target_resource_idx >= 0 ?
				    (uint16_t)ev->target_resource_idx : 0xffff;
		d.flags = pd->status == PLAN_DESC_OK ? PB_DF_VALID : 0;
		if (r->shared)
			d.flags |= PB_DF_SHARED;
		if (r->externally_owned)
			d.flags |= PB_DF_EXT_OWNED;
		if (r->scope == PB_SCOPE_SHARED)
			d.flags |= PB_DF_SCOPE_SHARED;
		if (r->generation == PB_GEN_COUNTER && ev->generation.base != PB_VAL_NONE)
			d.flags |= PB_DF_GEN_COUNTER;
		fill_value(&d.instance, &ev->instance);
		if (ev->units.base == PB_VAL_NONE) {
			d.units.base = PB_VB_CONST;
			d.units.constant = 1;
		} else {
			fill_value(&d.units, &ev->units);
		}
		if (ev->target.base != PB_VAL_NONE) {
			fill_value(&d.target, &ev->target);
			d.flags |= PB_DF_HAS_TARGET;
		}
		fill_value(&d.generation, &ev->generation);
		if (ev->when.present) {
			fill_value(&d.guard, &ev->when.lhs);
			d.guard_op = (uint8_t)ev->when.op;
			d.guard_rhs = ev->when.rhs;
			d.flags |= PB_DF_GUARD;
			/* signed iff the value has a signed cast (docs/manifest.md) */
			if (ev->when.lhs.cast_size && ev->when.lhs.cast_signed)
				d.flags |= PB_DF_GUARD_SIGNED;
		}
		if (r->has_capacity) {
			d.capacity = r->capacity;
			d.flags |= PB_DF_CAPACITY;
		}
		fill_expect(&d, ev);
		for (size_t k = 0; k < ev->n_predicts; k++) {
			const struct pb_prediction *pr = &ev->predicts[k];

			if (pr->effect >= PB_FX__COUNT)
				continue;
			d.fx_mask |= (uint8_t)(1u << pr->effect);
			d.fx_min_ns[pr->effect] = pr->min_duration_ns;
			if (pr->effect == PB_FX_WAKES_WAITER && pr->waiter_idx >= 0)
				d.fx_waiter = (uint32_t)pr->waiter_idx;
		}
		if (bpf_map_update_elem(fd, &key, &d, BPF_ANY))
			return -errno;
	}
	return 0;
}

_Static_assert(PB_FX__COUNT == PB_FX_SLOTS && PB_FX_OFF_CPU == PB_FX_OFF_CPU_BIT &&
		       PB_FX_BLOCK_IO == PB_FX_BLOCK_IO_BIT &&
		       PB_FX_PAGE_FAULT == PB_FX_PAGE_FAULT_BIT &&
		       PB_FX_WAKES_WAITER == PB_FX_WAKES_WAITER_BIT,
	       "enum pb_effect = PB_FX_*_BIT");

/* bit PB_FX_*_BIT per effect some descriptor of the plan predicts */
static uint32_t predicted_effects(const struct plan *p)
{
	const struct manifest *m = p->manifest;
	uint32_t mask = 0;
	size_t i, k;

	for (i = 0; i < p->n_descriptors; i++) {
		const struct pb_event *ev = &m->events[p->descriptors[i].event];

		for (k = 0; k < ev->n_predicts; k++)
			if (ev->predicts[k].effect < PB_FX__COUNT)
				mask |= 1u << ev->predicts[k].effect;
	}
	return mask;
}

/* Turn off each OS-effect program whose BTF tracepoint this kernel lacks,
 * and the two that only serve predictions nobody made (sched_waking,
 * block_bio_queue: they run on every wakeup / bio of the system); tell BPF
 * which predicted effects can be seen (fx_avail). */
static void check_tracepoints(struct engine *e, bool effects)
{
	bool have_switch = false, have_wakeup = false, have_block = false, have_fault = false;
	uint32_t want = predicted_effects(e->plan);
	static const struct {
		const char *tp;
		const char *what;
	} tps[] = {
		{ "sched_switch", "off-CPU time not joined to resources" },
		{ "sched_wakeup", "wakeup edges not recorded" },
		{ "sched_wakeup_new", "new-thread wakeups not recorded" },
		{ "sched_waking", "predictions of wakes_waiter are unjudged" },
		{ "block_bio_queue", "predictions of block_io are unjudged" },
		{ "block_rq_issue", "block I/O not joined to resources" },
		{ "block_rq_complete", "block I/O latency not recorded" },
		{ "page_fault_user", "page faults not joined to resources" },
		{ "sched_process_exit", "thread exits not recorded" },
		{ "sched_process_fork", "forked processes are not followed" },
	};
	struct bpf_program *prog;
	struct btf *vmlinux = btf__load_vmlinux_btf();
	size_t i;

	bpf_object__for_each_program(prog, e->skel->obj) {
		const char *sec = bpf_program__section_name(prog);
		const char *tp;
		char name[128];

		if (strncmp(sec, "tp_btf/", 7))
			continue;
		tp = sec + 7;
		if (!effects || (!strcmp(tp, "sched_process_fork") && !e->follow) ||
		    (!strcmp(tp, "sched_waking") &&
				 !(want & (1u << PB_FX_WAKES_WAITER_BIT))) ||
		    (!strcmp(tp, "block_bio_queue") && !(want & (1u << PB_FX_BLOCK_IO_BIT)))) {
			bpf_program__set_autoload(prog, false);
			continue;
		}
		snprintf(name, sizeof(name), "btf_trace_%s", tp);
		if (vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0) {
			have_switch |= !strcmp(tp, "sched_switch");
			have_wakeup |= !strcmp(tp, "sched_waking");
			have_block |= !strcmp(tp, "block_bio_queue");
			have_fault |= !strcmp(tp, "page_fault_user");
			continue;
		}
		bpf_program__set_autoload(prog, false);
		for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++)
			if (!strcmp(tps[i].tp, tp))
				break;
		engine_note(e, "tracepoint %s is missing on this kernel: %s", tp,
			    i < sizeof(tps) / sizeof(tps[0]) ? tps[i].what : "program off");
	}
	btf__free(vmlinux);
	e->skel->rodata->fx_want = want;
	e->skel->rodata->fx_avail = (have_switch ? 1u << PB_FX_OFF_CPU_BIT : 0) |
				    (have_block ? 1u << PB_FX_BLOCK_IO_BIT : 0) |
				    (have_fault ? 1u << PB_FX_PAGE_FAULT_BIT : 0) |
				    (have_switch && have_wakeup ? 1u << PB_FX_WAKES_WAITER_BIT : 0);
}

static size_t ringbuf_size(size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), sz = page;

	if (!want)
		return ENGINE_DEFAULT_RINGBUF;
	while (sz < want && sz < (1ull << 31))
		sz <<= 1;
	return sz;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct engine *e = ctx;
	int ret;

	if (!e->fn)
		return 0;
	ret = e->fn(data, len, e->fn_ctx);
	if (ret)
		e->fn_ret = ret;
	return ret;
}

/* The engine's user-space buffers: summed stats, per-CPU read buffers,
 * swept tombstone counts. */
static int engine_alloc(struct engine *e, const struct plan *p)
{
	e->plan = p;
	e->n_desc = (uint32_t)p->n_descriptors;
	e->n_res = (uint32_t)p->manifest->n_resources;
	e->ncpu = libbpf_num_possible_cpus();
	if (e->ncpu <= 0)
		return e->ncpu ? e->ncpu : -EINVAL;
	e->desc = calloc(e->n_desc + 1, sizeof(*e->desc));
	e->res = calloc(e->n_res + 1, sizeof(*e->res));
	e->desc_pcpu = calloc(e->ncpu, sizeof(*e->desc_pcpu));
	e->res_pcpu = calloc(e->ncpu, sizeof(*e->res_pcpu));
	e->eng_pcpu = calloc(e->ncpu, sizeof(*e->eng_pcpu));
	e->swept_use = calloc(e->n_desc + 1, sizeof(*e->swept_use));
	e->swept_release = calloc(e->n_desc + 1, sizeof(*e->swept_release));
	e->expired = calloc(ENGINE_SWEEP_MAX, sizeof(*e->expired));
	if (!e->desc || !e->res || !e->desc_pcpu || !e->res_pcpu || !e->eng_pcpu ||
	    !e->swept_use || !e->swept_release || !e->expired)
		return -ENOMEM;
	return 0;
}

/* Open the BPF object and configure it before load: rodata, ring-buffer
 * size, the OS-effect programs this kernel has. */
static int engine_open(struct engine *e, const struct engine_opts *opts)
{
	int err;

	e->skel = engine_bpf__open();
	if (!e->skel) {
		err = -errno;
		pr_warn("engine: cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	e->mode = opts->all || opts->cgroup ? PB_TRACK_ALL :
		  opts->pid > 0 || opts->n_pids ? PB_TRACK_SET : PB_TRACK_ANY;
	e->follow = opts->follow_forks && e->mode != PB_TRACK_ANY;
	e->skel->rodata->track_mode = e->mode;
	e->skel->rodata->follow_fork = e->follow;
	e->skel->rodata->filter_cgroup = opts->cgroup != NULL;
	e->skel->rodata->emit_events = opts->events;
	e->skel->rodata->stack_rate = opts->stacks_per_sec;
	err = bpf_map__set_max_entries(e->skel->maps.events,
				       (uint32_t)(opts->events ? ringbuf_size(opts->ringbuf_bytes) :
						   opts->stacks_per_sec ? ENGINE_STACKS_RINGBUF :
						   ENGINE_SAMPLES_RINGBUF));
	if (!err)
		err = bpf_map__set_max_entries(e->skel->maps.instances, opts->max_instances ?
					       opts->max_instances : ENGINE_DEFAULT_INSTANCES);
	if (!err)
		err = bpf_map__set_max_entries(e->skel->maps.procs, opts->max_procs ?
					       opts->max_procs : ENGINE_DEFAULT_PROCS);
	if (err)
		return err;
	check_tracepoints(e, e->mode != PB_TRACK_ANY);
	if (e->mode == PB_TRACK_ANY)
		engine_note(e, "no target pid: OS effects (scheduler, I/O, faults) are not joined");
	return engine_fx_init(e, opts);
}

/* Load, fill the descriptor table, attach the OS-effect programs, then the
 * probes of the plan; open the ring buffer. */
static int engine_load_attach(struct engine *e, const struct engine_opts *opts)
{
	struct attacher_opts ao = { 0 };
	int err;

	err = engine_bpf__load(e->skel);
	if (err) {
		pr_warn("engine: cannot load the BPF object: %s\n", strerror(-err));
		return err;
	}
	err = fill_descriptors(e);
	if (err) {
		pr_warn("engine: cannot fill the descriptor table: %s\n", strerror(-err));
		return err;
	}
	err = engine_set_cgroup(e, opts->cgroup);
	if (!err)
		err = engine_add_given_procs(e, opts);
	if (err)
		return err;
	err = engine_bpf__attach(e->skel);	/* the tp_btf programs */
	if (err) {
		pr_warn("engine: cannot attach the OS-effect programs: %s\n", strerror(-err));
		return err;
	}
	ao.entry_prog = e->skel->progs.pb_entry;
	ao.return_prog = e->skel->progs.pb_return;
	ao.usdt_prog = e->skel->progs.pb_usdt;
	ao.split = opts->split_links;
	/* one process, not followed: the kernel filters (no trap elsewhere);
	 * otherwise every process mapping the file traps and BPF filters */
	ao.pid = e->mode == PB_TRACK_SET && !opts->n_pids && !opts->follow_forks &&
		 opts->pid > 0 ? opts->pid : -1;
	e->attacher = attacher__new(e->plan, &ao);
	if (!e->attacher)
		return -errno;
	e->sweep_expect = true;
	e->sweep_exits = e->mode != PB_TRACK_ANY;
	e->sweep_every_ns = opts->sweep_every_ns;
	/* always: violation samples come even in aggregate mode */
	e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.events), on_record, e, NULL);
	if (!e->rb)
		return -errno;
	return 0;
}

struct engine *engine__new(const struct plan *p, const struct engine_opts *opts)
{
	struct engine *e;
	int err;

	if (!p || !opts || p->n_descriptors > PB_MAX_DESCRIPTORS ||
	    p->manifest->n_resources > PB_MAX_RESOURCES) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cgroup_fd = e->stats_fd = -1;
	err = engine_alloc(e, p);
	if (!err)
		err = engine_open(e, opts);
	if (!err)
		err = engine_load_attach(e, opts);
	if (err)
		goto err;
	return e;
err:
	engine__free(e);
	errno = err < 0 ? -err : EINVAL;
	return NULL;
}

int engine__poll(struct engine *e, int timeout_ms, engine_record_fn fn, void *ctx)
{
	int n;

	if (!e->rb)
		return 0;
	e->fn = fn;
	e->fn_ctx = ctx;
	e->fn_ret = 0;
	n = ring_buffer__consume(e->rb);
	if (n == 0 && timeout_ms > 0 && !e->fn_ret) {
		struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		n = ring_buffer__consume(e->rb);
	}
	e->fn = NULL;
	if (e->fn_ret)
		return e->fn_ret;
	return n;
}

/* Charge the tombstones (events.h) that expired without their key being
 * touched again: USE/RELEASE of instances never ACQUIREd. Keys are
 * collected first and deleted after the walk (deleting during
 * get_next_key restarts a hash walk). A BPF program touching a key between
 * the read and the delete can make one count twice or not at all. */
static void sweep_tombstones(struct engine *e, uint64_t now)
{
	int fd = bpf_map__fd(e->skel->maps.instances);
	struct pb_inst_key cur, next;
	struct pb_inst_state st;
	bool first = true;
	size_t n = 0, i;

	while (n < ENGINE_SWEEP_MAX && !bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		first = false;
		cur = next;
		if (bpf_map_lookup_elem(fd, &cur, &st) || !st.pending_ts ||
		    now < st.pending_ts || now - st.pending_ts <= PB_REORDER_NS)
			continue;
		if (cur.resource < PB_MAX_RESOURCES && e->windowed[cur.resource])
			/* record --budget: the ACQUIRE may have fallen in a gap */
			e->window_swept += (uint64_t)st.pending_n[0] + st.pending_n[1];
		else if (st.pending_desc[0] && st.pending_desc[0] <= e->n_desc)
			e->swept_use[st.pending_desc[0] - 1] += st.pending_n[0];
		if (!(cur.resource < PB_MAX_RESOURCES && e->windowed[cur.resource]) &&
		    st.pending_desc[1] && st.pending_desc[1] <= e->n_desc)
			e->swept_release[st.pending_desc[1] - 1] += st.pending_n[1];
		e->expired[n++] = cur;
	}
	for (i = 0; i < n; i++)
		if (!bpf_map_delete_elem(fd, &e->expired[i]))
			e->swept++;
}

/* Charge the expectations (invariant 4) of instances not touched since
 * their bound passed: the BPF sweep program walks the instance map in the
 * kernel, claiming each miss with the same compare-and-swap as the event
 * path (a user-space read-modify-write of an entry would race with the
 * probes' atomic updates). */
static void sweep_expectations(struct engine *e)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	int err;

	if (!e->sweep_expect)
		return;
	err = bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.pb_sweep_expect), &o);
	if (err) {
		e->sweep_expect = false;
		engine_note(e, "expectation sweep unavailable (%s): misses of instances never "
			    "touched again are not counted", strerror(errno));
		return;
	}
}

/* End the instances of processes that exited (pb_sweep_exits, in the
 * kernel for the same reason as the expectation sweep). Processes that
 * exited before the sweep started may be forgotten after it. */
static void sweep_exits(struct engine *e)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	uint64_t start = pb_mono_ns();

	if (!e->sweep_exits)
		return;
	if (bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.pb_sweep_exits), &o)) {
		e->sweep_exits = false;
		engine_note(e, "exit sweep unavailable (%s): instances of exited processes stay "
			    "live", strerror(errno));
		return;
	}
	e->exit_swept_ts = start;
}

/* Add the per-CPU descriptor stats into e->desc (zeroed by the caller), with the violations of
 * swept tombstones. */
static int sum_desc_stats(struct engine *e)
{
	int dfd = bpf_map__fd(e->skel->maps.desc_stats);
	uint32_t i, k, c;

	for (i = 0; i < e->n_desc; i++) {
		struct pb_desc_stats *d = &e->desc[i];

		if (bpf_map_lookup_elem(dfd, &i, e->desc_pcpu))
			return -errno;
		for (c = 0; c < (uint32_t)e->ncpu; c++) {
			const struct pb_desc_stats *s = &e->desc_pcpu[c];

			d->hits += s->hits;
			d->events += s->events;
			d->guard_rejected += s->guard_rejected;
			d->deref_faults += s->deref_faults;
			d->new_generations += s->new_generations;
			d->not_active += s->not_active;
			d->units += s->units;
			d->total_ns += s->total_ns;
			for (k = 0; k < PB_HIST_BUCKETS; k++)
				d->hist[k] += s->hist[k];
			d->off_cpu_ns += s->off_cpu_ns;
			d->wakeups += s->wakeups;
			d->io_wakeups += s->io_wakeups;
			d->release_wakeups += s->release_wakeups;
			d->io_spans += s->io_spans;
			d->io_span_ns += s->io_span_ns;
			d->release_woken_spans += s->release_woken_spans;
			for (k = 0; k < PB_INV_SLOTS; k++)
				d->violations[k] += s->violations[k];
			for (k = 0; k < PB_FX_SLOTS; k++) {
				d->pred_checked[k] += s->pred_checked[k];
				d->pred_failed[k] += s->pred_failed[k];
				d->pred_unjudged[k] += s->pred_unjudged[k];
			}
		}
		d->violations[PB_INV_USE_NOT_ACQUIRED] += e->swept_use[i];
		d->violations[PB_INV_RELEASE_NOT_ACTIVE] += e->swept_release[i];
	}
	return 0;
}

/* Add the per-CPU resource stats into e->res (zeroed by the caller). */
static int sum_res_stats(struct engine *e)
{
	int rfd = bpf_map__fd(e->skel->maps.res_stats);
	uint32_t i, c;

	for (i = 0; i < e->n_res; i++) {
		struct pb_res_stats *r = &e->res[i];

		if (bpf_map_lookup_elem(rfd, &i, e->res_pcpu))
			return -errno;
		for (c = 0; c < (uint32_t)e->ncpu; c++) {
			const struct pb_res_stats *s = &e->res_pcpu[c];

			r->live_instances += s->live_instances;
			r->outstanding_units += s->outstanding_units;
			r->off_cpu_wait_ns += s->off_cpu_wait_ns;
			r->off_cpu_hold_ns += s->off_cpu_hold_ns;
			r->io_while_holding += s->io_while_holding;
			r->io_bytes_while_holding += s->io_bytes_while_holding;
			r->faults_while_holding += s->faults_while_holding;
			r->wakeups_from_release += s->wakeups_from_release;
			r->state_full += s->state_full;
			r->exit_ended += s->exit_ended;
			r->exit_outlived += s->exit_outlived;
			r->exit_units += s->exit_units;
		}
	}
	return 0;
}

/* Add the per-CPU engine stats into out (zeroed by the caller). */
static int sum_engine_stats(struct engine *e, struct pb_engine_stats *out)
{
	int efd = bpf_map__fd(e->skel->maps.engine_stats);
	uint32_t i = 0, c;

	if (bpf_map_lookup_elem(efd, &i, e->eng_pcpu))
		return -errno;
	for (c = 0; c < (uint32_t)e->ncpu; c++) {
		const struct pb_engine_stats *s = &e->eng_pcpu[c];

		out->ringbuf_drops += s->ringbuf_drops;
		out->instance_map_full += s->instance_map_full;
		out->thread_map_full += s->thread_map_full;
		out->span_overflow += s->span_overflow;
		out->records += s->records;
		out->stash_missing += s->stash_missing;
		out->effects_events += s->effects_events;
		out->reordered += s->reordered;
		out->proc_map_full += s->proc_map_full;
		out->procs_tracked += s->procs_tracked;
		out->procs_exited += s->procs_exited;
		out->procs_excluded += s->procs_excluded;
		out->lost_unjudged += s->lost_unjudged;
		out->stacks += s->stacks;
		out->stacks_rate_limited += s->stacks_rate_limited;
		out->stacks_lost += s->stacks_lost;
		out->stacks_failed += s->stacks_failed;
		out->stacks_truncated += s->stacks_truncated;
		out->pred_moved += s->pred_moved;
		out->window_unjudged += s->window_unjudged;
	}
	return 0;
}

void engine__sweep_next(struct engine *e)
{
	e->sweep_force = true;
}

int engine__snapshot(struct engine *e, struct engine_snapshot *out)
{
	uint64_t now;
	int err;

	now = pb_mono_ns();
	/* each sweep walks a whole map (1-2.5 ms here): under record
	 * --budget they run once a second, not at every snapshot */
	if (!e->sweep_every_ns || e->sweep_force || now - e->sweep_last_ns >= e->sweep_every_ns) {
		sweep_expectations(e);
		sweep_exits(e);
		e->sweep_last_ns = now;
		e->sweep_force = false;
		now = pb_mono_ns();
	}
	sweep_tombstones(e, now);
	memset(e->desc, 0, e->n_desc * sizeof(*e->desc));
	memset(e->res, 0, e->n_res * sizeof(*e->res));
	memset(&out->engine, 0, sizeof(out->engine));
	err = sum_desc_stats(e);
	if (!err)
		err = sum_res_stats(e);
	if (!err)
		err = sum_engine_stats(e, &out->engine);
	if (err)
		return err;
	engine_count_idle(e, now);
	out->engine.tombstones_swept = e->swept;
	out->engine.window_unjudged += e->window_swept;
	engine_fx_stats(e, &out->engine, now);
	out->ts_ns = now;
	out->n_desc = e->n_desc;
	out->n_res = e->n_res;
	out->desc = e->desc;
	out->res = e->res;
	return 0;
}

size_t engine__n_notes(const struct engine *e)
{
	return e ? e->n_notes : 0;
}

const char *engine__note(const struct engine *e, size_t i)
{
	return e && i < e->n_notes ? e->notes[i] : NULL;
}

int engine__desc_hits(struct engine *e, uint64_t *hits, size_t n)
{
	int dfd = bpf_map__fd(e->skel->maps.desc_stats);
	uint32_t i, c;

	for (i = 0; i < e->n_desc && i < n; i++) {
		if (bpf_map_lookup_elem(dfd, &i, e->desc_pcpu))
			return -errno;
		hits[i] = 0;
		for (c = 0; c < (uint32_t)e->ncpu; c++)
			hits[i] += e->desc_pcpu[c].hits;
	}
	return 0;
}

/* the argument stashes of desc (keys {tid, descriptor}, maps.bpf.h): a
 * call whose entry fired before a detach and whose return came after
 * leaves one, which a return in the next window would pop as its own */
static void drop_stashes(struct engine *e, uint32_t desc)
{
	struct { uint32_t tid, descriptor; } cur, next, *keys;
	int fd = bpf_map__fd(e->skel->maps.stashes);
	size_t n = 0, cap = ENGINE_SWEEP_MAX, i;
	bool first = true;

	keys = calloc(cap, sizeof(*keys));
	if (!keys)
		return;
	while (n < cap && !bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		first = false;
		cur = next;
		if (cur.descriptor == desc)
			keys[n++] = cur;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	free(keys);
}

int engine__pause_desc(struct engine *e, uint32_t desc, bool paused)
{
	int fd;
	struct pb_descriptor d;

	if (!e || desc >= e->n_desc)
		return -EINVAL;
	fd = bpf_map__fd(e->skel->maps.descs);
	if (bpf_map_lookup_elem(fd, &desc, &d))
		return -errno;
	if (paused)
		d.flags |= PB_DF_PAUSED;
	else
		d.flags &= ~PB_DF_PAUSED;
	return bpf_map_update_elem(fd, &desc, &d, BPF_EXIST) ? -errno : 0;
}

int engine__set_desc(struct engine *e, uint32_t desc, bool on, size_t *changed)
{
	int err;

	if (!e || desc >= e->n_desc)
		return -EINVAL;
	err = attacher__set_desc(e->attacher, (int)desc, on, changed);
	if (!on)
		drop_stashes(e, desc);
	return err;
}

int engine__detach_descs(struct engine *e, const uint32_t *descs, size_t n, size_t *changed)
{
	int err;

	if (!e)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (descs[i] >= e->n_desc)
			return -EINVAL;
	err = attacher__detach_descs(e->attacher, descs, n, changed);
	for (size_t i = 0; i < n && !err; i++)
		drop_stashes(e, descs[i]);
	return err;
}

size_t engine__n_links(const struct engine *e)
{
	return e ? attacher__n_links(e->attacher) : 0;
}

void engine__free(struct engine *e)
{
	size_t i;

	if (!e)
		return;
	ring_buffer__free(e->rb);
	attacher__free(e->attacher);
	if (e->cgroup_fd >= 0)
		close(e->cgroup_fd);
	engine_bpf__destroy(e->skel);
	engine_fx_free(e);
	for (i = 0; i < e->n_notes; i++)
		free(e->notes[i]);
	free(e->desc);
	free(e->res);
	free(e->desc_pcpu);
	free(e->res_pcpu);
	free(e->eng_pcpu);
	free(e->swept_use);
	free(e->swept_release);
	free(e->expired);
	free(e);
}
