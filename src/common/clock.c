/* SPDX-License-Identifier: BSD-2-Clause */
/* clock.c: clock reads in nanoseconds (see clock.h). */
#include "common/clock.h"

uint64_t pb_clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * PB_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t pb_mono_ns(void)
{
	return pb_clock_ns(CLOCK_MONOTONIC);
}

uint64_t pb_realtime_ns(void)
{
	return pb_clock_ns(CLOCK_REALTIME);
}
