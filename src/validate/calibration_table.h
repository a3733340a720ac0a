/* SPDX-License-Identifier: BSD-2-Clause */
/* calibration_table.h: written by bench/mutations.sh from its runs
 * (bench/results/calibration.json); included by calibration.c only.
 * state, events [lo, hi), findings, right */
{ PB_CONF_STALE, 1000ull, 10000ull, 37, 37 },
{ PB_CONF_STALE, 10000ull, 4611686018427387904ull, 12, 12 },
{ PB_CONF_VALIDATED, 1000ull, 10000ull, 246, 245 },
{ PB_CONF_VALIDATED, 0ull, 1000ull, 12, 12 },
{ PB_CONF_VALIDATED, 10000ull, 4611686018427387904ull, 38, 38 },
