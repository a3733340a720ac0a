/* SPDX-License-Identifier: BSD-2-Clause */
/* metrics.c: render an analysis as Prometheus text (see metrics.h).
 *
 * Histograms: the engine's log2 bucket i counts durations in
 * [2^i, 2^(i+1)) ns, so on whole nanoseconds its inclusive upper bound
 * is 2^(i+1) - 1 ns: that is the `le` written (in seconds), exact, and
 * the buckets are made cumulative. The last engine bucket is open
 * ([2^39 ns, inf)): it only counts towards +Inf. WAIT descriptors of a
 * resource sum into probity_wait_seconds, RELEASE descriptors (whose
 * durations are hold times) into probity_hold_seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/io.h"
#include "contract/manifest.h"
#include "metrics/metrics.h"
#include "validate/confidence.h"

#define LBL_MAX 1024

bool metrics__escape_label(const char *in, char *out, size_t sz)
{
	size_t n = 0;

	for (; in && *in; in++) {
		const char *rep = *in == '\\' ? "\\\\" : *in == '"' ? "\\\"" : *in == '\n' ? "\\n" : NULL;
		size_t k = rep ? 2 : 1;

		if (n + k >= sz)
			return false;
		if (rep)
			memcpy(out + n, rep, 2);
		else
			out[n] = *in;
		n += k;
	}
	if (n >= sz)
		return false;
	out[n] = '\0';
	return true;
}

/* A label value: escaped, or cut (with "...") when absurdly long. */
static const char *lbl(const char *in, char *buf)
{
	if (!metrics__escape_label(in, buf, LBL_MAX))
		strcpy(buf + LBL_MAX - 4, "...");
	return buf;
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render_events(const struct analysis *a, FILE *out)
{
	const struct manifest *m = analysis__manifest(a);
	char r[LBL_MAX], d[LBL_MAX];
	size_t i;

	family(out, "probity_events_total", "counter",
	       "Events counted per descriptor (probe fired and the guard passed).");
	for (i = 0; i < m->n_events; i++) {
		const struct pb_desc_stats *s = analysis__desc_stats(a, (uint32_t)i);

		fprintf(out, "probity_events_total{resource=\"%s\",descriptor=\"%s\",kind=\"%s\"} %llu\n",
			lbl(m->events[i].resource, r), lbl(m->events[i].id, d),
			pb_event_kind_str(m->events[i].kind), (unsigned long long)(s ? s->events : 0));
	}
}

/* One histogram family over the descriptors of kind `kind`, per resource. */
static void render_hist(const struct analysis *a, FILE *out, const char *name,
			enum pb_event_kind kind, const char *help)
{
	const struct manifest *m = analysis__manifest(a);
	char r[LBL_MAX];
	size_t res, i, b;

	family(out, name, "histogram", help);
	for (res = 0; res < m->n_resources; res++) {
		uint64_t hist[PB_HIST_BUCKETS] = { 0 }, total_ns = 0, cum = 0;
		bool any = false;

		for (i = 0; i < m->n_events; i++) {
			const struct pb_desc_stats *s = analysis__desc_stats(a, (uint32_t)i);

			if (!s || m->events[i].kind != kind || m->events[i].resource_idx != (int)res)
				continue;
			any = true;
			total_ns += s->total_ns;
			for (b = 0; b < PB_HIST_BUCKETS; b++)
				hist[b] += s->hist[b];
		}
		if (!any)
			continue;
		lbl(m->resources[res].name, r);
		for (b = 0; b + 1 < PB_HIST_BUCKETS; b++) {
			cum += hist[b];
			fprintf(out, "%s_bucket{resource=\"%s\",le=\"%.13g\"} %llu\n", name, r,
				(double)((2ULL << b) - 1) / 1e9, (unsigned long long)cum);
		}
		cum += hist[PB_HIST_BUCKETS - 1];
		fprintf(out, "%s_bucket{resource=\"%s\",le=\"+Inf\"} %llu\n", name, r,
			(unsigned long long)cum);
		fprintf(out, "%s_sum{resource=\"%s\"} %.9f\n", name, r, (double)total_ns / 1e9);
		fprintf(out, "%s_count{resource=\"%s\"} %llu\n", name, r, (unsigned long long)cum);
	}
}

static void render_gauges(const struct analysis *a, FILE *out)
{
	const struct manifest *m = analysis__manifest(a);
	char r[LBL_MAX];
	size_t res;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		family(out, pass ? "probity_outstanding_units" : "probity_live_instances", "gauge",
		       pass ? "Units held (ACQUIREd, not yet RELEASEd) at the last snapshot."
			    : "Generations ACQUIREd and not yet RELEASEd at the last snapshot.");
		for (res = 0; res < m->n_resources; res++) {
			const struct pb_res_stats *s = analysis__res_stats(a, (uint32_t)res);

			if (!s)	/* no snapshot carried gauges: no sample, rather than a false 0 */
				continue;
			fprintf(out, "%s{resource=\"%s\"} %lld\n",
				pass ? "probity_outstanding_units" : "probity_live_instances",
				lbl(m->resources[res].name, r),
				(long long)(pass ? s->outstanding_units : s->live_instances));
		}
	}
}

static void render_states(const struct analysis *a, FILE *out)
{
	static const enum pb_confidence states[] = {
		PB_CONF_CANDIDATE, PB_CONF_VALIDATED, PB_CONF_SUSPECT, PB_CONF_STALE, PB_CONF_DEGRADED,
	};
	const struct manifest *m = analysis__manifest(a);
	char d[LBL_MAX];
	size_t i, k;

	family(out, "probity_descriptor_state", "gauge",
	       "1 for the descriptor's current model state (validated, suspect, stale, ...), else 0.");
	for (i = 0; i < m->n_events; i++) {
		enum pb_confidence c = analysis__confidence(a, (uint32_t)i);

		lbl(m->events[i].id, d);
		for (k = 0; k < sizeof(states) / sizeof(states[0]); k++)
			fprintf(out, "probity_descriptor_state{descriptor=\"%s\",state=\"%s\"} %d\n", d,
				pb_confidence_str(states[k]), c == states[k]);
	}
}

static void render_violations(const struct analysis *a, FILE *out)
{
	const struct manifest *m = analysis__manifest(a);
	char d[LBL_MAX];
	size_t i;
	int inv;

	family(out, "probity_violations_total", "counter",
	       "Runtime invariant violations per descriptor (docs/validation.md).");
	for (i = 0; i < m->n_events; i++) {
		const struct pb_desc_stats *s = analysis__desc_stats(a, (uint32_t)i);

		lbl(m->events[i].id, d);
		for (inv = 0; inv < PB_INV__COUNT; inv++)
			fprintf(out, "probity_violations_total{descriptor=\"%s\",invariant=\"%s\"} %llu\n",
				d, pb_invariant_str(inv), (unsigned long long)(s ? s->violations[inv] : 0));
	}
}

/* The best score per (kind, resource): one series each. */
static void render_findings(const struct analysis *a, FILE *out)
{
	const struct manifest *m = analysis__manifest(a);
	double best[FINDING__COUNT][PB_MAX_RESOURCES];
	bool seen[FINDING__COUNT][PB_MAX_RESOURCES] = { { false } };
	const struct finding *f;
	char r[LBL_MAX];
	size_t n, i, res;
	int k;

	f = analysis__findings(a, &n);
	for (i = 0; i < n; i++) {
		if (f[i].resource < 0 || f[i].resource >= PB_MAX_RESOURCES || f[i].kind >= FINDING__COUNT)
			continue;
		if (!seen[f[i].kind][f[i].resource] || f[i].score > best[f[i].kind][f[i].resource])
			best[f[i].kind][f[i].resource] = f[i].score;
		seen[f[i].kind][f[i].resource] = true;
	}
	family(out, "probity_finding_score", "gauge",
	       "Highest finding score (severity x certainty, 0..100) per kind and resource.");
	for (k = 0; k < FINDING__COUNT; k++)
		for (res = 0; res < m->n_resources && res < PB_MAX_RESOURCES; res++)
			if (seen[k][res])
				fprintf(out, "probity_finding_score{kind=\"%s\",resource=\"%s\"} %.6g\n",
					finding_kind_str((enum finding_kind)k),
					lbl(m->resources[res].name, r), best[k][res]);
}

static void render_lost(const struct analysis *a, const struct metrics_opts *o, FILE *out)
{
	const struct analysis_counts *c = analysis__counts(a);
	const struct manifest *m = analysis__manifest(a);
	uint64_t unjudged = 0;
	size_t i, fx;
	const struct {
		const char *what;
		uint64_t n;
	} rows[] = {
		{ "ringbuf_drops", c->ringbuf_drops },
		{ "instance_map_full", c->instance_map_full },
		{ "thread_map_full", c->thread_map_full },
		{ "span_overflow", c->span_overflow },
		{ "state_full", c->state_full },
		{ "records_unknown_type", c->unknown_type },
		{ "records_malformed", c->malformed },
		{ "records_truncated", c->truncated },
		{ "trace_cut", o && o->trace_incomplete },
		{ "notes_dropped", o ? o->notes_dropped : 0 },
		{ "stacks_rate_limited", c->stacks_rate_limited },
		{ "stacks_lost", c->stacks_lost },
		{ "stacks_failed", c->stacks_failed },
		{ "stacks_truncated", c->stacks_truncated },
		{ "predictions_unjudged", 0 },
	};
	size_t n_rows = sizeof(rows) / sizeof(rows[0]);

	for (i = 0; i < m->n_events; i++) {
		const struct pb_desc_stats *s = analysis__desc_stats(a, (uint32_t)i);

		for (fx = 0; s && fx < PB_FX_SLOTS; fx++)
			unjudged += s->pred_unjudged[fx];
	}
	family(out, "probity_lost_evidence_total", "counter",
	       "Evidence lost or not judged, by what (docs/metrics.md).");
	for (i = 0; i < n_rows; i++)
		fprintf(out, "probity_lost_evidence_total{what=\"%s\"} %llu\n", rows[i].what,
			(unsigned long long)(i + 1 == n_rows ? unjudged : rows[i].n));
}

int metrics__render(const struct analysis *a, const struct metrics_opts *o, FILE *out)
{
	if (!a || !out)
		return -EINVAL;
	render_events(a, out);
	render_hist(a, out, "probity_wait_seconds", PB_EV_WAIT,
		    "WAIT span durations per resource (log2 buckets of the engine).");
	render_hist(a, out, "probity_hold_seconds", PB_EV_RELEASE,
		    "Hold times (ACQUIRE to RELEASE) per resource, measured at RELEASE.");
	render_gauges(a, out);
	render_states(a, out);
	render_violations(a, out);
	render_findings(a, out);
	render_lost(a, o, out);
	return ferror(out) ? -EIO : 0;
}

int metrics__render_buf(const struct analysis *a, const struct metrics_opts *o,
			char **buf, size_t *len)
{
	FILE *f;
	int err;

	*buf = NULL;
	*len = 0;
	f = open_memstream(buf, len);
	if (!f)
		return -errno;
	err = metrics__render(a, o, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return err;
}

int metrics__write_textfile(const char *dir, const char *name, const void *buf, size_t len)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd = -1, dfd = -1, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.%d", dir, name, (int)getpid()) >= (int)sizeof(tmp) ||
	    snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = pb_write_all(fd, buf, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err) {
		unlink(tmp);
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && fsync(dfd))
		err = -errno;
out:
	if (dfd >= 0)
		close(dfd);
	return err;
}
