/* SPDX-License-Identifier: BSD-2-Clause */
/* calibration_table.h: written by bench/mutations.sh from its runs
 * (bench/results/calibration.json); included by calibration.c only.
 * Not fitted yet: no cell, so no calibrated certainty is shown. */
