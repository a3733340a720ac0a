/* SPDX-License-Identifier: BSD-2-Clause */
/* candidate.h: one specialization: rewrite (rewrite.h), load through the
 * verifier, compare verdicts with generation 0 (BPF_PROG_TEST_RUN), write
 * the receipt and swap it in.
 */
#ifndef PROBITY_SPECIALIZER_CANDIDATE_H
#define PROBITY_SPECIALIZER_CANDIDATE_H

#include "specializer/state.h"

/* Specialize generation 0 by pl and make it the active generation. 0, or
 * -errno when the candidate was refused (counted in s->rejected, said in
 * a progress line). */
int sp_specialize(struct specializer *s, const struct spec_plan *pl);

#endif
