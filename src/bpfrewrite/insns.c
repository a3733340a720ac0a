/* SPDX-License-Identifier: BSD-2-Clause */
/* insns.c: the instruction array under rewriting: insertion and deletion
 * that keep every jump pointing where it pointed, the flow check, the
 * reachability walk, and the forward dataflow the passes decide on.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "bpfrewrite/bpfrewrite.h"

#define RW_MAX_INSNS 1000000

int rw_insns__init(struct rw_insns *p, const struct bpf_insn *src, size_t n)
{
	memset(p, 0, sizeof(*p));
	if (n > RW_MAX_INSNS)
		return -E2BIG;
	p->cap = n + 64;
	p->v = calloc(p->cap, sizeof(*p->v));
	if (!p->v)
		return -ENOMEM;
	if (n)
		memcpy(p->v, src, n * sizeof(*src));
	p->n = n;
	return 0;
}

void rw_insns__release(struct rw_insns *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static bool is_jmp_class(const struct bpf_insn *i)
{
	return BPF_CLASS(i->code) == BPF_JMP || BPF_CLASS(i->code) == BPF_JMP32;
}

/* A jump with a 16-bit offset: everything in the jump classes but call
 * and exit. (BPF_JMP32|BPF_JA, "gotol" with a 32-bit offset in imm, is
 * refused by rw_insns__check.) */
static bool has_target(const struct bpf_insn *i)
{
	uint8_t op = BPF_OP(i->code);

	return is_jmp_class(i) && op != BPF_CALL && op != BPF_EXIT;
}

bool rw_is_cond_jmp(const struct bpf_insn *i)
{
	return has_target(i) && BPF_OP(i->code) != BPF_JA;
}

static long target_of(const struct bpf_insn *v, size_t i)
{
	return (long)i + 1 + v[i].off;
}

int rw_insns__check(const struct rw_insns *p)
{
	size_t i;

	if (!p->n)
		return -EINVAL;
	for (i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->v[i];

		if (rw_is_ldimm64(in)) {
			if (i + 1 >= p->n)
				return -EINVAL;
			if (in->src_reg == BPF_PSEUDO_FUNC)
				return -EOPNOTSUPP;
			i++;
			continue;
		}
		if (is_jmp_class(in) && BPF_OP(in->code) == BPF_CALL && in->src_reg != 0)
			return -EOPNOTSUPP;	/* bpf-to-bpf call or kfunc */
		if (in->code == (BPF_JMP32 | BPF_JA))
			return -EOPNOTSUPP;
		if (has_target(in)) {
			long t = target_of(p->v, i);

			if (t < 0 || (size_t)t >= p->n)
				return -EINVAL;
			if (t > 0 && rw_is_ldimm64(&p->v[t - 1])) {
				/* into the second half of an ld_imm64? scan from
				 * the start to know the boundaries */
				size_t k = 0;

				while (k < (size_t)t)
					k += rw_is_ldimm64(&p->v[k]) ? 2 : 1;
				if (k != (size_t)t)
					return -EINVAL;
			}
		}
	}
	return 0;
}

/* Rewrite every jump's offset after instructions moved: new position of
 * an old index is map(old). */
static int retarget(struct bpf_insn *v, size_t n_old, const struct bpf_insn *old,
		    long (*map)(long idx, const void *ctx, bool is_target), const void *ctx)
{
	size_t i;

	for (i = 0; i < n_old; i++) {
		long ni, nt, off;

		if (rw_is_ldimm64(&old[i])) {
			i++;
			continue;
		}
		if (!has_target(&old[i]))
			continue;
		ni = map((long)i, ctx, false);
		if (ni < 0)
			continue;	/* the jump itself was deleted */
		nt = map(target_of(old, i), ctx, true);
		if (nt < 0)
			return -EINVAL;
		off = nt - ni - 1;
		if (off < SHRT_MIN || off > SHRT_MAX)
			return -E2BIG;
		v[ni].off = (int16_t)off;
	}
	return 0;
}

struct ins_ctx { long pos, cnt; };

static long ins_map(long idx, const void *c, bool is_target)
{
	const struct ins_ctx *x = c;

	return idx < x->pos ? idx : idx + x->cnt;
}

int rw_insns__insert(struct rw_insns *p, size_t pos, const struct bpf_insn *ins, size_t cnt)
{
	struct bpf_insn *old;
	struct ins_ctx x = { (long)pos, (long)cnt };
	int err;

	if (pos > p->n)
		return -EINVAL;
	if (p->n + cnt > RW_MAX_INSNS)
		return -E2BIG;
	old = malloc((p->n ? p->n : 1) * sizeof(*old));
	if (!old)
		return -ENOMEM;
	memcpy(old, p->v, p->n * sizeof(*old));
	if (p->n + cnt > p->cap) {
		size_t cap = (p->n + cnt) * 2;
		struct bpf_insn *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			free(old);
			return -ENOMEM;
		}
		p->v = v;
		p->cap = cap;
	}
	memmove(p->v + pos + cnt, p->v + pos, (p->n - pos) * sizeof(*p->v));
	memcpy(p->v + pos, ins, cnt * sizeof(*ins));
	err = retarget(p->v, p->n, old, ins_map, &x);
	if (err)	/* put the array back as it was */
		memcpy(p->v, old, p->n * sizeof(*old));
	else
		p->n += cnt;
	free(old);
	return err;
}

struct del_ctx { long pos, cnt; bool to_next; };

static long del_map(long idx, const void *c, bool is_target)
{
	const struct del_ctx *x = c;

	if (idx < x->pos)
		return idx;
	if (idx >= x->pos + x->cnt)
		return idx - x->cnt;
	return is_target && x->to_next ? x->pos : -1;
}

int rw_insns__delete(struct rw_insns *p, size_t pos, size_t cnt, bool to_next)
{
	struct bpf_insn *old;
	struct del_ctx x = { (long)pos, (long)cnt, to_next };
	int err;

	if (pos + cnt > p->n || pos + cnt < pos)
		return -EINVAL;
	old = malloc((p->n ? p->n : 1) * sizeof(*old));
	if (!old)
		return -ENOMEM;
	memcpy(old, p->v, p->n * sizeof(*old));
	memmove(p->v + pos, p->v + pos + cnt, (p->n - pos - cnt) * sizeof(*p->v));
	err = retarget(p->v, p->n, old, del_map, &x);
	if (err)
		memcpy(p->v, old, p->n * sizeof(*old));
	else
		p->n -= cnt;
	free(old);
	return err;
}

struct mask_ctx { const long *newpos; long n; };

static long mask_map(long idx, const void *c, bool is_target)
{
	const struct mask_ctx *x = c;

	return idx >= 0 && idx < x->n ? x->newpos[idx] : -1;
}

int rw_insns__delete_mask(struct rw_insns *p, const bool *del)
{
	struct bpf_insn *old;
	struct mask_ctx x = { NULL, (long)p->n };
	long *newpos;
	size_t i, k = 0;
	int err;

	old = malloc((p->n ? p->n : 1) * sizeof(*old));
	newpos = malloc((p->n ? p->n : 1) * sizeof(*newpos));
	if (!old || !newpos) {
		free(old);
		free(newpos);
		return -ENOMEM;
	}
	memcpy(old, p->v, p->n * sizeof(*old));
	for (i = 0; i < p->n; i++) {
		newpos[i] = del[i] ? -1 : (long)k;
		if (!del[i])
			p->v[k++] = old[i];
	}
	x.newpos = newpos;
	/* only jumps that stay are retargeted (deleted ones map to -1) */
	err = retarget(p->v, p->n, old, mask_map, &x);
	if (err)
		memcpy(p->v, old, p->n * sizeof(*old));
	else
		p->n = k;
	free(old);
	free(newpos);
	return err;
}

int rw_insns__reachable(const struct rw_insns *p, bool *reach)
{
	size_t *stack, sp = 0;
	int err = rw_insns__check(p);

	if (err)
		return err;
	memset(reach, 0, p->n * sizeof(*reach));
	stack = malloc(p->n * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	stack[sp++] = 0;
	reach[0] = true;
	while (sp) {
		size_t i = stack[--sp], succ[2];
		const struct bpf_insn *in = &p->v[i];
		int ns = 0, k;

		if (rw_is_ldimm64(in)) {
			reach[i + 1] = true;
			succ[ns++] = i + 2;
		} else if (is_jmp_class(in) && BPF_OP(in->code) == BPF_EXIT) {
			;
		} else if (is_jmp_class(in) && BPF_OP(in->code) == BPF_JA) {
			succ[ns++] = (size_t)target_of(p->v, i);
		} else {
			succ[ns++] = i + 1;
			if (rw_is_cond_jmp(in))
				succ[ns++] = (size_t)target_of(p->v, i);
		}
		for (k = 0; k < ns; k++) {
			if (succ[k] >= p->n) {	/* fell off the end */
				free(stack);
				return -EINVAL;
			}
			if (!reach[succ[k]]) {
				reach[succ[k]] = true;
				stack[sp++] = succ[k];
			}
		}
	}
	free(stack);
	return 0;
}

/* ---- dataflow ---------------------------------------------------------- */

static bool val_eq(const struct rw_val *a, const struct rw_val *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case RW_UNK: return true;
	case RW_MAPVAL: return a->fd == b->fd && a->v == b->v;
	default: return a->v == b->v;
	}
}

/* Merge st into *into; true when *into changed. */
static bool meet(struct rw_state *into, const struct rw_state *st)
{
	bool changed = false;
	int r;

	if (!into->reached) {
		*into = *st;
		into->reached = true;
		return true;
	}
	for (r = 0; r < MAX_BPF_REG; r++) {
		if (into->r[r].kind != RW_UNK && !val_eq(&into->r[r], &st->r[r])) {
			memset(&into->r[r], 0, sizeof(into->r[r]));
			changed = true;
		}
	}
	return changed;
}

static void set_unk(struct rw_state *st, int r)
{
	memset(&st->r[r], 0, sizeof(st->r[r]));
}

static void set_const(struct rw_state *st, int r, int64_t v)
{
	st->r[r] = (struct rw_val){ .kind = RW_CONST, .v = v };
}

static bool alu_const(uint8_t op, bool is64, uint64_t a, uint64_t b, uint64_t *out)
{
	uint32_t sh = is64 ? 63 : 31;

	switch (op) {
	case BPF_ADD: *out = a + b; break;
	case BPF_SUB: *out = a - b; break;
	case BPF_MUL: *out = a * b; break;
	case BPF_AND: *out = a & b; break;
	case BPF_OR:  *out = a | b; break;
	case BPF_XOR: *out = a ^ b; break;
	case BPF_LSH: *out = is64 ? a << (b & sh) : (uint32_t)((uint32_t)a << (b & sh)); break;
	case BPF_RSH: *out = is64 ? a >> (b & sh) : (uint32_t)((uint32_t)a >> (b & sh)); break;
	case BPF_ARSH: *out = is64 ? (uint64_t)((int64_t)a >> (b & sh))
				   : (uint32_t)((int32_t)a >> (b & sh)); break;
	case BPF_NEG: *out = -a; break;
	case BPF_MOV: *out = b; break;
	default: return false;	/* div/mod (by zero rules), end: not folded */
	}
	if (!is64)
		*out = (uint32_t)*out;
	return true;
}

/* Out-state of instruction i applied to st (in place). */
static void transfer(const struct bpf_insn *v, size_t i, struct rw_state *st)
{
	const struct bpf_insn *in = &v[i];
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	int d = in->dst_reg, s = in->src_reg;

	if (rw_is_ldimm64(in)) {
		if (in->src_reg == 0)
			set_const(st, d, (int64_t)(((uint64_t)(uint32_t)v[i + 1].imm << 32) |
						   (uint32_t)in->imm));
		else if (in->src_reg == BPF_PSEUDO_MAP_VALUE)
			st->r[d] = (struct rw_val){ .kind = RW_MAPVAL, .fd = in->imm, .v = v[i + 1].imm };
		else
			set_unk(st, d);
		return;
	}
	switch (cls) {
	case BPF_LDX:
		if (d != BPF_REG_10)
			set_unk(st, d);
		return;
	case BPF_LD:	/* legacy packet loads clobber r0-r5 */
		for (d = 0; d <= 5; d++)
			set_unk(st, d);
		return;
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_ATOMIC &&
		    (in->imm == BPF_CMPXCHG || (in->imm & BPF_FETCH)))
			set_unk(st, in->imm == BPF_CMPXCHG ? BPF_REG_0 : s);
		return;
	case BPF_ST:
		return;
	case BPF_JMP:
	case BPF_JMP32:
		if (op == BPF_CALL)
			for (d = 0; d <= 5; d++)
				set_unk(st, d);
		return;
	case BPF_ALU:
	case BPF_ALU64: {
		bool is64 = cls == BPF_ALU64;
		struct rw_val *dv = &st->r[d];
		struct rw_val src = { .kind = RW_CONST, .v = in->imm };
		uint64_t out;

		if (d == BPF_REG_10)
			return;
		if (BPF_SRC(in->code) == BPF_X && op != BPF_NEG && op != BPF_END)
			src = st->r[s];
		if (op == BPF_MOV && in->off == 0) {
			if (is64) {
				*dv = src;
				if (src.kind == RW_CONST && BPF_SRC(in->code) == BPF_K)
					dv->v = (int64_t)(int32_t)in->imm;
			} else if (src.kind == RW_CONST) {
				set_const(st, d, (uint32_t)src.v);
			} else {
				set_unk(st, d);
			}
			return;
		}
		/* pointer arithmetic the passes follow: ptr +/- constant */
		if (is64 && (dv->kind == RW_MAPVAL || dv->kind == RW_FP) && src.kind == RW_CONST &&
		    (op == BPF_ADD || op == BPF_SUB)) {
			int64_t k = BPF_SRC(in->code) == BPF_K ? (int64_t)in->imm : src.v;

			dv->v += op == BPF_ADD ? k : -k;
			return;
		}
		if (dv->kind == RW_CONST && (op == BPF_NEG || src.kind == RW_CONST) && in->off == 0 &&
		    alu_const(op, is64, (uint64_t)dv->v,
			      BPF_SRC(in->code) == BPF_K ? (uint64_t)(int64_t)in->imm : (uint64_t)src.v,
			      &out)) {
			set_const(st, d, (int64_t)out);
			return;
		}
		set_unk(st, d);
		return;
	}
	}
}

int rw_eval_cond(const struct bpf_insn *in, const struct rw_state *st)
{
	const struct rw_val *a = &st->r[in->dst_reg];
	uint64_t x, y;
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32, t;

	if (!rw_is_cond_jmp(in) || a->kind != RW_CONST)
		return -1;
	if (BPF_SRC(in->code) == BPF_X) {
		if (st->r[in->src_reg].kind != RW_CONST)
			return -1;
		y = (uint64_t)st->r[in->src_reg].v;
	} else {
		y = (uint64_t)(int64_t)in->imm;
	}
	x = (uint64_t)a->v;
	if (is32) {
		x = (uint32_t)x;
		y = (uint32_t)y;
	}
#define SX(u) (is32 ? (int64_t)(int32_t)(u) : (int64_t)(u))
	switch (BPF_OP(in->code)) {
	case BPF_JEQ: t = x == y; break;
	case BPF_JNE: t = x != y; break;
	case BPF_JGT: t = x > y; break;
	case BPF_JGE: t = x >= y; break;
	case BPF_JLT: t = x < y; break;
	case BPF_JLE: t = x <= y; break;
	case BPF_JSGT: t = SX(x) > SX(y); break;
	case BPF_JSGE: t = SX(x) >= SX(y); break;
	case BPF_JSLT: t = SX(x) < SX(y); break;
	case BPF_JSLE: t = SX(x) <= SX(y); break;
	case BPF_JSET: t = (x & y) != 0; break;
	default: return -1;
	}
#undef SX
	return t;
}

int rw_analyze(const struct rw_insns *p, struct rw_state **out)
{
	struct rw_state *in, cur;
	bool *dirty;
	int err = rw_insns__check(p), rounds = 0;
	bool again = true;
	size_t i;

	*out = NULL;
	if (err)
		return err;
	in = calloc(p->n, sizeof(*in));
	dirty = calloc(p->n, sizeof(*dirty));
	if (!in || !dirty) {
		free(in);
		free(dirty);
		return -ENOMEM;
	}
	in[0].reached = true;
	in[0].r[BPF_REG_10] = (struct rw_val){ .kind = RW_FP, .v = 0 };
	dirty[0] = true;
	/* the lattice is flat (a value, or unknown), so this ends; the
	 * bound only guards against a bug */
	while (again && rounds++ < 10000) {
		again = false;
		for (i = 0; i < p->n; i++) {
			const struct bpf_insn *ins = &p->v[i];
			size_t next = rw_is_ldimm64(ins) ? i + 2 : i + 1;
			uint8_t op = BPF_OP(ins->code);
			int c;

			if (!dirty[i])
				continue;
			dirty[i] = false;
			cur = in[i];
			transfer(p->v, i, &cur);
			if (is_jmp_class(ins) && op == BPF_EXIT)
				continue;
			c = rw_is_cond_jmp(ins) ? rw_eval_cond(ins, &in[i]) : -1;
			if (has_target(ins) && c != 0) {
				size_t t = (size_t)target_of(p->v, i);

				if (meet(&in[t], &cur)) {
					dirty[t] = true;
					again |= t <= i;
				}
			}
			if ((!has_target(ins) || (op != BPF_JA && c != 1)) && next < p->n &&
			    meet(&in[next], &cur)) {
				dirty[next] = true;
				again |= next <= i;
			}
			if (rw_is_ldimm64(ins))
				i++;
		}
	}
	free(dirty);
	if (again) {
		free(in);
		return -ELOOP;
	}
	*out = in;
	return 0;
}
