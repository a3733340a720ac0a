/* SPDX-License-Identifier: BSD-2-Clause */
/* clock.h: the one place that reads clocks. Every timestamp probity keeps
 * is nanoseconds since the clock's epoch in a uint64_t: CLOCK_MONOTONIC
 * for ordering and durations (the clock BPF's bpf_ktime_get_ns() and
 * `perf script` use), CLOCK_REALTIME only to print or pair with wall time.
 */
#ifndef PROBITY_CLOCK_H
#define PROBITY_CLOCK_H

#include <stdint.h>
#include <time.h>

#define PB_NSEC_PER_SEC 1000000000ull
#define PB_NSEC_PER_MSEC 1000000ull

/* clk's current time in ns (0 if the clock cannot be read). */
uint64_t pb_clock_ns(clockid_t clk);
/* CLOCK_MONOTONIC now, in ns. */
uint64_t pb_mono_ns(void);
/* CLOCK_REALTIME now, in ns since the Unix epoch. */
uint64_t pb_realtime_ns(void);

#endif
