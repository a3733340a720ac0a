/* SPDX-License-Identifier: BSD-2-Clause */
/* itable_build.c: attr_table__build, in its stages: the sample file's
 * side-band records replayed into address intervals, the intervals of
 * one image from the lifecycle log and from the kernel's records merged,
 * program ids resolved to generations, and the handoffs of each link
 * turned into segments (itable.h, itable_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/itable_int.h"

/* ------------------------------ kernel records ------------------------------ */

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
/* A KSYMBOL registration waiting for its CPU's PROG_LOAD BPF_EVENT is
 * marked gen = -10 - cpu. The CPU comes from the sample file: one no
 * kernel has (>= 65536) gets -1, never paired, instead of a negation
 * that overflows or wraps into a real generation index. */
static int ksym_pending_gen(uint32_t cpu)
{
	return cpu < 65536 ? -10 - (int)cpu : -1;
}

static int replay_ksyms(struct attr_table *t)
{
	size_t i, j;

	if (t->n_krecs)
		qsort(t->krecs, t->n_krecs, sizeof(*t->krecs), cmp_krec);
	for (i = 0; i < t->n_krecs; i++) {
		const struct sf_record *r = &t->krecs[i].r;

		if (r->type == SF_REC_KSYMBOL && !(r->ksym.flags & 1 /* UNREGISTER */)) {
			struct addr_iv *iv = itable_new_iv(t);

			if (!iv)
				return -ENOMEM;
			iv->addr = r->ksym.addr;
			iv->len = r->ksym.len;
			itable_tag_of_sym(t->krecs[i].name, iv->tag);
			iv->start_lo = r->time;
			iv->start_hi = iv->end_lo = r->time_max > r->time ? r->time_max : r->time;
			iv->watched = true;
			iv->src = SRC_KSYM;
			iv->prog_id = 0;
			/* remember which CPU registered it: pairing below */
			iv->gen = ksym_pending_gen(r->cpu);
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

				if (iv->src == SRC_KSYM && iv->gen <= -10 &&
				    iv->gen == ksym_pending_gen(r->cpu) && !iv->prog_id) {
					iv->prog_id = r->bpf.prog_id;
					if (!iv->tag[0])
						itable_copy_tag(iv->tag, tag);
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
			itable_copy_tag(k->tag, m->tag);
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
		bool conflict = false;

		iv->gen = -1;
		if (iv->dead || !iv->prog_id)
			continue;
		for (j = 0; j < t->n_loads; j++) {
			const struct prog_load *pl = &t->loads[j];

			if (pl->prog_id != iv->prog_id || (pl->tag[0] && iv->tag[0] && strcmp(pl->tag, iv->tag)))
				continue;
			if (pl->mono && (pl->mono + 1000000000ull < iv->start_lo || pl->mono > iv->end_hi))
				continue;	/* another boot's program with the same id */
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

/* b is another record of the swap a records (the swapper's and the
 * observer's): a takes the tighter window and what b knows, b dies. */
static void merge_handoff(struct handoff *a, struct handoff *b)
{
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

/* the swapper's and the observer's record of one swap: one handoff,
 * bounded by both windows */
static void pair_handoffs(struct attr_table *t)
{
	size_t i, j;

	for (i = 0; i < t->n_hos; i++) {
		struct handoff *a = &t->hos[i];

		for (j = i + 1; j < t->n_hos && !a->dead; j++) {
			struct handoff *b = &t->hos[j];

			if (b->dead || strcmp(a->key, b->key) || a->swapper == b->swapper ||
			    !a->new_prog || a->new_prog != b->new_prog ||
			    !overlap(a->t_lo, a->t_hi + 1000000, b->t_lo, b->t_hi + 1000000))
				continue;
			merge_handoff(a, b);
		}
	}
}

/* the next live handoff on the link of handoff i (sorted by link, time) */
static const struct handoff *next_handoff(const struct attr_table *t, size_t i)
{
	size_t j;

	for (j = i + 1; j < t->n_hos; j++) {
		if (strcmp(t->hos[j].key, t->hos[i].key))
			break;
		if (!t->hos[j].dead)
			return &t->hos[j];
	}
	return NULL;
}

/* a handoff between h and next was not recorded: what ran between them
 * is unknown, one of the two sides */
static int add_gap_segment(struct attr_table *t, const struct handoff *h, const struct handoff *next)
{
	struct segment *u = new_seg(t, h->key);

	if (!u)
		return -ENOMEM;
	u->status = ATTR_UNKNOWN;
	u->reason = ATTR_R_HANDOFF_LOST;
	u->start_lo = h->t_lo;
	u->start_hi = h->t_hi;
	u->end_lo = next->t_lo;
	u->end_hi = next->t_hi;
	u->cand[0] = h->new_gen;
	u->cand[1] = next->old_gen;
	u->prog_id = next->old_prog;
	return 0;
}

/* segment si (h's generation) was retired or unloaded (ge) before its
 * recorded successor next: it ended there, and what ran after is
 * unknown */
static int cut_at_end(struct attr_table *t, const struct handoff *h, const struct handoff *next, size_t si,
		      const struct gen_end *ge)
{
	struct segment *s = &t->segs[si], *u;
	uint64_t old_end = s->end_hi;

	s->end_lo = ge->unloaded ? s->start_hi : ge->mono;
	s->end_hi = ge->mono;
	u = new_seg(t, h->key);
	if (!u)
		return -ENOMEM;
	s = &t->segs[si];
	u->status = ATTR_UNKNOWN;
	u->reason = ATTR_R_NO_ACTIVATION;
	u->start_lo = s->end_lo;
	u->start_hi = s->end_hi;
	u->end_lo = next ? next->t_lo : PB_NS_INF;
	u->end_hi = next ? next->t_hi : old_end;
	u->cand[0] = s->gen;
	return 0;
}

/* The segment handoff h starts, ending at next (NULL: still active),
 * plus the unknown segments a lost handoff or an early end leaves. */
static int add_handoff_segments(struct attr_table *t, const struct handoff *h, const struct handoff *next)
{
	struct segment *s = new_seg(t, h->key);
	const struct gen_end *ge;
	size_t si = t->n_segs - 1;
	int err;

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
	if (next && (!next->has_old || same_side(next->old_gen, next->old_prog, h->new_gen, h->new_prog))) {
		s->end_lo = next->t_lo;
		s->end_hi = next->t_hi;
	} else if (next) {
		s->end_lo = h->t_hi;
		s->end_hi = next->t_lo;
		err = add_gap_segment(t, h, next);
		if (err)
			return err;
		s = &t->segs[si];
	}
	ge = end_between(t, s->gen, s->prog_id, s->start_hi, s->end_lo);
	if (s->status == ATTR_GENERATION && ge && strcmp(ge->reason, "replaced"))
		return cut_at_end(t, h, next, si, ge);
	return 0;
}

static int build_segments(struct attr_table *t)
{
	size_t i;
	int err;

	pair_handoffs(t);
	if (t->n_hos)
		qsort(t->hos, t->n_hos, sizeof(*t->hos), cmp_ho);
	for (i = 0; i < t->n_hos; i++) {
		if (t->hos[i].dead)
			continue;
		err = add_handoff_segments(t, &t->hos[i], next_handoff(t, i));
		if (err)
			return err;
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
	t->jit_lo = t->n_ivs ? t->ivs[0].addr : 0;
	t->jit_hi = 0;
	for (i = 0; i < t->n_ivs; i++) {
		if (t->ivs[i].len > t->max_len)
			t->max_len = t->ivs[i].len;
		if (t->ivs[i].addr + t->ivs[i].len > t->jit_hi)
			t->jit_hi = t->ivs[i].addr + t->ivs[i].len;
	}
	err = build_segments(t);
	if (err)
		return err;
	t->built = true;
	return 0;
}

