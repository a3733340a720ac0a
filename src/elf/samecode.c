/* SPDX-License-Identifier: BSD-2-Clause */
/* samecode.c: is a function's code the same in two builds? (Capstone)
 *
 * A probe at an offset inside a function is only meaningful on the code it
 * was written for. When a program is rebuilt (a point release, a distro
 * rebuild) most functions keep their code and only move: what changes are
 * the addresses they reach, i.e. rip-relative displacements (globals,
 * constants, the GOT) and the rel32 of calls and jumps that leave the
 * function. Both builds' functions are disassembled linearly from their
 * start; they are the same code when they have the same size and, at
 * every instruction, the same bytes once those address fields are masked.
 * Jumps inside the function are compared as they are: they are part of
 * the code's shape. Anything else that differs (a register, a structure
 * offset, an inserted instruction) is a difference, reported at its offset.
 *
 * x86-64 only (-EOPNOTSUPP elsewhere), like insn.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <capstone/capstone.h>

#include "elf/insn.h"

#define SAMECODE_MAX (1u << 20)	/* larger "functions" are not compared */

static int read_fn(const struct elf_image *img, const struct elf_symbol *sym, uint8_t **out)
{
	uint8_t *buf;
	int err;

	if (!sym->size || sym->size > SAMECODE_MAX)
		return -E2BIG;
	buf = malloc(sym->size);
	if (!buf)
		return -ENOMEM;
	err = elf_image__read(img, sym->vaddr, buf, sym->size);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

/* Zero the address fields of one decoded instruction at buf (its bytes):
 * a rip-relative displacement, and the rel32 of a call/jmp/jcc whose
 * target is outside [start, start + len). Returns how many were zeroed. */
static int mask_insn(csh cs, const cs_insn *insn, uint8_t *buf, uint64_t start, uint64_t len)
{
	bool branch = cs_insn_group(cs, insn, CS_GRP_JUMP) || cs_insn_group(cs, insn, CS_GRP_CALL);
	const cs_x86 *x = &insn->detail->x86;
	int k, n = 0;

	for (k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];

		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP &&
		    x->encoding.disp_offset && x->encoding.disp_size) {
			memset(buf + x->encoding.disp_offset, 0, x->encoding.disp_size);
			n++;
		}
		if (branch && op->type == X86_OP_IMM && x->encoding.imm_offset &&
		    x->encoding.imm_size == 4 && ((uint64_t)op->imm < start || (uint64_t)op->imm >= start + len)) {
			memset(buf + x->encoding.imm_offset, 0, 4);
			n++;
		}
	}
	return n;
}

/* Walk both functions in step; 0 with out filled, or -errno. */
static int compare_code(csh cs, const uint8_t *a, const uint8_t *b, uint64_t len,
			struct same_code *out)
{
	cs_insn *ia = cs_malloc(cs), *ib = cs_malloc(cs);
	const uint8_t *pa = a, *pb = b;
	size_t la = len, lb = len;
	uint64_t aa = 0, ab = 0;
	uint8_t ba[16], bb[16];
	int err = 0;

	if (!ia || !ib) {
		err = -ENOMEM;
		goto out;
	}
	out->same = true;
	while (la) {
		uint64_t at = aa;
		bool da = cs_disasm_iter(cs, &pa, &la, &aa, ia);
		bool db = cs_disasm_iter(cs, &pb, &lb, &ab, ib);

		if (!da || !db || ia->size != ib->size || ia->id != ib->id) {
			out->same = false;
			out->first_difference = at;
			break;
		}
		memcpy(ba, ia->bytes, ia->size);
		memcpy(bb, ib->bytes, ib->size);
		out->masked += mask_insn(cs, ia, ba, 0, len);
		mask_insn(cs, ib, bb, 0, len);
		if (memcmp(ba, bb, ia->size)) {
			out->same = false;
			out->first_difference = at;
			break;
		}
		out->insns++;
	}
out:
	if (ia)
		cs_free(ia, 1);
	if (ib)
		cs_free(ib, 1);
	return err;
}

int elf_image__same_code(const struct elf_image *a, const struct elf_symbol *sa,
			 const struct elf_image *b, const struct elf_symbol *sb,
			 struct same_code *out)
{
	uint8_t *ca = NULL, *cb = NULL;
	csh cs = 0;
	int err;

	if (!a || !sa || !b || !sb || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (elf_image__machine(a) != EM_X86_64 || elf_image__machine(b) != EM_X86_64)
		return -EOPNOTSUPP;
	if (sa->size != sb->size) {
		out->size_differs = true;
		return 0;
	}
	err = read_fn(a, sa, &ca);
	if (!err)
		err = read_fn(b, sb, &cb);
	if (err)
		goto out;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		cs = 0;
		err = -ENOMEM;
		goto out;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	err = compare_code(cs, ca, cb, sa->size, out);
out:
	if (cs)
		cs_close(&cs);
	free(ca);
	free(cb);
	return err;
}
