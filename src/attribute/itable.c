/* SPDX-License-Identifier: BSD-2-Clause */
/* itable.c: the generation interval table (itable.h, docs/attribution.md).
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
 *
 * This file: the table, the lookup of an address at a time, the clock
 * pairs and counters. Filling it is itable_load.c, building it
 * itable_build.c, the link queries itable_links.c (itable_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/itable_int.h"
#include "attribute/timespec.h"

static const char *const reason_names[ATTR_R__COUNT] = {
	[ATTR_R_NONE] = "none",
	[ATTR_R_NO_RECEIPT] = "no receipt",
	[ATTR_R_RECORDS_LOST] = "records lost",
	[ATTR_R_AMBIGUOUS] = "ambiguous",
	[ATTR_R_HANDOFF_LOST] = "handoff not recorded",
	[ATTR_R_SWAP_WINDOW] = "inside swap window",
	[ATTR_R_NO_ACTIVATION] = "no activation recorded",
	[ATTR_R_NOT_DURABLE] = "after the last durable log entry",
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

const char *itable_gen_name(const struct attr_table *t, int g)
{
	return g >= 0 && (size_t)g < t->n_gens ? t->gens[g] : NULL;
}

void itable_copy_tag(char dst[17], const char *src)
{
	snprintf(dst, 17, "%s", src ? src : "");
}

bool itable_tag_of_sym(const char *sym, char tag[17])
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

struct addr_iv *itable_new_iv(struct attr_table *t)
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

/* --------------------------------- lookup --------------------------------- */

bool itable_lost_in(const struct window *w, size_t n, uint64_t lo, uint64_t hi)
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

/* The intervals holding ip at time (at most 8): the last interval
 * starting at or below ip, then back while one could still reach ip.
 * An interval of another program than the symbolizer named (symtag,
 * when bpf_sym) is not one. */
static size_t candidates(const struct attr_table *t, uint64_t time, uint64_t ip, bool bpf_sym,
			 const char *symtag, const struct addr_iv *cand[8])
{
	size_t lo = 0, hi = t->n_ivs, n = 0, i;

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
	return n;
}

/* One of the n (> 0) candidates: the only one, one program's, or the one
 * proven alive at time; NULL (r says why) when that is ambiguous. */
static const struct addr_iv *pick_candidate(const struct addr_iv *const cand[8], size_t n, uint64_t time,
					    uint64_t ip, struct attr_result *r)
{
	const struct addr_iv *pick = NULL;
	size_t i, n_proven = 0;
	bool same = true;

	for (i = 0; i < n; i++) {
		if (proven_alive(cand[i], time)) {
			n_proven++;
			pick = cand[i];
		}
	}
	if (n == 1)
		return cand[0];
	for (i = 1; i < n; i++)
		same &= cand[i]->prog_id && cand[i]->prog_id == cand[0]->prog_id;
	if (same)
		return cand[0];
	if (n_proven == 1)
		return pick;
	r->reason = ATTR_R_AMBIGUOUS;
	r->range_addr = cand[0]->addr;
	r->range_len = cand[0]->len;
	snprintf(r->detail, sizeof(r->detail), "address 0x%llx is in %zu JIT intervals (progs %u and %u) at this time",
		 (unsigned long long)ip, n, cand[0]->prog_id, cand[1]->prog_id);
	return NULL;
}

/* The generation of the picked interval, or unknown with the reason. */
static void judge_pick(const struct attr_table *t, const struct addr_iv *pick, uint64_t time,
		       struct attr_result *r)
{
	r->prog_id = pick->prog_id;
	r->range_addr = pick->addr;
	r->range_len = pick->len;
	r->definite = proven_alive(pick, time);
	/* lost records between the image's registration and this sample may
	 * hide its unregistration and another image at the same address */
	if (!(pick->end_observed && time <= pick->end_lo) &&
	    itable_lost_in(t->lost, t->n_lost, pick->start_lo, time)) {
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
	r->generation_id = itable_gen_name(t, pick->gen);
}

void attr_table__lookup(const struct attr_table *t, uint64_t time, uint64_t ip, const char *sym,
			struct attr_result *r)
{
	const struct addr_iv *cand[8], *pick;
	char symtag[17] = "";
	bool bpf_sym = itable_tag_of_sym(sym, symtag);
	size_t n;

	memset(r, 0, sizeof(*r));
	n = candidates(t, time, ip, bpf_sym, symtag, cand);
	if (!n) {
		if (bpf_sym) {
			r->status = ATTR_UNKNOWN;
			r->reason = ATTR_R_NO_RECEIPT;
			snprintf(r->detail, sizeof(r->detail), "no JIT range recorded for %.100s (tag %s)", sym,
				 symtag);
		} else if (ip >= t->jit_lo && ip < t->jit_hi && itable_lost_in(t->lost, t->n_lost, 0, time)) {
			/* among the JIT images but in none: the registration of
			 * the image holding it may be among the lost records */
			r->status = ATTR_UNKNOWN;
			r->reason = ATTR_R_RECORDS_LOST;
			snprintf(r->detail, sizeof(r->detail),
				 "0x%llx lies among the recorded JIT ranges but in none of them, and kernel "
				 "records were lost before this sample", (unsigned long long)ip);
		}
		return;
	}
	r->status = ATTR_UNKNOWN;
	pick = pick_candidate(cand, n, time, ip, r);
	if (pick)
		judge_pick(t, pick, time, r);
	itable_apply_horizon(t, time, r);
}

void itable_apply_horizon(const struct attr_table *t, uint64_t time, struct attr_result *r)
{
	if (r->status != ATTR_GENERATION || !t->durable_horizon || time <= t->durable_horizon)
		return;
	r->status = ATTR_UNKNOWN;
	r->reason = ATTR_R_NOT_DURABLE;
	snprintf(r->detail, sizeof(r->detail),
		 "%.12s ran before the last durable log entry; later entries may be lost",
		 r->generation_id ?: "?");
	r->generation_id = NULL;
}

/* ------------------------------ clocks, counters ------------------------------ */

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
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "address_intervals", (json_int_t)t->n_ivs,
			 "intervals_with_generation", (json_int_t)with_gen,
			 "loaded_entries", (json_int_t)t->n_loads, "generations", (json_int_t)t->n_gens,
			 "link_segments", (json_int_t)t->n_segs, "lost_windows", (json_int_t)t->n_lost,
			 "records_lost", (json_int_t)lost,
			 "entries_not_durable", (json_int_t)t->n_not_durable,
			 "durable_horizon_mono_ns", (json_int_t)t->durable_horizon);
}


int attribute__to_mono(const struct attr_table *t, const struct pb_time *tm, uint64_t *mono)
{
	if (!tm->realtime) {
		*mono = tm->ns;
		return 0;
	}
	if (!attr_table__realtime_to_mono(t, tm->ns, mono))
		return -EINVAL;
	return 0;
}
