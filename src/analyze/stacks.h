/* SPDX-License-Identifier: BSD-2-Clause */
/* stacks.h: the user stacks of a trace (PB_REC_STACK, record --stacks)
 * symbolized with the recorded mappings (TRACE_CHUNK_MAPS, elf/symbolize.h)
 * and folded for flame graphs: `report --folded` prints one line per
 * distinct stack, "root;...;leaf;[wait:EVENT] VALUE", VALUE the WAIT time
 * (ns) spent under that stack, or with holds the hold time (ns) of the
 * ACQUIREs taken there (matched to the RELEASE of the same resource,
 * instance and generation, so holds need record --events). The leaf frame
 * names the manifest event; frames without a symbol print as
 * module+0xOFF or [unknown], counted.
 */
#ifndef PROBITY_ANALYZE_STACKS_H
#define PROBITY_ANALYZE_STACKS_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/analyze.h"
#include "engine/events.h"
#include "trace/trace.h"

struct stack_set;

enum stack_value {
	STACK_WAITS = 0,	/* WAIT span time by the waiter's stack */
	STACK_HOLDS = 1,	/* hold time by the acquirer's stack */
};

struct stack_set *stack_set__new(void);
/* Feed one trace record (stacks and RELEASEs are kept; others ignored).
 * 0 or -ENOMEM. */
int stack_set__add_record(struct stack_set *s, const struct pb_rec_hdr *rec, size_t len);
/* Feed one TRACE_CHUNK_MAPS table. 0 or -errno. */
int stack_set__add_maps(struct stack_set *s, const struct trace_map *m, size_t n);
/* Forked processes (pid, ppid pairs; TRACE_CHUNK_PROCS): a process
 * that exited before its mappings were written is symbolized with its
 * parent's, which it inherited at fork. 0 or -ENOMEM. */
int stack_set__set_parents(struct stack_set *s, const struct trace_proc *p, size_t n);
/* Stack records kept. */
uint64_t stack_set__count(const struct stack_set *s);
void stack_set__free(struct stack_set *s);

struct stack_fold {
	char *stack;		/* "root;...;leaf" */
	uint64_t value;		/* ns */
	uint64_t count;		/* stack records folded into it */
};

struct stack_folds {
	struct stack_fold *v;	/* by value, largest first */
	size_t n;
	uint64_t total;		/* sum of values */
	uint64_t stacks;	/* stack records folded */
	uint64_t frames, frames_module, frames_unknown;	/* symbolization */
	uint64_t holds_unmatched;	/* holds: ACQUIRE stacks without their RELEASE */
	uint64_t holds_short;	/* holds: shorter than min_ns, left out */
};

/* Fold the stacks of kind what. names[d]: the manifest event id of
 * descriptor d (the leaf frame), n_names of them (NULL ones print as
 * "descN"). Holds shorter than min_ns are left out (counted): only the
 * long holds' ACQUIRE stacks. 0 or -ENOMEM; release out with
 * stack_folds__release. */
int stack_set__fold(struct stack_set *s, enum stack_value what, uint64_t min_ns,
		    const char *const *names, size_t n_names, struct stack_folds *out);
void stack_folds__release(struct stack_folds *f);
/* The folded lines (flamegraph.pl / speedscope input). */
void stack_folds__print(const struct stack_folds *f, FILE *out);
/* One line: stacks folded, frames not named, and what the engine could
 * not take (c: the trace's counts; may be NULL). */
void stack_folds__summary(const struct stack_folds *f, const struct analysis_counts *c,
			  FILE *out);
/* {"folded": [{"stack", "value_ns", "count"}...], "stacks", "total_ns",
 *  "frames", "frames_module", "frames_unknown", "holds_unmatched",
 *  "holds_short"} */
json_t *stack_folds__json(const struct stack_folds *f);

#endif
