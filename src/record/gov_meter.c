/* SPDX-License-Identifier: BSD-2-Clause */
/* gov_meter.c: what record --budget measures besides the probe traps it
 * prices (docs/record.md "What the budget counts"). The kernel's run-time
 * statistics of the engine's own programs give
 *   - the probe programs' ns per run, added to each descriptor's per-hit
 *     cost (the calibration's self-test times a trap with an empty
 *     program: the engine's program is on top of it, 0.5-0.8 us here);
 *   - the OS-effects tracepoints (context switches, wakeups, block I/O,
 *     faults of the tracked processes), charged to the ledger as measured:
 *     they fire whatever the windows, ~1 CPU-s in 9 s on the demo;
 * and getrusage() the recorder's own CPU (reported, not charged: it runs
 * on its own thread, beside the target).
 * The effects are planned like a resource: always on while they fit the
 * always-on share, else on only inside the windows (engine__set_effects;
 * the engine leaves every check that spans a gated-off stretch unjudged). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "record/governor.h"
#include "record/governor_int.h"
#include "engine/engine.h"
#include "engine/calib.h"

#define NS_PER_S	1e9
/* fewer probe-program runs than this since the last plan: keep the last
 * ns-per-run figure (a handful of runs is dominated by cold caches) */
#define METER_MIN_RUNS	200

static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* probe programs one event of descriptor d runs: its entry, its return,
 * its USDT probe (calib__desc_cost_ns's classes) */
static double runs_per_hit(const struct plan *p, size_t d)
{
	struct pb_calib none = { 0 };
	uint32_t bits = 0;
	double n = 0;

	calib__desc_cost_ns(&none, p, d, &bits);
	if (bits & ((1u << PB_SITE_EMULATED) | (1u << PB_SITE_SSTEP) | (1u << PB_SITE_NOP5)))
		n++;
	if (bits & (1u << PB_SITE_RET))
		n++;
	if (bits & (1u << PB_SITE_USDT))
		n++;
	return n;
}

int gov_meter_init(struct governor *g, const double *trap)
{
	struct gov_meter *m = &g->meter;

	m->trap = malloc((g->n_desc + 1) * sizeof(*m->trap));
	m->runs = malloc((g->n_desc + 1) * sizeof(*m->runs));
	g->cost_own = malloc((g->n_desc + 1) * sizeof(*g->cost_own));
	if (!m->trap || !m->runs || !g->cost_own)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_desc; i++) {
		m->trap[i] = trap[i];
		m->runs[i] = runs_per_hit(g->p, i);
		g->cost_own[i] = trap[i];
	}
	g->cost = g->cost_own;
	return 0;
}

void gov_meter_free(struct governor *g)
{
	free(g->meter.trap);
	free(g->meter.runs);
	free(g->cost_own);
}

/* At the first tick: the run-time statistics (the engine holds them on:
 * engine_opts.prog_stats), the recorder's CPU, the effects gate on. */
void gov_meter_start(struct governor *g, struct engine *e, uint64_t now)
{
	struct gov_meter *m = &g->meter;

	m->self_cpu0 = m->self_cpu = self_cpu_ns();
	m->stats = !engine__prog_cost(e, &m->last);
	m->at0 = m->last;
	m->dec_probe_ns = m->last.probes.run_ns;
	m->dec_probe_runs = m->last.probes.run_cnt;
	m->gate = !engine__set_effects(e, true);
	m->fx_on = true;
	m->fx_edge_ns = now;
}

/* Read the statistics: the effects programs' time since the last read is
 * charged (returned, ns) and credited to the gate's state since then. */
double gov_meter_read(struct governor *g, struct engine *e, uint64_t now)
{
	struct gov_meter *m = &g->meter;
	struct engine_prog_cost c;
	double fx;

	m->self_cpu = self_cpu_ns();
	m->read_ns = now;
	if (!m->stats || engine__prog_cost(e, &c))
		return 0;
	/* the process fork/exit programs are OS effects too (not gated) */
	fx = (double)(c.effects.run_ns - m->last.effects.run_ns) +
	     (double)(c.procs.run_ns - m->last.procs.run_ns);
	if (m->fx_on) {
		m->fx_on_ns += fx;
		m->fx_on_wall_ns += now - m->fx_edge_ns;
	} else {
		m->fx_off_ns += fx;
	}
	m->fx_edge_ns = now;
	m->last = c;
	m->effects_ns += fx;
	return fx;
}

/* gov_meter_read at most every GOV_METER_POLL_NS: the statistics cost a
 * syscall per program, and the warm-up ticks every 10 ms. What the
 * effects cost in between is charged at the next read (the ledger is
 * cumulative); the gate's edges and the end read at once. */
double gov_meter_poll(struct governor *g, struct engine *e, uint64_t now)
{
	if (g->meter.read_ns && now - g->meter.read_ns < GOV_METER_POLL_NS)
		return 0;
	return gov_meter_read(g, e, now);
}

/* Turn the effects on or off (a window edge when they follow the
 * windows); the statistics are read first so each stretch is credited to
 * its own state. */
void gov_meter_effects(struct governor *g, struct engine *e, uint64_t now, bool on)
{
	struct gov_meter *m = &g->meter;
	double fx;

	if (!m->gate || m->fx_on == on)
		return;
	fx = gov_meter_read(g, e, now);
	if (g->phase == GOV_WARMUP)
		g->warm_cost_ns += fx;
	else
		g->gov_cost_ns += fx;
	/* off: the gate, then the links (gated off, each program still runs
	 * on every context switch of the machine); on: the links, then the
	 * gate. A re-attach that fails leaves the effects off (unjudged). */
	if (on && engine__effects_link(e, true))
		return;
	if (!engine__set_effects(e, on)) {
		if (!on)
			engine__effects_link(e, false);
		m->fx_on = on;
		m->n_toggles++;
		if (!on)
			m->fx_off_since = now;
		else if (m->fx_off_since)
			m->fx_off_total_ns += now - m->fx_off_since;
	}
}

/* At a plan: the probe programs' measured ns per run into every
 * descriptor's per-hit cost, and the effects' rate while on (ns per s of
 * wall, the run's mean: they follow the target's switches and I/O, not
 * the windows' probes). Returns the effects' ns since the last plan. */
double gov_meter_plan(struct governor *g)
{
	struct gov_meter *m = &g->meter;
	uint64_t runs = m->last.probes.run_cnt - m->dec_probe_runs;
	double fx = m->effects_ns - m->dec_effects_ns;

	if (m->stats && runs >= METER_MIN_RUNS)
		m->prog_ns = (double)(m->last.probes.run_ns - m->dec_probe_ns) / (double)runs;
	m->dec_probe_ns = m->last.probes.run_ns;
	m->dec_probe_runs = m->last.probes.run_cnt;
	for (size_t i = 0; i < g->n_desc; i++)
		g->cost_own[i] = m->trap[i] + m->runs[i] * m->prog_ns;
	if (m->fx_on_wall_ns > 0)
		m->fx_rate = m->fx_on_ns / ((double)m->fx_on_wall_ns / NS_PER_S);
	m->dec_effects_ns = m->effects_ns;
	return fx;
}

/* Where the effects go in a plan (docs/record.md): always on when the
 * always-on set with them fits half the allowance (as a cheap resource
 * does) or the engine cannot gate them, else on only inside the windows,
 * paid for by the windows' duty. *on and *hot gain their rate. */
void gov_fx_plan(struct gov_fx *f, double allowed, double *on, double *hot)
{
	f->windowed = f->gate && f->rate > 0 && *on + f->rate > allowed / 2;
	if (f->windowed)
		*hot += f->rate;
	else
		*on += f->rate;
	/* never gated: they count with the must-keep sites */
	f->fixed = f->gate ? 0 : f->rate;
}

json_t *gov_meter_json(const struct governor *g)
{
	const struct gov_meter *m = &g->meter;
	uint64_t end = g->end_ns ? g->end_ns : g->last_ns, off = m->fx_off_total_ns;
	double run = end > g->start_ns ? (double)(end - g->start_ns) : 0;
	double cpu = g->cpu_end > g->cpu_start ? (double)(g->cpu_end - g->cpu_start) : 0;
	double self = (double)(m->self_cpu - m->self_cpu0);

	if (!m->fx_on && m->fx_off_since && end > m->fx_off_since)
		off += end - m->fx_off_since;
	return json_pack("{s:b, s:o, s:f, s:f, s:f, s:s, s:f, s:I, s:f, s:o}",
			 "run_time_stats", m->stats,
			 "probe_program_ns_per_run", m->stats && m->prog_ns > 0 ?
			 json_real(m->prog_ns) : json_null(),
			 "probe_programs_ms", (double)(m->last.probes.run_ns - m->at0.probes.run_ns) / 1e6,
			 "effects_ms", m->effects_ns / 1e6,
			 "effects_ns_per_s_on", m->fx_rate,
			 "effects_policy", !m->gate ? "always on (the engine cannot gate them)" :
			 m->fx.windowed ? "inside the windows" : "always on",
			 "effects_on_fraction", run > 0 ? 1 - (double)off / run : 1,
			 "effects_toggles", (json_int_t)m->n_toggles,
			 "recorder_cpu_ms", self / 1e6,
			 "recorder_cpu_fraction_of_target", cpu > 0 ? json_real(self / cpu) : json_null());
}

void gov_meter_print(const struct governor *g, FILE *out)
{
	const struct gov_meter *m = &g->meter;
	double self = (double)(m->self_cpu - m->self_cpu0);

	if (!m->stats) {
		fprintf(out, "  engine programs: kernel run-time statistics unavailable: the "
			"probes' own programs and the OS effects are NOT in the estimate\n");
		return;
	}
	fprintf(out, "  engine programs (measured): probes %.0f ns per run on top of the trap; "
		"OS effects %.1f ms (%s); recorder CPU %.1f ms (not charged)\n",
		m->prog_ns, m->effects_ns / 1e6,
		!m->gate ? "always on: cannot be gated" :
		m->fx.windowed ? "inside the windows only" : "always on", self / 1e6);
}
