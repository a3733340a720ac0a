/* SPDX-License-Identifier: BSD-2-Clause */
/* args.h: option-value helpers every command shares (src/cli/args.c).
 * Each prints "OPT: expected ..., found 'VALUE'" through p_err on bad
 * input and returns -EINVAL; nothing else in src/cli is shared between
 * command files.
 */
#ifndef PROBITY_CLI_ARGS_H
#define PROBITY_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* A duration: a decimal number with an optional unit, ms, s (default), m
 * or h ("2", "0.5", "250ms", "15m"). Must be > 0 unless zero_ok, and at
 * most max_s seconds. *ns gets nanoseconds. */
int cli_parse_duration(const char *opt, const char *s, bool zero_ok, double max_s, uint64_t *ns);
/* A whole number 1..max (0..max when zero_ok). */
int cli_parse_count(const char *opt, const char *s, bool zero_ok, uint64_t max, uint64_t *out);
/* The receipt store when no --store is given: $PROBITY_STORE, else
 * ./probity-store. */
const char *cli_default_store(void);

#endif
