/* SPDX-License-Identifier: BSD-2-Clause */
/* passes.c: the transforms on instruction arrays (bpfrewrite.h): constant
 * inlining of configuration map values, constant folding + dead-path
 * elimination, branch-site discovery from profile counters, branch
 * specialization behind a guard (with the ctx spill its fallback needs)
 * and the planted slow transform of the attribution demo.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpfrewrite/bpfrewrite.h"

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						.off = (o), .imm = (i) })

static void report_begin(struct rw_report *r, const struct rw_insns *p)
{
	if (!r)
		return;
	memset(r, 0, sizeof(*r));
	r->insns_before = (uint32_t)p->n;
}

static void report_edit(struct rw_report *r, size_t insn, int64_t a, int64_t b, int64_t c)
{
	if (!r || r->n_edits >= RW_MAX_EDITS)
		return;
	r->edits[r->n_edits++] = (struct rw_edit){ (uint32_t)insn, a, b, c };
}

static void report_end(struct rw_report *r, const struct rw_insns *p)
{
	if (r)
		r->insns_after = (uint32_t)p->n;
}

static int ldx_size(const struct bpf_insn *in)
{
	if (BPF_CLASS(in->code) != BPF_LDX || BPF_MODE(in->code) != BPF_MEM)
		return 0;
	switch (BPF_SIZE(in->code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	case BPF_DW: return 8;
	}
	return 0;
}

int rw_pass_const_inline(struct rw_insns *p, int map_fd, const void *val, size_t len,
			 struct rw_report *r)
{
	struct rw_state *st;
	size_t i;
	int err;

	report_begin(r, p);
	err = rw_analyze(p, &st);
	if (err)
		return err;
	/* walk backwards: a 64-bit value that needs an ld_imm64 grows the
	 * array by one, which must not move what is still to be visited */
	for (i = p->n; i-- > 0;) {
		struct bpf_insn *in = &p->v[i];
		const struct rw_val *base;
		int sz = ldx_size(in);
		uint64_t v = 0;
		int64_t off;

		if (!sz || !st[i].reached || (i > 0 && rw_is_ldimm64(&p->v[i - 1])))
			continue;
		base = &st[i].r[in->src_reg];
		if (base->kind != RW_MAPVAL || base->fd != map_fd)
			continue;
		off = base->v + in->off;
		if (off < 0 || (size_t)off + (size_t)sz > len)
			continue;
		memcpy(&v, (const uint8_t *)val + off, (size_t)sz);	/* little endian host */
		report_edit(r, i, off, sz, (int64_t)v);
		if (sz < 8) {
			*in = INSN(BPF_ALU | BPF_MOV | BPF_K, in->dst_reg, 0, 0, (int32_t)(uint32_t)v);
		} else if ((int64_t)v == (int64_t)(int32_t)v) {
			*in = INSN(BPF_ALU64 | BPF_MOV | BPF_K, in->dst_reg, 0, 0, (int32_t)v);
		} else {
			struct bpf_insn hi = INSN(0, 0, 0, 0, (int32_t)(v >> 32));

			*in = INSN(BPF_LD | BPF_IMM | BPF_DW, in->dst_reg, 0, 0, (int32_t)(uint32_t)v);
			if ((err = rw_insns__insert(p, i + 1, &hi, 1)))
				break;
		}
	}
	free(st);
	report_end(r, p);
	return err;
}

static bool is_nop_ja(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_JA) && in->off == 0;
}

int rw_pass_fold_dce(struct rw_insns *p, struct rw_report *r)
{
	struct rw_state *st = NULL;
	bool *reach = NULL, changed = true;
	int err = 0, rounds = 0;
	size_t i, cnt;

	report_begin(r, p);
	while (changed && rounds++ < 16) {
		changed = false;
		free(st);
		if ((err = rw_analyze(p, &st)))
			goto out;
		for (i = 0; i < p->n; i++) {
			struct bpf_insn *in = &p->v[i];
			int c;

			if (rw_is_ldimm64(in)) {
				i++;
				continue;
			}
			if (!st[i].reached || !rw_is_cond_jmp(in) || (c = rw_eval_cond(in, &st[i])) < 0)
				continue;
			*in = INSN(BPF_JMP | BPF_JA, 0, 0, c ? in->off : 0, 0);
			if (r)
				r->folded++;
			report_edit(r, i, c, 0, 0);
			changed = true;
		}
		free(reach);
		reach = malloc(p->n * sizeof(*reach));
		if (!reach) {
			err = -ENOMEM;
			goto out;
		}
		if ((err = rw_insns__reachable(p, reach)))
			goto out;
		/* delete everything unreachable at once: unreachable code may
		 * jump into other unreachable code */
		for (i = 0, cnt = 0; i < p->n; i++)
			if (!reach[i]) {
				reach[i] = true;	/* now: "delete" */
				cnt++;
			} else {
				reach[i] = false;
			}
		if (cnt) {
			if ((err = rw_insns__delete_mask(p, reach)))
				goto out;
			if (r)
				r->removed += (uint32_t)cnt;
			changed = true;
		}
		/* `ja +0` left by folding: jumps to it fall to the next insn */
		for (i = p->n; i-- > 0;) {
			if (i > 0 && rw_is_ldimm64(&p->v[i - 1]))
				continue;
			if (is_nop_ja(&p->v[i]) && i + 1 < p->n) {
				if ((err = rw_insns__delete(p, i, 1, true)))
					goto out;
				if (r)
					r->removed++;
				changed = true;
			}
		}
	}
out:
	free(st);
	free(reach);
	report_end(r, p);
	return err;
}

static bool is_atomic_add(const struct bpf_insn *in)
{
	return in->code == (BPF_STX | BPF_ATOMIC | BPF_DW) &&
	       (in->imm == BPF_ADD || in->imm == (BPF_ADD | BPF_FETCH));
}

/* Follow the straight line from i (through `ja`) to the first counter
 * increment; its map offset, or -1 at a branch/exit/too far. */
static int64_t side_counter(const struct rw_insns *p, const struct rw_state *st, size_t i, int prof_fd)
{
	int steps;

	for (steps = 0; steps < 64 && i < p->n; steps++) {
		const struct bpf_insn *in = &p->v[i];

		if (is_atomic_add(in) && st[i].reached) {
			const struct rw_val *b = &st[i].r[in->dst_reg];

			if (b->kind == RW_MAPVAL && b->fd == prof_fd)
				return b->v + in->off;
		}
		if (rw_is_cond_jmp(in) || (BPF_CLASS(in->code) == BPF_JMP && BPF_OP(in->code) == BPF_EXIT))
			return -1;
		if (in->code == (BPF_JMP | BPF_JA))
			i = i + 1 + in->off;
		else
			i += rw_is_ldimm64(in) ? 2 : 1;
	}
	return -1;
}

int rw_find_site(const struct rw_insns *p, int prof_fd, int64_t taken_off, int64_t not_off,
		 struct rw_site *site)
{
	struct rw_state *st;
	size_t i;
	int found = 0, err = rw_analyze(p, &st);

	if (err)
		return err;
	for (i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->v[i];
		int64_t ft, tg;

		if (rw_is_ldimm64(in)) {
			i++;
			continue;
		}
		if (!st[i].reached || !rw_is_cond_jmp(in))
			continue;
		ft = side_counter(p, st, i + 1, prof_fd);
		tg = side_counter(p, st, i + 1 + in->off, prof_fd);
		if (!((ft == taken_off && tg == not_off) || (ft == not_off && tg == taken_off)))
			continue;
		if (found++) {
			free(st);
			return -ENOTUNIQ;
		}
		site->jmp = (uint32_t)i;
		site->taken_is_target = tg == taken_off;
	}
	free(st);
	return found ? 0 : -ENOENT;
}

int rw_free_stack_slot(const struct rw_insns *p, int16_t *slot)
{
	struct rw_state *st;
	int64_t lowest = 0;
	size_t i;
	int err = rw_analyze(p, &st);

	if (err)
		return err;
	for (i = 0; i < p->n && !err; i++) {
		const struct bpf_insn *in = &p->v[i];
		uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
		const struct rw_val *d = &st[i].r[in->dst_reg], *s = &st[i].r[in->src_reg];
		int r;

		if (rw_is_ldimm64(in)) {
			i++;
			continue;
		}
		if (!st[i].reached)
			continue;
		switch (cls) {
		case BPF_LDX:
			if (s->kind == RW_FP && s->v + in->off < lowest)
				lowest = s->v + in->off;
			break;
		case BPF_ST:
		case BPF_STX:
			if (d->kind == RW_FP && d->v + in->off < lowest)
				lowest = d->v + in->off;
			if (cls == BPF_STX && s->kind == RW_FP)
				err = -EOPNOTSUPP;	/* a frame pointer stored away */
			break;
		case BPF_JMP:
		case BPF_JMP32:
			if (op == BPF_CALL)
				for (r = 1; r <= 5; r++)	/* helper args into the frame */
					if (st[i].r[r].kind == RW_FP && st[i].r[r].v < lowest)
						lowest = st[i].r[r].v;
			break;
		case BPF_ALU:
		case BPF_ALU64:
			if (in->dst_reg == BPF_REG_10)
				break;
			if (BPF_SRC(in->code) == BPF_X && s->kind == RW_FP &&
			    !(cls == BPF_ALU64 && op == BPF_MOV))
				err = -EOPNOTSUPP;
			if (d->kind == RW_FP && op != BPF_MOV &&
			    !(cls == BPF_ALU64 && (op == BPF_ADD || op == BPF_SUB) && BPF_SRC(in->code) == BPF_K))
				err = -EOPNOTSUPP;
			break;
		}
	}
	free(st);
	if (err)
		return err;
	lowest = (lowest & ~(int64_t)7) - 8;	/* 8-aligned, below the lowest use */
	if (lowest < -512)
		return -ENOSPC;
	*slot = (int16_t)lowest;
	return 0;
}

int rw_pass_spill_ctx(struct rw_insns *p, int16_t slot, struct rw_report *r)
{
	struct bpf_insn spill = INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, slot, 0);
	int err;

	report_begin(r, p);
	err = rw_insns__insert(p, 0, &spill, 1);
	report_edit(r, 0, slot, 0, 0);
	report_end(r, p);
	return err;
}

static void ld_map(struct bpf_insn *o, int reg, int src, int fd, int32_t off)
{
	o[0] = INSN(BPF_LD | BPF_IMM | BPF_DW, reg, src, 0, fd);
	o[1] = INSN(0, 0, 0, 0, off);
}

/* The fallback every guard shares: reload ctx, tail-call the generic
 * program, and if that fails count it and return the fallback verdict. */
static size_t fallback_tail(struct bpf_insn *t, const struct rw_guard *g)
{
	size_t n = 0;

	t[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, g->ctx_slot, 0);
	ld_map(t + n, BPF_REG_2, BPF_PSEUDO_MAP_FD, g->prog_array_fd, 0); n += 2;
	t[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0);
	t[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call);
	/* only reached when the tail call failed (empty slot, limit) */
	ld_map(t + n, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, g->prof_fd, (int32_t)g->fallback_failed_off); n += 2;
	t[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 1);
	t[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_1, BPF_REG_2, 0, BPF_ADD);
	t[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, g->fallback_verdict);
	t[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

static long find_seq(const struct rw_insns *p, const struct bpf_insn *seq, size_t n)
{
	size_t i;

	for (i = 0; i + n <= p->n; i++)
		if (!memcmp(&p->v[i], seq, n * sizeof(*seq)) && (i == 0 || !rw_is_ldimm64(&p->v[i - 1])))
			return (long)i;
	return -1;
}

int rw_pass_branch_spec(struct rw_insns *p, const struct rw_site *site, bool hot_taken,
			const struct rw_guard *g, struct rw_report *r)
{
	struct bpf_insn stub[8], tail[16];
	size_t n = 0, nt, s, j = site->jmp;
	long t;
	bool cold_is_target;
	int err;

	report_begin(r, p);
	if (j >= p->n || !rw_is_cond_jmp(&p->v[j]))
		return -EINVAL;
	/* the fallback tail, once per program: a later guard reuses it */
	nt = fallback_tail(tail, g);
	t = find_seq(p, tail, nt);
	if (t < 0) {
		t = (long)p->n;
		if ((err = rw_insns__insert(p, p->n, tail, nt)))
			return err;
	}
	/* this guard's own part: count the failure, go to the tail */
	ld_map(stub + n, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, g->prof_fd, (int32_t)g->guard_fail_off); n += 2;
	stub[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 1);
	stub[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_1, BPF_REG_2, 0, BPF_ADD);
	s = p->n;
	stub[n] = INSN(BPF_JMP | BPF_JA, 0, 0, (int16_t)(t - (long)(s + n) - 1), 0);
	n++;
	if ((err = rw_insns__insert(p, s, stub, n)))
		return err;
	cold_is_target = site->taken_is_target != hot_taken;
	if (cold_is_target) {
		long off = (long)s - (long)j - 1;

		if (off > INT16_MAX)
			return -E2BIG;
		p->v[j].off = (int16_t)off;
	} else {	/* the fallthrough is cold: `ja stub` right after the jump */
		struct bpf_insn ja = INSN(BPF_JMP | BPF_JA, 0, 0, (int16_t)((long)s - (long)j - 1), 0);

		if ((long)s - (long)j - 1 > INT16_MAX)
			return -E2BIG;
		if ((err = rw_insns__insert(p, j + 1, &ja, 1)))
			return err;
		s++;
	}
	report_edit(r, j, (int64_t)s, cold_is_target, 0);
	report_end(r, p);
	return 0;
}

int rw_pass_hash_unroll(struct rw_insns *p, uint32_t rounds, struct rw_report *r)
{
	struct bpf_insn loop[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, (int32_t)rounds),
		/* loop: */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_2, 0, 0),
		INSN(BPF_ALU64 | BPF_MUL | BPF_K, BPF_REG_3, 0, 0, (int32_t)0x9e3779b1),
		INSN(BPF_ALU64 | BPF_XOR | BPF_X, BPF_REG_0, BPF_REG_3, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_0, 0, 0),
		INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 13),
		INSN(BPF_ALU64 | BPF_XOR | BPF_X, BPF_REG_0, BPF_REG_3, 0, 0),
		INSN(BPF_ALU64 | BPF_SUB | BPF_K, BPF_REG_2, 0, 0, 1),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, -8, 0),
	};
	size_t pos = 0;
	int err;

	report_begin(r, p);
	if (!rounds || rounds > 100000)
		return -EINVAL;
	/* after the ctx spill, if there is one (it must stay first) */
	if (p->n && p->v[0].code == (BPF_STX | BPF_MEM | BPF_DW) && p->v[0].dst_reg == BPF_REG_10 &&
	    p->v[0].src_reg == BPF_REG_1)
		pos = 1;
	err = rw_insns__insert(p, pos, loop, sizeof(loop) / sizeof(loop[0]));
	report_edit(r, pos, rounds, 8, 0);
	report_end(r, p);
	return err;
}
