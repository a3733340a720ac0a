/* SPDX-License-Identifier: BSD-2-Clause */
/* html.c: the self-contained HTML report (html.h). Everything is drawn here
 * as inline SVG from the analysis (findings, pictures.h's histograms and
 * series) and the loaded trace (confidence changes, predictions); the page
 * loads nothing, runs no script, and reads the same in any browser or
 * from a mail attachment. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "analyze/html.h"
#include "analyze/pictures.h"
#include "analyze/flamegraph.h"
#include "analyze/predictions.h"
#include "analyze/trace_load.h"

#define SVG_W	720	/* chart width, px */

void html__escape(FILE *out, const char *s, size_t len)
{
	for (; s && len--; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void esc(FILE *out, const char *s)
{
	html__escape(out, s, s ? strlen(s) : 0);
}

static const char *conf_color(enum pb_confidence c)
{
	switch (c) {
	case PB_CONF_VALIDATED: return "#2e7d32";
	case PB_CONF_SUSPECT: return "#ef6c00";
	case PB_CONF_STALE: return "#c62828";
	case PB_CONF_DEGRADED: return "#8d6e63";
	default: return "#757575";	/* candidate */
	}
}

static void write_head(FILE *out, const char *path)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>probity report: ",
	      out);
	esc(out, path);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:960px;color:#222;background:#fff}\n"
	      "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:32px}\n"
	      ".finding{border-left:6px solid #1565c0;padding:4px 12px;margin:12px 0;background:#f5f8fc}\n"
	      ".finding h3{margin:4px 0;font-size:16px}.label{color:#b71c1c}\n"
	      ".badge{color:#fff;border-radius:3px;padding:0 5px;font-size:12px}\n"
	      "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}\n"
	      "svg{display:block;margin:6px 0 14px}code{background:#eee;padding:0 3px}\n"
	      ".muted{color:#666}\n"
	      "</style></head><body>\n", out);
}

static double window_s(const struct loaded_trace *lt, uint64_t *t0, uint64_t *t1)
{
	const struct analysis_counts *c = analysis__counts(lt->analysis);

	*t0 = lt->header.start_mono_ns ? lt->header.start_mono_ns : c->first_ts;
	*t1 = lt->ended && lt->end.end_mono_ns ? lt->end.end_mono_ns : c->last_ts;
	if (*t1 < *t0)
		*t1 = *t0;
	return (double)(*t1 - *t0) / 1e9;
}

static void write_facts(const struct loaded_trace *lt, const char *path, FILE *out)
{
	const struct analysis_counts *c = analysis__counts(lt->analysis);
	time_t t = (time_t)(lt->header.start_real_ns / 1000000000ull);
	char when[64] = "?";
	uint64_t t0, t1;
	struct tm tm;
	size_t i;

	if (lt->header.start_real_ns && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fputs("<h1>probity report</h1>\n<p>trace <code>", out);
	esc(out, path);
	fputs("</code>, manifest <code>", out);
	esc(out, lt->manifest->name ? lt->manifest->name : "?");
	fprintf(out, "</code>, target pid %u, started %s, %.2f s, %s.</p>\n", lt->header.pid, when,
		window_s(lt, &t0, &t1),
		lt->header.flags & TRACE_F_EVENTS ? "per-event records (--events)" : "aggregates only");
	fprintf(out, "<p>evidence: %" PRIu64 " records, %" PRIu64 " snapshots; lost: %" PRIu64
		" ring-buffer drops, instance map full %" PRIu64 ", thread map full %" PRIu64
		"; skipped: %" PRIu64 " malformed, %" PRIu64 " of unknown type, %" PRIu64
		" not kept (memory cap).</p>\n", c->records, c->snapshots, c->ringbuf_drops,
		c->instance_map_full, c->thread_map_full, c->malformed, c->unknown_type, c->truncated);
	if (lt->cut_reason) {
		fputs("<p class=\"label\">INCOMPLETE trace: ", out);
		esc(out, lt->cut_reason);
		fputs("; read up to the last complete chunk.</p>\n", out);
	}
	for (i = 0; i < lt->n_notes; i++) {
		fputs("<p class=\"muted\">note: ", out);
		esc(out, lt->notes[i]);
		fputs("</p>\n", out);
	}
}

static void write_finding(const struct finding *f, size_t rank, FILE *out)
{
	size_t j;

	fprintf(out, "<div class=\"finding\" id=\"finding-%zu\"><h3>#%zu %s ", rank, rank,
		finding_kind_str(f->kind));
	esc(out, f->resource_name);
	fprintf(out, " &mdash; score %.1f <span class=\"muted\">(severity %.1f &times; certainty %.2f)"
		"</span></h3>\n<p>", f->score, f->severity, f->certainty);
	esc(out, f->summary);
	fputs("</p>\n", out);
	if (f->label) {
		fputs("<p class=\"label\">", out);
		esc(out, f->label);
		fputs("</p>\n", out);
	}
	fputs("<ul>\n", out);
	for (j = 0; j < f->n_evidence; j++) {
		fputs("<li>", out);
		esc(out, f->evidence[j].text);
		fputs("</li>\n", out);
	}
	fputs("</ul>\n<p>rests on:", out);
	for (j = 0; j < f->n_descs; j++) {
		fputs(" <code>", out);
		esc(out, f->descs[j].id);
		fprintf(out, "</code> %s <span class=\"badge\" style=\"background:%s\">%s</span>",
			pb_event_kind_str(f->descs[j].kind), conf_color(f->descs[j].confidence),
			pb_confidence_str(f->descs[j].confidence));
	}
	fputs("</p></div>\n", out);
}

static void write_findings(const struct analysis *a, FILE *out)
{
	const struct finding *f;
	size_t n, i;

	f = analysis__findings(a, &n);
	fprintf(out, "<h2>Findings (%zu)</h2>\n", n);
	if (!n)
		fputs("<p>no findings</p>\n", out);
	for (i = 0; i < n; i++)
		write_finding(&f[i], i + 1, out);
}

/* bars of one log2 histogram, first to last non-empty bucket */
static void write_hist_svg(const struct picture_hist *h, FILE *out)
{
	int i, lo = -1, hi = -1;
	uint64_t max = 0;
	double bw, x, bh;
	char lab[24];

	for (i = 0; i < PB_HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		lo = lo < 0 ? i : lo;
		hi = i;
		max = h->buckets[i] > max ? h->buckets[i] : max;
	}
	if (lo < 0)
		return;
	bw = (double)(SVG_W - 60) / (hi - lo + 1);
	fprintf(out, "<svg width=\"%d\" height=\"190\" viewBox=\"0 0 %d 190\" role=\"img\">\n", SVG_W,
		SVG_W);
	fprintf(out, "<text x=\"0\" y=\"12\" font-size=\"11\">%" PRIu64 "</text>\n", max);
	for (i = lo; i <= hi; i++) {
		x = 50 + (i - lo) * bw;
		bh = max ? 150.0 * (double)h->buckets[i] / (double)max : 0;
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
			"<title>[2^%d, 2^%d) ns: %" PRIu64 "</title></rect>\n", x, 160 - bh,
			bw > 3 ? bw - 2 : bw, bh, h->what[0] == 'w' ? "#1565c0" : "#6a1b9a", i, i + 1,
			h->buckets[i]);
		if ((i - lo) % 2 == 0 || bw > 40) {
			pictures__fmt_dur(lab, sizeof(lab), (double)(1ull << i));
			fprintf(out, "<text x=\"%.1f\" y=\"176\" font-size=\"10\">%s</text>\n", x, lab);
		}
	}
	fprintf(out, "<line x1=\"48\" y1=\"160\" x2=\"%d\" y2=\"160\" stroke=\"#333\"/>\n</svg>\n",
		SVG_W - 8);
}

static void write_hists(const struct analysis *a, size_t n_ev, FILE *out)
{
	size_t n, i;
	struct picture_hist *h = calloc(n_ev + 1, sizeof(*h));

	if (!h)
		return;
	n = pictures__hists(a, h, n_ev);
	fprintf(out, "<h2>Histograms (log2 buckets of ns)</h2>\n");
	if (!n)
		fputs("<p>no WAIT spans or holds were counted</p>\n", out);
	for (i = 0; i < n; i++) {
		fprintf(out, "<h3>%s <code>", h[i].what);
		esc(out, h[i].id);
		fputs("</code> (", out);
		esc(out, h[i].resource);
		fprintf(out, "): %" PRIu64 " %s, mean %.1f us</h3>\n", h[i].count,
			h[i].what[0] == 'w' ? "spans" : "holds",
			h[i].count ? (double)h[i].total_ns / (double)h[i].count / 1e3 : 0.0);
		write_hist_svg(&h[i], out);
	}
	free(h);
}

/* one resource's series: a polyline per gauge over the snapshots */
static void write_series_svg(const struct picture_point *p, size_t n, uint64_t t0, uint64_t t1,
			     FILE *out)
{
	static const struct { const char *name, *color; size_t off; } g[] = {
		{ "ACQUIRE - RELEASE", "#c62828", offsetof(struct picture_point, imbalance) },
		{ "live instances", "#1565c0", offsetof(struct picture_point, live) },
		{ "outstanding units", "#2e7d32", offsetof(struct picture_point, units) },
	};
	double span = t1 > t0 ? (double)(t1 - t0) : 1;
	int64_t lo = 0, hi = 1, v;
	size_t i, k;

	for (k = 0; k < 3; k++)
		for (i = 0; i < n; i++) {
			v = *(const int64_t *)((const char *)&p[i] + g[k].off);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	fprintf(out, "<svg width=\"%d\" height=\"200\" viewBox=\"0 0 %d 200\" role=\"img\">\n"
		"<text x=\"0\" y=\"14\" font-size=\"11\">%" PRId64 "</text><text x=\"0\" y=\"170\" "
		"font-size=\"11\">%" PRId64 "</text>\n<text x=\"50\" y=\"190\" font-size=\"11\">0 s"
		"</text><text x=\"%d\" y=\"190\" font-size=\"11\">%.2f s</text>\n", SVG_W, SVG_W, hi, lo,
		SVG_W - 60, span / 1e9);
	for (k = 0; k < 3; k++) {
		/* the first (ACQUIRE - RELEASE) wider, so it shows under equal ones */
		fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%d\" points=\"",
			g[k].color, k ? 2 : 6);
		for (i = 0; i < n; i++) {
			v = *(const int64_t *)((const char *)&p[i] + g[k].off);
			fprintf(out, "%.1f,%.1f ",
				50 + (SVG_W - 70) * (double)(p[i].ts > t0 ? p[i].ts - t0 : 0) / span,
				170 - 160.0 * ((double)v - (double)lo) / ((double)hi - (double)lo));
		}
		fprintf(out, "\"/>\n<text x=\"%zu\" y=\"12\" font-size=\"11\" fill=\"%s\">%s</text>\n",
			60 + k * 170, g[k].color, g[k].name);
	}
	fputs("</svg>\n", out);
}

static void write_series(const struct loaded_trace *lt, FILE *out)
{
	const struct manifest *m = lt->manifest;
	const struct picture_point *p;
	uint64_t t0, t1;
	size_t r, n, shown = 0;

	window_s(lt, &t0, &t1);
	fputs("<h2>Units over time</h2>\n<p class=\"muted\">per resource, at every snapshot: the leak "
	      "verdict rests on ACQUIRE - RELEASE growing.</p>\n", out);
	for (r = 0; r < m->n_resources; r++) {
		p = pictures__series(lt->analysis, r, &n);
		if (!p)
			continue;
		fputs("<h3>", out);
		esc(out, m->resources[r].name);
		fprintf(out, " (%zu snapshots)</h3>\n", n);
		write_series_svg(p, n, t0, t1, out);
		shown++;
	}
	if (!shown)
		fputs("<p>no snapshots in this trace</p>\n", out);
}

static const char *desc_id(const struct loaded_trace *lt, uint32_t i)
{
	uint32_t ev = lt->descs[i].event;

	return ev < lt->manifest->n_events ? lt->manifest->events[ev].id : "?";
}

/* one bar per descriptor, coloured by its state from start to end */
static void write_timeline_row(const struct loaded_trace *lt, uint32_t d, uint64_t t0, uint64_t t1,
			       size_t row, FILE *out)
{
	const struct confidence_change *ch;
	double span = t1 > t0 ? (double)(t1 - t0) : 1, x = 200, nx;
	enum pb_confidence st = confidence__initial(lt->conf, d);
	size_t n, i;

	ch = confidence__changes(lt->conf, &n);
	fprintf(out, "<text x=\"0\" y=\"%zu\" font-size=\"12\">", row * 22 + 15);
	esc(out, desc_id(lt, d));
	fputs("</text>\n", out);
	for (i = 0; i <= n; i++) {
		if (i < n && ch[i].descriptor != d)
			continue;
		nx = i < n ? 200 + (SVG_W - 210) * (double)(ch[i].ts_ns > t0 ? ch[i].ts_ns - t0 : 0) / span :
			     SVG_W - 10;
		nx = nx < x ? x : nx > SVG_W - 10 ? SVG_W - 10 : nx;
		fprintf(out, "<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"16\" fill=\"%s\">"
			"<title>%s</title></rect>\n", x, row * 22 + 3, nx - x, conf_color(st),
			pb_confidence_str(st));
		if (i < n) {
			st = ch[i].to;
			x = nx;
		}
	}
}

static void write_confidence(const struct loaded_trace *lt, FILE *out)
{
	const struct confidence_change *ch;
	uint64_t t0, t1;
	size_t n, i;
	char pred[512];

	window_s(lt, &t0, &t1);
	fputs("<h2>Confidence timeline</h2>\n<p class=\"muted\">each descriptor's state over the "
	      "recording (validated, candidate, suspect, stale), replayed from the snapshots.</p>\n", out);
	fprintf(out, "<svg width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" role=\"img\">\n", SVG_W,
		lt->n_descs * 22 + 6, SVG_W, lt->n_descs * 22 + 6);
	for (i = 0; i < lt->n_descs; i++)
		write_timeline_row(lt, (uint32_t)i, t0, t1, i, out);
	fputs("</svg>\n", out);
	ch = confidence__changes(lt->conf, &n);
	if (n)
		fputs("<table><tr><th>at (s)</th><th>descriptor</th><th>change</th><th>why</th></tr>\n", out);
	for (i = 0; i < n; i++) {
		fprintf(out, "<tr><td>%.3f</td><td>", ch[i].ts_ns > t0 ? (double)(ch[i].ts_ns - t0) / 1e9 : 0.0);
		esc(out, ch[i].descriptor < lt->n_descs ? desc_id(lt, ch[i].descriptor) : "?");
		fprintf(out, "</td><td>%s &rarr; %s</td><td>", pb_confidence_str(ch[i].from),
			pb_confidence_str(ch[i].to));
		esc(out, ch[i].reason);
		fputs("</td></tr>\n", out);
	}
	if (n)
		fputs("</table>\n", out);
	fputs("<h2>Predictions</h2>\n<ul>\n", out);
	for (i = 0, n = 0; i < lt->n_descs; i++) {
		predictions__text(lt, (uint32_t)i, pred, sizeof(pred));
		if (!pred[0])
			continue;
		fputs("<li><code>", out);
		esc(out, desc_id(lt, (uint32_t)i));
		fputs("</code>: ", out);
		esc(out, pred);
		fputs("</li>\n", out);
		n++;
	}
	fprintf(out, "</ul>\n%s", n ? "" : "<p>no descriptor predicts an OS effect</p>\n");
}

/* The WAIT time by the waiters' user stacks (record --stacks). */
static int write_flamegraph(const struct loaded_trace *lt, FILE *out)
{
	struct stack_folds f;
	int err = loaded_trace__fold(lt, STACK_WAITS, 0, &f);

	if (err)
		return err;
	fputs("<h2>Flame graph: wait time by stack</h2>\n", out);
	if (!f.n) {
		fputs("<p class=\"muted\">no WAIT stacks in this trace (record --stacks N, on by "
		      "default, needs frame pointers in the target)</p>\n", out);
	} else {
		fprintf(out, "<p>%llu stacks, %.3f ms of WAIT; %llu of %llu frames without a symbol, "
			"%llu in no recorded mapping. Hover a box for its time.</p>\n",
			(unsigned long long)f.stacks, (double)f.total / 1e6,
			(unsigned long long)f.frames_module, (unsigned long long)f.frames,
			(unsigned long long)f.frames_unknown);
		err = flamegraph__svg(&f, "wait", SVG_W, out);
	}
	stack_folds__release(&f);
	return err;
}

int report_html__write(const struct loaded_trace *lt, const char *trace_path, FILE *out)
{
	int err;

	if (!lt || !lt->analysis || !out)
		return -EINVAL;
	write_head(out, trace_path);
	write_facts(lt, trace_path, out);
	write_findings(lt->analysis, out);
	write_hists(lt->analysis, lt->manifest->n_events, out);
	write_series(lt, out);
	err = write_flamegraph(lt, out);
	if (err)
		return err;
	write_confidence(lt, out);
	fputs("<p class=\"muted\">written by probity report --html; docs/report.md explains the "
	      "scores.</p>\n</body></html>\n", out);
	return ferror(out) ? -EIO : 0;
}
