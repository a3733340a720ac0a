// SPDX-License-Identifier: BSD-2-Clause
/* cost.c: the recorder's cost model (issue 13 §1, docs/record.md "Cost
 * model"). At start the probes' cost per site class is calibrated on this
 * kernel (engine/calib.c, or a calibration file) and written to the trace;
 * at the end each descriptor's events x its probes' calibrated cost is the
 * estimated overhead, as a fraction of the target's CPU time over the
 * recording (/proc/PID/stat utime+stime of the recorded processes, or the
 * cgroup's cpu.stat usage_usec) and of wall time. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "record/recorder_int.h"
#include "engine/calib.h"
#include "engine/calib_estimate.h"
#include "contract/plan.h"
#include "trace/trace.h"
#include "common/clock.h"
#include "common/log.h"

/* utime + stime of one process, in ns; 0 when unreadable (*ok false) */
static uint64_t proc_cpu_ns(pid_t pid, bool *ok)
{
	uint64_t ns = 0;

	if (calib__proc_cpu_ns(pid, &ns))
		return 0;
	*ok = true;
	return ns;
}

static uint64_t cgroup_cpu_ns(const char *dir)
{
	unsigned long long us = 0;
	char path[4200], key[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", key, &us) == 2)
		if (!strcmp(key, "usage_usec"))
			break;
	fclose(f);
	return strcmp(key, "usage_usec") ? 0 : us * 1000ull;
}

/* the target's CPU time so far; false when it cannot be read (--all) */
static bool target_cpu(const struct recorder *r, uint64_t *ns)
{
	bool ok = false;
	size_t i;

	*ns = 0;
	if (r->o.cgroup) {
		*ns = cgroup_cpu_ns(r->o.cgroup);
		return *ns != 0;
	}
	if (r->o.all)
		return false;
	if (r->child) {	/* once reaped, its time is in our children's usage */
		struct rusage ru;

		if (!getrusage(RUSAGE_CHILDREN, &ru))
			*ns += (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	}
	*ns += proc_cpu_ns(r->child ? r->child : r->o.pid, &ok);
	for (i = 0; i < r->o.n_pids; i++)
		*ns += proc_cpu_ns(r->o.pids[i], &ok);
	return ok || *ns;
}

void recorder_cost_sample(struct recorder *r)
{
	uint64_t ns;

	if (r->cost_cpu_known && target_cpu(r, &ns) && ns > r->cost_cpu_last)
		r->cost_cpu_last = ns;
}

int recorder_cost_start(struct recorder *r)
{
	/* the probes count from attach on: so do wall and CPU time (a held
	 * child has not run yet: 0 is its true start) */
	r->cost_t0 = pb_mono_ns();
	r->cost_cpu_known = target_cpu(r, &r->cost_cpu0) || r->child;
	r->cost_cpu_last = r->cost_cpu0;
	return recorder_cost_calibrate(r);
}

int recorder_cost_calibrate(struct recorder *r)
{
	int err = 0;

	if (r->calibrated)
		return 0;
	r->calibrated = true;
	if (r->o.no_calibrate)
		calib__defaults(&r->calib);
	else
		err = calib__load_or_run(&r->calib, r->o.calibration, NULL);
	if (err)
		recorder_say(r->o.message, r->o.ctx, PB_LOG_WARN,
			     "calibration failed (%s): overhead estimates use default figures",
			     strerror(-err));
	return 0;
}

/* every site of descriptor d sits where a site of an earlier descriptor
 * does: the kernel runs both on one trap, d adds only its program */
static bool shares_traps(const struct plan *p, size_t d)
{
	size_t i, k;

	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];
		bool dup = false;

		if ((size_t)s->descriptor != d)
			continue;
		for (k = 0; k < p->n_sites && !dup; k++)
			dup = (size_t)p->sites[k].descriptor < d && p->sites[k].target == s->target &&
			      p->sites[k].file_offset == s->file_offset &&
			      p->sites[k].retprobe == s->retprobe && p->sites[k].usdt == s->usdt;
		if (!dup)
			return false;
	}
	return true;
}

/* The figures of the last snapshot: one entry per descriptor that has
 * sites. Returns how many entries, *sum the estimated overhead (ns). */
static size_t fill_desc(const struct recorder *r, struct trace_cost_desc *d, double *sum)
{
	size_t i, n = 0;

	*sum = 0;
	for (i = 0; i < r->p->n_descriptors; i++) {
		uint64_t hits = i < r->snap.n_desc && r->snap.desc ? r->snap.desc[i].hits : 0;
		uint32_t classes = 0;
		double c, est;

		if (!r->p->descriptors[i].n_sites)
			continue;
		c = calib__desc_cost_ns(&r->calib, r->p, i, &classes);
		/* cost_ns: what the probes add to one event (the correction);
		 * est_ns: what this descriptor adds to the target */
		est = shares_traps(r->p, i) ? 0 : c * (double)hits;
		d[n] = (struct trace_cost_desc){ .descriptor = (uint32_t)i, .classes = classes,
						 .hits = hits, .cost_ns = (uint64_t)(c + 0.5),
						 .est_ns = (uint64_t)(est + 0.5) };
		*sum += est;
		n++;
	}
	return n;
}

/* A TRACE_CHUNK_COST: the calibration alone at start, the estimates at
 * the end (final). 0 or -errno. */
int recorder_cost_write(struct recorder *r, bool final)
{
	struct trace_cost_class cls[PB_SITE__COUNT];
	struct trace_cost_hdr h = { .n_classes = PB_SITE__COUNT, .calls = r->calib.calls };
	struct trace_cost_desc *d = NULL;
	struct recorder_cost *rc = &r->res.cost;
	uint64_t now = pb_mono_ns(), cpu;
	int i;

	for (i = 0; i < PB_SITE__COUNT; i++)
		cls[i] = (struct trace_cost_class){ .cls = (uint32_t)i,
			.measured = r->calib.measured[i],
			.p50_ns = (uint64_t)(r->calib.p50_ns[i] + 0.5),
			.p90_ns = (uint64_t)(r->calib.p90_ns[i] + 0.5) };
	h.flags = (r->calib.valid ? TRACE_COST_CALIBRATED : 0) |
		  (r->calib.cached ? TRACE_COST_CACHED : 0);
	/* at start too (hits 0): a reader corrects spans from the first record */
	d = calloc(r->p->n_descriptors + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	h.n_desc = (uint32_t)fill_desc(r, d, &rc->est_ns);
	if (final) {
		h.wall_ns = now - r->cost_t0;
		recorder_cost_sample(r);
		cpu = r->cost_cpu_last;
		if (r->cost_cpu_known && cpu > r->cost_cpu0) {
			h.target_cpu_ns = cpu - r->cost_cpu0;
			h.flags |= TRACE_COST_CPU;
		}
		rc->wall_ns = h.wall_ns;
		rc->target_cpu_ns = h.target_cpu_ns;
		rc->cpu_known = h.flags & TRACE_COST_CPU;
	}
	free(r->cost_desc);
	r->cost_desc = d;
	rc->desc = d;
	rc->n_desc = h.n_desc;
	rc->calib = r->calib;
	return trace_writer__cost(r->w, &h, cls, d);
}

static double pct_of(double ns, uint64_t of)
{
	return of ? 100.0 * ns / (double)of : 0;
}

/* "probe cost: est. 12.3 ms = 1.9 % of the target's CPU time, 0.6 % of
 * wall (calibrated: ...); most: pool_wait 9.1 ms" */
void recorder_cost_print(const struct recorder *r, FILE *out)
{
	const struct recorder_cost *c = &r->res.cost;
	const struct trace_cost_desc *top = NULL;
	char cpu[80] = "target CPU time unknown";
	size_t i;

	for (i = 0; i < c->n_desc; i++)
		if (!top || c->desc[i].est_ns > top->est_ns)
			top = &c->desc[i];
	if (c->cpu_known)
		snprintf(cpu, sizeof(cpu), "%.2f %% of the target's CPU time",
			 pct_of(c->est_ns, c->target_cpu_ns));
	fprintf(out, "probe cost: est. %.1f ms = %s, %.2f %% of wall (%s: emulated %.1f us, "
		"single-step %.1f us, nop5 %.1f us, return +%.1f us, usdt %.1f us per hit)",
		c->est_ns / 1e6, cpu, pct_of(c->est_ns, c->wall_ns),
		!c->calib.valid ? "default figures" : c->calib.cached ? "cached calibration" :
		"calibrated", c->calib.entry_emulated_ns / 1e3, c->calib.entry_sstep_ns / 1e3,
		c->calib.entry_nop5_ns / 1e3, c->calib.ret_ns / 1e3, c->calib.usdt_ns / 1e3);
	if (top && top->est_ns)
		fprintf(out, "; most: %s %.1f ms", r->m->events[top->descriptor].id,
			(double)top->est_ns / 1e6);
	fprintf(out, "\n");
}

static json_t *calib_json(const struct pb_calib *c)
{
	json_t *o = json_pack("{s:b, s:b, s:i, s:s}", "calibrated", c->valid, "cached", c->cached,
			      "calls", (int)c->calls, "kernel", c->kernel);
	int i;

	for (i = 0; o && i < PB_SITE__COUNT; i++)
		json_object_set_new(o, pb_site_class_str(i),
				    json_pack("{s:f, s:f, s:b}", "p50_ns", c->p50_ns[i],
					      "p90_ns", c->p90_ns[i], "measured", c->measured[i]));
	return o;
}

json_t *recorder_cost_json(const struct recorder *r)
{
	const struct recorder_cost *c = &r->res.cost;
	json_t *sites = json_array(), *o;
	size_t i;
	int k;

	for (i = 0; sites && i < c->n_desc; i++) {
		const struct trace_cost_desc *d = &c->desc[i];
		json_t *cls = json_array();

		for (k = 0; cls && k < PB_SITE__COUNT; k++)
			if (d->classes & (1u << k))
				json_array_append_new(cls, json_string(pb_site_class_str(k)));
		json_array_append_new(sites, json_pack("{s:s, s:o*, s:I, s:f, s:f, s:o*}",
			"event", r->m->events[d->descriptor].id, "classes", cls,
			"hits", (json_int_t)d->hits, "cost_ns_per_hit", (double)d->cost_ns,
			"est_ms", (double)d->est_ns / 1e6,
			"cpu_pct", c->cpu_known ? json_real(pct_of((double)d->est_ns,
						c->target_cpu_ns)) : NULL));
	}
	o = json_pack("{s:f, s:f, s:f, s:o*, s:o*, s:o*}", "est_ms", c->est_ns / 1e6,
		      "wall_s", (double)c->wall_ns / 1e9,
		      "wall_pct", pct_of(c->est_ns, c->wall_ns),
		      "target_cpu_s", c->cpu_known ? json_real((double)c->target_cpu_ns / 1e9) : NULL,
		      "cpu_pct", c->cpu_known ? json_real(pct_of(c->est_ns, c->target_cpu_ns)) : NULL,
		      "calibration", calib_json(&c->calib));
	if (o)
		json_object_set_new(o, "sites", sites);
	else
		json_decref(sites);
	return o;
}
