/* SPDX-License-Identifier: BSD-2-Clause */
/* normalize.c: make digests of two identical loads equal.
 *
 * The kernel embeds per-load values in what it hands back:
 *  - submitted and xlated instructions: the map fd (submitted) or map id
 *    (xlated) in the first half of every ld_imm64 with a pseudo-map
 *    src_reg; zeroed, the second half (value offset) is kept.
 *  - the x86-64 JIT image: map and map-value addresses (movabs imm64),
 *    helper, kfunc and subprogram call targets (call/jmp rel32 leaving the
 *    function), and kernel text addresses loaded as sign-extended imm32.
 *    The image is disassembled function by function (jited_func_lens)
 *    with Capstone and those operand bytes are zeroed. Jumps inside a
 *    function are kept: they are part of the code's shape.
 *  - the verifier log: "verification time N usec" varies; dropped.
 * Other architectures: the raw image is digested and the scheme says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <capstone/capstone.h>
#include <linux/bpf.h>
#include "receipts/receipts_int.h"

const char *normalize__jit_scheme(void)
{
#if defined(__x86_64__)
	return "x86_64-capstone-v1";
#else
	return "none";
#endif
}

void normalize__bpf_insns(uint8_t *insns, size_t len)
{
	struct bpf_insn *in = (struct bpf_insn *)insns;
	size_t i, n = len / sizeof(*in);

	for (i = 0; i + 1 < n; i++) {
		if (in[i].code != (BPF_LD | BPF_DW | BPF_IMM))
			continue;
		switch (in[i].src_reg) {
		case BPF_PSEUDO_MAP_FD:
		case BPF_PSEUDO_MAP_VALUE:
		case BPF_PSEUDO_MAP_IDX:
		case BPF_PSEUDO_MAP_IDX_VALUE:
			in[i].imm = 0;
			break;
		case BPF_PSEUDO_BTF_ID:
		case BPF_PSEUDO_FUNC:
			break;
		default:
			/* plain 64-bit constant, or an address the kernel put
			 * there (xlated of an unknown pseudo): keep */
			break;
		}
		i++;	/* skip the second half */
	}
}

char *normalize__verifier_log(const char *log)
{
	const char *p = log ? log : "";
	char *out = malloc(strlen(p) + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (strncmp(p, "verification time", 17)) {
			memcpy(o, p, l);
			o += l;
		}
		p += l;
	}
	*o = 0;
	return out;
}

#if defined(__x86_64__)
#include <capstone/x86.h>

static void mask_func(csh cs, uint8_t *img, size_t len, int *masked)
{
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *code = img;
	uint64_t addr = 0;
	size_t left = len;

	if (!insn)
		return;
	while (left) {
		const uint8_t *at = code;
		cs_x86 *x;
		int k;

		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			/* undecodable byte (data, padding): step over it */
			code++;
			left--;
			addr++;
			continue;
		}
		x = &insn->detail->x86;
		if ((insn->id == X86_INS_CALL || insn->id == X86_INS_JMP) && x->encoding.imm_size == 4) {
			uint64_t target = (uint64_t)x->operands[0].imm;

			if (target >= len) {	/* leaves the function */
				memset((uint8_t *)at + x->encoding.imm_offset, 0, 4);
				(*masked)++;
			}
			continue;
		}
		for (k = 0; k < x->op_count; k++) {
			cs_x86_op *op = &x->operands[k];

			if (op->type != X86_OP_IMM || !x->encoding.imm_offset)
				continue;
			if (x->encoding.imm_size == 8 ||
			    (x->encoding.imm_size == 4 && insn->id == X86_INS_MOV &&
			     (uint64_t)op->imm >= 0xffffffff80000000ull)) {
				memset((uint8_t *)at + x->encoding.imm_offset, 0, x->encoding.imm_size);
				(*masked)++;
			}
		}
	}
	cs_free(insn, 1);
}

int normalize__jit_image(uint8_t *img, size_t len, const uint32_t *func_lens, uint32_t nr_funcs)
{
	size_t off = 0;
	uint32_t i;
	int masked = 0;
	csh cs;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!nr_funcs) {
		mask_func(cs, img, len, &masked);
	} else {
		for (i = 0; i < nr_funcs && off + func_lens[i] <= len; i++) {
			mask_func(cs, img + off, func_lens[i], &masked);
			off += func_lens[i];
		}
	}
	cs_close(&cs);
	return masked;
}
#else
int normalize__jit_image(uint8_t *img, size_t len, const uint32_t *func_lens, uint32_t nr_funcs)
{
	return -EOPNOTSUPP;
}
#endif

int normalize__native_digest(const void *img, size_t len, const json_t *func_lens,
			     char hex[PB_DIGEST_HEX_LEN])
{
	uint32_t *fl = NULL, nr = 0;
	uint8_t *copy = malloc(len + 1);
	json_t *v;
	size_t i;
	int err;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, img, len);
	if (json_is_array(func_lens)) {
		nr = json_array_size(func_lens);
		fl = calloc(nr + 1, sizeof(*fl));
		if (!fl) {
			free(copy);
			return -ENOMEM;
		}
		json_array_foreach(func_lens, i, v)
			fl[i] = (uint32_t)json_integer_value(v);
	}
	err = normalize__jit_image(copy, len, fl, nr);
	err = pb_sha256_hex(copy, len, hex) ?: (err == -EOPNOTSUPP ? 0 : (err < 0 ? err : 0));
	free(fl);
	free(copy);
	return err;
}
