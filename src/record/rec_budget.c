/* SPDX-License-Identifier: BSD-2-Clause */
/* rec_budget.c: record --budget glue between the recorder and the
 * governor (governor.h): the cost source, the target's CPU time, window
 * records and notes into the trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "record/recorder_int.h"
#include "record/governor.h"
#include "common/clock.h"
#include "trace/trace.h"
#include "validate/confidence.h"

#define CPU_READ_NS	(200 * 1000000ull)	/* /proc reads at most every 200 ms */

static void gov_emit(const void *rec, size_t len, const char *note, void *ctx)
{
	struct recorder *r = ctx;

	if (!rec && !note) {
		recorder_drain(r);
		return;
	}
	if (rec && trace_writer__record(r->w, rec, len))
		r->write_errors++;
	if (rec)
		confidence__window(r->conf, rec, len);
	if (note) {
		if (trace_writer__note(r->w, note))
			r->write_errors++;
		recorder_say(r->o.message, r->o.ctx,
			     strstr(note, "OVER BUDGET") ? PB_LOG_WARN : PB_LOG_INFO, "%s", note);
	}
}

/* the target's cumulative CPU time: the cgroup's, else its processes' */
static uint64_t target_cpu_ns(struct recorder *r, uint64_t now, bool force)
{
	pid_t stack[64], *pids = stack;
	size_t n = 0, i, cap = 64;

	if (!force && r->cpu_read_ns && now - r->cpu_read_ns < CPU_READ_NS)
		return r->cpu_ns;
	r->cpu_read_ns = now;
	if (r->o.cgroup) {
		r->cpu_ns = gov_cpu_ns_cgroup(r->o.cgroup);
		return r->cpu_ns;
	}
	if (r->n_procs + r->o.n_pids + 1 > cap) {
		cap = r->n_procs + r->o.n_pids + 1;
		pids = malloc(cap * sizeof(*pids));
		if (!pids)
			return r->cpu_ns;
	}
	if (r->child || r->o.pid)
		pids[n++] = r->child ? r->child : r->o.pid;
	for (i = 0; i < r->o.n_pids; i++)
		pids[n++] = r->o.pids[i];
	for (i = 0; i < r->n_procs && n < cap; i++) {
		const struct trace_proc *p = &r->procs[i];
		bool dup = false;

		if (p->tid != p->pid)
			continue;
		for (size_t k = 0; k < n && !dup; k++)
			dup = pids[k] == (pid_t)p->pid;
		if (!dup)
			pids[n++] = (pid_t)p->pid;
	}
	/* an exited process keeps its last reading */
	r->cpu_ns = governor__cpu_ns(r->gov, pids, n);
	if (pids != stack)
		free(pids);
	return r->cpu_ns;
}

int recorder_budget_start(struct recorder *r)
{
	struct gov_site_costs c;
	struct gov_opts go = { .budget = r->o.budget };
	size_t i;
	int err;

	if (!(r->o.budget > 0))
		return 0;
	gov_costs__default(&c);
	err = gov_cost_source__from_plan(&r->costs, r->p, &c);
	if (err)
		return err;
	if (r->calib.measured[PB_SITE_EMULATED] || r->calib.measured[PB_SITE_NOP5]) {
		/* the self-test ran at start (cost.c): price each descriptor as the
		 * record estimate does, from this kernel's per-class figures */
		for (i = 0; i < r->costs.n; i++)
			r->costs.ns_per_hit[i] = calib__desc_cost_ns(&r->calib, r->p, i, NULL);
		r->costs.origin = "calibrated on this kernel";
	}
	r->gov = governor__new(r->p, &r->costs, &go);
	return r->gov ? 0 : -errno;
}

int recorder_budget_tick(struct recorder *r, uint64_t now)
{
	if (!r->gov)
		return 0;
	return governor__tick(r->gov, r->e, now,
			      target_cpu_ns(r, now, governor__wants_cpu(r->gov, now)), gov_emit, r);
}

int recorder_budget_timeout(const struct recorder *r, uint64_t now, int cap)
{
	return r->gov ? governor__next_ms(r->gov, now, cap) : cap;
}

void recorder_budget_finish(struct recorder *r)
{
	uint64_t now = pb_mono_ns();

	if (r->gov)
		governor__finish(r->gov, r->e, now, target_cpu_ns(r, now, true), gov_emit, r);
}

void recorder_budget_free(struct recorder *r)
{
	governor__free(r->gov);
	r->gov = NULL;
	gov_cost_source__free(&r->costs);
}
