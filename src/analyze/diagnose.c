/* diagnose.c: analysis__finish -- the time joins of --events evidence and
 * the four diagnoses with their severity and certainty. Formulas are
 * documented in docs/report.md ("How findings are computed").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"

#define LEAK_MIN_GROWTH		8
#define CHURN_MIN_CYCLES	100
#define CHURN_MIN_SHARE		0.5
#define CHURN_FULL_RATE		1000.0
#define MIN_SEVERITY		1.0
#define HOLDER_SCAN		256
#define MAX_LONG_HOLDS		4096
#define TOP_N			64

/* ---- small helpers -------------------------------------------------------- */

void an_fmt_ns(char *buf, size_t sz, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, sz, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, sz, "%.1f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, sz, "%.1f us", ns / 1e3);
	else
		snprintf(buf, sz, "%.0f ns", ns);
}

/* bucket midpoint of quantile q of a log2 histogram; 0 when empty */
static double hist_quantile(const uint64_t *h, double q)
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

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static void ev_add(struct finding *f, const char *key, double value, const char *unit,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void ev_add(struct finding *f, const char *key, double value, const char *unit,
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

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_u64p(const void *x, const void *y)
{
	return cmp_u64(*(const uint64_t *)x, *(const uint64_t *)y);
}

static int cmp_span_tid(const void *x, const void *y)
{
	const struct an_span *a = x, *b = y;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->start, b->start);
}

static int cmp_span_res(const void *x, const void *y)
{
	const struct an_span *a = x, *b = y;

	return cmp_u64(a->resource, b->resource) ?: cmp_u64(a->start, b->start) ?:
	       cmp_u64(a->tid, b->tid);
}

static int cmp_point_tid(const void *x, const void *y)
{
	const struct an_point *a = x, *b = y;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->ts, b->ts);
}

static int cmp_point_a(const void *x, const void *y)	/* wakeups: by wakee */
{
	const struct an_point *a = x, *b = y;

	return cmp_u64(a->a, b->a) ?: cmp_u64(a->ts, b->ts);
}

static int cmp_offcpu(const void *x, const void *y)
{
	const struct an_offcpu *a = x, *b = y;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->start, b->start);
}

/* first point with (key, ts) >= (tid, ts); key is tid, or wakee when by_a */
static size_t point_lb(const struct an_vec *v, uint64_t tid, uint64_t ts, bool by_a)
{
	const struct an_point *p = v->v;
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k = by_a ? p[mid].a : p[mid].tid;

		if (k < tid || (k == tid && p[mid].ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t count_points(const struct an_vec *v, uint32_t tid, uint64_t s, uint64_t e,
			   uint64_t *sum_a)
{
	const struct an_point *p = v->v;
	size_t i = point_lb(v, tid, s, false), n = 0;

	for (; i < v->n && p[i].tid == tid && p[i].ts <= e; i++) {
		n++;
		if (sum_a)
			*sum_a += p[i].a;
	}
	return n;
}

static uint64_t offcpu_overlap(const struct an_vec *v, uint32_t tid, uint64_t s, uint64_t e)
{
	const struct an_offcpu *o = v->v;
	size_t lo = 0, hi = v->n;
	uint64_t sum = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o[mid].tid < tid || (o[mid].tid == tid && o[mid].start < s))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && o[lo - 1].tid == tid)
		lo--;
	for (; lo < v->n && o[lo].tid == tid && o[lo].start < e; lo++) {
		uint64_t a = o[lo].start > s ? o[lo].start : s;
		uint64_t b = o[lo].end < e ? o[lo].end : e;

		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* did thread tid RELEASE resource res within [ts - window, ts]? */
static bool released_before(const struct analysis *a, uint32_t tid, uint16_t res, uint64_t ts)
{
	const struct an_point *p = a->releases.v;
	uint64_t from = ts > a->o.wakeup_window_ns ? ts - a->o.wakeup_window_ns : 0;
	size_t i = point_lb(&a->releases, tid, from, false);

	for (; i < a->releases.n && p[i].tid == tid && p[i].ts <= ts; i++)
		if (p[i].a == res)
			return true;
	return false;
}

struct tid_ns {
	uint32_t tid;
	uint64_t ns;
};

static void tally(struct tid_ns *t, size_t *n, uint32_t tid, uint64_t ns)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (t[i].tid == tid) {
			t[i].ns += ns;
			return;
		}
	if (*n < TOP_N)
		t[(*n)++] = (struct tid_ns){ tid, ns };
}

static int cmp_tid_ns(const void *x, const void *y)
{
	const struct tid_ns *a = x, *b = y;

	return cmp_u64(b->ns, a->ns) ?: cmp_u64(a->tid, b->tid);
}

/* ---- per-resource evidence ------------------------------------------------ */

/* one WAIT descriptor: its spans split into I/O spans (the waiting thread
 * issued block I/O inside the span: a slow path, not waiting for a holder)
 * and the others, of which `woken` were ended by a releaser's wakeup */
struct wait_desc_ev {
	uint64_t spans, ns, io_spans, io_ns, woken;
	uint64_t wakeups, io_wakeups, release_wakeups, off_cpu_ns;
	uint64_t hist[PB_HIST_BUCKETS];
};

struct res_ev {
	struct wait_desc_ev *wd;	/* per manifest event (WAITs of r only) */
	bool wd_known;			/* wd carries I/O and wakeup joins */
	bool wd_spans;			/* ... built from WAIT span records */
	/* aggregates */
	uint64_t waits, wait_ns, acquires, uses, releases, hold_ns, holds;
	uint64_t wait_hist[PB_HIST_BUCKETS], hold_hist[PB_HIST_BUCKETS];
	uint64_t long_n_agg;
	double long_ns_agg;
	bool has_use_desc, has_release_desc, has_acquire_desc;
	/* --events joins */
	size_t n_wait_spans, n_hold_spans;
	uint64_t waits_release_woken, wakeups_in_waits, wakeups_from_release;
	uint64_t off_cpu_wait_ns, io_in_waits, waits_with_io;
	uint64_t long_n, long_ns, long_max, explained_ns;
	struct tid_ns holders[TOP_N];
	size_t n_holders;
	uint64_t io_holding, io_bytes_holding, faults_holding;
	/* lifetimes */
	uint64_t lives, lives_closed, cycles, churn_cycles, stuck_lives, stuck_pins;
	uint64_t reused_instances;
	unsigned stuck_slices;
};

static bool events_mode(const struct analysis *a)
{
	return a->c.by_type[PB_REC_RESOURCE] > 0;
}

static const struct pb_desc_stats *agg_desc(const struct analysis *a, size_t d)
{
	return a->desc_snapshots ? &a->snap_desc[d] : &a->ev_desc[d];
}

static void gather_aggregates(const struct analysis *a, size_t r, struct res_ev *e)
{
	size_t d;
	int i;

	for (d = 0; d < a->m->n_events; d++) {
		const struct pb_event *ev = &a->m->events[d];
		const struct pb_desc_stats *s = agg_desc(a, d);

		if (ev->resource_idx != (int)r)
			continue;
		switch (ev->kind) {
		case PB_EV_WAIT: {
			struct wait_desc_ev *w = &e->wd[d];

			e->waits += s->events;
			e->wait_ns += s->total_ns;
			for (i = 0; i < PB_HIST_BUCKETS; i++)
				e->wait_hist[i] += s->hist[i];
			w->spans = s->events;
			w->ns = s->total_ns;
			memcpy(w->hist, s->hist, sizeof(w->hist));
			w->io_spans = s->io_spans;
			w->io_ns = s->io_span_ns < s->total_ns ? s->io_span_ns : s->total_ns;
			w->woken = s->release_woken_spans;
			w->wakeups = s->wakeups;
			w->io_wakeups = s->io_wakeups;
			w->release_wakeups = s->release_wakeups;
			w->off_cpu_ns = s->off_cpu_ns;
			break;
		}
		case PB_EV_ACQUIRE:
			e->has_acquire_desc = true;
			e->acquires += s->events;
			break;
		case PB_EV_USE:
			e->has_use_desc = true;
			e->uses += s->events;
			break;
		case PB_EV_RELEASE:
			e->has_release_desc = true;
			e->releases += s->events;
			e->hold_ns += s->total_ns;
			for (i = 0; i < PB_HIST_BUCKETS; i++) {
				e->hold_hist[i] += s->hist[i];
				e->holds += s->hist[i];
			}
			break;
		default:
			break;
		}
	}
	/* long holds from the hold histogram: buckets whose lower bound
	 * reaches the threshold, each hold estimated at its bucket midpoint,
	 * capped by the exact hold total */
	for (i = 0; i < PB_HIST_BUCKETS; i++)
		if ((double)(1ull << i) >= (double)a->o.long_hold_ns && e->hold_hist[i]) {
			e->long_n_agg += e->hold_hist[i];
			e->long_ns_agg += 1.5 * (double)(1ull << i) * (double)e->hold_hist[i];
		}
	if (e->long_ns_agg > (double)e->hold_ns && e->hold_ns)
		e->long_ns_agg = (double)e->hold_ns;
}

/* WAIT spans of r joined with holds, off-CPU, wakeups and I/O */
static void join_waits(const struct analysis *a, size_t r, struct res_ev *e,
		       const struct an_span *holds_r, size_t n_holds_r)
{
	const struct an_span *w = a->waits.v;
	const struct an_span *longs[MAX_LONG_HOLDS];
	size_t n_long = 0, i, j;

	for (j = 0; j < n_holds_r; j++) {
		uint64_t dur = holds_r[j].end - holds_r[j].start;
		uint64_t sum = 0;

		e->n_hold_spans++;
		e->io_holding += count_points(&a->ios, holds_r[j].tid, holds_r[j].start,
					      holds_r[j].end, &sum);
		e->io_bytes_holding += sum;
		e->faults_holding += count_points(&a->faults, holds_r[j].tid, holds_r[j].start,
						  holds_r[j].end, NULL);
		if (dur >= a->o.long_hold_ns) {
			e->long_n++;
			e->long_ns += dur;
			if (dur > e->long_max)
				e->long_max = dur;
			if (n_long < MAX_LONG_HOLDS)
				longs[n_long++] = &holds_r[j];
		}
	}
	for (i = 0; i < a->waits.n; i++) {
		const struct an_span *s = &w[i];
		const struct an_point *wk = a->wakeups.v;
		uint64_t len = s->end - s->start, expl = 0, off;
		struct wait_desc_ev *wd = NULL;
		size_t lo, hi, k;
		bool woken = false, io;

		if (s->resource != r)
			continue;
		if (s->descriptor < a->m->n_events) {
			if (!e->wd_spans) {	/* records replace the snapshot's joins */
				memset(e->wd, 0, a->m->n_events * sizeof(*e->wd));
				e->wd_known = e->wd_spans = true;
			}
			wd = &e->wd[s->descriptor];
		}
		e->n_wait_spans++;
		off = offcpu_overlap(&a->offcpu, s->tid, s->start, s->end);
		e->off_cpu_wait_ns += off;
		k = count_points(&a->ios, s->tid, s->start, s->end, NULL);
		e->io_in_waits += k;
		e->waits_with_io += k > 0;
		io = k > 0;
		if (wd) {
			wd->spans++;
			wd->ns += len;
			wd->hist[an_hist_bucket(len)]++;
			wd->off_cpu_ns += off;
			if (io) {
				wd->io_spans++;
				wd->io_ns += len;
			}
		}
		for (k = point_lb(&a->wakeups, s->tid, s->start, true);
		     k < a->wakeups.n && wk[k].a == s->tid && wk[k].ts <= s->end; k++) {
			e->wakeups_in_waits++;
			if (wd)
				wd->wakeups++;
			/* a span that issued block I/O is woken by its completion,
			 * which runs on whatever thread is current: not a release */
			if (io) {
				if (wd)
					wd->io_wakeups++;
				continue;
			}
			if (released_before(a, wk[k].tid, (uint16_t)r, wk[k].ts)) {
				e->wakeups_from_release++;
				if (wd)
					wd->release_wakeups++;
				woken = true;
			}
		}
		e->waits_release_woken += woken;
		if (wd && woken)
			wd->woken++;
		/* holders: short holds that started shortly before the span ends */
		lo = 0;
		hi = n_holds_r;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (holds_r[mid].start < s->end)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k > 0 && lo - k < HOLDER_SCAN; k--) {
			const struct an_span *h = &holds_r[k - 1];
			uint64_t a0, b0;

			if (h->tid == s->tid || h->end - h->start >= a->o.long_hold_ns)
				continue;
			a0 = h->start > s->start ? h->start : s->start;
			b0 = h->end < s->end ? h->end : s->end;
			if (b0 > a0)
				tally(e->holders, &e->n_holders, h->tid, b0 - a0);
		}
		for (k = 0; k < n_long; k++) {
			const struct an_span *h = longs[k];
			uint64_t a0, b0;

			if (h->tid == s->tid)
				continue;
			a0 = h->start > s->start ? h->start : s->start;
			b0 = h->end < s->end ? h->end : s->end;
			if (b0 > a0) {
				tally(e->holders, &e->n_holders, h->tid, b0 - a0);
				expl += b0 - a0;
			}
		}
		if (!io)	/* an I/O span waited for its I/O, not for the holder */
			e->explained_ns += expl < len ? expl : len;
	}
	qsort(e->holders, e->n_holders, sizeof(e->holders[0]), cmp_tid_ns);
}

static void join_lives(const struct analysis *a, size_t r, struct res_ev *e, uint64_t t_end,
		       uint64_t t_start)
{
	const struct an_life *l = a->lives.v;
	unsigned slices = 0;
	size_t i;

	for (i = 0; i < a->lives.n; i++) {
		if (l[i].resource != r)
			continue;
		e->lives++;
		e->churn_cycles += l[i].churn_cycles;
		e->cycles += l[i].closes;
		if (!l[i].open)
			e->lives_closed++;
		if (l[i].open && t_end - l[i].t_open >= a->o.leak_age_ns) {
			e->stuck_lives++;
			e->stuck_pins += l[i].pins;
			if (t_end > t_start && l[i].t_open >= t_start) {
				unsigned s = (unsigned)((double)(l[i].t_open - t_start) * 8 /
							(double)(t_end - t_start + 1));
				slices |= 1u << (s > 7 ? 7 : s);
			}
		}
	}
	e->stuck_slices = (unsigned)__builtin_popcount(slices);
	/* address reuse: instances with more than one lifetime (each counted apart) */
	{
		uint64_t *inst = malloc((e->lives ? e->lives : 1) * sizeof(*inst));
		size_t n = 0;

		if (!inst)
			return;
		for (i = 0; i < a->lives.n; i++)
			if (l[i].resource == r)
				inst[n++] = l[i].instance;
		qsort(inst, n, sizeof(*inst), cmp_u64p);
		for (i = 1; i < n; i++)
			if (inst[i] == inst[i - 1])
				e->reused_instances++;
		free(inst);
	}
}

/* ---- findings -------------------------------------------------------------- */

static struct finding *new_finding(struct analysis *a, enum finding_kind k, size_t r)
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

/* attach the descriptors of r of the kinds in mask; label and confidence */
static void rest_on(struct analysis *a, struct finding *f, size_t r, unsigned mask,
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
	if (stale)
		f->kind = FINDING_MODEL_STALE;
	else if (suspect)
		f->kind = FINDING_MODEL_SUSPECT;
}

/* lost evidence lowers certainty: ring-buffer drops (instance-level evidence
 * only) and identity lost to a full state map */
static void lost_evidence(struct analysis *a, struct finding *f, size_t r, uint64_t acquires,
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
		ev_add(f, "ringbuf_drops", (double)drops, "records",
		       "lost evidence: %llu ring-buffer records dropped (%.1f %% of records); instance-level evidence is incomplete",
		       (unsigned long long)drops, 100.0 * share);
	}
	if (sf) {
		share = (double)sf / (double)(sf + acquires);
		f->certainty *= share > 0.5 ? 0.5 : 1.0 - share;
		ev_add(f, "state_full", (double)sf, "events",
		       "lost evidence: identity of %llu events not tracked (instance map full)",
		       (unsigned long long)sf);
	}
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

static void finding_contention(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			       double w_eff, double share, bool share_known, double explained)
{
	const char *name = a->m->resources[r].name;
	double rem = w_eff - explained;
	char t1[32], t2[32], t3[32];
	struct finding *f;
	size_t i;

	uint64_t c_waits = 0, c_ns = 0, io_ns = 0, hist[PB_HIST_BUCKETS] = { 0 };
	bool *only = NULL;
	size_t d;

	if (rem < 0)
		rem = 0;
	if (100.0 * clamp01(rem / dur_ns) < MIN_SEVERITY)
		return;
	f = new_finding(a, FINDING_CONTENTION, r);
	if (!f)
		return;
	f->severity = 100.0 * clamp01(rem / dur_ns);
	f->certainty = 1.0;
	/* the contended WAIT descriptors: those whose time is not mostly
	 * spans that did block I/O (all of them without I/O joins) */
	if (e->wd_known)
		only = calloc(a->m->n_events, sizeof(*only));
	for (d = 0; only && d < a->m->n_events; d++) {
		const struct wait_desc_ev *w = &e->wd[d];

		if (a->m->events[d].resource_idx != (int)r || a->m->events[d].kind != PB_EV_WAIT)
			continue;
		io_ns += w->io_ns;
		only[d] = w->ns && 2 * (w->ns - w->io_ns) >= w->ns;
		if (!only[d])
			continue;
		c_waits += w->spans;
		c_ns += w->ns;
		for (i = 0; i < PB_HIST_BUCKETS; i++)
			hist[i] += w->hist[i];
	}
	if (!c_waits) {	/* no descriptor stands out: the whole resource */
		free(only);
		only = NULL;
		c_waits = e->waits;
		c_ns = e->wait_ns;
		memcpy(hist, e->wait_hist, sizeof(hist));
	}
	an_fmt_ns(t1, sizeof(t1), (double)c_ns);
	an_fmt_ns(t2, sizeof(t2), hist_quantile(hist, 0.5));
	an_fmt_ns(t3, sizeof(t3), hist_quantile(hist, 0.99));
	f->summary = xasprintf("contention on %s: %s waiting in %llu WAITs (p50 %s, p99 %s)",
			       name, t1, (unsigned long long)c_waits, t2, t3);
	ev_add(f, "wait_ns", (double)c_ns, "ns", "wait time: %s in %llu WAITs%s", t1,
	       (unsigned long long)c_waits, only ? " of the contended descriptors" : "");
	ev_add(f, "wait_p50_ns", hist_quantile(hist, 0.5), "ns",
	       "wait p50 %s, p99 %s (log2 histogram bucket midpoints)", t2, t3);
	ev_add(f, "wait_p99_ns", hist_quantile(hist, 0.99), "ns", "wait p99 %s", t3);
	for (d = 0; e->wd_known && d < a->m->n_events; d++) {
		const struct pb_event *ev = &a->m->events[d];
		const struct wait_desc_ev *w = &e->wd[d];
		uint64_t nonio = w->spans - w->io_spans;

		if (ev->resource_idx != (int)r || ev->kind != PB_EV_WAIT || !w->spans)
			continue;
		an_fmt_ns(t1, sizeof(t1), (double)w->ns);
		if (only && !only[d])
			ev_add(f, "io_bound_descriptor", (double)w->io_ns, "ns",
			       "WAIT %s: %s in %llu WAITs, %.0f %% of them issued block I/O: an I/O slow path, not counted as contention",
			       ev->id, t1, (unsigned long long)w->spans,
			       100.0 * (double)w->io_spans / (double)w->spans);
		else
			ev_add(f, "contended_descriptor", (double)(w->ns - w->io_ns), "ns",
			       "WAIT %s: %s in %llu WAITs, %.0f %% of those without block I/O ended by a wakeup from a thread releasing %s",
			       ev->id, t1, (unsigned long long)w->spans,
			       nonio ? 100.0 * (double)w->woken / (double)nonio : 0.0, name);
	}
	if (io_ns) {
		an_fmt_ns(t1, sizeof(t1), (double)io_ns);
		ev_add(f, "io_wait_ns", (double)io_ns, "ns",
		       "%s of WAIT time was spans that issued block I/O (not counted as contention)", t1);
	}
	ev_add(f, "avg_waiting_threads", (double)c_ns / dur_ns, "threads",
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
		ev_add(f, "waiters", (double)tids, "threads", "%llu distinct threads waited",
		       (unsigned long long)tids);
	}
	{
		uint64_t off = e->n_wait_spans && a->offcpu.n ? e->off_cpu_wait_ns :
			       a->have_snap_res ? a->snap_res[r].off_cpu_wait_ns : 0;

		if (off) {
			an_fmt_ns(t1, sizeof(t1), (double)off);
			ev_add(f, "off_cpu_wait_ns", (double)off, "ns",
			       "off-CPU while waiting: %s (%.0f %% of wait time)", t1,
			       e->wait_ns ? 100.0 * (double)off / (double)e->wait_ns : 0.0);
		}
	}
	if (share_known)
		ev_add(f, "release_wakeup_share", 100.0 * share, "%",
		       "%.0f %% of waits were ended by a wakeup from a thread releasing %s", 100.0 * share,
		       name);
	else
		ev_add(f, "release_wakeup_share", -1, "%",
		       "no wakeup evidence recorded: all wait time counted as contention");
	if (e->wakeups_in_waits)
		ev_add(f, "wakeups_from_release", (double)e->wakeups_from_release, "wakeups",
		       "%.0f %% of wakeups came from threads releasing %s (%llu of %llu)",
		       100.0 * (double)e->wakeups_from_release / (double)e->wakeups_in_waits, name,
		       (unsigned long long)e->wakeups_from_release,
		       (unsigned long long)e->wakeups_in_waits);
	if (e->waits_with_io)
		ev_add(f, "waits_with_io", (double)e->waits_with_io, "waits",
		       "%llu WAITs issued block I/O (slow path: I/O, not a holder; not counted)",
		       (unsigned long long)e->waits_with_io);
	for (i = 0; i < e->n_holders && i < 3; i++) {
		an_fmt_ns(t1, sizeof(t1), (double)e->holders[i].ns);
		ev_add(f, "holder_tid", e->holders[i].tid, "tid",
		       "holder during waits: tid %u held an instance for %s of others' wait time",
		       e->holders[i].tid, t1);
	}
	if (explained > 0) {
		an_fmt_ns(t1, sizeof(t1), explained);
		ev_add(f, "explained_by_long_holds_ns", explained, "ns",
		       "%s of this wait is explained by long holds (see the long_hold finding)", t1);
	}
	rest_on(a, f, r, 1u << PB_EV_WAIT, only);
	free(only);
	lost_evidence(a, f, r, e->acquires, e->n_wait_spans && !a->desc_snapshots);
}

static void finding_long_hold(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			      double explained, bool from_events)
{
	const char *name = a->m->resources[r].name;
	uint64_t n = from_events ? e->long_n : e->long_n_agg;
	double lns = from_events ? (double)e->long_ns : e->long_ns_agg;
	char t1[32], t2[32], t3[32];
	struct finding *f;
	size_t i;

	if (!n)
		return;
	f = new_finding(a, FINDING_LONG_HOLD, r);
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
	f->summary = xasprintf("long holds of %s: %llu holds >= %s (%s in all) while others waited %s",
			       name, (unsigned long long)n, t1, t3, t2);
	ev_add(f, "long_holds", (double)n, "holds", "%llu holds >= %s%s", (unsigned long long)n, t1,
	       from_events ? "" : " (from the hold-time histogram)");
	ev_add(f, "long_hold_ns", lns, "ns", "long-hold time: %s%s", t3,
	       from_events ? "" : " (estimated at bucket midpoints)");
	if (from_events && e->long_max) {
		an_fmt_ns(t3, sizeof(t3), (double)e->long_max);
		ev_add(f, "long_hold_max_ns", (double)e->long_max, "ns", "longest hold: %s", t3);
	}
	ev_add(f, "caused_wait_ns", explained, "ns",
	       from_events ? "others' WAIT time overlapping these holds: %s" :
			     "WAIT time these holds can explain: %s (min of wait and long-hold time)",
	       t2);
	for (i = 0; from_events && i < e->n_holders && i < 3; i++) {
		an_fmt_ns(t1, sizeof(t1), (double)e->holders[i].ns);
		ev_add(f, "holder_tid", e->holders[i].tid, "tid", "tid %u held it during %s of others' waits",
		       e->holders[i].tid, t1);
	}
	if (from_events && (e->io_holding || e->faults_holding))
		ev_add(f, "io_while_holding", (double)e->io_holding, "I/Os",
		       "while holding: %llu block I/Os (%llu bytes), %llu page faults",
		       (unsigned long long)e->io_holding, (unsigned long long)e->io_bytes_holding,
		       (unsigned long long)e->faults_holding);
	else if (a->have_snap_res && (a->snap_res[r].io_while_holding || a->snap_res[r].off_cpu_hold_ns)) {
		an_fmt_ns(t1, sizeof(t1), (double)a->snap_res[r].off_cpu_hold_ns);
		ev_add(f, "io_while_holding", (double)a->snap_res[r].io_while_holding, "I/Os",
		       "while holding: %llu block I/Os, %llu page faults, %s off-CPU",
		       (unsigned long long)a->snap_res[r].io_while_holding,
		       (unsigned long long)a->snap_res[r].faults_while_holding, t1);
	}
	rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_RELEASE) | (1u << PB_EV_WAIT), NULL);
	lost_evidence(a, f, r, e->acquires, from_events);
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

static void finding_leak(struct analysis *a, size_t r, struct res_ev *e, double dur_ns,
			 uint64_t t_start)
{
	const struct pb_resource *res = &a->m->resources[r];
	const struct an_vec *sv = &a->series[r];
	const struct an_point_res *pts = sv->v;
	double growth = 0, quality = 0, slope = 0, r2 = 0, ref;
	bool from_series = sv->n > 0;
	struct finding *f;

	/* credit is consumable by design (a request takes tokens and refunds
	 * only the unused ones): ACQUIRE without RELEASE is consumption, not
	 * a leak, so credit resources get no leak diagnosis */
	if (!e->has_acquire_desc || !e->has_release_desc || res->class == PB_CLASS_CREDIT)
		return;
	if (from_series) {
		if (sv->n >= 3) {
			regress(pts, sv->n, &slope, &r2);
			growth = (double)pts[sv->n - 1].imbalance - (double)pts[0].imbalance;
			quality = r2;
		} else {
			/* too few points for a trend: grow from zero at the start */
			int64_t first = sv->n == 2 ? pts[0].imbalance : 0;
			uint64_t t0 = sv->n == 2 ? pts[0].ts : t_start;

			growth = (double)pts[sv->n - 1].imbalance - (double)first;
			slope = pts[sv->n - 1].ts > t0 ? growth / (double)(pts[sv->n - 1].ts - t0) : 0;
			quality = 0.7;
		}
		if (growth < LEAK_MIN_GROWTH || slope <= 0 || quality < 0.5)
			return;
	} else {
		if (e->stuck_pins < LEAK_MIN_GROWTH)
			return;
		growth = (double)e->stuck_pins;
		quality = 0.6 + 0.4 * e->stuck_slices / 8.0;
		slope = growth / dur_ns;
	}
	ref = res->has_capacity && res->capacity >= 8 ? (double)res->capacity : 64;
	f = new_finding(a, FINDING_LEAK, r);
	if (!f)
		return;
	f->severity = 100.0 * clamp01(growth / ref) * quality;
	f->certainty = 1.0;
	f->summary = xasprintf("leak / unbounded growth of %s: ACQUIRE - RELEASE grew by %.0f (%+.1f/s)",
			       res->name, growth, slope * 1e9);
	ev_add(f, "imbalance_growth", growth, "acquisitions",
	       "ACQUIRE - RELEASE grew by %.0f %s (%s)", growth, res->units ? res->units : "units",
	       from_series ? "snapshots" : "open lifetimes at the end of the trace");
	ev_add(f, "acquires", (double)e->acquires, "events", "%llu ACQUIREs, %llu RELEASEs",
	       (unsigned long long)e->acquires, (unsigned long long)e->releases);
	ev_add(f, "slope_per_s", slope * 1e9, "acquisitions/s", "growth rate %+.1f/s", slope * 1e9);
	if (from_series && sv->n >= 3)
		ev_add(f, "trend_r2", r2, "", "linear trend over %zu snapshots, R^2 = %.2f", sv->n, r2);
	if (from_series && a->have_snap_res)
		ev_add(f, "live_instances", (double)pts[sv->n - 1].live, "instances",
		       "live instances %lld -> %lld, outstanding units %lld -> %lld (first -> last snapshot)",
		       (long long)pts[0].live, (long long)pts[sv->n - 1].live,
		       (long long)pts[0].units, (long long)pts[sv->n - 1].units);
	if (res->has_capacity)
		ev_add(f, "capacity", (double)res->capacity, res->units ? res->units : "units",
		       "declared capacity %llu %s", (unsigned long long)res->capacity,
		       res->units ? res->units : "units");
	if (e->lives) {
		ev_add(f, "stuck_lifetimes", (double)e->stuck_lives, "generations",
		       "%llu generations never released (%llu holds still open), of %llu seen",
		       (unsigned long long)e->stuck_lives, (unsigned long long)e->stuck_pins,
		       (unsigned long long)e->lives);
		if (e->reused_instances)
			ev_add(f, "reused_addresses", (double)e->reused_instances, "generations",
			       "%llu generations reused an address of an earlier, released generation (counted apart)",
			       (unsigned long long)e->reused_instances);
		{
			const struct an_life *l = a->lives.v;
			size_t i, shown = 0;

			for (i = 0; i < a->lives.n && shown < 3; i++) {
				if (l[i].resource != r || !l[i].open ||
				    a->c.last_ts - l[i].t_open < a->o.leak_age_ns)
					continue;
				ev_add(f, "stuck_instance", (double)l[i].instance, "instance",
				       "never released: instance 0x%llx generation %llu, %u holds, first acquired by tid %u",
				       (unsigned long long)l[i].instance, (unsigned long long)l[i].generation,
				       l[i].pins, l[i].tid);
				shown++;
			}
		}
	}
	rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_RELEASE), NULL);
	lost_evidence(a, f, r, e->acquires, !from_series);
}

static void finding_churn(struct analysis *a, size_t r, struct res_ev *e, double dur_ns)
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
	rate = wasted / (dur_ns / 1e9);
	f = new_finding(a, FINDING_CHURN, r);
	if (!f)
		return;
	f->severity = 100.0 * share * clamp01(rate / CHURN_FULL_RATE);
	f->certainty = 1.0;
	f->summary = xasprintf("churn on %s: %.0f of %.0f acquire/release cycles (%.0f %%) without USE",
			       name, wasted, total, 100.0 * share);
	ev_add(f, "cycles_without_use", wasted, "cycles", "%.0f cycles without USE (%s), %.0f/s", wasted,
	       from_events ? "per generation, from events" : "ACQUIRE count - USE count", rate);
	ev_add(f, "acquires", (double)e->acquires, "events", "%llu ACQUIREs, %llu USEs, %llu RELEASEs",
	       (unsigned long long)e->acquires, (unsigned long long)e->uses,
	       (unsigned long long)e->releases);
	ev_add(f, "waste_share", 100.0 * share, "%", "%.0f %% of cycles did no useful work", 100.0 * share);
	rest_on(a, f, r, (1u << PB_EV_ACQUIRE) | (1u << PB_EV_USE) | (1u << PB_EV_RELEASE), NULL);
	lost_evidence(a, f, r, e->acquires, from_events);
}

static void model_summary(struct analysis *a, struct finding *f)
{
	char *s;

	if (f->kind != FINDING_MODEL_STALE && f->kind != FINDING_MODEL_SUSPECT)
		return;
	s = xasprintf("model %s: %s would read as %s, but it rests on a %s descriptor; "
		      "the manifest no longer explains the evidence (was: %s)",
		      f->kind == FINDING_MODEL_STALE ? "stale" : "suspect", f->resource_name,
		      finding_kind_str(f->diagnosis), f->kind == FINDING_MODEL_STALE ? "stale" : "suspect",
		      f->summary ? f->summary : "?");
	if (s) {
		free(f->summary);
		f->summary = s;
	}
}

static int cmp_finding(const void *x, const void *y)
{
	const struct finding *a = x, *b = y;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return cmp_u64(a->diagnosis, b->diagnosis) ?: cmp_u64((uint64_t)a->resource,
							       (uint64_t)b->resource);
}

int analysis__finish(struct analysis *a)
{
	uint64_t t_start, t_end;
	double dur_ns;
	bool any_wake_agg = false, have_events, desc_joins = false;
	struct wait_desc_ev *wd;
	size_t r, i, hi;

	if (!a)
		return -EINVAL;
	if (a->finished)
		return (int)a->n_findings;
	a->finished = true;
	a->c.state_full = a->res_state_full_rec;
	t_start = a->c.first_ts;
	t_end = a->c.last_ts;
	if (a->win_start && (!t_start || a->win_start < t_start))
		t_start = a->win_start;
	if (a->win_end > t_end)
		t_end = a->win_end;
	dur_ns = t_end > t_start ? (double)(t_end - t_start) : 1e9;
	have_events = events_mode(a);

	if (a->waits.n)
		qsort(a->waits.v, a->waits.n, sizeof(struct an_span), cmp_span_tid);
	if (a->holds.n)
		qsort(a->holds.v, a->holds.n, sizeof(struct an_span), cmp_span_res);
	if (a->releases.n)
		qsort(a->releases.v, a->releases.n, sizeof(struct an_point), cmp_point_tid);
	if (a->ios.n)
		qsort(a->ios.v, a->ios.n, sizeof(struct an_point), cmp_point_tid);
	if (a->faults.n)
		qsort(a->faults.v, a->faults.n, sizeof(struct an_point), cmp_point_tid);
	if (a->wakeups.n)
		qsort(a->wakeups.v, a->wakeups.n, sizeof(struct an_point), cmp_point_a);
	if (a->offcpu.n)
		qsort(a->offcpu.v, a->offcpu.n, sizeof(struct an_offcpu), cmp_offcpu);
	for (r = 0; a->have_snap_res && r < a->m->n_resources; r++) {
		any_wake_agg |= a->snap_res[r].wakeups_from_release > 0;
		a->c.state_full += a->snap_res[r].state_full;
	}

	/* version 2 snapshots join WAIT descriptors to I/O and wakeups */
	for (i = 0; a->desc_snapshots && i < a->m->n_events; i++) {
		const struct pb_desc_stats *s = &a->snap_desc[i];

		desc_joins |= s->wakeups || s->io_spans || s->off_cpu_ns;
	}
	wd = calloc(a->m->n_events ? a->m->n_events : 1, sizeof(*wd));
	if (!wd)
		return -ENOMEM;
	for (r = 0, i = 0; r < a->m->n_resources; r++) {
		struct res_ev *e = calloc(1, sizeof(*e));
		const struct an_span *holds_r;
		double share = 0, w_eff, explained = 0;
		bool share_known = false, hold_events;

		if (!e) {
			free(wd);
			return -ENOMEM;
		}
		memset(wd, 0, (a->m->n_events ? a->m->n_events : 1) * sizeof(*wd));
		e->wd = wd;
		e->wd_known = desc_joins;
		gather_aggregates(a, r, e);
		/* holds of r: a contiguous run of the resource-sorted holds */
		while (i < a->holds.n && AN_AT(&a->holds, struct an_span, i)->resource < r)
			i++;
		for (hi = i; hi < a->holds.n && AN_AT(&a->holds, struct an_span, hi)->resource == r;)
			hi++;
		holds_r = a->holds.n ? AN_AT(&a->holds, struct an_span, i) : NULL;
		if (have_events) {
			join_waits(a, r, e, holds_r, hi - i);
			join_lives(a, r, e, t_end, t_start);
		}
		hold_events = e->n_hold_spans > 0;

		/* contention: wait time, discounted when the wakeups show that
		 * waits were not ended by releases of this resource */
		if (e->n_wait_spans && !a->wakeups.n && !a->ios.n)
			e->wd_known = false;	/* records without OS effects */
		if (e->wd_known) {
			/* per WAIT descriptor: spans that did block I/O are a
			 * slow path and not counted; the others weigh by the
			 * share of them a releaser woke */
			uint64_t nonio_all = 0, woken_all = 0;
			size_t d;

			w_eff = 0;
			for (d = 0; d < a->m->n_events; d++) {
				const struct wait_desc_ev *w = &wd[d];
				uint64_t nonio = w->spans - w->io_spans;
				double sh = nonio ? clamp01((double)w->woken / (double)nonio) : 0;

				if (a->m->events[d].resource_idx != (int)r ||
				    a->m->events[d].kind != PB_EV_WAIT)
					continue;
				w_eff += (double)(w->ns - w->io_ns) * (0.25 + 0.75 * sh);
				nonio_all += nonio;
				woken_all += w->woken;
			}
			share = nonio_all ? clamp01((double)woken_all / (double)nonio_all) : 0;
			share_known = true;
		} else {
			if (e->n_wait_spans && a->wakeups.n) {
				share = (double)e->waits_release_woken / (double)e->n_wait_spans;
				share_known = true;
			} else if (any_wake_agg && e->waits) {
				share = clamp01((double)a->snap_res[r].wakeups_from_release /
						(double)e->waits);
				share_known = true;
			}
			w_eff = (double)e->wait_ns * (share_known ? 0.25 + 0.75 * share : 1.0);
		}
		/* credit is consumed, not held: no long holds (as no leak) */
		if (a->m->resources[r].class != PB_CLASS_CREDIT &&
		    (hold_events ? e->long_n : e->long_n_agg)) {
			explained = hold_events ? (double)e->explained_ns *
					(share_known ? 0.25 + 0.75 * share : 1.0) :
					(e->long_ns_agg < w_eff ? e->long_ns_agg : w_eff);
			if (explained > w_eff)
				explained = w_eff;
			finding_long_hold(a, r, e, dur_ns, explained, hold_events);
		}
		if (e->waits)
			finding_contention(a, r, e, dur_ns, w_eff, share, share_known, explained);
		finding_leak(a, r, e, dur_ns, t_start);
		finding_churn(a, r, e, dur_ns);
		free(e);
		i = hi;
	}
	free(wd);
	for (i = 0; i < a->n_findings; i++) {
		struct finding *f = &a->findings[i];

		if (f->certainty < 0.05)
			f->certainty = 0.05;
		f->score = f->severity * f->certainty;
		model_summary(a, f);
	}
	if (a->n_findings)
		qsort(a->findings, a->n_findings, sizeof(*a->findings), cmp_finding);
	return (int)a->n_findings;
}
