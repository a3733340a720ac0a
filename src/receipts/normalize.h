/* SPDX-License-Identifier: BSD-2-Clause */
/* normalize.h: the normalizations that make digests of a program
 * independent of where and when it was loaded (map fds, kernel
 * addresses in the JIT image, verifier timing lines).
 */
#ifndef PROBITY_RECEIPTS_NORMALIZE_H
#define PROBITY_RECEIPTS_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "probity/receipts.h"

/* Zero the operands of external call/jmp rel32, movabs imm64 and
 * sign-extended kernel-address imm32 in an x86-64 JIT image (in place).
 * Returns how many operands were masked or -errno; -EOPNOTSUPP on an
 * architecture without a normalizer (image left as is). */
int normalize__jit_image(uint8_t *img, size_t len, const uint32_t *func_lens, uint32_t nr_funcs);
const char *normalize__jit_scheme(void);
/* Zero the map fd / map id of every ld_imm64 pseudo-map instruction. */
void normalize__bpf_insns(uint8_t *insns, size_t len);
/* Verifier log without its timing lines. */
char *normalize__verifier_log(const char *log);
/* Recompute the native image digest of a raw JIT image artifact. */
int normalize__native_digest(const void *img, size_t len, const json_t *func_lens,
			     char hex[PB_DIGEST_HEX_LEN]);

#endif
