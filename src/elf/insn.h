/* SPDX-License-Identifier: BSD-2-Clause */
/* insn.h: does a uprobe offset land on an instruction boundary of a
 * function? (Capstone, x86-64; insn.c)
 */
#ifndef PROBITY_ELF_INSN_H
#define PROBITY_ELF_INSN_H

#include <stdbool.h>
#include <stdint.h>

#include "elf/elf_image.h"

/* How the kernel runs a probed instruction (x86-64, arch/x86/kernel/uprobes.c). */
enum insn_exec {
	INSN_EXEC_UNKNOWN = 0,	/* not decoded */
	INSN_EXEC_OPTIMIZABLE,	/* 5-byte nop: after the first hit the kernel may
				 * replace the trap with a call (6.18+) */
	INSN_EXEC_EMULATED,	/* one trap, emulated in the kernel (push, branch, nop) */
	INSN_EXEC_SINGLE_STEP,	/* one trap, then single-stepped out of line */
};

struct insn_site_check {
	bool in_bounds;		/* offset < symbol size (or size unknown) */
	bool on_boundary;	/* offset starts an instruction */
	uint32_t insn_len;	/* length of the instruction at offset */
	char insn_text[96];	/* "push rbp" etc. */
	bool is_nop5;		/* 5-byte nop (optimizable by the kernel) */
	bool needs_emulation;	/* the kernel emulates/single-steps it (warn) */
	enum insn_exec exec;	/* which of the two (or optimizable) */
	uint64_t prev_boundary;	/* start of the instruction holding offset
				 * (== offset when on_boundary) */
	uint64_t next_boundary;	/* start of the instruction after it; both
				 * relative to the symbol, like offset */
	bool decode_failed;	/* Capstone could not decode the bytes at
				 * decode_failed_at <= offset: the verdict is
				 * "not verified", on_boundary is false */
	uint64_t decode_failed_at;
	char note[64];		/* why the kernel emulates / single-steps the
				 * instruction, e.g. "rip-relative: executed
				 * out of line with fixup" */
	char *listing;		/* disassembly around offset, one insn per line,
				 * the offending line marked; caller frees */
};

/* Disassemble sym from its start and check that offset lands on an
 * instruction boundary inside [0, size). 0 on success (see out fields;
 * a bad offset is not an error return), -errno when the code could not be
 * read (-ENOENT: sym not file-backed, -ERANGE: offset past the file data,
 * -E2BIG: offset beyond 16 MiB into the function) or the architecture is
 * unsupported (-EOPNOTSUPP: x86-64 only).
 *
 * A symbol of size 0 is checked against its first 4096 bytes (or up to the
 * end of its segment). insn_len, insn_text, is_nop5, needs_emulation and
 * note describe the instruction at offset, so they are set only when
 * on_boundary. On success listing is always set (for an out-of-bounds
 * offset it is one line saying so); insn_site_check__clear() frees it. */
int elf_image__check_insn_boundary(const struct elf_image *img,
				   const struct elf_symbol *sym, uint64_t offset,
				   struct insn_site_check *out);
void insn_site_check__clear(struct insn_site_check *c);

/* Is a function's code the same in two builds? (samecode.c) */
struct same_code {
	bool same;		/* same size, same instructions, same bytes but
				 * for address fields (rip-relative
				 * displacements, rel32 of calls and jumps that
				 * leave the function) */
	bool size_differs;	/* the symbols' sizes differ (not compared) */
	uint64_t first_difference;	/* offset of the first instruction
					 * that differs (when !same and
					 * !size_differs) */
	uint32_t insns;		/* instructions compared equal */
	uint32_t masked;	/* address fields left out of the comparison */
};

/* Compare sa in a with sb in b (x86-64; -EOPNOTSUPP elsewhere). 0 with
 * out filled, or -errno: -E2BIG for an unsized symbol or one over 1 MiB,
 * -ENOENT/-ERANGE when the code cannot be read. */
int elf_image__same_code(const struct elf_image *a, const struct elf_symbol *sa,
			 const struct elf_image *b, const struct elf_symbol *sb,
			 struct same_code *out);

#endif
