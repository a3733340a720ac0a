/* SPDX-License-Identifier: BSD-2-Clause */
/* bpfrewrite.h: a generic BPF instruction-rewrite library (docs/rejit.md;
 * src/specializer/ is its user, it knows nothing of its users).
 *
 * A pass library on flat BPF instruction arrays (struct bpf_insn, as
 * libbpf leaves them after relocation: map fds in ld_imm64). It needs no
 * kernel: every pass is a pure function of the instructions and the
 * values it is given, so tests/unit/test_rejit.c drives it on literal
 * arrays. Programs with bpf-to-bpf calls or callbacks are refused
 * (-EOPNOTSUPP): the rewriter knows one flat function.
 *
 *   rw_insns            growable array; insert/delete fix every jump
 *   rw_analyze()        forward dataflow: per insn, what each register
 *                       holds (a constant, a map value pointer, a frame
 *                       pointer offset, or unknown)
 *   rw_pass_*()         the transforms; each fills an rw_report (what
 *                       it changed, e.g. for a receipt's evidence)
 */
#ifndef PROBITY_BPFREWRITE_H
#define PROBITY_BPFREWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

struct rw_insns {
	struct bpf_insn *v;
	size_t n, cap;
};

int rw_insns__init(struct rw_insns *p, const struct bpf_insn *src, size_t n);
void rw_insns__release(struct rw_insns *p);
/* Insert cnt instructions before pos. Jumps of the existing code keep
 * their targets (a jump to pos still reaches the instruction that was at
 * pos); the inserted instructions' offsets are taken as given, relative
 * to where they land. -E2BIG when an offset no longer fits 16 bits. */
int rw_insns__insert(struct rw_insns *p, size_t pos, const struct bpf_insn *ins, size_t cnt);
/* Delete [pos, pos+cnt). A jump from outside into the range is an error
 * (-EINVAL) unless to_next: then it lands on what follows the range. */
int rw_insns__delete(struct rw_insns *p, size_t pos, size_t cnt, bool to_next);
/* Delete every instruction i with del[i] in one step (an ld_imm64's two
 * halves must agree). A kept jump into a deleted one is -EINVAL. */
int rw_insns__delete_mask(struct rw_insns *p, const bool *del);
/* Flow check: every jump lands inside the program on an instruction
 * boundary, no bpf-to-bpf calls, the last reachable path ends in exit. */
int rw_insns__check(const struct rw_insns *p);
/* reach[i]: instruction i is reachable from 0 (second halves of ld_imm64
 * are marked with their first half). */
int rw_insns__reachable(const struct rw_insns *p, bool *reach);

static inline bool rw_is_ldimm64(const struct bpf_insn *i)
{
	return i->code == (BPF_LD | BPF_IMM | BPF_DW);
}

bool rw_is_cond_jmp(const struct bpf_insn *i);

/* ---- dataflow ---- */
enum rw_vkind { RW_UNK = 0, RW_CONST, RW_MAPVAL, RW_FP };

struct rw_val {
	uint8_t kind;
	int32_t fd;		/* RW_MAPVAL: the map fd in the ld_imm64 */
	int64_t v;		/* RW_CONST: value; RW_MAPVAL/RW_FP: byte offset */
};

struct rw_state {
	bool reached;
	struct rw_val r[MAX_BPF_REG];
};

/* In-state of every instruction (calloc'ed array of p->n; caller frees). */
int rw_analyze(const struct rw_insns *p, struct rw_state **out);
/* 1 taken, 0 not taken, -1 unknown under state st. */
int rw_eval_cond(const struct bpf_insn *i, const struct rw_state *st);

/* ---- passes ---- */
#define RW_MAX_EDITS 64

struct rw_edit {
	uint32_t insn;		/* index in the input of the pass */
	int64_t a, b, c;	/* pass specific (see each pass) */
};

struct rw_report {
	uint32_t insns_before, insns_after;
	uint32_t n_edits;
	struct rw_edit edits[RW_MAX_EDITS];
	uint32_t removed;	/* dead instructions deleted */
	uint32_t folded;	/* conditional jumps resolved */
};

/* Constant inlining: every load of [off, off+size) through a pointer
 * known to be map_value(map_fd)+off, with off+size <= len, becomes a
 * move of the value in val (little endian, as the map holds it).
 * edits: a = map offset, b = size, c = value. */
int rw_pass_const_inline(struct rw_insns *p, int map_fd, const void *val, size_t len,
			 struct rw_report *r);

/* Dead-path elimination: conditional jumps whose outcome is known
 * (constants, typically after inlining) become `ja` or disappear, then
 * every unreachable instruction is deleted and jumps are re-targeted.
 * Repeats until nothing changes. edits: a = 1 taken / 0 not taken. */
int rw_pass_fold_dce(struct rw_insns *p, struct rw_report *r);

/* A profiled branch site: a conditional jump whose two successors,
 * straight-line, increment the site's "taken" and "not taken" counters
 * (atomic adds at map_value(prof_fd) + taken_off / not_off). */
struct rw_site {
	uint32_t jmp;		/* index of the conditional jump */
	bool taken_is_target;	/* the jump target side counts "taken" */
};
/* 0 and *site when exactly one jump matches; -ENOENT none; -ENOTUNIQ
 * more than one. */
int rw_find_site(const struct rw_insns *p, int prof_fd, int64_t taken_off, int64_t not_off,
		 struct rw_site *site);

/* The stack slot (negative offset from r10) below everything the
 * program uses: where rw_pass_spill_ctx keeps the context pointer.
 * -EOPNOTSUPP when a frame pointer escapes the analysis. */
int rw_free_stack_slot(const struct rw_insns *p, int16_t *slot);
/* Insert `*(u64 *)(r10 + slot) = r1` at 0. */
int rw_pass_spill_ctx(struct rw_insns *p, int16_t slot, struct rw_report *r);

struct rw_guard {
	int16_t ctx_slot;		/* where the entry spill keeps ctx */
	int prof_fd;			/* map holding the counters below */
	int64_t guard_fail_off;		/* u64 counter: this guard failed */
	int64_t fallback_failed_off;	/* u64 counter: the tail call failed */
	int prog_array_fd;		/* slot 0: the generic generation */
	int32_t fallback_verdict;	/* returned when the tail call fails */
};
/* Branch specialization: the cold side of site (the side that is not
 * hot_taken) is cut off: it goes to a guard stub appended at the end,
 * which counts the failure and jumps to the fallback tail (appended once
 * per program, shared by every guard): reload ctx, tail-call slot 0 of
 * the prog array (the generic program reruns the packet from the start);
 * if the tail call fails, count that and return fallback_verdict. The
 * cold code, now unreachable, goes with the next rw_pass_fold_dce.
 * edits: a = stub index, b = 1 cold side was the jump target / 0
 * fallthrough. */
int rw_pass_branch_spec(struct rw_insns *p, const struct rw_site *site, bool hot_taken,
			const struct rw_guard *g, struct rw_report *r);

/* A planted slow transform for the attribution demo: `rounds` rounds of
 * a multiply-xor mix in a bounded loop at entry (result unused; r1 and
 * the stack untouched). edits: a = rounds, b = loop length. */
int rw_pass_hash_unroll(struct rw_insns *p, uint32_t rounds, struct rw_report *r);

#endif
