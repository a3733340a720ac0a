/* SPDX-License-Identifier: BSD-2-Clause */
/* observer_api.h: the independent observer behind `probity watch`: sees
 * every BPF program load, link creation and link update on the machine
 * (observer.bpf.c on the raw syscall tracepoints, plus perf ksymbol and
 * bpf_event side-band records per CPU) and writes lifecycle entries and
 * provenance-"unknown" receipts into a receipt store.
 */
#ifndef PROBITY_OBSERVER_API_H
#define PROBITY_OBSERVER_API_H

#include <stdbool.h>
#include <stddef.h>
#include "receipts/lifelog.h"

struct pb_store;
struct pb_observer;

struct pb_observer_opts {
	struct pb_store *store;		/* required; not owned */
	unsigned int perf_pages;	/* per-CPU data pages, power of 2 (default 16) */
};

/* Load and attach the BPF side, open the perf readers. */
int pb_observer__new(const struct pb_observer_opts *opts, struct pb_observer **out);
/* Wait up to timeout_ms for records and handle them; 0 or -errno. */
int pb_observer__poll(struct pb_observer *o, int timeout_ms);
/* Handle what is pending, write the 'observer' stop entry with counters. */
int pb_observer__finish(struct pb_observer *o);
/* Counters: loads seen/captured, link updates, unloads, and every miss
 * (the same ones the 'observer' stop entry records). */
void pb_observer__stats(const struct pb_observer *o, struct lifelog_observer_stats *st);
void pb_observer__free(struct pb_observer *o);

#endif
