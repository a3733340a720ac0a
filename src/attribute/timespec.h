/* SPDX-License-Identifier: BSD-2-Clause */
/* timespec.h: the TIME and T1..T2 syntax of `--at` and `--window`
 * (timespec.c, docs/attribution.md "Times").
 */
#ifndef PROBITY_ATTRIBUTE_TIMESPEC_H
#define PROBITY_ATTRIBUTE_TIMESPEC_H

#include <stdbool.h>
#include <stdint.h>
#include "common/errtext.h"

/* TIME: "mono:NS" or plain NS (CLOCK_MONOTONIC nanoseconds), "S.FRAC" or
 * "mono:S.FRAC" (CLOCK_MONOTONIC seconds, as perf script prints them);
 * "@S[.FRAC]" (CLOCK_REALTIME epoch seconds) or an ISO-8601 UTC time
 * "YYYY-MM-DDTHH:MM:SS[.FRAC]Z". */
struct pb_time {
	uint64_t ns;
	bool realtime;		/* ns is CLOCK_REALTIME, else CLOCK_MONOTONIC */
};
/* 0, or -EINVAL with err (may be NULL) saying why. */
int pb_time__parse(const char *s, struct pb_time *t, struct pb_errtext *err);
/* "T1..T2"; 0 or -EINVAL as pb_time__parse. */
int pb_time__parse_window(const char *s, struct pb_time *t1, struct pb_time *t2,
			  struct pb_errtext *err);

#endif
