/* itable.c: the generation interval table (docs/attribution.md).
 *
 * Two views of one store's lifecycle log, plus a sample file's kernel
 * records when there is one:
 *  - address intervals: [start, end) x [JIT addr, addr+len) -> program ->
 *    generation. Keyed by address, time breaks ties. An interval opens at
 *    its ksymbol registration (or the `loaded` entry, or the sampler's
 *    snapshot) and closes only at its ksymbol unregistration (or, less
 *    precisely, at an `unloaded` entry); both ends carry an uncertainty
 *    [lo, hi]. Names are never keys: the kernel gives identical bytecode
 *    the same symbol name, and JIT memory is reused after unregistration.
 *  - link segments: per link (or hook), the generation installed from
 *    one recorded handoff (`activated` by the swapper, `link-updated` by
 *    the observer; swap_begin..swap_end is the boundary uncertainty) to
 *    the next. A handoff whose predecessor does not match the generation
 *    the previous handoff installed means records were lost: the gap is
 *    an explicit unknown segment, never the newest generation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/attribute.h"

#define SRC_LIFELOG	1
#define SRC_SNAPSHOT	2
#define SRC_KSYM	4

struct addr_iv {
	uint64_t addr;
	uint32_t len;
	uint32_t prog_id;
	char tag[17];
	uint64_t start_lo, start_hi;	/* registration lies in [lo, hi] */
	uint64_t end_lo, end_hi;	/* alive at least until lo; gone by hi (INF: open) */
	bool end_observed;		/* exact unregistration seen */
	bool watched;			/* from a sample file: its unregistration would be in the stream */
	bool dead;			/* merged into another */
	int src;
	int gen;			/* index into gens, -1 none, -2 conflicting receipts */
};

struct prog_load {			/* one `loaded` entry */
	uint32_t prog_id;
	char tag[17];
	int gen;			/* -1: capture failed/gone */
	bool library;
	uint64_t mono;
};

struct handoff {
	char key[80];
	uint64_t t_lo, t_hi;
	int new_gen;			/* -1 unknown */
	uint32_t new_prog;
	bool has_old;			/* the record names the predecessor */
	int old_gen;
	uint32_t old_prog;
	bool swapper, observer;
	bool dead;
};

struct segment {
	char key[80];
	int gen;			/* -1: none/unknown */
	uint32_t prog_id;
	uint64_t start_lo, start_hi, end_lo, end_hi;
	enum attr_status status;	/* ATTR_GENERATION or ATTR_UNKNOWN */
	enum attr_reason reason;
	int cand[2];
	bool observer_only;
};

struct window {
	uint64_t lo, hi;
	uint64_t count;
	int cpu;
};

struct ksym_rec {			/* a sample file's side-band record, for sorting */
	struct sf_record r;
	char name[128];
	size_t seq;
};

struct time_pair {
	uint64_t real, mono;
};

struct gen_end {			/* retired / unloaded of a generation */
	int gen;
	uint32_t prog_id;		/* 0: not named */
	uint64_t mono;
	bool unloaded;
	char reason[32];
};

#define VEC(type, name) type *name; size_t n_##name, cap_##name

struct attr_table {
	VEC(struct addr_iv, ivs);
	VEC(struct prog_load, loads);
	VEC(struct handoff, hos);
	VEC(struct segment, segs);
	VEC(struct window, lost);	/* kernel records lost (sample file, observer perf) */
	VEC(struct window, link_lost);	/* observer syscall records lost */
	VEC(struct ksym_rec, krecs);
	VEC(struct time_pair, clocks);
	VEC(struct gen_end, ends);
	VEC(char *, gens);
	uint64_t max_len;
	bool built;
	uint64_t file_start, file_stop;
};

static void *grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *p = realloc(*arr, nc * elem);

		if (!p)
			return NULL;
		*arr = p;
		*cap = nc;
	}
	return (char *)*arr + n * elem;
}
#define PUSH(t, v) ((typeof(t->v))grow((void **)&t->v, &t->cap_##v, t->n_##v, sizeof(*t->v)))

static const char *const reason_names[ATTR_R__COUNT] = {
	[ATTR_R_NONE] = "none",
	[ATTR_R_NO_RECEIPT] = "no receipt",
	[ATTR_R_RECORDS_LOST] = "records lost",
	[ATTR_R_AMBIGUOUS] = "ambiguous",
	[ATTR_R_HANDOFF_LOST] = "handoff not recorded",
	[ATTR_R_SWAP_WINDOW] = "inside swap window",
	[ATTR_R_NO_ACTIVATION] = "no activation recorded",
};

const char *attr_reason__name(enum attr_reason r)
{
	return r < ATTR_R__COUNT ? reason_names[r] : "?";
}

struct attr_table *attr_table__new(void)
{
	return calloc(1, sizeof(struct attr_table));
}

void attr_table__free(struct attr_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_gens; i++)
		free(t->gens[i]);
	free(t->gens);
	free(t->ivs);
	free(t->loads);
	free(t->hos);
	free(t->segs);
	free(t->lost);
	free(t->link_lost);
	free(t->krecs);
	free(t->clocks);
	free(t->ends);
	free(t);
}

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

static const char *gen_name(const struct attr_table *t, int g)
{
	return g >= 0 && (size_t)g < t->n_gens ? t->gens[g] : NULL;
}

static void copy_tag(char dst[17], const char *src)
{
	snprintf(dst, 17, "%s", src ? src : "");
}

/* "bpf_prog_<16 hex>_name" -> tag */
static bool tag_of_sym(const char *sym, char tag[17])
{
	int i;

	if (!sym || strncmp(sym, "bpf_prog_", 9))
		return false;
	for (i = 0; i < 16; i++) {
		char c = sym[9 + i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		tag[i] = c;
	}
	tag[16] = 0;
	return sym[25] == '_' || sym[25] == 0;
}

void attr_table__link_key(const char *l, char *key, size_t sz)
{
	const char *p = l ? l : "";
	bool num = *p;

	for (; *p; p++)
		num &= *p >= '0' && *p <= '9';
	if (num)
		snprintf(key, sz, "link:%s", l);
	else if (!strncmp(l ? l : "", "link:", 5) || !strncmp(l ? l : "", "hook:", 5))
		snprintf(key, sz, "%s", l);
	else
		snprintf(key, sz, "hook:%s", l ? l : "");
}

/* ------------------------------ lifecycle log ------------------------------ */

static struct addr_iv *new_iv(struct attr_table *t)
{
	struct addr_iv *iv = PUSH(t, ivs);

	if (!iv)
		return NULL;
	memset(iv, 0, sizeof(*iv));
	iv->end_hi = PB_NS_INF;
	iv->gen = -1;
	t->n_ivs++;
	return iv;
}

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
	copy_tag(pl->tag, jstr(e, "prog_tag"));
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
		iv = new_iv(t);
		if (!iv)
			return -ENOMEM;
		iv->addr = a;
		iv->len = (uint32_t)ju64(r, "len");
		iv->prog_id = prog;
		copy_tag(iv->tag, pl->tag);
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
			iv = new_iv(t);
			if (!iv)
				return -ENOMEM;
			iv->addr = a;
			iv->len = (uint32_t)ju64(r, "len");
			iv->prog_id = (uint32_t)ju64(p, "id");
			copy_tag(iv->tag, jstr(p, "tag"));
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

static int cmp_krec(const void *a, const void *b)
{
	const struct ksym_rec *x = a, *y = b;

	if (x->r.time != y->r.time)
		return x->r.time < y->r.time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Side-band records in time order: registrations open intervals (their
 * program id comes with the BPF_EVENT load that follows on the same
 * CPU), unregistrations close the open interval at that address. */
static int replay_ksyms(struct attr_table *t)
{
	size_t i, j;

	if (t->n_krecs)
		qsort(t->krecs, t->n_krecs, sizeof(*t->krecs), cmp_krec);
	for (i = 0; i < t->n_krecs; i++) {
		const struct sf_record *r = &t->krecs[i].r;

		if (r->type == SF_REC_KSYMBOL && !(r->ksym.flags & 1 /* UNREGISTER */)) {
			struct addr_iv *iv = new_iv(t);

			if (!iv)
				return -ENOMEM;
			iv->addr = r->ksym.addr;
			iv->len = r->ksym.len;
			tag_of_sym(t->krecs[i].name, iv->tag);
			iv->start_lo = r->time;
			iv->start_hi = iv->end_lo = r->time_max > r->time ? r->time_max : r->time;
			iv->watched = true;
			iv->src = SRC_KSYM;
			iv->prog_id = 0;
			/* remember which CPU registered it: pairing below */
			iv->gen = -(int)r->cpu - 10;
		} else if (r->type == SF_REC_KSYMBOL) {
			struct addr_iv *best = NULL;

			for (j = 0; j < t->n_ivs; j++) {
				struct addr_iv *iv = &t->ivs[j];

				if (iv->addr == r->ksym.addr && (iv->src & (SRC_KSYM | SRC_SNAPSHOT)) &&
				    !iv->end_observed && iv->start_lo <= r->time &&
				    (!best || iv->start_hi > best->start_hi))
					best = iv;
			}
			if (best) {
				best->end_lo = r->time;
				best->end_hi = r->time_max > r->time ? r->time_max : r->time;
				best->end_observed = true;
			}
		} else if (r->type == SF_REC_BPF_EVENT && r->bpf.event == 1 /* PROG_LOAD */) {
			char tag[17];
			int c;

			for (c = 0; c < 8; c++)
				snprintf(tag + 2 * c, 3, "%02x", r->bpf.tag[c]);
			for (j = 0; j < t->n_ivs; j++) {
				struct addr_iv *iv = &t->ivs[j];

				if (iv->src == SRC_KSYM && iv->gen == -(int)r->cpu - 10 && !iv->prog_id) {
					iv->prog_id = r->bpf.prog_id;
					if (!iv->tag[0])
						copy_tag(iv->tag, tag);
					iv->gen = -1;
				}
			}
		}
	}
	for (j = 0; j < t->n_ivs; j++)
		if (t->ivs[j].gen <= -10)
			t->ivs[j].gen = -1;	/* a registration whose BPF_EVENT was lost */
	return 0;
}

/* ---------------------------------- build ---------------------------------- */

static bool overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 <= b1 && b0 <= a1;
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* A lifecycle interval and a kernel-record interval of the same image:
 * one interval with the tighter bounds of both. */
static void merge_ivs(struct attr_table *t)
{
	size_t i, j;

	for (i = 0; i < t->n_ivs; i++) {
		struct addr_iv *k = &t->ivs[i], *m = NULL;
		int n = 0;

		if (k->src == SRC_LIFELOG || k->dead)
			continue;
		for (j = 0; j < t->n_ivs; j++) {
			struct addr_iv *l = &t->ivs[j];

			if (l->dead || l->src != SRC_LIFELOG || l->addr != k->addr ||
			    !overlap(l->start_lo, l->end_hi, k->start_lo, k->end_hi))
				continue;
			if (k->prog_id && l->prog_id != k->prog_id)
				continue;
			if (k->tag[0] && l->tag[0] && strcmp(k->tag, l->tag))
				continue;
			if (!m || l->prog_id == k->prog_id)
				m = l;
			n++;
		}
		if (!m || (!k->prog_id && n > 1))
			continue;
		if (!k->prog_id)
			k->prog_id = m->prog_id;
		if (!k->tag[0])
			copy_tag(k->tag, m->tag);
		/* both bound the same instants */
		if (max64(k->start_lo, m->start_lo) <= min64(k->start_hi, m->start_hi)) {
			k->start_lo = max64(k->start_lo, m->start_lo);
			k->start_hi = min64(k->start_hi, m->start_hi);
		}
		if (!k->end_observed) {
			if (m->end_observed) {
				k->end_lo = m->end_lo;
				k->end_hi = m->end_hi;
				k->end_observed = true;
			} else {
				k->end_hi = min64(k->end_hi, m->end_hi);
				k->end_lo = min64(max64(k->end_lo, m->end_lo), k->end_hi);
			}
		}
		k->src |= SRC_LIFELOG;
		m->dead = true;
	}
}

/* program id -> generation: the `loaded` entries of that program (tag
 * agreeing, load time inside the interval's life); the producer's own
 * (library) entries win over the observer's; two different generations
 * left -> conflicting (-2). */
static void resolve_gens(struct attr_table *t)
{
	size_t i, j;

	for (i = 0; i < t->n_ivs; i++) {
		struct addr_iv *iv = &t->ivs[i];
		int best = -1, best_lib = 0;
		bool conflict = false, any = false;

		iv->gen = -1;
		if (iv->dead || !iv->prog_id)
			continue;
		for (j = 0; j < t->n_loads; j++) {
			const struct prog_load *pl = &t->loads[j];

			if (pl->prog_id != iv->prog_id || (pl->tag[0] && iv->tag[0] && strcmp(pl->tag, iv->tag)))
				continue;
			if (pl->mono && (pl->mono + 1000000000ull < iv->start_lo || pl->mono > iv->end_hi))
				continue;	/* another boot's program with the same id */
			any = true;
			if (pl->gen < 0)
				continue;
			if (best < 0 || pl->library > best_lib) {
				best = pl->gen;
				best_lib = pl->library;
				conflict = false;
			} else if (pl->library == best_lib && pl->gen != best) {
				conflict = true;
			}
		}
		iv->gen = conflict ? -2 : best;
		(void)any;
	}
}

static int cmp_iv(const void *a, const void *b)
{
	const struct addr_iv *x = a, *y = b;

	if (x->dead != y->dead)
		return x->dead ? 1 : -1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->start_lo < y->start_lo ? -1 : x->start_lo > y->start_lo;
}

static int cmp_ho(const void *a, const void *b)
{
	const struct handoff *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->t_lo < y->t_lo ? -1 : x->t_lo > y->t_lo;
}

static bool same_side(int gen_a, uint32_t prog_a, int gen_b, uint32_t prog_b)
{
	if (gen_a >= 0 && gen_b >= 0)
		return gen_a == gen_b;
	if (prog_a && prog_b)
		return prog_a == prog_b;
	return gen_a < 0 && gen_b < 0 && !prog_a && !prog_b;
}

static struct segment *new_seg(struct attr_table *t, const char *key)
{
	struct segment *s = PUSH(t, segs);

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->gen = s->cand[0] = s->cand[1] = -1;
	s->end_hi = s->end_lo = PB_NS_INF;
	s->status = ATTR_GENERATION;
	t->n_segs++;
	return s;
}

/* earliest retirement/unload of gen (the load prog, when both name it:
 * the same generation may be loaded twice) in (after, before) */
static const struct gen_end *end_between(const struct attr_table *t, int gen, uint32_t prog, uint64_t after,
					 uint64_t before)
{
	const struct gen_end *best = NULL;
	size_t i;

	for (i = 0; gen >= 0 && i < t->n_ends; i++) {
		const struct gen_end *e = &t->ends[i];

		if (prog && e->prog_id && e->prog_id != prog)
			continue;
		if (e->gen == gen && e->mono > after && e->mono < before && (!best || e->mono < best->mono))
			best = e;
	}
	return best;
}

static int build_segments(struct attr_table *t)
{
	size_t i, j;

	/* the swapper's and the observer's record of one swap: one handoff,
	 * bounded by both windows */
	for (i = 0; i < t->n_hos; i++) {
		struct handoff *a = &t->hos[i];

		for (j = i + 1; j < t->n_hos && !a->dead; j++) {
			struct handoff *b = &t->hos[j];

			if (b->dead || strcmp(a->key, b->key) || a->swapper == b->swapper ||
			    !a->new_prog || a->new_prog != b->new_prog ||
			    !overlap(a->t_lo, a->t_hi + 1000000, b->t_lo, b->t_hi + 1000000))
				continue;
			if (max64(a->t_lo, b->t_lo) <= min64(a->t_hi, b->t_hi)) {
				a->t_lo = max64(a->t_lo, b->t_lo);
				a->t_hi = min64(a->t_hi, b->t_hi);
			}
			if (a->new_gen < 0 || (b->swapper && b->new_gen >= 0))
				a->new_gen = b->new_gen;
			if (!a->has_old && b->has_old) {
				a->has_old = true;
				a->old_gen = b->old_gen;
				a->old_prog = b->old_prog;
			} else if (a->has_old && b->has_old && a->old_gen < 0) {
				a->old_gen = b->old_gen;
				a->old_prog = a->old_prog ?: b->old_prog;
			}
			a->swapper |= b->swapper;
			a->observer |= b->observer;
			b->dead = true;
		}
	}
	if (t->n_hos)
		qsort(t->hos, t->n_hos, sizeof(*t->hos), cmp_ho);
	for (i = 0; i < t->n_hos; i++) {
		struct handoff *h = &t->hos[i], *next = NULL;
		struct segment *s;
		const struct gen_end *ge;

		if (h->dead)
			continue;
		for (j = i + 1; j < t->n_hos; j++) {
			if (strcmp(t->hos[j].key, h->key))
				break;
			if (!t->hos[j].dead) {
				next = &t->hos[j];
				break;
			}
		}
		s = new_seg(t, h->key);
		if (!s)
			return -ENOMEM;
		s->gen = h->new_gen;
		s->prog_id = h->new_prog;
		s->start_lo = h->t_lo;
		s->start_hi = h->t_hi;
		s->observer_only = !h->swapper;
		if (s->gen < 0) {
			s->status = ATTR_UNKNOWN;
			s->reason = ATTR_R_NO_RECEIPT;
		}
		if (next) {
			bool consistent = !next->has_old ||
					  same_side(next->old_gen, next->old_prog, h->new_gen, h->new_prog);

			if (consistent) {
				s->end_lo = next->t_lo;
				s->end_hi = next->t_hi;
			} else {
				/* a handoff between the two was not recorded */
				struct segment *u;

				s->end_lo = h->t_hi;
				s->end_hi = next->t_lo;
				u = new_seg(t, h->key);
				if (!u)
					return -ENOMEM;
				s = &t->segs[t->n_segs - 2];
				u->status = ATTR_UNKNOWN;
				u->reason = ATTR_R_HANDOFF_LOST;
				u->start_lo = h->t_lo;
				u->start_hi = h->t_hi;
				u->end_lo = next->t_lo;
				u->end_hi = next->t_hi;
				u->cand[0] = h->new_gen;
				u->cand[1] = next->old_gen;
				u->prog_id = next->old_prog;
			}
		}
		/* retired or unloaded before its recorded successor: it ended
		 * there, and what ran after is unknown */
		ge = end_between(t, s->gen, s->prog_id, s->start_hi, s->end_lo);
		if (s->status == ATTR_GENERATION && ge && strcmp(ge->reason, "replaced")) {
			uint64_t old_end = s->end_hi;
			struct segment *u;

			s->end_lo = ge->unloaded ? s->start_hi : ge->mono;
			s->end_hi = ge->mono;
			u = new_seg(t, h->key);
			if (!u)
				return -ENOMEM;
			s = &t->segs[t->n_segs - 2];
			u->status = ATTR_UNKNOWN;
			u->reason = ATTR_R_NO_ACTIVATION;
			u->start_lo = s->end_lo;
			u->start_hi = s->end_hi;
			u->end_lo = next ? next->t_lo : PB_NS_INF;
			u->end_hi = next ? next->t_hi : old_end;
			u->cand[0] = s->gen;
		}
	}
	return 0;
}

int attr_table__build(struct attr_table *t)
{
	size_t i;
	int err;

	free(t->segs);
	t->segs = NULL;
	t->n_segs = t->cap_segs = 0;
	err = replay_ksyms(t);
	if (err)
		return err;
	t->n_krecs = 0;
	/* a sample-file interval nobody unregistered was alive to the end
	 * of the file (unless records were lost: checked at lookup) */
	for (i = 0; i < t->n_ivs; i++)
		if (t->ivs[i].watched && !t->ivs[i].end_observed && t->file_stop > t->ivs[i].end_lo)
			t->ivs[i].end_lo = t->file_stop;
	merge_ivs(t);
	resolve_gens(t);
	if (t->n_ivs)
		qsort(t->ivs, t->n_ivs, sizeof(*t->ivs), cmp_iv);
	while (t->n_ivs && t->ivs[t->n_ivs - 1].dead)
		t->n_ivs--;
	t->max_len = 0;
	for (i = 0; i < t->n_ivs; i++)
		if (t->ivs[i].len > t->max_len)
			t->max_len = t->ivs[i].len;
	err = build_segments(t);
	if (err)
		return err;
	t->built = true;
	return 0;
}

/* --------------------------------- lookup --------------------------------- */

static bool lost_in(const struct window *w, size_t n, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (overlap(w[i].lo, w[i].hi, lo, hi))
			return true;
	return false;
}

static bool proven_alive(const struct addr_iv *iv, uint64_t time)
{
	return iv->start_hi <= time && time <= iv->end_lo;
}

void attr_table__lookup(const struct attr_table *t, uint64_t time, uint64_t ip, const char *sym,
			struct attr_result *r)
{
	const struct addr_iv *cand[8], *pick = NULL;
	size_t lo = 0, hi = t->n_ivs, n = 0, i, n_proven = 0;
	char symtag[17] = "";
	bool bpf_sym = tag_of_sym(sym, symtag);

	memset(r, 0, sizeof(*r));
	/* last interval starting at or below ip, then back while one could
	 * still reach ip */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ivs[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;) {
		const struct addr_iv *iv = &t->ivs[i];

		if (ip - iv->addr >= t->max_len)
			break;
		if (ip - iv->addr >= iv->len || time < iv->start_lo || time > iv->end_hi)
			continue;
		if (bpf_sym && iv->tag[0] && strcmp(iv->tag, symtag))
			continue;	/* the symbolizer named another program */
		if (n < 8)
			cand[n++] = iv;
	}
	if (!n) {
		if (bpf_sym) {
			r->status = ATTR_UNKNOWN;
			r->reason = ATTR_R_NO_RECEIPT;
			snprintf(r->detail, sizeof(r->detail), "no JIT range recorded for %.100s (tag %s)", sym,
				 symtag);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		if (proven_alive(cand[i], time)) {
			n_proven++;
			pick = cand[i];
		}
	}
	r->status = ATTR_UNKNOWN;
	if (n > 1) {
		bool same = true;

		for (i = 1; i < n; i++)
			same &= cand[i]->prog_id && cand[i]->prog_id == cand[0]->prog_id;
		if (same)
			pick = cand[0];
		else if (n_proven != 1) {
			r->reason = ATTR_R_AMBIGUOUS;
			r->range_addr = cand[0]->addr;
			r->range_len = cand[0]->len;
			snprintf(r->detail, sizeof(r->detail),
				 "address 0x%llx is in %zu JIT intervals (progs %u and %u) at this time",
				 (unsigned long long)ip, n, cand[0]->prog_id, cand[1]->prog_id);
			return;
		}
	} else {
		pick = cand[0];
	}
	r->prog_id = pick->prog_id;
	r->range_addr = pick->addr;
	r->range_len = pick->len;
	r->definite = proven_alive(pick, time);
	/* lost records between the image's registration and this sample may
	 * hide its unregistration and another image at the same address */
	if (!(pick->end_observed && time <= pick->end_lo) &&
	    lost_in(t->lost, t->n_lost, pick->start_lo, time)) {
		r->reason = ATTR_R_RECORDS_LOST;
		snprintf(r->detail, sizeof(r->detail),
			 "kernel records were lost between prog %u's registration and this sample", pick->prog_id);
		return;
	}
	if (!pick->prog_id) {
		r->reason = ATTR_R_RECORDS_LOST;
		snprintf(r->detail, sizeof(r->detail),
			 "the program registered at 0x%llx is unknown (its bpf_event record is missing)",
			 (unsigned long long)pick->addr);
		return;
	}
	if (pick->gen == -2) {
		r->reason = ATTR_R_AMBIGUOUS;
		snprintf(r->detail, sizeof(r->detail), "prog %u has loaded entries of different generations",
			 pick->prog_id);
		return;
	}
	if (pick->gen < 0) {
		r->reason = ATTR_R_NO_RECEIPT;
		snprintf(r->detail, sizeof(r->detail), "no receipt for prog %u", pick->prog_id);
		return;
	}
	r->status = ATTR_GENERATION;
	r->generation_id = gen_name(t, pick->gen);
}

/* ------------------------------ link segments ------------------------------ */

static json_t *ns_or_null(uint64_t v)
{
	return v == PB_NS_INF ? json_null() : json_integer((json_int_t)v);
}

static json_t *gen_or_null(const struct attr_table *t, int g)
{
	return gen_name(t, g) ? json_string(gen_name(t, g)) : json_null();
}

/* the last moment any image of prog was alive (address intervals) */
static json_t *image_until(const struct attr_table *t, uint32_t prog)
{
	uint64_t until = 0;
	bool open = false, any = false;
	size_t i;

	for (i = 0; prog && i < t->n_ivs; i++) {
		if (t->ivs[i].prog_id != prog)
			continue;
		any = true;
		if (t->ivs[i].end_hi == PB_NS_INF)
			open = true;
		else
			until = max64(until, t->ivs[i].end_hi);
	}
	if (!any)
		return json_null();
	return open ? json_string("still loaded") : json_integer((json_int_t)until);
}

static bool seg_lost(const struct attr_table *t, const struct segment *s, uint64_t lo, uint64_t hi)
{
	return s->observer_only && lost_in(t->link_lost, t->n_link_lost, max64(lo, s->start_lo),
					   min64(hi, s->end_hi));
}

static json_t *seg_json(const struct attr_table *t, const struct segment *s, uint64_t t1, uint64_t t2)
{
	bool whole = s->start_hi <= t1 && s->end_lo >= t2;
	bool part = overlap(s->start_hi, s->end_lo, t1, t2) && s->start_hi <= s->end_lo;
	enum attr_status st = s->status;
	enum attr_reason reason = s->reason;
	json_t *j, *cands = json_array();
	int c;

	if (st == ATTR_GENERATION && seg_lost(t, s, t1, t2)) {
		st = ATTR_UNKNOWN;
		reason = ATTR_R_RECORDS_LOST;
	}
	for (c = 0; c < 2; c++)
		if (s->cand[c] >= 0 || (c == 1 && s->reason == ATTR_R_HANDOFF_LOST))
			json_array_append_new(cands, gen_or_null(t, s->cand[c]));
	j = json_pack("{s:s, s:s, s:o, s:I, s:{s:I, s:I}, s:{s:o, s:o}, s:s, s:s, s:o}",
		      "link", s->key, "status", st == ATTR_GENERATION ? "generation" : "unknown",
		      "generation_id", st == ATTR_GENERATION ? gen_or_null(t, s->gen) : json_null(),
		      "prog_id", (json_int_t)s->prog_id,
		      "start", "earliest", (json_int_t)s->start_lo, "latest", (json_int_t)s->start_hi,
		      "end", "earliest", ns_or_null(s->end_lo), "latest", ns_or_null(s->end_hi),
		      "in_window", whole ? "whole" : part ? "part" : "possibly",
		      "source", s->observer_only ? "observer" : "swapper",
		      "old_image_alive_until", image_until(t, s->prog_id));
	if (st == ATTR_UNKNOWN) {
		json_object_set_new(j, "reason", json_string(attr_reason__name(reason)));
		json_object_set_new(j, "candidates", cands);
		if (s->status == ATTR_UNKNOWN && reason == ATTR_R_NO_RECEIPT)
			json_object_set_new(j, "generation_id", json_null());
	} else {
		json_decref(cands);
	}
	return j;
}

json_t *attr_table__window(const struct attr_table *t, const char *key, uint64_t t1, uint64_t t2)
{
	json_t *arr = json_array();
	bool any = false;
	size_t i;

	for (i = 0; i < t->n_segs; i++) {
		const struct segment *s = &t->segs[i];

		if (strcmp(s->key, key))
			continue;
		any = true;
		if (overlap(s->start_lo, s->end_hi, t1, t2))
			json_array_append_new(arr, seg_json(t, s, t1, t2));
	}
	if (!any) {
		json_decref(arr);
		errno = ENOENT;
		return NULL;
	}
	return arr;
}

int attr_table__at(const struct attr_table *t, const char *key, uint64_t time, struct attr_result *r,
		   json_t **segments)
{
	const struct segment *cov[8], *pick = NULL;
	size_t i, n = 0, n_def = 0;
	bool any = false;

	memset(r, 0, sizeof(*r));
	if (segments)
		*segments = json_array();
	for (i = 0; i < t->n_segs; i++) {
		const struct segment *s = &t->segs[i];

		if (strcmp(s->key, key))
			continue;
		any = true;
		if (time < s->start_lo || time > s->end_hi)
			continue;
		if (n < 8)
			cov[n++] = s;
		if (segments)
			json_array_append_new(*segments, seg_json(t, s, time, time));
		if (s->start_hi <= time && time <= s->end_lo) {
			n_def++;
			pick = s;
		}
	}
	if (!any)
		return -ENOENT;
	r->status = ATTR_UNKNOWN;
	if (!n) {
		r->reason = ATTR_R_NO_ACTIVATION;
		snprintf(r->detail, sizeof(r->detail), "no activation recorded on %s before this time", key);
		return 0;
	}
	if (n == 1)
		pick = cov[0];
	else if (n_def != 1)
		pick = NULL;
	if (!pick) {
		const char *a = NULL, *b = NULL;

		r->reason = ATTR_R_SWAP_WINDOW;
		for (i = 0; i < n; i++) {
			if (cov[i]->status == ATTR_UNKNOWN)
				r->reason = cov[i]->reason;
			if (!a)
				a = gen_name(t, cov[i]->gen);
			else if (!b && gen_name(t, cov[i]->gen) && strcmp(a, gen_name(t, cov[i]->gen)))
				b = gen_name(t, cov[i]->gen);
		}
		snprintf(r->detail, sizeof(r->detail), "%zu segments cover this time: %.12s or %.12s", n,
			 a ?: "unknown", b ?: "unknown");
		return 0;
	}
	r->prog_id = pick->prog_id;
	r->definite = pick->start_hi <= time && time <= pick->end_lo;
	if (pick->status == ATTR_UNKNOWN) {
		const char *a = gen_name(t, pick->cand[0]), *b = gen_name(t, pick->cand[1]);

		r->reason = pick->reason;
		if (pick->reason == ATTR_R_NO_RECEIPT)
			snprintf(r->detail, sizeof(r->detail), "no receipt for prog %u", pick->prog_id);
		else
			snprintf(r->detail, sizeof(r->detail), "between %.12s and %.12s (%s)", a ?: "unknown",
				 b ?: "unknown", attr_reason__name(pick->reason));
		return 0;
	}
	if (seg_lost(t, pick, time, time)) {
		r->reason = ATTR_R_RECORDS_LOST;
		snprintf(r->detail, sizeof(r->detail), "the observer lost syscall records around this time");
		return 0;
	}
	r->status = ATTR_GENERATION;
	r->generation_id = gen_name(t, pick->gen);
	return 0;
}

json_t *attr_table__links(const struct attr_table *t)
{
	json_t *o = json_object(), *arr = json_array();
	const char *k;
	json_t *v;
	size_t i;

	for (i = 0; i < t->n_segs; i++)
		json_object_set_new(o, t->segs[i].key, json_true());
	json_object_foreach(o, k, v)
		json_array_append_new(arr, json_string(k));
	json_decref(o);
	return arr;
}

bool attr_table__realtime_to_mono(const struct attr_table *t, uint64_t real, uint64_t *mono)
{
	const struct time_pair *best = NULL;
	uint64_t bd = 0;
	size_t i;

	for (i = 0; i < t->n_clocks; i++) {
		uint64_t d = t->clocks[i].real > real ? t->clocks[i].real - real : real - t->clocks[i].real;

		if (t->clocks[i].real < t->clocks[i].mono)
			continue;
		if (!best || d < bd) {
			best = &t->clocks[i];
			bd = d;
		}
	}
	if (!best || real < best->real - best->mono)
		return false;
	*mono = real - (best->real - best->mono);
	return true;
}

json_t *attr_table__stats(const struct attr_table *t)
{
	size_t i, with_gen = 0;
	uint64_t lost = 0;

	for (i = 0; i < t->n_ivs; i++)
		with_gen += t->ivs[i].gen >= 0;
	for (i = 0; i < t->n_lost; i++)
		lost += t->lost[i].count;
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "address_intervals", (json_int_t)t->n_ivs,
			 "intervals_with_generation", (json_int_t)with_gen,
			 "loaded_entries", (json_int_t)t->n_loads, "generations", (json_int_t)t->n_gens,
			 "link_segments", (json_int_t)t->n_segs, "lost_windows", (json_int_t)t->n_lost,
			 "records_lost", (json_int_t)lost);
}
