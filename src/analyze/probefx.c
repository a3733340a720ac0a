// SPDX-License-Identifier: BSD-2-Clause
/* probefx.c: the probe-effect correction (issue 13 §3, docs/report.md
 * "Probe-effect correction").
 *
 * A uprobe hit costs microseconds, and the time a span measures includes
 * its own probes: the entry trap's way out and the return probe's way in.
 * With the cost model of the trace (TRACE_CHUNK_COST), WAIT span time and
 * hold time are corrected before diagnosis: each WAIT descriptor's spans
 * lose spans x the calibrated cost of that descriptor's probes (entry +
 * return) and, when the trace has the events (--events), the cost of the
 * other probes that fired on the same thread inside each span (nested
 * WAITs, ACQUIREs, USEs, RELEASEs of any resource: counted per span from
 * the records; without them nested probes are not counted, and the JSON
 * says so), each hold loses the cost of the RELEASE probe that ends it and
 * of the USE probes that fire inside it (their mean number per hold). A
 * resource whose corrected WAIT time is within the probe-effect error
 * (spans x the p90 - p50 spread of the probes involved) gets no contention
 * finding: probe cost dominates, and the report says so. Off-CPU shares
 * stay on the uncorrected wait time (the probes run on the CPU).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/diagnose_int.h"
#include "trace/trace.h"

int analysis__set_probe_cost(struct analysis *a, const struct trace_cost_class *cls,
			     size_t n_cls, const struct trace_cost_desc *d, size_t n_d,
			     bool calibrated)
{
	double spread[TRACE_COST_CLASSES] = { 0 };
	size_t i, k, n = a->m->n_events;

	if (!a->probe_cost_ns) {
		a->probe_cost_ns = calloc(n + 1, sizeof(*a->probe_cost_ns));
		a->probe_err_ns = calloc(n + 1, sizeof(*a->probe_err_ns));
		a->probefx = calloc(a->m->n_resources + 1, sizeof(*a->probefx));
		if (!a->probe_cost_ns || !a->probe_err_ns || !a->probefx)
			return -ENOMEM;
	}
	for (k = 0; k < n_cls && k < TRACE_COST_CLASSES; k++)
		spread[k] = cls[k].p90_ns > cls[k].p50_ns ? (double)(cls[k].p90_ns - cls[k].p50_ns) : 0;
	for (i = 0; i < n_d; i++) {
		if (d[i].descriptor >= n)
			continue;
		a->probe_cost_ns[d[i].descriptor] = (double)d[i].cost_ns;
		a->probe_err_ns[d[i].descriptor] = 0;
		for (k = 0; k < TRACE_COST_CLASSES; k++)
			if (d[i].classes & (1u << k))
				a->probe_err_ns[d[i].descriptor] += spread[k];
	}
	a->probefx_on = true;
	a->probefx_calibrated = calibrated;
	return 0;
}

/* every count of a log2 histogram moved to the bucket of (its bucket's
 * midpoint - sub), at least 0 */
static void shift_hist(uint64_t *hist, double sub)
{
	uint64_t out[PB_HIST_BUCKETS] = { 0 };
	int i;

	if (sub <= 0)
		return;
	for (i = 0; i < PB_HIST_BUCKETS; i++) {
		double mid = i ? 1.5 * (double)(1ull << i) : 0.5, v = mid - sub;

		if (hist[i])
			out[an_hist_bucket(v > 0 ? (uint64_t)v : 0)] += hist[i];
	}
	memcpy(hist, out, sizeof(out));
}

/* mean probe cost per event of r's descriptors of one kind */
static double kind_cost(const struct analysis *a, size_t r, enum pb_event_kind kind)
{
	double sum = 0;
	size_t d, n = 0;

	for (d = 0; d < a->m->n_events; d++)
		if (a->m->events[d].resource_idx == (int)r && a->m->events[d].kind == kind) {
			sum += a->probe_cost_ns[d];
			n++;
		}
	return n ? sum / (double)n : 0;
}

/* mean probe error per event of r's descriptors of one kind */
static double kind_err(const struct analysis *a, size_t r, enum pb_event_kind kind)
{
	double sum = 0;
	size_t d, n = 0;

	for (d = 0; d < a->m->n_events; d++)
		if (a->m->events[d].resource_idx == (int)r && a->m->events[d].kind == kind) {
			sum += a->probe_err_ns[d];
			n++;
		}
	return n ? sum / (double)n : 0;
}

/* one probe hit of one thread, from the --events records */
struct fx_hit {
	uint64_t ts;
	uint32_t tid;
	double cost, err;
};

static int cmp_hit(const void *x, const void *y)
{
	const struct fx_hit *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static double desc_cost(const struct analysis *a, uint32_t d, bool err)
{
	if (d >= a->m->n_events)
		return 0;
	return err ? a->probe_err_ns[d] : a->probe_cost_ns[d];
}

/* every probe hit the records show, by thread and time: a WAIT span's
 * (entry + return, at its start), an ACQUIRE's (a hold's start; an
 * ACQUIRE whose hold never ended is not seen), a USE's, a RELEASE's (the
 * resource's mean ACQUIRE / RELEASE cost: those records name the
 * resource, not the descriptor that fired). NULL when there are none or on ENOMEM (*n = 0). */
static struct fx_hit *collect_hits(const struct analysis *a, size_t *n)
{
	size_t cap = a->waits.n + a->holds.n + a->uses.n + a->releases.n, i, k = 0;
	struct fx_hit *h = cap ? malloc(cap * sizeof(*h)) : NULL;

	*n = 0;
	if (!h)
		return NULL;
	for (i = 0; i < a->waits.n; i++) {
		const struct an_span *s = AN_AT(&a->waits, struct an_span, i);

		h[k++] = (struct fx_hit){ s->start, s->tid, desc_cost(a, s->descriptor, false),
					  desc_cost(a, s->descriptor, true) };
	}
	for (i = 0; i < a->holds.n; i++) {	/* named by its RELEASE: the mean ACQUIRE */
		const struct an_span *s = AN_AT(&a->holds, struct an_span, i);

		h[k++] = (struct fx_hit){ s->start, s->tid,
			s->resource < a->m->n_resources ? kind_cost(a, s->resource, PB_EV_ACQUIRE) : 0,
			s->resource < a->m->n_resources ? kind_err(a, s->resource, PB_EV_ACQUIRE) : 0 };
	}
	for (i = 0; i < a->uses.n; i++) {
		const struct an_point *p = AN_AT(&a->uses, struct an_point, i);

		h[k++] = (struct fx_hit){ p->ts, p->tid, desc_cost(a, p->extra, false),
					  desc_cost(a, p->extra, true) };
	}
	for (i = 0; i < a->releases.n; i++) {
		const struct an_point *p = AN_AT(&a->releases, struct an_point, i);
		size_t r = p->a < a->m->n_resources ? (size_t)p->a : 0;

		h[k++] = (struct fx_hit){ p->ts, p->tid,
			p->a < a->m->n_resources ? kind_cost(a, r, PB_EV_RELEASE) : 0,
			p->a < a->m->n_resources ? kind_err(a, r, PB_EV_RELEASE) : 0 };
	}
	qsort(h, k, sizeof(*h), cmp_hit);
	*n = k;
	return h;
}

/* Nested probes: per WAIT descriptor of r, the cost (and error) of the
 * other probes that fired on the span's thread strictly inside it. */
static void nested_costs(const struct analysis *a, size_t r, double *ns, double *err,
			 uint64_t *count)
{
	size_t n, i, lo, hi;
	struct fx_hit *h = collect_hits(a, &n);

	for (i = 0; h && i < a->waits.n; i++) {
		const struct an_span *s = AN_AT(&a->waits, struct an_span, i);

		if (s->resource != r || s->descriptor >= a->m->n_events)
			continue;
		for (lo = 0, hi = n; lo < hi;) {	/* first hit after (tid, start) */
			size_t mid = lo + (hi - lo) / 2;

			if (h[mid].tid < s->tid || (h[mid].tid == s->tid && h[mid].ts <= s->start))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && h[lo].tid == s->tid && h[lo].ts < s->end; lo++) {
			ns[s->descriptor] += h[lo].cost;
			err[s->descriptor] += h[lo].err;
			(*count)++;
		}
	}
	free(h);
}

static void correct_holds(struct analysis *a, size_t r, struct res_ev *e,
			  struct an_probefx *p)
{
	double per, sub;

	p->hold_raw_ns = (double)e->hold_ns;
	if (!e->holds)
		return;
	per = kind_cost(a, r, PB_EV_RELEASE) +
	      kind_cost(a, r, PB_EV_USE) * (double)e->uses / (double)e->holds;
	sub = per * (double)e->holds;
	if (sub > (double)e->hold_ns)
		sub = (double)e->hold_ns;
	e->hold_ns -= (uint64_t)sub;
	shift_hist(e->hold_hist, per);
	p->hold_ns = (double)e->hold_ns;
}

/* Over 80 lines because each WAIT descriptor's correction (own probes,
 * nested ones, histogram, error) is one pass over the same counters. */
void an_probefx_correct(struct analysis *a, size_t r, struct res_ev *e)
{
	struct an_probefx *p;
	double sub_all = 0, *nest = NULL, *nest_err = NULL;
	size_t d;

	e->wait_ns_raw = e->wait_ns;
	if (!a->probefx_on)
		return;
	p = &a->probefx[r];
	memset(p, 0, sizeof(*p));
	p->wait_raw_ns = (double)e->wait_ns;
	/* nested probes are counted when the spans are records (--events) */
	p->nested_known = e->wd_spans;
	if (e->wd_spans) {
		nest = calloc(a->m->n_events + 1, sizeof(*nest));
		nest_err = calloc(a->m->n_events + 1, sizeof(*nest_err));
		if (nest && nest_err)
			nested_costs(a, r, nest, nest_err, &p->nested);
		else
			p->nested_known = false;
	}
	for (d = 0; d < a->m->n_events; d++) {
		struct wait_desc_ev *w = &e->wd[d];
		double c = a->probe_cost_ns[d], sub, in = 0;

		if (a->m->events[d].resource_idx != (int)r || a->m->events[d].kind != PB_EV_WAIT ||
		    !w->spans)
			continue;
		if (p->nested_known) {
			in = nest[d];
			p->err_ns += nest_err[d];
			p->nested_ns += in;
		}
		sub = c * (double)w->spans + in;
		if (sub > (double)w->ns)
			sub = (double)w->ns;
		w->ns -= (uint64_t)sub;
		if (w->io_ns > w->ns)
			w->io_ns = w->ns;
		shift_hist(w->hist, c + in / (double)w->spans);
		p->waits += w->spans;
		p->err_ns += a->probe_err_ns[d] * (double)w->spans;
		p->per_wait_ns += c * (double)w->spans + in;
		sub_all += sub;
	}
	free(nest);
	free(nest_err);
	if (p->waits) {
		p->per_wait_ns /= (double)p->waits;
		shift_hist(e->wait_hist, p->per_wait_ns);
	}
	e->wait_ns -= sub_all < (double)e->wait_ns ? (uint64_t)sub_all : e->wait_ns;
	p->wait_ns = (double)e->wait_ns;
	/* within the probes' own error: not evidence of waiting */
	p->dominated = p->waits && p->wait_ns <= p->err_ns;
	correct_holds(a, r, e, p);
}

bool an_probefx_dominated(const struct analysis *a, size_t r)
{
	return a->probefx_on && a->probefx[r].dominated;
}

json_t *an_probefx_json(const struct analysis *a)
{
	json_t *arr, *o;
	size_t r;

	if (!a->probefx_on)
		return json_null();
	arr = json_array();
	for (r = 0; arr && r < a->m->n_resources; r++) {
		const struct an_probefx *p = &a->probefx[r];

		if (!p->waits && !p->hold_raw_ns)
			continue;
		json_array_append_new(arr, json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:b, "
			"s:o, s:o}",
			"resource", a->m->resources[r].name, "waits", (json_int_t)p->waits,
			"wait_ns_raw", p->wait_raw_ns, "wait_ns", p->wait_ns,
			"probe_ns_per_wait", p->per_wait_ns, "error_ns", p->err_ns,
			"hold_ns_raw", p->hold_raw_ns, "hold_ns", p->hold_ns,
			"probe_cost_dominates", p->dominated,
			/* null: no WAIT span records (--events) to count them in */
			"nested_probes", p->nested_known ? json_integer((json_int_t)p->nested) :
			json_null(),
			"nested_probe_ns", p->nested_known ? json_real(p->nested_ns) : json_null()));
	}
	o = json_pack("{s:b, s:o*}", "calibrated", a->probefx_calibrated, "resources", arr);
	return o ? o : json_null();
}

void an_probefx_print(const struct analysis *a, FILE *out)
{
	char t1[32], t2[32], t3[32];
	size_t r;

	for (r = 0; a->probefx_on && r < a->m->n_resources; r++) {
		const struct an_probefx *p = &a->probefx[r];

		if (!p->dominated)
			continue;
		an_fmt_ns(t1, sizeof(t1), p->wait_raw_ns);
		an_fmt_ns(t2, sizeof(t2), p->per_wait_ns);
		an_fmt_ns(t3, sizeof(t3), p->waits ? p->err_ns / (double)p->waits : 0);
		fprintf(out, "probe cost dominates on %s: %s of WAIT in %llu WAITs is within the "
			"probes' own cost (%s per WAIT, error %s per WAIT%s): not reported as "
			"contention\n", a->m->resources[r].name, t1, (unsigned long long)p->waits,
			t2, t3, a->probefx_calibrated ? "" : ", default figures");
	}
}
