/* SPDX-License-Identifier: BSD-2-Clause */
/* perfetto.c: the analysis' --events evidence as Chrome/Perfetto
 * trace-event JSON ({"traceEvents": [...]}): "X" complete events for WAIT
 * spans and holds (ACQUIRE -> RELEASE of one generation) on the thread that
 * waited or held, "i" instants for USE, "C" counters of live instances and
 * outstanding units per resource from the snapshots. Timestamps are in
 * microseconds from the first event, as the format wants.
 */
#include <errno.h>
#include <inttypes.h>
#include "analyze/analyze_int.h"

static void json_raw(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	json_raw(out, s);
	fputc('"', out);
}

static double us(uint64_t ts, uint64_t base)
{
	return ts > base ? (double)(ts - base) / 1e3 : 0;
}

int export__perfetto(const struct analysis *a, FILE *out, size_t *n_spans)
{
	const struct an_vec *vs[2];
	uint64_t base;
	size_t i, k, spans = 0;
	bool first = true;

	if (!a || !out)
		return -EINVAL;
	if (!a->finished)
		return -EAGAIN;
	vs[0] = &a->waits;
	vs[1] = &a->holds;
	base = a->win_start && a->win_start < a->c.first_ts ? a->win_start : a->c.first_ts;
	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	for (k = 0; k < 2; k++) {
		for (i = 0; i < vs[k]->n; i++) {
			const struct an_span *s = AN_AT(vs[k], struct an_span, i);
			const struct pb_event *ev = &a->m->events[s->descriptor];

			fprintf(out, "%s\n{\"ph\":\"X\",\"name\":", first ? "" : ",");
			first = false;
			fprintf(out, "\"%s ", k ? "hold" : "WAIT");
			json_raw(out, a->m->resources[s->resource].name);
			fprintf(out, "\",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
				",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"descriptor\":",
				k ? "hold" : "wait", s->pid, s->tid, us(s->start, base),
				(double)(s->end - s->start) / 1e3);
			json_str(out, ev->id);
			fprintf(out, ",\"instance\":\"0x%" PRIx64 "\",\"generation\":%" PRIu64 "}}",
				s->instance, s->generation);
			spans++;
		}
	}
	for (i = 0; i < a->uses.n; i++) {
		const struct an_point *p = AN_AT(&a->uses, struct an_point, i);
		const struct pb_event *ev = &a->m->events[p->extra];

		fprintf(out, "%s\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"USE ", first ? "" : ",");
		first = false;
		json_raw(out, a->m->resources[ev->resource_idx].name);
		fprintf(out, "\",\"cat\":\"use\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			",\"ts\":%.3f,\"args\":{\"descriptor\":", p->pid, p->tid, us(p->ts, base));
		json_str(out, ev->id);
		fprintf(out, ",\"instance\":\"0x%" PRIx64 "\",\"generation\":%" PRIu64 "}}", p->a, p->b);
	}
	for (k = 0; k < a->m->n_resources; k++) {
		const struct an_vec *sv = &a->series[k];

		for (i = 0; i < sv->n; i++) {
			const struct an_point_res *p = AN_AT(sv, struct an_point_res, i);

			fprintf(out, "%s\n{\"ph\":\"C\",\"name\":", first ? "" : ",");
			first = false;
			json_str(out, a->m->resources[k].name);
			fprintf(out, ",\"pid\":0,\"ts\":%.3f,\"args\":{\"live_instances\":%" PRId64
				",\"outstanding_units\":%" PRId64 ",\"acquire_minus_release\":%" PRId64 "}}",
				us(p->ts, base), p->live, p->units, p->imbalance);
		}
	}
	fprintf(out, "\n]}\n");
	if (n_spans)
		*n_spans = spans;
	return ferror(out) ? -EIO : 0;
}
