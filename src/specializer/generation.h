/* SPDX-License-Identifier: BSD-2-Clause */
/* generation.h: the specializer's generations (state.h's struct sp_gen):
 * add one, swap one in with the XDP link (logged through
 * pb_generation__activate), close one, deoptimize to generation 0.
 */
#ifndef PROBITY_SPECIALIZER_GENERATION_H
#define PROBITY_SPECIALIZER_GENERATION_H

#include <stdbool.h>
#include <stdint.h>
#include "specializer/state.h"

/* A new, empty generation at the end of s->gens; NULL (errno ENOMEM). */
struct sp_gen *sp_gen__new(struct specializer *s);
/* Swap `to` in for the active generation (the first call creates the
 * link); reason: why the active one goes. Unlogged (injected) handoffs
 * swap without any entry. 0 or -errno. */
int sp_gen__activate(struct specializer *s, struct sp_gen *to, const char *reason);
/* Close a generation no longer attached; log its unload. */
void sp_gen__close(struct specializer *s, struct sp_gen *g);
/* Release what a generation holds (fd, receipt handle, lists). */
void sp_gen__release(struct sp_gen *g);
/* Back to generation 0 (when a specialized one is active). 0 or -errno. */
int sp_deopt(struct specializer *s, const char *reason);
/* Wait up to wait_ms for the kernel to free program id. */
bool sp_prog_gone(uint32_t id, int wait_ms);

#endif
