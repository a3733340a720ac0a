/* SPDX-License-Identifier: BSD-2-Clause */
/* predictions.h: the cross-layer predictions of a recorded descriptor,
 * per OS effect: how many were checked, failed and left unjudged (the
 * confidence controller's counts, src/validate/confidence.h). `health`
 * and `report` show them.
 */
#ifndef PROBITY_ANALYZE_PREDICTIONS_H
#define PROBITY_ANALYZE_PREDICTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct loaded_trace;

/* {"block_io": {"checked", "failed", "unjudged"}, ...} for the effects
 * descriptor i predicts (and any effect with counts) */
json_t *predictions__json(const struct loaded_trace *lt, uint32_t i);
/* "block_io 2493 checked, 0 failed, 0 unjudged; off_cpu ..." or "" */
void predictions__text(const struct loaded_trace *lt, uint32_t i, char *buf, size_t sz);

#endif
