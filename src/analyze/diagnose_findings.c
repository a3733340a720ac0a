/* SPDX-License-Identifier: BSD-2-Clause */
/* diagnose_findings.c: the four diagnoses of one resource (contention,
 * long hold, leak, churn) with their severity, certainty and evidence
 * lines (diagnose_int.h). Formulas are documented in docs/report.md ("How
 * findings are computed"); evidence keys and texts are what report and
 * export print, in this order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/diagnose_int.h"

/* ---- evidence lines ------------------------------------------------------- */

/* bucket midpoint of quantile q of a log2 histogram; 0 when empty */
double an_hist_quantile(const uint64_t *h, double q)
{
	uint64_t total = 0, acc = 0;
	int i;

	for (i = 0; i < PB_HIST_BUCKETS; i++)
		total += h[i];
	if (!total)
		return 0;
	for (i = 0; i < PB_HIST_BUCKETS; i++) {
		acc += h[i];
		if ((double)acc >= q * (double)total)
			return i ? 1.5 * (double)(1ull << i) : 1;
	}
	return 1.5 * (double)(1ull << (PB_HIST_BUCKETS - 1));
}

char *an_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

void an_ev_add(struct finding *f, const char *key, double value, const char *unit,
		   const char *fmt, ...)
{
	struct finding_evidence *e, *n;
	va_list ap;
	char *text = NULL;

	n = realloc(f->evidence, (f->n_evidence + 1) * sizeof(*n));
	if (!n)
		return;
	f->evidence = n;
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	e = &f->evidence[f->n_evidence];
	e->key = strdup(key);
	e->unit = strdup(unit);
	e->text = text;
	e->value = value;
	if (!e->key || !e->unit || !e->text) {
		free(e->key);
		free(e->unit);
		free(e->text);
		return;
	}
	f->n_evidence++;
}

struct finding *an_new_finding(struct analysis *a, enum finding_kind k, size_t r)
{
	struct finding *n = realloc(a->findings, (a->n_findings + 1) * sizeof(*n));

	if (!n)
		return NULL;
	a->findings = n;
	n = &a->findings[a->n_findings++];
	memset(n, 0, sizeof(*n));
	n->kind = n->diagnosis = k;
	n->resource = (int)r;
	n->resource_name = a->m->resources[r].name;
	return n;
}

/* ---- what a finding rests on ---------------------------------------------- */

/* The calibrated certainty of the weakest descriptor a finding rests on
 * (docs/validation.md "Calibrated confidence"): shown, not yet in the
 * score (the fixed factors still rank). */
static void calibrated(struct analysis *a, struct finding *f)
{
	const struct finding_desc *w = NULL;
	double low = 2.0;
	uint32_t n = 0, wn = 0;
	uint64_t wev = 0;
	size_t i;

	for (i = 0; i < f->n_descs; i++) {
		const struct pb_desc_stats *ds = analysis__desc_stats(a, f->descs[i].descriptor);
		uint64_t ev = ds ? ds->events : 0;
		double p = confidence__calibrated(f->descs[i].confidence, ev, &n);

		if (p >= 0 && p < low) {
			low = p;
			w = &f->descs[i];
			wn = n;
			wev = ev;
		}
	}
	if (w)
		an_ev_add(f, "calibrated_certainty", low, "",
		       "calibrated certainty %.2f: %s descriptor %s with %llu events (of %u such "
		       "descriptors in bench/mutations.sh, this share was right)",
		       low, pb_confidence_str(w->confidence), w->id, (unsigned long long)wev, wn);
}

/* attach the descriptors of r of the kinds in mask; label and confidence */
void an_rest_on(struct analysis *a, struct finding *f, size_t r, unsigned mask,
		    const bool *only)
{
	static const double conf_factor[] = {
		[PB_CONF_CANDIDATE] = 0.6, [PB_CONF_VALIDATED] = 1.0, [PB_CONF_SUSPECT] = 0.5,
		[PB_CONF_STALE] = 0.3, [PB_CONF_DEGRADED] = 0.8,
	};
	char label[512] = "";
	size_t d, len = 0;
	double cf = 1.0;
	bool suspect = false, stale = false;

	for (d = 0; d < a->m->n_events; d++) {
		const struct pb_event *ev = &a->m->events[d];
		struct finding_desc *n;
		enum pb_confidence c = a->conf[d];

		if (ev->resource_idx != (int)r || !(mask & (1u << ev->kind)) || (only && !only[d]))
			continue;
		n = realloc(f->descs, (f->n_descs + 1) * sizeof(*n));
		if (!n)
			continue;
		f->descs = n;
		f->descs[f->n_descs++] = (struct finding_desc){ (uint32_t)d, ev->id, ev->kind, c };
		if (conf_factor[c] < cf)
			cf = conf_factor[c];
		stale |= c == PB_CONF_STALE;
		suspect |= c == PB_CONF_SUSPECT;
		if (c != PB_CONF_VALIDATED && len < sizeof(label) - 64)
			len += (size_t)snprintf(label + len, sizeof(label) - len, "%s%s descriptor %s",
						len ? "; " : "(rests on ", pb_confidence_str(c), ev->id);
	}
	if (len) {
		snprintf(label + len, sizeof(label) - len, ")");
		f->label = strdup(label);
	}
	f->certainty *= cf;
	calibrated(a, f);
	if (stale)
		f->kind = FINDING_MODEL_STALE;
	else if (suspect)
		f->kind = FINDING_MODEL_SUSPECT;
}

/* lost evidence lowers certainty: ring-buffer drops (instance-level evidence
 * only) and identity lost to a full state map */
void an_lost_evidence(struct analysis *a, struct finding *f, size_t r, uint64_t acquires,
			  bool uses_events)
{
	uint64_t drops = a->c.ringbuf_drops;
	uint64_t sf = a->res_state_full_rec + (a->have_snap_res ? a->snap_res[r].state_full : 0);
	double share;

	if (drops && events_mode(a)) {
		share = (double)drops / (double)(drops + (a->c.engine_records ? a->c.engine_records :
							 a->c.records));
		/* snapshots are complete whatever the ring buffer lost: drops
		 * lower certainty only of what rests on per-event records */
		if (uses_events)
			f->certainty *= share > 0.5 ? 0.5 : 1.0 - share;
		an_ev_add(f, "ringbuf_drops", (double)drops, "records",
		       "lost evidence: %llu ring-buffer records dropped (%.1f %% of records); instance-level evidence is incomplete",
		       (unsigned long long)drops, 100.0 * share);
	}
	if (sf) {
		share = (double)sf / (double)(sf + acquires);
		f->certainty *= share > 0.5 ? 0.5 : 1.0 - share;
		an_ev_add(f, "state_full", (double)sf, "events",
		       "lost evidence: identity of %llu events not tracked (instance map full)",
		       (unsigned long long)sf);
	}
}

/* record --budget windowed r: the finding's magnitudes are estimates */
void an_window_estimate(struct finding *f, const struct res_ev *e)
{
	if (e->est)
		an_ev_add(f, "window_share", 100.0 * e->share, "%",
		       "estimated: its ACQUIRE/USE/RELEASE probes were on in %zu windows covering "
		       "%.1f %% of the run (record --budget); counts are the windows', rates and "
		       "times scaled to the run", e->n_win, 100.0 * e->share);
}

/* ---- the diagnoses -------------------------------------------------------- */

/* The contended WAIT descriptors of r: those whose time is not mostly
 * spans that did block I/O (known only with I/O joins); their WAITs, time
 * and histogram, and the I/O-span time of all of r's WAIT descriptors.
 * Returns the per-descriptor mask, or NULL: no descriptor stands out, the
 * counts are the whole resource's. */
static bool *contended_descs(const struct analysis *a, size_t r, const struct res_ev *e,
			     uint64_t *c_waits, uint64_t *c_ns, uint64_t *io_ns, uint64_t *hist)
{
	bool *only = NULL;
	size_t d, i;

	if (e->wd_known)
		only = calloc(a->m->n_events, sizeof(*only));
	for (d = 0; only && d < a->m->n_events; d++) {
		const struct wait_desc_ev *w = &e->wd[d];

		if (a->m->events[d].resource_idx != (int)r || a->m->events[d].kind != PB_EV_WAIT)
			continue;
		*io_ns += w->io_ns;
		only[d] = w->ns && 2 * (w->ns - w->io_ns) >= w->ns;
		if (!only[d])
			continue;
		*c_waits += w->spans;
		*c_ns += w->ns;
		for (i = 0; i < PB_HIST_BUCKETS; i++)
			hist[i] += w->hist[i];
	}
	if (!*c_waits) {	/* no descriptor stands out: the whole resource */
		free(only);
		only = NULL;
		*c_waits = e->waits;
		*c_ns = e->wait_ns;
		memcpy(hist, e->wait_hist, PB_HIST_BUCKETS * sizeof(*hist));
	}
	return only;
}

/* per WAIT descriptor of r: contended, or an I/O slow path */
static void contention_descriptors(const struct analysis *a, struct finding *f, size_t r,
				   const struct res_ev *e, const bool *only)
{
	const char *name = a->m->resources[r].name;
	char t1[32];
	size_t d;

	for (d = 0; e->wd_known && d < a->m->n_events; d++) {
		const struct pb_event *ev = &a->m->events[d];
		const struct wait_desc_ev *w = &e->wd[d];
		uint64_t nonio = w->spans - w->io_spans;

		if (ev->resource_idx != (int)r || ev->kind != PB_EV_WAIT || !w->spans)
			continue;
		an_fmt_ns(t1, sizeof(t1), (double)w->ns);
		if (only && !only[d])
			an_ev_add(f, "io_bound_descriptor", (double)w->io_ns, "ns",
			       "WAIT %s: %s in %llu WAITs, %.0f %% of them issued block I/O: an I/O slow path, not counted as contention",
			       ev->id, t1, (unsigned long long)w->spans,
			       100.0 * (double)w->io_spans / (double)w->spans);
		else
			an_ev_add(f, "contended_descriptor", (double)(w->ns - w->io_ns), "ns",
			       "WAIT %s: %s in %llu WAITs, %.0f %% of those without block I/O ended by a wakeup from a thread releasing %s",
			       ev->id, t1, (unsigned long long)w->spans,
			       nonio ? 100.0 * (double)w->woken / (double)nonio : 0.0, name);
	}
}

/* who waited: I/O-span time, waiting threads, off-CPU time */
static void contention_waiters(const struct analysis *a, struct finding *f, size_t r,
			       const struct res_ev *e, double dur_ns, uint64_t c_ns,
			       uint64_t io_ns)
{
	uint64_t off;
	char t1[32];
	size_t i;

	if (io_ns) {
		an_fmt_ns(t1, sizeof(t1), (double)io_ns);
		an_ev_add(f, "io_wait_ns", (double)io_ns, "ns",
		       "%s of WAIT time was spans that issued block I/O (not counted as contention)", t1);
	}
	an_ev_add(f, "avg_waiting_threads", (double)c_ns / dur_ns, "threads",
	       "on average %.2f threads waiting over the recording", (double)c_ns / dur_ns);
	if (e->n_wait_spans) {
		uint64_t tids = 0;
		const struct an_span *w = a->waits.v;
		uint32_t last = 0;
		bool any = false;

		for (i = 0; i < a->waits.n; i++)	/* sorted by tid */
			if (w[i].resource == r && (!any || w[i].tid != last)) {
				tids++;
				last = w[i].tid;
				any = true;
			}
		an_ev_add(f, "waiters", (double)tids, "threads", "%llu distinct threads waited",
		       (unsigned long long)tids);
	}
	off = e->n_wait_spans && a->offcpu.n ? e->off_cpu_wait_ns :
	      a->have_snap_res ? a->snap_res[r].off_cpu_wait_ns : 0;
	if (off) {
		an_fmt_ns(t1, sizeof(t1), (double)off);
		an_ev_add(f, "off_cpu_wait_ns", (double)off, "ns",
		       "off-CPU while waiting: %s (%.0f %% of wait time)", t1,
		       e->wait_ns_raw ? 100.0 * (double)off / (double)e->wait_ns_raw : 0.0);
	}
}

/* what ended the waits: releasers' wakeups, I/O, holders, long holds */
static void contention_causes(const struct analysis *a, struct finding *f, size_t r,
			      const struct res_ev *e, double share, bool share_known,
			      double explained, double leak_expl)
{
	const char *name = a->m->resources[r].name;
	char t1[32], who[64];
	size_t i;

	if (share_known)
		an_ev_add(f, "release_wakeup_share", 100.0 * share, "%",
		       "%.0f %% of waits were ended by a wakeup from a thread releasing %s", 100.0 * share,
		       name);
	else
		an_ev_add(f, "release_wakeup_share", -1, "%",
		       "no wakeup evidence recorded: all wait time counted as contention");
	if (e->wakeups_in_waits)
		an_ev_add(f, "wakeups_from_release", (double)e->wakeups_from_release, "wakeups",
		       "%.0f %% of wakeups came from threads releasing %s (%llu of %llu)",
		       100.0 * (double)e->wakeups_from_release / (double)e->wakeups_in_waits, name,
		       (unsigned long long)e->wakeups_from_release,
		       (unsigned long long)e->wakeups_in_waits);
	if (e->waits_with_io)
		an_ev_add(f, "waits_with_io", (double)e->waits_with_io, "waits",
		       "%llu WAITs issued block I/O (slow path: I/O, not a holder; not counted)",
		       (unsigned long long)e->waits_with_io);
	for (i = 0; i < e->n_holders && i < 3; i++) {
		an_fmt_ns(t1, sizeof(t1), (double)e->holders[i].ns);
		an_ev_add(f, "holder_tid", e->holders[i].tid, "tid",
		       "holder during waits: tid %u%s held an instance for %s of others' wait time",
		       e->holders[i].tid, an_who(a, e->holders[i].tid, who, sizeof(who)), t1);
	}
	if (explained > 0) {
		an_fmt_ns(t1, sizeof(t1), explained);
		an_ev_add(f, "explained_by_long_holds_ns", explained, "ns",
		       "%s of this wait is explained by long holds (see the long_hold finding)", t1);
	}
	if (leak_expl > 0) {
		an_fmt_ns(t1, sizeof(t1), leak_expl);
		an_ev_add(f, "explained_by_leak_ns", leak_expl, "ns",
		       "%s of this wait is explained by leaked units, holds never seen to end (see "
		       "the leak finding)", t1);
	}
}

/* the typical (p50) WAIT, corrected, is within the probes' error: the
 * wait time left is a few long WAITs, the finding is half as certain */
static void contention_probefx(const struct analysis *a, struct finding *f, size_t r, double p50)
{
	const struct an_probefx *p = a->probefx_on ? &a->probefx[r] : NULL;
	double err;
	char t1[32], t2[32];

	if (!p || !p->waits)
		return;
	err = p->err_ns / (double)p->waits;
	if (p50 > err)
		return;
	an_fmt_ns(t1, sizeof(t1), p->per_wait_ns);
	an_fmt_ns(t2, sizeof(t2), err);
	an_ev_add(f, "probe_cost_dominates_typical_wait", p50, "ns",
	       "probe cost dominates the typical WAIT: its p50 is within the probes' error once their %s per WAIT is subtracted (error %s per WAIT); the wait time left is in the longer WAITs",
	       t1, t2);
	f->certainty *= 0.5;
}

void an_finding_contention(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			   double w_eff, double share, bool share_known, double explained,
			   double leak_expl)
{
	const char *name = a->m->resources[r].name;
	uint64_t c_waits = 0, c_ns = 0, io_ns = 0, hist[PB_HIST_BUCKETS] = { 0 };
	double rem = w_eff - explained - leak_expl;
	char t1[32], t2[32], t3[32];
	struct finding *f;
	bool *only;

	if (rem < 0)
		rem = 0;
	if (100.0 * clamp01(rem / dur_ns) < MIN_SEVERITY)
		return;
	f = an_new_finding(a, FINDING_CONTENTION, r);
	if (!f)
		return;
	f->severity = 100.0 * clamp01(rem / dur_ns);
	f->certainty = 1.0;
	only = contended_descs(a, r, e, &c_waits, &c_ns, &io_ns, hist);
	an_fmt_ns(t1, sizeof(t1), (double)c_ns);
	an_fmt_ns(t2, sizeof(t2), an_hist_quantile(hist, 0.5));
	an_fmt_ns(t3, sizeof(t3), an_hist_quantile(hist, 0.99));
	f->summary = an_xasprintf("contention on %s: %s waiting in %llu WAITs (p50 %s, p99 %s)",
			       name, t1, (unsigned long long)c_waits, t2, t3);
	an_ev_add(f, "wait_ns", (double)c_ns, "ns", "wait time: %s in %llu WAITs%s", t1,
	       (unsigned long long)c_waits, only ? " of the contended descriptors" : "");
	an_ev_add(f, "wait_p50_ns", an_hist_quantile(hist, 0.5), "ns",
	       "wait p50 %s, p99 %s (log2 histogram bucket midpoints)", t2, t3);
	an_ev_add(f, "wait_p99_ns", an_hist_quantile(hist, 0.99), "ns", "wait p99 %s", t3);
	contention_probefx(a, f, r, an_hist_quantile(hist, 0.5));
	contention_descriptors(a, f, r, e, only);
	contention_waiters(a, f, r, e, dur_ns, c_ns, io_ns);
	contention_causes(a, f, r, e, share, share_known, explained, leak_expl);
	an_rest_on(a, f, r, 1u << PB_EV_WAIT, only);
	free(only);
	an_lost_evidence(a, f, r, e->acquires, e->n_wait_spans && !a->desc_snapshots);
}

void an_finding_long_hold(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			  double explained, bool from_events)
{
	const char *name = a->m->resources[r].name;
	uint64_t n = from_events ? e->long_n : e->long_n_agg;
	double lns = from_events ? (double)e->long_ns : e->long_ns_agg;
	char t1[32], t2[32], t3[32], who[64];
	struct finding *f;
	size_t i;

	if (!n)
		return;
	f = an_new_finding(a, FINDING_LONG_HOLD, r);
	if (!f)
		return;
	/* caused wait dominates; the hold time alone adds at most 10 */
	f->severity = 100.0 * clamp01(explained / dur_ns) + 10.0 * clamp01(lns / dur_ns);
	if (f->severity > 100)
		f->severity = 100;
	f->certainty = 1.0;
	an_fmt_ns(t1, sizeof(t1), (double)a->o.long_hold_ns);
	an_fmt_ns(t2, sizeof(t2), explained);
	an_fmt_ns(t3, sizeof(t3), lns);
	f->summary = e->est && !from_events ?
		an_xasprintf("long holds of %s: %llu holds >= %s seen in windows covering %.1f %% "
			  "(≈ %s in all over the run, estimated) while others waited %s",
			  name, (unsigned long long)n, t1, 100.0 * e->share, t3, t2) :
		an_xasprintf("long holds of %s: %llu holds >= %s (%s in all) while others waited %s",
			  name, (unsigned long long)n, t1, t3, t2);
	an_ev_add(f, "long_holds", (double)n, "holds", "%llu holds >= %s%s", (unsigned long long)n, t1,
	       from_events ? "" : " (from the hold-time histogram)");
	an_ev_add(f, "long_hold_ns", lns, "ns", "long-hold time: %s%s", t3,
	       from_events ? "" : e->est ? " (estimated: bucket midpoints, cut holds at their age, "
					   "scaled to the run from its windows)" :
			   " (estimated at bucket midpoints)");
	if (e->cut_long_n) {
		an_fmt_ns(t3, sizeof(t3), (double)e->cut_long_n ? e->cut_long_ns / (double)e->cut_long_n : 0);
		an_ev_add(f, "cut_long_holds", (double)e->cut_long_n, "holds",
		       "%llu holds still open when a window closed, already held >= %s (mean lower bound "
		       "%s): long holds never seen whole%s", (unsigned long long)e->cut_long_n, t1, t3,
		       from_events ? " (not counted above)" : " (counted above at their age)");
	}
	if (e->open_long_n) {
		an_fmt_ns(t3, sizeof(t3), e->open_long_ns / (double)e->open_long_n);
		an_ev_add(f, "open_cut_long_holds", (double)e->open_long_n, "holds",
		       "%llu holds acquired before a window opened and released in it >= %s after "
		       "the open (mean lower bound %s): long holds never seen whole%s",
		       (unsigned long long)e->open_long_n, t1, t3,
		       from_events ? " (not counted above)" : " (counted above at their part in the window)");
	}
	if (from_events && e->long_max) {
		an_fmt_ns(t3, sizeof(t3), (double)e->long_max);
		an_ev_add(f, "long_hold_max_ns", (double)e->long_max, "ns", "longest hold: %s", t3);
	}
	an_ev_add(f, "caused_wait_ns", explained, "ns",
	       from_events ? "others' WAIT time overlapping these holds: %s" :
			     "WAIT time these holds can explain: %s (min of wait and long-hold time)",
	       t2);
	for (i = 0; from_events && i < e->n_holders && i < 3; i++) {
		an_fmt_ns(t1, sizeof(t1), (double)e->holders[i].ns);
		an_ev_add(f, "holder_tid", e->holders[i].tid, "tid", "tid %u%s held it during %s of others' waits",
		       e->holders[i].tid, an_who(a, e->holders[i].tid, who, sizeof(who)), t1);
	}
	if (from_events && (e->io_holding || e->faults_holding))
		an_ev_add(f, "io_while_holding", (double)e->io_holding, "I/Os",
		       "while holding: %llu block I/Os (%llu bytes), %llu page faults",
		       (unsigned long long)e->io_holding, (unsigned long long)e->io_bytes_holding,
		       (unsigned long long)e->faults_holding);
	else if (a->have_snap_res && (a->snap_res[r].io_while_holding || a->snap_res[r].off_cpu_hold_ns)) {
		an_fmt_ns(t1, sizeof(t1), (double)a->snap_res[r].off_cpu_hold_ns);
		an_ev_add(f, "io_while_holding", (double)a->snap_res[r].io_while_holding, "I/Os",
		       "while holding: %llu block I/Os, %llu page faults, %s off-CPU",
		       (unsigned long long)a->snap_res[r].io_while_holding,
		       (unsigned long long)a->snap_res[r].faults_while_holding, t1);
	}
	an_window_estimate(f, e);
	an_rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_RELEASE) | (1u << PB_EV_WAIT), NULL);
	an_lost_evidence(a, f, r, e->acquires, from_events);
}

/* least-squares slope (per ns) and R^2 of the imbalance series */
static void regress(const struct an_point_res *p, size_t n, double *slope, double *r2)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		mx += (double)p[i].ts;
		my += (double)p[i].imbalance;
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		double dx = (double)p[i].ts - mx, dy = (double)p[i].imbalance - my;

		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	*slope = sxx > 0 ? sxy / sxx : 0;
	*r2 = sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
}

/* How much ACQUIRE - RELEASE grew, how fast, and how clearly: from the
 * snapshot series when there is one (a linear trend over 3 or more
 * points), else from the lifetimes still open at the end. False when r
 * does not grow enough to be a leak. */
static bool leak_growth(const struct analysis *a, const struct an_vec *sv, const struct res_ev *e,
			double dur_ns, uint64_t t_start, bool from_zero, double *growth,
			double *quality, double *slope, double *r2)
{
	const struct an_point_res *pts = sv->v;

	if (!sv->n) {
		if (e->stuck_pins < LEAK_MIN_GROWTH)
			return false;
		*growth = (double)e->stuck_pins;
		*quality = 0.6 + 0.4 * e->stuck_slices / 8.0;
		*slope = *growth / dur_ns;
		return true;
	}
	if (sv->n >= 3) {
		regress(pts, sv->n, slope, r2);
		*growth = (double)pts[sv->n - 1].imbalance -
			  (from_zero ? 0.0 : (double)pts[0].imbalance);
		*quality = *r2;
	} else {
		/* too few points for a trend: grow from zero at the start */
		bool from_first = sv->n == 2 && !from_zero;
		int64_t first = from_first ? pts[0].imbalance : 0;
		uint64_t t0 = from_first ? pts[0].ts : t_start;

		*growth = (double)pts[sv->n - 1].imbalance - (double)first;
		*slope = pts[sv->n - 1].ts > t0 ? *growth / (double)(pts[sv->n - 1].ts - t0) : 0;
		*quality = 0.7;
	}
	return !(*growth < LEAK_MIN_GROWTH || *slope <= 0 || *quality < 0.5);
}

/* the lifetimes of r behind a leak: stuck, reused, the first stuck ones */
static void leak_lifetimes(const struct analysis *a, struct finding *f, size_t r,
			   const struct res_ev *e)
{
	const struct an_life *l = a->lives.v;
	size_t i, shown = 0;
	char who[64];

	an_ev_add(f, "stuck_lifetimes", (double)e->stuck_lives, "generations",
	       "%llu generations never released (%llu holds still open), of %llu seen",
	       (unsigned long long)e->stuck_lives, (unsigned long long)e->stuck_pins,
	       (unsigned long long)e->lives);
	if (e->reused_instances)
		an_ev_add(f, "reused_addresses", (double)e->reused_instances, "generations",
		       "%llu generations reused an address of an earlier, released generation (counted apart)",
		       (unsigned long long)e->reused_instances);
	for (i = 0; i < a->lives.n && shown < 3; i++) {
		if (l[i].resource != r || !l[i].open ||
		    a->c.last_ts - l[i].t_open < a->o.leak_age_ns)
			continue;
		an_ev_add(f, "stuck_instance", (double)l[i].instance, "instance",
		       "never released: instance 0x%llx generation %llu, %u holds, first acquired by tid %u%s",
		       (unsigned long long)l[i].instance, (unsigned long long)l[i].generation,
		       l[i].pins, l[i].tid, an_who(a, l[i].tid, who, sizeof(who)));
		shown++;
	}
}

/* The confidence controller's leak hypothesis held: the excess over the
 * capacity is the leaked holdings, not a wrong model (docs/validation.md
 * "Leak or broken model"). */
static void leak_capacity(struct analysis *a, struct finding *f, size_t r)
{
	const struct confidence_leak *l = &a->leak[r];
	const char *u = a->m->resources[r].units ? a->m->resources[r].units : "units";

	an_ev_add(f, "capacity_explained", (double)l->leaked, "holdings",
	       "units held exceed declared capacity %llu because %llu leaked holdings are still "
	       "counted (%lld %s held; idle >= %.1f ms, 16x the %.2f ms under which 99.9%% of "
	       "holds ended; %llu over_capacity violations in %llu windows not counted against "
	       "the model)",
	       (unsigned long long)l->capacity, (unsigned long long)l->leaked,
	       (long long)l->units_held, u, (double)l->threshold_ns / 1e6,
	       (double)l->hold_edge_ns / 1e6, (unsigned long long)l->violations,
	       (unsigned long long)l->windows);
}

void an_finding_leak(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
		     uint64_t t_start, size_t from)
{
	const struct pb_resource *res = &a->m->resources[r];
	struct an_vec view = a->series[r];
	const struct an_vec *sv = &view;
	const struct an_point_res *pts;
	double growth = 0, quality = 0, slope = 0, r2 = 0, ref;
	bool from_series = sv->n > 0;
	struct finding *f;

	/* credit is consumable by design (a request takes tokens and refunds
	 * only the unused ones): ACQUIRE without RELEASE is consumption, not
	 * a leak, so credit resources get no leak diagnosis */
	if (!e->has_acquire_desc || !e->has_release_desc || res->class == PB_CLASS_CREDIT)
		return;
	if (from) {	/* the snapshots after a window opened for good */
		if (from >= view.n)
			return;
		view.v = AN_AT(&a->series[r], struct an_point_res, from);
		view.n -= from;
		t_start = AN_AT(&view, struct an_point_res, 0)->ts;
	}
	pts = view.v;
	if (!leak_growth(a, sv, e, dur_ns, t_start, !from && a->o.counters_from_zero, &growth,
			 &quality, &slope, &r2) && !a->leak[r].windows)
		return;
	ref = res->has_capacity && res->capacity >= 8 ? (double)res->capacity : 64;
	f = an_new_finding(a, FINDING_LEAK, r);
	if (!f)
		return;
	f->severity = 100.0 * clamp01(growth / ref) * quality;
	f->certainty = 1.0;
	f->summary = an_xasprintf("leak / unbounded growth of %s: ACQUIRE - RELEASE grew by %.0f (%+.1f/s)",
			       res->name, growth, slope * 1e9);
	an_ev_add(f, "imbalance_growth", growth, "acquisitions",
	       "ACQUIRE - RELEASE grew by %.0f %s (%s)", growth, res->units ? res->units : "units",
	       from_series ? "snapshots" : "open lifetimes at the end of the trace");
	an_ev_add(f, "acquires", (double)e->acquires, "events", "%llu ACQUIREs, %llu RELEASEs",
	       (unsigned long long)e->acquires, (unsigned long long)e->releases);
	an_ev_add(f, "slope_per_s", slope * 1e9, "acquisitions/s", "growth rate %+.1f/s", slope * 1e9);
	if (from_series && sv->n >= 3)
		an_ev_add(f, "trend_r2", r2, "", "linear trend over %zu snapshots, R^2 = %.2f", sv->n, r2);
	if (from_series && a->have_snap_res)
		an_ev_add(f, "live_instances", (double)pts[sv->n - 1].live, "instances",
		       "live instances %lld -> %lld, outstanding units %lld -> %lld (first -> last snapshot)",
		       (long long)pts[0].live, (long long)pts[sv->n - 1].live,
		       (long long)pts[0].units, (long long)pts[sv->n - 1].units);
	if (res->has_capacity)
		an_ev_add(f, "capacity", (double)res->capacity, res->units ? res->units : "units",
		       "declared capacity %llu %s", (unsigned long long)res->capacity,
		       res->units ? res->units : "units");
	if (a->leak[r].windows)
		leak_capacity(a, f, r);
	if (e->lives)
		leak_lifetimes(a, f, r, e);
	an_rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_RELEASE), NULL);
	an_lost_evidence(a, f, r, e->acquires, !from_series);
}

void an_finding_churn(struct analysis *a, size_t r, struct res_ev *e, double dur_ns)
{
	const char *name = a->m->resources[r].name;
	double wasted, total, share, rate;
	bool from_events = e->cycles > 0;
	struct finding *f;

	if (!e->has_use_desc || !e->has_acquire_desc)
		return;
	if (from_events) {
		wasted = (double)e->churn_cycles;
		total = (double)e->cycles;
	} else {
		if (e->acquires <= e->uses)
			return;
		wasted = (double)(e->acquires - e->uses);
		total = (double)e->acquires;
	}
	share = total ? wasted / total : 0;
	if (wasted < CHURN_MIN_CYCLES || share < CHURN_MIN_SHARE)
		return;
	/* a windowed resource's cycles were counted in its windows only: its
	 * rate is per second observed */
	rate = wasted / (dur_ns * (e->est ? e->share : 1.0) / 1e9);
	f = an_new_finding(a, FINDING_CHURN, r);
	if (!f)
		return;
	f->severity = 100.0 * share * clamp01(rate / CHURN_FULL_RATE);
	f->certainty = 1.0;
	f->summary = an_xasprintf("churn on %s: %.0f of %.0f acquire/release cycles (%.0f %%) without USE",
			       name, wasted, total, 100.0 * share);
	an_ev_add(f, "cycles_without_use", wasted, "cycles", "%.0f cycles without USE (%s), %.0f/s", wasted,
	       from_events ? "per generation, from events" : "ACQUIRE count - USE count", rate);
	an_ev_add(f, "acquires", (double)e->acquires, "events", "%llu ACQUIREs, %llu USEs, %llu RELEASEs",
	       (unsigned long long)e->acquires, (unsigned long long)e->uses,
	       (unsigned long long)e->releases);
	an_ev_add(f, "waste_share", 100.0 * share, "%", "%.0f %% of cycles did no useful work", 100.0 * share);
	an_window_estimate(f, e);
	an_rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_USE) | (1u << PB_EV_RELEASE), NULL);
	an_lost_evidence(a, f, r, e->acquires, from_events);
}

void an_model_summary(struct analysis *a, struct finding *f)
{
	char *s;

	if (f->kind != FINDING_MODEL_STALE && f->kind != FINDING_MODEL_SUSPECT)
		return;
	s = an_xasprintf("model %s: %s would read as %s, but it rests on a %s descriptor; "
		      "the manifest no longer explains the evidence (was: %s)",
		      f->kind == FINDING_MODEL_STALE ? "stale" : "suspect", f->resource_name,
		      finding_kind_str(f->diagnosis), f->kind == FINDING_MODEL_STALE ? "stale" : "suspect",
		      f->summary ? f->summary : "?");
	if (s) {
		free(f->summary);
		f->summary = s;
	}
}
