/* SPDX-License-Identifier: BSD-2-Clause */
/* calib_estimate.h: `plan --estimate` (issue 13 §4): what recording a plan
 * would cost a running process, before recording it.
 *
 * Count-only programs (calib.bpf.c) are attached to every site of the plan
 * in process pid, hits are counted for a duration, and each site's hits/s x
 * its calibrated cost (engine/calib.h) is its expected overhead, as a share
 * of the process's CPU time over the same interval (/proc/PID/stat) and of
 * one CPU. Where the manifest offers a cheaper equivalent (a USDT
 * descriptor of the same kind, on the same resource or one nested in it by
 * name, that costs less per event, e.g.
 * a wait-start USDT probe instead of a span over the whole function) it is
 * named.
 */
#ifndef PROBITY_CALIB_ESTIMATE_H
#define PROBITY_CALIB_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "engine/calib.h"

struct plan;

struct plan_estimate_site {
	size_t site;			/* index into plan->sites */
	enum pb_site_class cls;
	uint64_t hits;
	double cost_ns;			/* per hit (a return site without an entry
					 * site also pays its function's entry trap;
					 * a site at the same place as an earlier one
					 * shares its trap: 0) */
	double ns_per_s;		/* hits/s x cost_ns: overhead per second */
};

struct plan_estimate {
	struct pb_calib calib;
	uint64_t dur_ns;		/* counted for */
	uint64_t cpu_ns;		/* the process's CPU time over it */
	bool cpu_known;
	double total_ns_per_s;
	struct plan_estimate_site *sites;	/* plan->n_sites */
	size_t n_sites;
	int *cheaper;			/* per descriptor: a cheaper equivalent
					 * descriptor, or -1 */
};

/* Attach count-only programs to every site of p in process pid (the plan
 * must have been built with that pid), count for dur_ns, fill *out (free
 * with plan_estimate__free). c: the calibration to price hits with.
 * 0 or -errno (attach failures are logged). */
int plan_estimate__run(const struct plan *p, pid_t pid, uint64_t dur_ns,
		       const struct pb_calib *c, struct plan_estimate **out);
void plan_estimate__print(const struct plan_estimate *e, const struct plan *p, FILE *out);
json_t *plan_estimate__to_json(const struct plan_estimate *e, const struct plan *p);
void plan_estimate__free(struct plan_estimate *e);

/* utime + stime of process pid in ns (/proc/PID/stat). 0 or -errno. */
int calib__proc_cpu_ns(pid_t pid, uint64_t *ns);

#endif
