/* SPDX-License-Identifier: BSD-2-Clause */
/* itable_load.c: filling the generation interval table (itable.h): a
 * store's lifecycle log entries (loads, activations, link updates,
 * retirements, unloads, observer start/stop) and a sample file's snapshot
 * and side-band records. Nothing is sorted or paired here; that is
 * attr_table__build (itable_build.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/itable_int.h"
#include "common/log.h"
#include "receipts/lifelog.h"

/* ------------------------------- helpers -------------------------------- */

/* One JIT address range of prog, alive from [start_lo, start_hi] until at
 * least start_hi; its end is settled by the build. NULL: out of memory. */
static struct addr_iv *add_jit_iv(struct attr_table *t, uint64_t addr, uint32_t len, uint32_t prog_id,
				  const char *tag, uint64_t start_lo, uint64_t start_hi, int src)
{
	struct addr_iv *iv = itable_new_iv(t);

	if (!iv)
		return NULL;
	iv->addr = addr;
	iv->len = len;
	iv->prog_id = prog_id;
	itable_copy_tag(iv->tag, tag);
	iv->start_lo = start_lo;
	iv->start_hi = start_hi;
	iv->end_lo = start_hi;
	iv->src = src;
	return iv;
}

/* A lifecycle entry that does not decode still fills every field that
 * does (receipts/lifelog.h): the table uses those, as a reader of a
 * damaged log should; a sample file record that does not decode reads as
 * empty (samples.h). Either way it is said at debug level. */
static void note_undecoded(const char *what, size_t i, const json_error_t *err)
{
	pr_debug("attribute: %s %zu: %s; using the fields that decoded\n", what, i, err->text);
}

static int gen_index(struct attr_table *t, const char *id)
{
	char **slot;
	size_t i;

	if (!id || !*id)
		return -1;
	for (i = 0; i < t->n_gens; i++)
		if (!strcmp(t->gens[i], id))
			return (int)i;
	slot = PUSH(t, gens);
	if (!slot || !(*slot = strdup(id)))
		return -1;
	return (int)t->n_gens++;
}

/* ------------------------------ lifecycle log ------------------------------ */

static int add_loaded(struct attr_table *t, const struct lifelog_entry *e)
{
	const json_t *r;
	struct prog_load *pl;
	uint64_t pre;
	size_t i;

	if (!e->prog_id)
		return 0;
	pl = PUSH(t, loads);
	if (!pl)
		return -ENOMEM;
	memset(pl, 0, sizeof(*pl));
	pl->prog_id = e->prog_id;
	itable_copy_tag(pl->tag, e->prog_tag);
	pl->gen = gen_index(t, e->generation_id);
	pl->library = !strcmp(e->source ?: "", "library");
	pl->mono = e->mono_ns;
	t->n_loads++;
	/* the JIT image exists from inside the load: before this entry by
	 * at most the load and capture time it reports */
	pre = e->load_ns + e->capture_ns;
	json_array_foreach(e->jit_ranges, i, r) {
		struct lifelog_jit_range jr;
		json_error_t jerr;

		if (lifelog_jit_range__decode(r, &jr, &jerr))
			note_undecoded("jit range", i, &jerr);
		if (!jr.addr)
			continue;
		if (!add_jit_iv(t, jr.addr, jr.len, e->prog_id, pl->tag,
				e->mono_ns > pre ? e->mono_ns - pre : 0, e->mono_ns, SRC_LIFELOG))
			return -ENOMEM;
	}
	return 0;
}

/* the program was alive at mono (an activation or retirement names it) */
static void prove_alive(struct attr_table *t, uint32_t prog, uint64_t mono)
{
	size_t i;

	for (i = 0; prog && i < t->n_ivs; i++) {
		struct addr_iv *iv = &t->ivs[i];

		if (iv->prog_id == prog && (iv->src & SRC_LIFELOG) && !iv->end_observed &&
		    iv->start_lo <= mono && mono <= iv->end_hi && mono > iv->end_lo)
			iv->end_lo = mono;
	}
}

/* the unregistration of interval iv among the unloaded entry's ksymbols */
static void find_unregistration(struct addr_iv *iv, const json_t *ksyms)
{
	const json_t *k;
	size_t j;

	json_array_foreach(ksyms, j, k) {
		struct lifelog_ksym ks;
		json_error_t jerr;

		if (lifelog_ksym__decode(k, &ks, &jerr))
			note_undecoded("unregistered ksymbol", j, &jerr);
		if (ks.addr && ks.addr == iv->addr && ks.mono_ns) {
			iv->end_lo = iv->end_hi = ks.mono_ns;
			iv->end_observed = true;
		}
	}
}

static void add_unloaded(struct attr_table *t, const struct lifelog_entry *e)
{
	size_t i;

	for (i = 0; e->prog_id && i < t->n_ivs; i++) {
		struct addr_iv *iv = &t->ivs[i];

		if (iv->prog_id != e->prog_id || !(iv->src & SRC_LIFELOG) || iv->end_observed ||
		    iv->start_lo > e->mono_ns)
			continue;
		if (e->mono_ns < iv->end_hi)
			iv->end_hi = e->mono_ns;
		find_unregistration(iv, e->ksymbols_unregistered);
		if (iv->end_lo > iv->end_hi)
			iv->end_lo = iv->end_hi;
	}
}

static struct handoff *new_handoff(struct attr_table *t)
{
	struct handoff *h = PUSH(t, hos);

	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h));
	h->new_gen = h->old_gen = -1;
	t->n_hos++;
	return h;
}

static int add_activated(struct attr_table *t, const struct lifelog_entry *e)
{
	struct handoff *h;
	char num[32];

	if (e->has_link && e->link.id > 0) {
		snprintf(num, sizeof(num), "%u", e->link.id);
		h = new_handoff(t);
		if (!h)
			return -ENOMEM;
		attr_table__link_key(num, h->key, sizeof(h->key));
	} else if (e->hook) {
		h = new_handoff(t);
		if (!h)
			return -ENOMEM;
		snprintf(h->key, sizeof(h->key), "hook:%s", e->hook);
	} else {
		return 0;	/* an activation on nothing we can name */
	}
	h->t_lo = e->swap_begin_mono_ns;
	h->t_hi = e->swap_end_mono_ns;
	if (!h->t_lo && !h->t_hi)
		h->t_lo = h->t_hi = e->mono_ns;
	if (h->t_hi < h->t_lo)
		h->t_hi = h->t_lo;
	h->new_gen = gen_index(t, e->generation_id);
	h->new_prog = e->prog_id;
	if (e->replaces) {
		h->has_old = true;
		h->old_gen = gen_index(t, e->replaces);
	}
	if (e->old_prog_id) {	/* the kernel's word on the predecessor */
		h->has_old = true;
		h->old_prog = e->old_prog_id;
	}
	h->swapper = true;
	prove_alive(t, h->new_prog, h->t_hi);
	return 0;
}

static int add_link_updated(struct attr_table *t, const struct lifelog_entry *e)
{
	struct handoff *h;
	char num[32];

	if (!e->link_id)
		return 0;
	h = new_handoff(t);
	if (!h)
		return -ENOMEM;
	snprintf(num, sizeof(num), "%u", e->link_id);
	attr_table__link_key(num, h->key, sizeof(h->key));
	h->t_lo = e->syscall_enter_mono_ns;
	h->t_hi = e->syscall_exit_mono_ns;
	if (h->t_hi < h->t_lo)
		h->t_hi = h->t_lo;
	h->new_gen = gen_index(t, e->new_generation_id);
	h->new_prog = e->new_prog_id;
	if (!strcmp(e->op ?: "", "create")) {
		h->has_old = true;	/* nothing was installed before */
	} else if (e->old_prog_id) {
		h->has_old = true;
		h->old_prog = e->old_prog_id;
		h->old_gen = gen_index(t, e->old_generation_id);
	}
	h->observer = true;
	return 0;
}

static int add_end(struct attr_table *t, const struct lifelog_entry *e, bool unloaded)
{
	struct gen_end *ge;
	int g = gen_index(t, e->generation_id);

	if (g < 0)
		return 0;
	ge = PUSH(t, ends);
	if (!ge)
		return -ENOMEM;
	ge->gen = g;
	ge->prog_id = e->prog_id;
	ge->mono = e->mono_ns;
	ge->unloaded = unloaded;
	snprintf(ge->reason, sizeof(ge->reason), "%s", unloaded ? "unloaded" : e->reason ?: "");
	t->n_ends++;
	return 0;
}

static int add_window(struct window **arr, size_t *n, size_t *cap, uint64_t lo, uint64_t hi, uint64_t count)
{
	if (PB_ARRAY_RESERVE_ONE(*arr, *n, *cap))
		return -ENOMEM;
	(*arr)[(*n)++] = (struct window){ lo, hi, count, -1 };
	return 0;
}

/* observer start/stop pairs (es[0..idx] decoded): what they missed
 * becomes lost windows */
static int add_observer(struct attr_table *t, const struct lifelog_entry *es, size_t idx)
{
	const struct lifelog_entry *e = &es[idx];
	const struct lifelog_observer_stats *st = &e->stats;
	uint64_t start = 0, perf, sys;
	size_t i;
	int err;

	if (strcmp(e->event ?: "", "stop"))
		return 0;
	for (i = idx; i-- > 0;) {
		if (es[i].kind == LIFE_OBSERVER && !strcmp(es[i].event ?: "", "start") && es[i].pid == e->pid) {
			start = es[i].mono_ns;
			break;
		}
	}
	perf = st->missed.perf_records_lost;
	sys = st->missed.ringbuf_dropped + st->missed.syscalls_not_followed;
	if (perf && (err = add_window(&t->lost, &t->n_lost, &t->cap_lost, start, e->mono_ns, perf)))
		return err;
	if (sys && (err = add_window(&t->link_lost, &t->n_link_lost, &t->cap_link_lost, start, e->mono_ns, sys)))
		return err;
	return 0;
}

/* Every entry decoded, in log order (n: the array's size). NULL + errno. */
static struct lifelog_entry *decode_entries(const json_t *entries, size_t *n)
{
	struct lifelog_entry *es;
	const json_t *e;
	json_error_t jerr;
	size_t i;

	*n = json_array_size(entries);
	es = calloc(*n ? *n : 1, sizeof(*es));
	if (!es)
		return NULL;
	json_array_foreach(entries, i, e)
		if (lifelog_entry__decode(e, &es[i], &jerr))
			note_undecoded("lifecycle entry", i, &jerr);
	return es;
}

/* entry i of the second pass: everything that refers to the loads */
static int add_entry(struct attr_table *t, const struct lifelog_entry *es, size_t i)
{
	const struct lifelog_entry *e = &es[i];

	switch (e->kind) {
	case LIFE_ACTIVATED:
		return add_activated(t, e);
	case LIFE_LINK_UPDATED:
		return add_link_updated(t, e);
	case LIFE_RETIRED:
		prove_alive(t, e->prog_id, e->mono_ns);
		return add_end(t, e, false);
	case LIFE_UNLOADED:
		add_unloaded(t, e);
		return add_end(t, e, true);
	case LIFE_OBSERVER:
		return add_observer(t, es, i);
	default:
		return 0;
	}
}

/* Group commit (receipts/group.c): when the log's last group never
 * reached its "final" watermark, only the entries its last watermark
 * covers are durable; the rest are left out and time after the last
 * durable entry is unknown (the horizon). Returns how many to load. */
static size_t durable_prefix(struct attr_table *t, const struct lifelog_entry *es, size_t n)
{
	int64_t through = -1;
	bool open = false;
	size_t i, keep = 0;

	for (i = 0; i < n; i++) {
		if (es[i].kind != LIFE_DURABLE || !es[i].durable_state)
			continue;
		if (!strcmp(es[i].durable_state, DURABLE_FINAL)) {
			open = false;
		} else {
			if (!open || es[i].through_seq > through)
				through = es[i].through_seq;
			open = true;
		}
	}
	if (!open)
		return n;
	while (keep < n && es[keep].seq <= through)
		keep++;
	t->n_not_durable += n - keep;
	if (keep && (!t->durable_horizon || es[keep - 1].mono_ns < t->durable_horizon))
		t->durable_horizon = es[keep - 1].mono_ns ?: 1;
	if (!keep)
		t->durable_horizon = 1;
	return keep;
}

int attr_table__add_lifelog(struct attr_table *t, const json_t *entries)
{
	struct lifelog_entry *es;
	size_t i, n;
	int err = 0;

	if (!json_is_array(entries))
		return -EINVAL;
	es = decode_entries(entries, &n);
	if (!es)
		return -ENOMEM;
	t->built = false;
	n = durable_prefix(t, es, n);
	/* loads first: activations and unloads refer to their intervals */
	for (i = 0; i < n && !err; i++) {
		struct time_pair *tp;

		if (es[i].mono_ns && es[i].realtime_ns && (tp = PUSH(t, clocks))) {
			tp->mono = es[i].mono_ns;
			tp->real = es[i].realtime_ns;
			t->n_clocks++;
		}
		if (es[i].kind == LIFE_LOADED)
			err = add_loaded(t, &es[i]);
	}
	for (i = 0; i < n && !err; i++)
		err = add_entry(t, es, i);
	free(es);
	return err;
}

/* ------------------------------ sample file ------------------------------ */

/* one program of the snapshot: its JIT ranges alive since before mono */
static int add_snapshot_prog(struct attr_table *t, const struct sf_snapshot_prog *p, uint64_t mono)
{
	const json_t *r;
	size_t j;

	json_array_foreach(p->jit_ranges, j, r) {
		struct sf_jit_range jr;
		struct addr_iv *iv;
		json_error_t jerr;

		if (sf_jit_range__decode(r, &jr, &jerr))
			note_undecoded("snapshot jit range", j, &jerr);
		if (!jr.addr)
			continue;
		iv = add_jit_iv(t, jr.addr, jr.len, p->id, p->tag, 0, mono, SRC_SNAPSHOT);
		if (!iv)
			return -ENOMEM;
		iv->watched = true;
	}
	return 0;
}

int attr_table__add_snapshot(struct attr_table *t, const json_t *snap)
{
	struct sf_snapshot sn;
	json_error_t jerr;
	const json_t *p;
	size_t i;
	int err;

	if (sf_snapshot__decode(snap, &sn, &jerr))
		note_undecoded("snapshot", 0, &jerr);
	t->built = false;
	if (sn.mono_ns && (!t->file_start || sn.mono_ns < t->file_start))
		t->file_start = sn.mono_ns;
	json_array_foreach(sn.progs, i, p) {
		struct sf_snapshot_prog sp;

		if (sf_snapshot_prog__decode(p, &sp, &jerr))
			note_undecoded("snapshot program", i, &jerr);
		err = add_snapshot_prog(t, &sp, sn.mono_ns);
		if (err)
			return err;
	}
	return 0;
}

int attr_table__add_record(struct attr_table *t, const struct sf_record *r)
{
	struct ksym_rec *k;

	t->built = false;
	if (r->time && (!t->file_start || r->time < t->file_start))
		t->file_start = r->time;
	if (r->time > t->file_stop)
		t->file_stop = r->time;
	if (r->time_max > t->file_stop && r->type != SF_REC_SAMPLE)
		t->file_stop = r->time_max;
	if (r->type == SF_REC_SAMPLE)
		return 0;
	if (r->type == SF_REC_LOST) {
		struct window *w = PUSH(t, lost);

		if (!w)
			return -ENOMEM;
		*w = (struct window){ r->lost.since ? r->lost.since : 0, r->time, r->lost.lost, (int)r->cpu };
		t->n_lost++;
		return 0;
	}
	if (r->type != SF_REC_KSYMBOL && r->type != SF_REC_BPF_EVENT)
		return 0;
	if (r->type == SF_REC_KSYMBOL && r->ksym.ksym_type != 1 /* PERF_RECORD_KSYMBOL_TYPE_BPF */)
		return 0;
	k = PUSH(t, krecs);
	if (!k)
		return -ENOMEM;
	k->r = *r;
	if (r->type == SF_REC_KSYMBOL) {
		snprintf(k->name, sizeof(k->name), "%s", r->ksym.name ?: "");
		k->r.ksym.name = NULL;
	}
	k->seq = t->n_krecs++;
	return 0;
}

