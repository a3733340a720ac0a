/* SPDX-License-Identifier: BSD-2-Clause */
/* pictures.c: log2 histograms and sparklines of an analysis (pictures.h).
 * The histograms are the engine's own per-descriptor buckets (the last
 * snapshot, or counted from --events records when the trace has no
 * snapshot); the series are the snapshots' per-resource gauges. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "analyze/pictures.h"

_Static_assert(sizeof(struct picture_point) == sizeof(struct an_point_res) &&
	       offsetof(struct picture_point, imbalance) == offsetof(struct an_point_res, imbalance) &&
	       offsetof(struct picture_point, live) == offsetof(struct an_point_res, live) &&
	       offsetof(struct picture_point, units) == offsetof(struct an_point_res, units),
	       "picture_point mirrors an_point_res");

size_t pictures__hists(const struct analysis *a, struct picture_hist *out, size_t max)
{
	size_t d, n = 0;
	int i;

	for (d = 0; a && d < a->m->n_events && n < max; d++) {
		const struct pb_event *ev = &a->m->events[d];
		const struct pb_desc_stats *s = a->desc_snapshots ? &a->snap_desc[d] : &a->ev_desc[d];
		struct picture_hist h = { 0 };

		if (ev->kind != PB_EV_WAIT && ev->kind != PB_EV_RELEASE)
			continue;
		for (i = 0; i < PB_HIST_BUCKETS; i++)
			h.count += s->hist[i];
		if (!h.count)
			continue;
		h.descriptor = (uint32_t)d;
		h.id = ev->id;
		h.resource = ev->resource_idx >= 0 && (size_t)ev->resource_idx < a->m->n_resources ?
			     a->m->resources[ev->resource_idx].name : "?";
		h.what = ev->kind == PB_EV_WAIT ? "wait" : "hold";
		h.total_ns = s->total_ns;
		h.buckets = (const uint64_t *)s->hist;	/* __u64 and uint64_t: same width */
		out[n++] = h;
	}
	return n;
}

const struct picture_point *pictures__series(const struct analysis *a, size_t resource, size_t *n)
{
	*n = 0;
	if (!a || resource >= a->m->n_resources || !a->series[resource].n)
		return NULL;
	*n = a->series[resource].n;
	return a->series[resource].v;
}

/* 3 significant digits: "512ns", "4.1us", "65.5us", "1.05ms", "2.15s" */
void pictures__fmt_dur(char *buf, size_t sz, double ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	int u = 0;

	while (ns >= 1000 && u < 3) {
		ns /= 1000;
		u++;
	}
	snprintf(buf, sz, ns >= 100 || u == 0 ? "%.0f%s" : ns >= 10 ? "%.1f%s" : "%.2f%s", ns, unit[u]);
}

void pictures__print_hist(const struct picture_hist *h, FILE *out, unsigned width)
{
	uint64_t max = 0;
	int i, lo = -1, hi = -1;
	char l[24], r[24], range[56];
	unsigned j, bar;

	for (i = 0; i < PB_HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (h->buckets[i] > max)
			max = h->buckets[i];
	}
	for (i = lo; lo >= 0 && i <= hi; i++) {
		pictures__fmt_dur(l, sizeof(l), i ? (double)(1ull << i) : 0);
		pictures__fmt_dur(r, sizeof(r), (double)(1ull << (i + 1)));
		snprintf(range, sizeof(range), "[%s, %s)", l, r);
		bar = (unsigned)((h->buckets[i] * width + max - 1) / max);
		fprintf(out, "  %-18s %8llu |", range, (unsigned long long)h->buckets[i]);
		for (j = 0; j < width; j++)
			fputc(j < bar ? '@' : ' ', out);
		fputs("|\n", out);
	}
}

void pictures__sparkline(const int64_t *v, size_t n, size_t stride, unsigned width,
			 char *buf, size_t sz)
{
	static const char *const blocks[] = { "\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588" };
	size_t cells = n < width ? n : width, c, i, len = 0;
	double span, f;
	int64_t lo, hi;

	if (!sz)
		return;
	buf[0] = 0;
	if (!n || !width)
		return;
	lo = hi = v[0];
	for (i = 1; i < n; i++) {
		int64_t x = *(const int64_t *)((const char *)v + i * stride);

		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	for (c = 0; c < cells; c++) {
		size_t from = c * n / cells, to = (c + 1) * n / cells;
		int64_t m = *(const int64_t *)((const char *)v + from * stride);
		unsigned k;

		for (i = from + 1; i < to; i++) {
			int64_t x = *(const int64_t *)((const char *)v + i * stride);

			m = x > m ? x : m;
		}
		/* in double: hostile values may span more than int64, and two
		 * that differ may round to the same double (a span of 0) */
		span = (double)hi - (double)lo;
		f = span > 0 ? ((double)m - (double)lo) * 7.0 / span + 0.5 : 0;
		k = f > 0 ? (f < 7 ? (unsigned)f : 7) : 0;
		if (len + 4 >= sz)
			break;
		len += (size_t)snprintf(buf + len, sz - len, "%s", blocks[k > 7 ? 7 : k]);
	}
}

static void print_series(const struct analysis *a, size_t r, FILE *out)
{
	static const struct { const char *name; size_t off; } cols[] = {
		{ "ACQUIRE - RELEASE", offsetof(struct picture_point, imbalance) },
		{ "live instances", offsetof(struct picture_point, live) },
		{ "outstanding units", offsetof(struct picture_point, units) },
	};
	const struct picture_point *p;
	char line[64 * 4 + 1];
	size_t n, k, i;

	p = pictures__series(a, r, &n);
	if (!p)
		return;
	for (k = 0; k < 3; k++) {
		const int64_t *v = (const int64_t *)((const char *)p + cols[k].off);
		int64_t lo = v[0], hi = v[0];

		for (i = 0; i < n; i++) {
			int64_t x = *(const int64_t *)((const char *)v + i * sizeof(*p));

			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		if (!lo && !hi)
			continue;	/* an all-zero series says nothing */
		pictures__sparkline(v, n, sizeof(*p), 64, line, sizeof(line));
		fprintf(out, "  %-16s %-17s %s  %lld -> %lld (min %lld, max %lld)\n",
			a->m->resources[r].name, cols[k].name, line,
			(long long)v[0], (long long)*(const int64_t *)((const char *)v + (n - 1) * sizeof(*p)),
			(long long)lo, (long long)hi);
	}
}

void pictures__print(const struct analysis *a, FILE *out)
{
	struct picture_hist *h = calloc(a->m->n_events + 1, sizeof(*h));
	size_t n, i, series = 0;
	char tot[24];

	n = h ? pictures__hists(a, h, a->m->n_events) : 0;
	for (i = 0; i < n; i++) {
		pictures__fmt_dur(tot, sizeof(tot), h[i].count ? (double)h[i].total_ns / (double)h[i].count : 0);
		fprintf(out, "\n%s %s (%s): %llu %s, mean %s\n", h[i].what, h[i].id, h[i].resource,
			(unsigned long long)h[i].count, h[i].what[0] == 'w' ? "spans" : "holds", tot);
		pictures__print_hist(&h[i], out, 40);
	}
	free(h);
	for (i = 0; i < a->m->n_resources; i++)
		series += a->series[i].n > 1;
	if (!series)
		return;
	fprintf(out, "\nover %llu snapshots (the leak verdict rests on ACQUIRE - RELEASE):\n",
		(unsigned long long)a->c.snapshots);
	for (i = 0; i < a->m->n_resources; i++)
		if (a->series[i].n > 1)
			print_series(a, i, out);
}

static json_t *hist_json(const struct picture_hist *h)
{
	json_t *b = json_array();
	int i;

	for (i = 0; b && i < PB_HIST_BUCKETS; i++)
		if (h->buckets[i])
			json_array_append_new(b, json_pack("{s:I, s:I, s:I}",
				"lo_ns", (json_int_t)(i ? 1ull << i : 0),
				"hi_ns", (json_int_t)(1ull << (i + 1)), "count", (json_int_t)h->buckets[i]));
	return json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:o}", "descriptor", (int)h->descriptor,
			 "id", h->id, "resource", h->resource, "what", h->what,
			 "count", (json_int_t)h->count, "total_ns", (json_int_t)h->total_ns,
			 "buckets", b ? b : json_null());
}

static json_t *series_json(const struct analysis *a, size_t r)
{
	json_t *ts = json_array(), *im = json_array(), *li = json_array(), *un = json_array();
	const struct picture_point *p;
	size_t n, i;

	p = pictures__series(a, r, &n);
	for (i = 0; p && i < n; i++) {
		json_array_append_new(ts, json_integer((json_int_t)p[i].ts));
		json_array_append_new(im, json_integer(p[i].imbalance));
		json_array_append_new(li, json_integer(p[i].live));
		json_array_append_new(un, json_integer(p[i].units));
	}
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "resource", a->m->resources[r].name,
			 "ts_ns", ts, "imbalance", im, "live_instances", li,
			 "outstanding_units", un);
}

json_t *pictures__json(const struct analysis *a)
{
	json_t *hs = json_array(), *ss = json_array();
	struct picture_hist *h = calloc(a->m->n_events + 1, sizeof(*h));
	size_t n, i;

	n = h ? pictures__hists(a, h, a->m->n_events) : 0;
	for (i = 0; hs && i < n; i++)
		json_array_append_new(hs, hist_json(&h[i]));
	free(h);
	for (i = 0; ss && i < a->m->n_resources; i++)
		if (a->series[i].n)
			json_array_append_new(ss, series_json(a, i));
	return json_pack("{s:o, s:o}", "histograms", hs ? hs : json_null(),
			 "series", ss ? ss : json_null());
}
