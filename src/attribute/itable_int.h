/* SPDX-License-Identifier: BSD-2-Clause */
/* itable_int.h: the generation interval table's internals, shared by
 * its files (itable.h is the interface):
 *   itable.c        the table, address lookup, clocks, counters
 *   itable_load.c   adding lifecycle entries and a sample file's records
 *   itable_build.c  build: kernel records replayed, intervals merged and
 *                   given generations, link segments from the handoffs
 *   itable_links.c  link segment queries (--window, --at)
 */
#ifndef PROBITY_ATTRIBUTE_ITABLE_INT_H
#define PROBITY_ATTRIBUTE_ITABLE_INT_H

#include "attribute/itable.h"
#include "attribute/samples.h"
#include "common/array.h"

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
	uint64_t jit_lo, jit_hi;	/* lowest start, highest end of the intervals */
	bool built;
	uint64_t file_start, file_stop;
	/* group commit: time of the last durable entry of a store whose
	 * group never ended (0: none); entries after it were not loaded */
	uint64_t durable_horizon;
	size_t n_not_durable;
};

/* Room for one more element of t's array v: a pointer to it, not yet
 * counted in n_v; NULL when out of memory. */
#define PUSH(t, v) (PB_ARRAY_RESERVE_ONE((t)->v, (t)->n_##v, (t)->cap_##v) ? NULL : &(t)->v[(t)->n_##v])

static inline bool overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 <= b1 && b0 <= a1;
}

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* generation index -> id, NULL for none/unknown */
const char *itable_gen_name(const struct attr_table *t, int g);
void itable_copy_tag(char dst[17], const char *src);
/* "bpf_prog_<16 hex>_name" -> tag */
bool itable_tag_of_sym(const char *sym, char tag[17]);
/* a new address interval (open, no generation), counted; NULL: ENOMEM */
struct addr_iv *itable_new_iv(struct attr_table *t);
/* An attribution at time past the durable horizon becomes unknown. */
void itable_apply_horizon(const struct attr_table *t, uint64_t time, struct attr_result *r);
/* does any of the n windows overlap [lo, hi]? */
bool itable_lost_in(const struct window *w, size_t n, uint64_t lo, uint64_t hi);

#endif
