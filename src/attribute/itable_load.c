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

/* ------------------------------- helpers -------------------------------- */

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static uint64_t ju64(const json_t *o, const char *k)
{
	json_int_t v = json_integer_value(json_object_get(o, k));

	return v > 0 ? (uint64_t)v : 0;
}

static bool parse_addr(const json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (!s || strncmp(s, "0x", 2))
		return false;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return !errno && end != s + 2 && !*end;
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

static int add_loaded(struct attr_table *t, const json_t *e)
{
	const json_t *timing = json_object_get(e, "timing"), *r;
	uint64_t mono = ju64(e, "mono_ns"), pre;
	struct prog_load *pl;
	uint32_t prog = (uint32_t)ju64(e, "prog_id");
	size_t i;

	if (!prog)
		return 0;
	pl = PUSH(t, loads);
	if (!pl)
		return -ENOMEM;
	memset(pl, 0, sizeof(*pl));
	pl->prog_id = prog;
	itable_copy_tag(pl->tag, jstr(e, "prog_tag"));
	pl->gen = gen_index(t, jstr(e, "generation_id"));
	pl->library = !strcmp(jstr(e, "source") ?: "", "library");
	pl->mono = mono;
	t->n_loads++;
	/* the JIT image exists from inside the load: before this entry by
	 * at most the load and capture time it reports */
	pre = ju64(timing, "load_ns") + ju64(timing, "capture_ns");
	json_array_foreach(json_object_get(e, "jit_ranges"), i, r) {
		struct addr_iv *iv;
		uint64_t a;

		if (!parse_addr(json_object_get(r, "addr"), &a) || !a)
			continue;
		iv = itable_new_iv(t);
		if (!iv)
			return -ENOMEM;
		iv->addr = a;
		iv->len = (uint32_t)ju64(r, "len");
		iv->prog_id = prog;
		itable_copy_tag(iv->tag, pl->tag);
		iv->start_lo = mono > pre ? mono - pre : 0;
		iv->start_hi = mono;
		iv->end_lo = mono;
		iv->src = SRC_LIFELOG;
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

static void add_unloaded(struct attr_table *t, const json_t *e)
{
	uint32_t prog = (uint32_t)ju64(e, "prog_id");
	uint64_t mono = ju64(e, "mono_ns");
	const json_t *ks = json_object_get(e, "ksymbols_unregistered"), *k;
	size_t i, j;

	for (i = 0; prog && i < t->n_ivs; i++) {
		struct addr_iv *iv = &t->ivs[i];

		if (iv->prog_id != prog || !(iv->src & SRC_LIFELOG) || iv->end_observed ||
		    iv->start_lo > mono)
			continue;
		if (mono < iv->end_hi)
			iv->end_hi = mono;
		json_array_foreach(ks, j, k) {
			uint64_t a, km = ju64(k, "mono_ns");

			if (parse_addr(json_object_get(k, "addr"), &a) && a == iv->addr && km) {
				iv->end_lo = iv->end_hi = km;
				iv->end_observed = true;
			}
		}
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

static int add_activated(struct attr_table *t, const json_t *e)
{
	const json_t *link = json_object_get(e, "link");
	struct handoff *h;
	char num[32];

	if (json_is_object(link) && json_integer_value(json_object_get(link, "id")) > 0) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(json_object_get(link, "id")));
		h = new_handoff(t);
		if (!h)
			return -ENOMEM;
		attr_table__link_key(num, h->key, sizeof(h->key));
	} else if (jstr(e, "hook")) {
		h = new_handoff(t);
		if (!h)
			return -ENOMEM;
		snprintf(h->key, sizeof(h->key), "hook:%s", jstr(e, "hook"));
	} else {
		return 0;	/* an activation on nothing we can name */
	}
	h->t_lo = ju64(e, "swap_begin_mono_ns");
	h->t_hi = ju64(e, "swap_end_mono_ns");
	if (!h->t_lo && !h->t_hi)
		h->t_lo = h->t_hi = ju64(e, "mono_ns");
	if (h->t_hi < h->t_lo)
		h->t_hi = h->t_lo;
	h->new_gen = gen_index(t, jstr(e, "generation_id"));
	h->new_prog = (uint32_t)ju64(e, "prog_id");
	if (jstr(e, "replaces")) {
		h->has_old = true;
		h->old_gen = gen_index(t, jstr(e, "replaces"));
	}
	if (ju64(e, "old_prog_id")) {	/* the kernel's word on the predecessor */
		h->has_old = true;
		h->old_prog = (uint32_t)ju64(e, "old_prog_id");
	}
	h->swapper = true;
	prove_alive(t, h->new_prog, h->t_hi);
	return 0;
}

static int add_link_updated(struct attr_table *t, const json_t *e)
{
	struct handoff *h;
	char num[32];

	if (!ju64(e, "link_id"))
		return 0;
	h = new_handoff(t);
	if (!h)
		return -ENOMEM;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)ju64(e, "link_id"));
	attr_table__link_key(num, h->key, sizeof(h->key));
	h->t_lo = ju64(e, "syscall_enter_mono_ns");
	h->t_hi = ju64(e, "syscall_exit_mono_ns");
	if (h->t_hi < h->t_lo)
		h->t_hi = h->t_lo;
	h->new_gen = gen_index(t, jstr(e, "new_generation_id"));
	h->new_prog = (uint32_t)ju64(e, "new_prog_id");
	if (!strcmp(jstr(e, "op") ?: "", "create")) {
		h->has_old = true;	/* nothing was installed before */
	} else if (ju64(e, "old_prog_id")) {
		h->has_old = true;
		h->old_prog = (uint32_t)ju64(e, "old_prog_id");
		h->old_gen = gen_index(t, jstr(e, "old_generation_id"));
	}
	h->observer = true;
	return 0;
}

static int add_end(struct attr_table *t, const json_t *e, bool unloaded)
{
	struct gen_end *ge;
	int g = gen_index(t, jstr(e, "generation_id"));

	if (g < 0)
		return 0;
	ge = PUSH(t, ends);
	if (!ge)
		return -ENOMEM;
	ge->gen = g;
	ge->prog_id = (uint32_t)ju64(e, "prog_id");
	ge->mono = ju64(e, "mono_ns");
	ge->unloaded = unloaded;
	snprintf(ge->reason, sizeof(ge->reason), "%s", unloaded ? "unloaded" : jstr(e, "reason") ?: "");
	t->n_ends++;
	return 0;
}

/* observer start/stop pairs: what they missed becomes lost windows */
static int add_observer(struct attr_table *t, const json_t *e, const json_t *entries, size_t idx)
{
	const json_t *st = json_object_get(e, "stats"), *missed = json_object_get(st, "missed"), *x;
	uint64_t stop = ju64(e, "mono_ns"), start = 0, perf, sys;
	json_int_t pid = json_integer_value(json_object_get(e, "pid"));
	struct window *w;
	size_t i;

	if (strcmp(jstr(e, "event") ?: "", "stop"))
		return 0;
	for (i = idx; i-- > 0;) {
		x = json_array_get(entries, i);
		if (!strcmp(jstr(x, "kind") ?: "", "observer") && !strcmp(jstr(x, "event") ?: "", "start") &&
		    json_integer_value(json_object_get(x, "pid")) == pid) {
			start = ju64(x, "mono_ns");
			break;
		}
	}
	perf = ju64(missed, "perf_records_lost");
	sys = ju64(missed, "ringbuf_dropped") + ju64(missed, "syscalls_not_followed");
	if (perf) {
		if (!(w = PUSH(t, lost)))
			return -ENOMEM;
		*w = (struct window){ start, stop, perf, -1 };
		t->n_lost++;
	}
	if (sys) {
		if (!(w = PUSH(t, link_lost)))
			return -ENOMEM;
		*w = (struct window){ start, stop, sys, -1 };
		t->n_link_lost++;
	}
	return 0;
}

int attr_table__add_lifelog(struct attr_table *t, const json_t *entries)
{
	const json_t *e;
	size_t i;
	int err = 0;

	if (!json_is_array(entries))
		return -EINVAL;
	t->built = false;
	/* loads first: activations and unloads refer to their intervals */
	json_array_foreach(entries, i, e) {
		const char *k = jstr(e, "kind") ?: "";
		struct time_pair *tp;

		if (ju64(e, "mono_ns") && ju64(e, "realtime_ns") && (tp = PUSH(t, clocks))) {
			tp->mono = ju64(e, "mono_ns");
			tp->real = ju64(e, "realtime_ns");
			t->n_clocks++;
		}
		if (!strcmp(k, "loaded"))
			err = add_loaded(t, e);
		if (err)
			return err;
	}
	json_array_foreach(entries, i, e) {
		const char *k = jstr(e, "kind") ?: "";

		if (!strcmp(k, "activated"))
			err = add_activated(t, e);
		else if (!strcmp(k, "link-updated"))
			err = add_link_updated(t, e);
		else if (!strcmp(k, "retired")) {
			prove_alive(t, (uint32_t)ju64(e, "prog_id"), ju64(e, "mono_ns"));
			err = add_end(t, e, false);
		} else if (!strcmp(k, "unloaded")) {
			add_unloaded(t, e);
			err = add_end(t, e, true);
		} else if (!strcmp(k, "observer"))
			err = add_observer(t, e, entries, i);
		if (err)
			return err;
	}
	return 0;
}

/* ------------------------------ sample file ------------------------------ */

int attr_table__add_snapshot(struct attr_table *t, const json_t *snap)
{
	uint64_t mono = ju64(snap, "mono_ns");
	const json_t *p, *r;
	size_t i, j;

	t->built = false;
	if (mono && (!t->file_start || mono < t->file_start))
		t->file_start = mono;
	json_array_foreach(json_object_get(snap, "progs"), i, p) {
		json_array_foreach(json_object_get(p, "jit_ranges"), j, r) {
			struct addr_iv *iv;
			uint64_t a;

			if (!parse_addr(json_object_get(r, "addr"), &a) || !a)
				continue;
			iv = itable_new_iv(t);
			if (!iv)
				return -ENOMEM;
			iv->addr = a;
			iv->len = (uint32_t)ju64(r, "len");
			iv->prog_id = (uint32_t)ju64(p, "id");
			itable_copy_tag(iv->tag, jstr(p, "tag"));
			iv->start_lo = 0;
			iv->start_hi = mono;
			iv->end_lo = mono;
			iv->watched = true;
			iv->src = SRC_SNAPSHOT;
		}
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

