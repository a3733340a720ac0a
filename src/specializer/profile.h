/* SPDX-License-Identifier: BSD-2-Clause */
/* profile.h: the specializer's view of lb_xdp's two mapped globals (the
 * configuration, .data.cfg, and the profile counters, .bss) and of the
 * kernel's per-program run statistics.
 */
#ifndef PROBITY_SPECIALIZER_PROFILE_H
#define PROBITY_SPECIALIZER_PROFILE_H

#include <stdint.h>
#include <jansson.h>
#include "specializer/state.h"

/* The live configuration (one read per field: the map is shared). */
void sp_cfg_read(struct specializer *s, struct lb_cfg *out);
/* Field `field` (index into sp_cfg_fields) of c. */
uint32_t sp_cfg_get(const struct lb_cfg *c, uint32_t field);
/* Write one field of the live configuration. */
void sp_cfg_set(struct specializer *s, uint32_t field, uint32_t v);
/* {"feature_acl": 1, ...}, a new reference. */
json_t *sp_cfg_json(const struct lb_cfg *c);

void sp_prof_read(struct specializer *s, struct lb_prof *out);
/* d = b - a, counter by counter (tag and version zero). */
void sp_prof_delta(const struct lb_prof *a, const struct lb_prof *b, struct lb_prof *d);
/* Guard failures of every site. */
uint64_t sp_guard_total(const struct lb_prof *p);

/* run_cnt and run_time_ns of the program fd (left as they are when fd
 * is closed or the kernel says nothing). */
void sp_prog_stats(int fd, uint64_t *cnt, uint64_t *ns);

#endif
