/* SPDX-License-Identifier: BSD-2-Clause */
/* calibration.c: calibrated certainty of a descriptor's runtime state
 * (docs/validation.md "Calibrated confidence"), fitted by
 * bench/mutations.sh (bench/results/calibration.json): for each state and
 * amount of evidence (the descriptor's events in the run), how many such
 * findings there were and how many were right (a stale/suspect state on
 * the mutated descriptor, the initial state on every other one). The
 * certainty is (right + 1) / (findings + 2). Refit by running the
 * benchmark and copying its cells here. */
#include "validate/confidence.h"

struct calib_cell {
	enum pb_confidence state;
	uint64_t lo, hi;	/* events in [lo, hi) */
	uint32_t findings, right;
};

static const struct calib_cell cells[] = {
#include "validate/calibration_table.h"
	{ PB_CONF_CANDIDATE, 0, 0, 0, 0 },	/* end: matches nothing */
};

double confidence__calibrated(enum pb_confidence st, uint64_t events, uint32_t *findings)
{
	size_t i;

	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		if (cells[i].state != st || events < cells[i].lo || events >= cells[i].hi)
			continue;
		if (findings)
			*findings = cells[i].findings;
		return ((double)cells[i].right + 1.0) / ((double)cells[i].findings + 2.0);
	}
	if (findings)
		*findings = 0;
	return -1.0;
}
