/* SPDX-License-Identifier: BSD-2-Clause */
/* insn.c: does a uprobe offset land on an instruction boundary? (Capstone)
 *
 * A uprobe overwrites the first byte of an instruction with int3. An offset
 * in the middle of an instruction corrupts it: the kernel decodes garbage,
 * or the process executes something else. We disassemble the function
 * linearly from its symbol start, the way the compiler laid it out, and
 * check that the offset is one of the instruction starts. Linear sweep is
 * exact for compiler output; hand-written code with data in .text can make
 * it drift, which is why the answer carries a listing a human can judge.
 *
 * x86-64 only for now: other machines get -EOPNOTSUPP (every arm64
 * instruction is 4 bytes, so the check there is an alignment test, left to
 * whoever adds the architecture).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <capstone/capstone.h>

#include "elf/insn.h"

#define CTX_BEFORE 6		/* listing: instructions before the offset */
#define CTX_AFTER 6		/* ... and after it */
#define X86_MAX_INSN 15
/* Unsized symbols (size 0, hand-written asm) are read this far. */
#define UNSIZED_LEN 4096
/* The sweep reads the function from its start to just past the offset;
 * beyond this it is a hostile symbol, not a function. */
#define MAX_SCAN (16u << 20)

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

struct span {
	uint64_t off;
	uint32_t len;
};

static bool is_rip_relative(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	int i;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base == X86_REG_RIP)
			return true;
	return false;
}

/* How the kernel's x86 uprobe code (arch/x86/kernel/uprobes.c) will run the
 * probed instruction. Kept deliberately coarse: everything except a 5-byte
 * nop is flagged needs_emulation, and note says why, so the plan can warn
 * with a reason:
 *  - nop5 (0f 1f 44 00 00): the kernel can optimize the probe into a call
 *    (6.18+ uprobe optimization), no trap, no out-of-line step;
 *  - call/jmp/jcc rel, nops, "push reg": emulated in the kernel (branch_ and
 *    push_setup_xol_ops), one trap, no single-step;
 *  - rip-relative operands: copied out of line with the displacement fixed
 *    up (riprel_analyze), then single-stepped;
 *  - everything else: single-stepped out of line from the XOL page. */
static void classify(csh cs, const cs_insn *insn, struct insn_site_check *out)
{
	const char *why;

	out->is_nop5 = insn->size == 5 && !memcmp(insn->bytes, nop5, 5);
	out->needs_emulation = !out->is_nop5;
	if (out->is_nop5)
		why = "5-byte nop: can be optimized";
	else if (is_rip_relative(insn))
		why = "rip-relative: executed out of line with fixup";
	else if (insn->id == X86_INS_PUSH && insn->size == 1)
		why = "1-byte push: emulated by the kernel";
	else if (insn->id == X86_INS_PUSH && insn->size == 2 && insn->bytes[0] == 0x41)
		why = "push r8-r15: emulated by the kernel";
	else if ((cs_insn_group(cs, insn, CS_GRP_JUMP) ||
		  cs_insn_group(cs, insn, CS_GRP_CALL)) &&
		 insn->detail->x86.op_count == 1 &&
		 insn->detail->x86.operands[0].type == X86_OP_IMM)
		why = "relative branch: emulated by the kernel";
	else if (insn->id == X86_INS_NOP)
		why = "nop: emulated by the kernel";
	else
		why = "executed out of line (single-step)";
	snprintf(out->note, sizeof(out->note), "%s", why);
	out->exec = out->is_nop5 ? INSN_EXEC_OPTIMIZABLE
		    : strstr(why, "emulated") ? INSN_EXEC_EMULATED : INSN_EXEC_SINGLE_STEP;
}

/* "mnemonic op_str" into text, cut to sz (never fails). */
static void format_insn(const cs_insn *insn, char *text, size_t sz)
{
	char tmp[sizeof(insn->mnemonic) + sizeof(insn->op_str) + 1];
	size_t l;

	if (!sz)
		return;
	if (insn->op_str[0])
		snprintf(tmp, sizeof(tmp), "%s %s", insn->mnemonic, insn->op_str);
	else
		snprintf(tmp, sizeof(tmp), "%s", insn->mnemonic);
	l = strnlen(tmp, sz - 1);
	memcpy(text, tmp, l);
	text[l] = '\0';
}

/* Text of one instruction ("mov rbp, rsp"); false if undecodable. */
static bool insn_text(csh cs, const uint8_t *buf, size_t len, uint64_t off,
		      char *text, size_t sz)
{
	cs_insn *insn = NULL;
	size_t n;

	n = cs_disasm(cs, buf, len, off, 1, &insn);
	if (n != 1) {
		cs_free(insn, n);
		return false;
	}
	format_insn(insn, text, sz);
	cs_free(insn, n);
	return true;
}

struct listing {
	FILE *f;
	csh cs;
	const uint8_t *buf;
	size_t buf_len;
	uint64_t base;		/* the symbol's vaddr */
	int label_w;		/* "0x401136 <+6>:" column */
	int bytes_w;		/* "48 89 e5" column */
};

static int label(char *b, size_t sz, uint64_t base, uint64_t off)
{
	return snprintf(b, sz, "0x%llx <+%llu>:", (unsigned long long)(base + off),
			(unsigned long long)off);
}

/* Column widths over every span that will be printed. */
static void listing_widths(struct listing *l, const struct span *s, int n)
{
	char b[64];
	int i, w;

	for (i = 0; i < n; i++) {
		uint32_t len = s[i].len < X86_MAX_INSN ? s[i].len : X86_MAX_INSN;

		w = label(b, sizeof(b), l->base, s[i].off);
		if (w > l->label_w)
			l->label_w = w;
		if ((int)(3 * len - 1) > l->bytes_w)
			l->bytes_w = (int)(3 * len - 1);
	}
}

/* One line: "   0x401136 <+6>:  48 89 e5  mov rbp, rsp". Decoded at the
 * real address so branch targets and rip-relative operands read right. */
static void listing_line(struct listing *l, const struct span *s, bool mark)
{
	char bytes[3 * X86_MAX_INSN + 1] = "", text[256], lab[64];
	uint32_t i;
	int p = 0;

	for (i = 0; i < s->len && i < X86_MAX_INSN; i++)
		p += snprintf(bytes + p, sizeof(bytes) - p, i ? " %02x" : "%02x",
			      l->buf[s->off + i]);
	if (!insn_text(l->cs, l->buf + s->off, l->buf_len - s->off,
		       l->base + s->off, text, sizeof(text)))
		snprintf(text, sizeof(text), "(bad)");
	label(lab, sizeof(lab), l->base, s->off);
	fprintf(l->f, "%s%-*s  %-*s  %s\n", mark ? "=> " : "   ", l->label_w, lab,
		l->bytes_w, bytes, text);
}

static int out_of_bounds(const struct elf_symbol *sym, uint64_t offset,
			 uint64_t fn_len, struct insn_site_check *out)
{
	out->in_bounds = false;
	if (asprintf(&out->listing, "   offset +%llu is outside %s (%s %llu bytes)\n",
		     (unsigned long long)offset, sym->name ? sym->name : "the function",
		     sym->size ? "size" : "no size; checked",
		     (unsigned long long)fn_len) < 0) {
		out->listing = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The bytes the sweep reads: from the symbol's start to a few
 * instructions past the offset. Only those matter; a function may run past
 * the end of the file data (hostile or truncated file): decode what is
 * there. *bufp is malloc'ed. */
static int read_code(const struct elf_image *img, const struct elf_symbol *sym,
		     uint64_t offset, uint64_t fn_len, uint64_t avail, uint8_t **bufp,
		     uint64_t *needp)
{
	uint64_t need = offset + (CTX_AFTER + 1) * X86_MAX_INSN;
	uint8_t *buf;
	int err;

	if (need < offset || need > fn_len)
		need = fn_len;
	if (need > avail)
		need = avail;
	if (offset >= need)
		return -ERANGE;
	if (need > MAX_SCAN)
		return -E2BIG;
	buf = malloc(need);
	if (!buf)
		return -ENOMEM;
	err = elf_image__read(img, sym->vaddr, buf, need);
	if (err) {
		free(buf);
		return err;
	}
	*bufp = buf;
	*needp = need;
	return 0;
}

/* What the linear sweep saw around the offset. */
struct sweep {
	struct span before[CTX_BEFORE];	/* ring of the last instructions
					 * ending before the offset */
	int nbefore, head;
	struct span target;		/* the instruction holding the offset */
	bool found;			/* target decoded */
	struct span after[CTX_AFTER];
	int nafter;
	bool failed;			/* decoding stopped at fail_at */
	uint64_t fail_at;
};

/* The linear sweep from the symbol start, detail off (faster). */
static int sweep_code(csh cs, const uint8_t *buf, size_t len, uint64_t offset,
		      struct sweep *sw)
{
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *code = buf;
	uint64_t addr = 0;

	if (!insn)
		return -ENOMEM;
	while (len > 0) {
		uint64_t start = addr;

		if (!cs_disasm_iter(cs, &code, &len, &addr, insn)) {
			sw->failed = true;
			sw->fail_at = start;
			break;
		}
		if (start + insn->size <= offset) {
			sw->before[sw->head] = (struct span){ start, insn->size };
			sw->head = (sw->head + 1) % CTX_BEFORE;
			if (sw->nbefore < CTX_BEFORE)
				sw->nbefore++;
		} else if (start <= offset) {
			sw->target = (struct span){ start, insn->size };
			sw->found = true;
		} else {
			sw->after[sw->nafter++] = (struct span){ start, insn->size };
			if (sw->nafter == CTX_AFTER)
				break;
		}
	}
	cs_free(insn, 1);
	return 0;
}

/* The verdict from the sweep: boundaries, and the instruction at the
 * offset (decoded again, with detail) when it starts one. */
static void judge_offset(csh cs, const uint8_t *buf, uint64_t need,
			 const struct elf_symbol *sym, uint64_t offset,
			 const struct sweep *sw, struct insn_site_check *out)
{
	cs_insn *d = NULL;
	size_t n;

	if (!sw->found) {
		/* The sweep stopped at or before the offset: whatever is
		 * there was never decoded, so it is not verified. */
		out->decode_failed = true;
		out->decode_failed_at = sw->failed ? sw->fail_at : need;
		out->prev_boundary = out->next_boundary = out->decode_failed_at;
		return;
	}
	out->prev_boundary = sw->target.off;
	out->next_boundary = sw->target.off + sw->target.len;
	out->on_boundary = sw->target.off == offset;
	if (!out->on_boundary)
		return;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, buf + offset, need - offset, sym->vaddr + offset, 1, &d);
	if (n == 1) {
		out->insn_len = d->size;
		format_insn(d, out->insn_text, sizeof(out->insn_text));
		classify(cs, d, out);
	}
	cs_free(d, n);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_OFF);
}

/* The listing into f: before[] oldest first, the target, after[]. */
static void print_listing(FILE *f, csh cs, const uint8_t *buf, uint64_t need,
			  const struct elf_symbol *sym, uint64_t offset,
			  const struct sweep *sw, const struct insn_site_check *out)
{
	struct span win[CTX_BEFORE + 1 + CTX_AFTER];
	struct listing l = { f, cs, buf, need, sym->vaddr, 0, 0 };
	int nwin = 0, mark = -1, i;

	for (i = 0; i < sw->nbefore; i++)
		win[nwin++] = sw->before[(sw->head - sw->nbefore + i + CTX_BEFORE) % CTX_BEFORE];
	if (sw->found) {
		mark = nwin;
		win[nwin++] = sw->target;
		for (i = 0; i < sw->nafter; i++)
			win[nwin++] = sw->after[i];
	}
	listing_widths(&l, win, nwin);
	if (!sw->found) {
		struct span bad = { out->decode_failed_at, 1 };

		listing_widths(&l, &bad, 1);
	}
	for (i = 0; i < nwin; i++) {
		listing_line(&l, &win[i], i == mark);
		if (i == mark && !out->on_boundary)
			fprintf(f, "   offset +%llu falls inside the %u-byte instruction at +%llu\n",
				(unsigned long long)offset, sw->target.len,
				(unsigned long long)sw->target.off);
	}
	if (sw->found && sw->failed && sw->nafter < CTX_AFTER)
		fprintf(f, "   (cannot decode the bytes at +%llu)\n",
			(unsigned long long)sw->fail_at);
	if (!sw->found) {
		char lab[64];

		label(lab, sizeof(lab), sym->vaddr, out->decode_failed_at);
		fprintf(f, "=> %-*s  (cannot decode)\n", l.label_w, lab);
		fprintf(f, "   cannot decode the bytes at +%llu: offset +%llu not verified\n",
			(unsigned long long)out->decode_failed_at,
			(unsigned long long)offset);
	}
}

/* out->listing: print_listing into a malloc'ed string. */
static int make_listing(csh cs, const uint8_t *buf, uint64_t need,
			const struct elf_symbol *sym, uint64_t offset,
			const struct sweep *sw, struct insn_site_check *out)
{
	char *text = NULL;
	size_t text_sz = 0;
	FILE *f;

	f = open_memstream(&text, &text_sz);
	if (!f)
		return -ENOMEM;
	print_listing(f, cs, buf, need, sym, offset, sw, out);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	out->listing = text;
	return 0;
}

int elf_image__check_insn_boundary(const struct elf_image *img,
				   const struct elf_symbol *sym, uint64_t offset,
				   struct insn_site_check *out)
{
	struct sweep sw = {};
	uint64_t avail, fn_len, need = 0;
	uint8_t *buf = NULL;
	csh cs = 0;
	int err;

	if (!img || !sym || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (elf_image__machine(img) != EM_X86_64)
		return -EOPNOTSUPP;
	err = elf_image__mapped_len(img, sym->vaddr, &avail);
	if (err)
		return err;

	fn_len = sym->size ? sym->size : (avail < UNSIZED_LEN ? avail : UNSIZED_LEN);
	if (offset >= fn_len)
		return out_of_bounds(sym, offset, fn_len, out);
	out->in_bounds = true;

	err = read_code(img, sym, offset, fn_len, avail, &buf, &need);
	if (err)
		goto out;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		cs = 0;
		err = -ENOMEM;
		goto out;
	}
	err = sweep_code(cs, buf, need, offset, &sw);
	if (err)
		goto out;
	judge_offset(cs, buf, need, sym, offset, &sw, out);
	err = make_listing(cs, buf, need, sym, offset, &sw, out);
out:
	if (cs)
		cs_close(&cs);
	free(buf);
	return err;
}

void insn_site_check__clear(struct insn_site_check *c)
{
	if (!c)
		return;
	free(c->listing);
	memset(c, 0, sizeof(*c));
}
