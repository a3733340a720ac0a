/* SPDX-License-Identifier: BSD-2-Clause */
/* aggregates.c: read-only views of an analysis' aggregates -- per
 * descriptor counters and log2 histograms, per resource gauges, the
 * effective confidence -- for renderers outside this folder (Prometheus
 * metrics, src/metrics/), which must not see struct analysis. */
#include "analyze/analyze_int.h"

const struct manifest *analysis__manifest(const struct analysis *a)
{
	return a->m;
}

const struct pb_desc_stats *analysis__desc_stats(const struct analysis *a, uint32_t descriptor)
{
	if (descriptor >= a->m->n_events)
		return NULL;
	return a->desc_snapshots ? &a->snap_desc[descriptor] : &a->ev_desc[descriptor];
}

const struct pb_res_stats *analysis__res_stats(const struct analysis *a, uint32_t resource)
{
	if (!a->have_snap_res || resource >= a->m->n_resources)
		return NULL;
	return &a->snap_res[resource];
}

enum pb_confidence analysis__confidence(const struct analysis *a, uint32_t descriptor)
{
	return descriptor < a->m->n_events ? a->conf[descriptor] : PB_CONF_CANDIDATE;
}
