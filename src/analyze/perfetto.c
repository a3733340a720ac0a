/* SPDX-License-Identifier: BSD-2-Clause */
/* perfetto.c: the analysis' --events evidence as Chrome/Perfetto
 * trace-event JSON ({"traceEvents": [...]}), see analyze.h. Timestamps are
 * the trace's own CLOCK_MONOTONIC in microseconds (not shifted), so the
 * file lines up with `perf record -k mono` of the same run.
 *
 * Slices of one thread must nest for a viewer to draw them. Thread tracks
 * carry only what the thread itself executed or suffered: WAIT spans,
 * off-CPU and block-I/O slices, and a short RELEASE marker where a flow
 * arrow starts. WAIT spans and off-CPU intervals nest by construction (a
 * thread is on CPU at every WAIT entry and return). Holds (ACQUIRE ->
 * RELEASE of one generation) are lifetimes, not execution, and may end on
 * another thread: they are async slices ("b"/"e") of the acquirer's
 * process. A slice that still crosses its parent's end on the same thread
 * (block I/O completing after the thread woke) is cut at that end, marked
 * "clipped_ns" in its args and counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "analyze/analyze_int.h"

enum pf_type { PF_WAIT, PF_RELEASE, PF_OFFCPU };

struct pf_slice {
	uint64_t start, end, clipped;
	uint32_t pid, tid;
	uint32_t idx;		/* into the source vector of type */
	uint32_t type;		/* enum pf_type */
};

/* a release -> woken WAIT arrow */
struct pf_flow {
	const struct an_point *rel, *wk;
	const struct an_span *w;
};

struct pf_out {
	const struct analysis *a;
	FILE *out;
	bool first;
	uint32_t counter_pid;
	struct perfetto_stats st;
	struct pf_flow *flows;
	size_t n_flows;
};

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

/* absolute CLOCK_MONOTONIC, microseconds with ns precision */
static void ts_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void begin(struct pf_out *o, const char *ph)
{
	fprintf(o->out, "%s\n{\"ph\":\"%s\"", o->first ? "" : ",", ph);
	o->first = false;
}

static int cmp_slice(const void *x, const void *y)
{
	const struct pf_slice *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;	/* the longer one is the parent */
	return a->type < b->type ? -1 : a->type > b->type;
}

static int push_slice(struct pf_slice **v, size_t *n, size_t *cap, const struct pf_slice *s)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct pf_slice *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *s;
	return 0;
}

/* a thread's process as its resource records say (off-CPU records of old
 * traces carry none): the first span of the thread, else 0 */
static uint32_t pid_of(const struct analysis *a, uint32_t tid)
{
	size_t i;

	for (i = 0; i < a->waits.n; i++)
		if (AN_AT(&a->waits, struct an_span, i)->tid == tid)
			return AN_AT(&a->waits, struct an_span, i)->pid;
	for (i = 0; i < a->holds.n; i++)
		if (AN_AT(&a->holds, struct an_span, i)->tid == tid)
			return AN_AT(&a->holds, struct an_span, i)->pid;
	return 0;
}

static int collect(const struct pf_out *o, struct pf_slice **v, size_t *n)
{
	const struct analysis *a = o->a;
	size_t i, cap = 0;
	int err = 0;

	*v = NULL;
	*n = 0;
	for (i = 0; !err && i < a->waits.n; i++) {
		const struct an_span *s = AN_AT(&a->waits, struct an_span, i);
		struct pf_slice p = { s->start, s->end, 0, s->pid, s->tid, (uint32_t)i, PF_WAIT };

		err = push_slice(v, n, &cap, &p);
	}
	for (i = 0; !err && i < o->n_flows; i++) {
		const struct an_point *r = o->flows[i].rel;
		struct pf_slice p = { r->ts ? r->ts - 1 : 0, r->ts + 1, 0, r->pid, r->tid, (uint32_t)i,
				      PF_RELEASE };

		err = push_slice(v, n, &cap, &p);
	}
	for (i = 0; !err && i < a->offcpu.n; i++) {
		const struct an_offcpu *s = AN_AT(&a->offcpu, struct an_offcpu, i);
		struct pf_slice p = { s->start, s->end, 0, s->pid ? s->pid : pid_of(a, s->tid), s->tid,
				      (uint32_t)i, PF_OFFCPU };

		err = push_slice(v, n, &cap, &p);
	}
	if (!err && *n)
		qsort(*v, *n, sizeof(**v), cmp_slice);
	return err;
}

/* cut every slice that crosses its parent's end (v sorted by cmp_slice) */
static int nest(struct pf_slice *v, size_t n, size_t *clipped)
{
	uint64_t *stack = malloc((n ? n : 1) * sizeof(*stack));
	size_t i, depth = 0;

	if (!stack)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (i && (v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid))
			depth = 0;
		while (depth && stack[depth - 1] <= v[i].start)
			depth--;
		if (depth && stack[depth - 1] < v[i].end) {
			v[i].clipped = v[i].end - stack[depth - 1];
			v[i].end = stack[depth - 1];
			(*clipped)++;
		}
		stack[depth++] = v[i].end;
	}
	free(stack);
	return 0;
}

static void write_names(struct pf_out *o, const struct pf_slice *v, size_t n)
{
	const char *name;
	size_t i;

	for (i = 0; i < n; i++) {
		bool new_pid = !i || v[i].pid != v[i - 1].pid;

		if (new_pid) {
			name = analysis__comm(o->a, v[i].pid, v[i].pid);
			begin(o, "M");
			fprintf(o->out, ",\"name\":\"process_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
				",\"args\":{\"name\":", v[i].pid, v[i].pid);
			if (name)
				json_str(o->out, name);
			else
				fprintf(o->out, "\"pid %" PRIu32 "\"", v[i].pid);
			fputs("}}", o->out);
		}
		if (!new_pid && v[i].tid == v[i - 1].tid)
			continue;
		name = analysis__comm(o->a, v[i].pid, v[i].tid);
		o->st.threads++;
		o->st.named += name != NULL;
		begin(o, "M");
		fprintf(o->out, ",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			",\"args\":{\"name\":", v[i].pid, v[i].tid);
		if (name)
			json_str(o->out, name);
		else
			fprintf(o->out, "\"tid %" PRIu32 "\"", v[i].tid);
		fputs("}}", o->out);
	}
}

static void write_slice(struct pf_out *o, const struct pf_slice *s)
{
	static const char *const cat[] = { "wait", "release", "off_cpu" };
	const struct analysis *a = o->a;

	begin(o, "X");
	fprintf(o->out, ",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", cat[s->type],
		s->pid, s->tid);
	ts_us(o->out, s->start);
	fputs(",\"dur\":", o->out);
	ts_us(o->out, s->end - s->start);
	fputs(",\"name\":", o->out);
	if (s->type == PF_WAIT) {
		const struct an_span *sp = AN_AT(&a->waits, struct an_span, s->idx);

		fputs("\"WAIT ", o->out);
		json_raw(o->out, a->m->resources[sp->resource].name);
		fputs("\",\"args\":{\"descriptor\":", o->out);
		json_str(o->out, a->m->events[sp->descriptor].id);
		fprintf(o->out, ",\"instance\":\"0x%" PRIx64 "\",\"generation\":%" PRIu64, sp->instance,
			sp->generation);
		o->st.spans++;
	} else if (s->type == PF_RELEASE) {
		const struct an_span *w = o->flows[s->idx].w;

		fputs("\"RELEASE ", o->out);
		json_raw(o->out, a->m->resources[w->resource].name);
		fprintf(o->out, "\",\"args\":{\"woke_tid\":%" PRIu32, w->tid);
	} else if (s->type == PF_OFFCPU) {
		fputs("\"off-CPU\",\"args\":{\"ns\":", o->out);
		fprintf(o->out, "%" PRIu64, s->end - s->start + s->clipped);
		o->st.offcpu++;
	}
	if (s->clipped)
		fprintf(o->out, ",\"clipped_ns\":%" PRIu64, s->clipped);
	fputs("}}", o->out);
}

static void write_uses(struct pf_out *o)
{
	const struct analysis *a = o->a;
	size_t i;

	for (i = 0; i < a->uses.n; i++) {
		const struct an_point *p = AN_AT(&a->uses, struct an_point, i);
		const struct pb_event *ev = &a->m->events[p->extra];

		begin(o, "i");
		fputs(",\"s\":\"t\",\"name\":\"USE ", o->out);
		json_raw(o->out, a->m->resources[ev->resource_idx].name);
		fprintf(o->out, "\",\"cat\":\"use\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":",
			p->pid, p->tid);
		ts_us(o->out, p->ts);
		fputs(",\"args\":{\"descriptor\":", o->out);
		json_str(o->out, ev->id);
		fprintf(o->out, ",\"instance\":\"0x%" PRIx64 "\",\"generation\":%" PRIu64 "}}", p->a, p->b);
	}
}

/* first index of v (an_point sorted by key, then ts) with key >= k and,
 * among key == k, ts >= ts; key is tid or a */
static size_t lower_bound(const struct an_vec *v, uint64_t k, uint64_t ts, bool by_a)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct an_point *p = AN_AT(v, struct an_point, mid);
		uint64_t pk = by_a ? p->a : p->tid;

		if (pk < k || (pk == k && p->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the waker's last RELEASE of resource res within the wakeup window before ts */
static const struct an_point *release_before(const struct analysis *a, uint32_t tid, uint16_t res,
					     uint64_t ts)
{
	uint64_t from = ts > a->o.wakeup_window_ns ? ts - a->o.wakeup_window_ns : 0;
	const struct an_point *best = NULL;
	size_t i;

	for (i = lower_bound(&a->releases, tid, from, false); i < a->releases.n; i++) {
		const struct an_point *p = AN_AT(&a->releases, struct an_point, i);

		if (p->tid != tid || p->ts > ts)
			break;
		if (p->a == res)
			best = p;
	}
	return best;
}

static void write_flow(struct pf_out *o, const struct pf_flow *f, size_t id)
{
	/* "s" binds to the RELEASE marker around rel->ts, "f" (binding point
	 * "e") to the slice enclosing the wakeup on the waiter's thread */
	begin(o, "s");
	fprintf(o->out, ",\"name\":\"release -> wakeup\",\"cat\":\"wakeup\",\"id\":%zu,\"pid\":%" PRIu32
		",\"tid\":%" PRIu32 ",\"ts\":", id, f->rel->pid, f->rel->tid);
	ts_us(o->out, f->rel->ts);
	fputs("}", o->out);
	begin(o, "f");
	fprintf(o->out, ",\"bp\":\"e\",\"name\":\"release -> wakeup\",\"cat\":\"wakeup\",\"id\":%zu,"
		"\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", id, f->w->pid, f->w->tid);
	ts_us(o->out, f->wk->ts);
	fputs("}", o->out);
}

/* one arrow per WAIT span: the first wakeup inside it from a thread that
 * had just released the resource waited for (the join diagnose_joins.c
 * counts as release-woken) */
static int find_flows(struct pf_out *o)
{
	const struct analysis *a = o->a;
	size_t i, j, cap = 0;

	for (i = 0; i < a->waits.n; i++) {
		const struct an_span *w = AN_AT(&a->waits, struct an_span, i);

		for (j = lower_bound(&a->wakeups, w->tid, w->start, true); j < a->wakeups.n; j++) {
			const struct an_point *wk = AN_AT(&a->wakeups, struct an_point, j);
			const struct an_point *rel;

			if (wk->a != w->tid || wk->ts > w->end)
				break;
			if (wk->tid == w->tid)
				continue;
			rel = release_before(a, wk->tid, w->resource, wk->ts);
			if (!rel)
				continue;
			if (o->n_flows == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct pf_flow *nf = realloc(o->flows, nc * sizeof(*nf));

				if (!nf)
					return -ENOMEM;
				o->flows = nf;
				cap = nc;
			}
			o->flows[o->n_flows++] = (struct pf_flow){ rel, wk, w };
			break;
		}
	}
	return 0;
}

/* block I/O, issue -> completion: an async track per issuing thread
 * ("block I/O tid N" in its process), as the completion often lands while
 * the thread still sleeps and cannot nest in its off-CPU slice */
static void write_ios(struct pf_out *o)
{
	const struct analysis *a = o->a;
	size_t i;
	int k;

	for (i = 0; i < a->io_done.n; i++) {
		const struct an_point *p = AN_AT(&a->io_done, struct an_point, i);
		const char *comm = analysis__comm(a, p->pid, p->tid);

		for (k = 0; k < 2; k++) {
			begin(o, k ? "e" : "b");
			fputs(",\"cat\":\"block_io\",\"name\":\"block I/O ", o->out);
			if (comm)
				json_raw(o->out, comm);
			fprintf(o->out, " tid %" PRIu32 "\",\"id\":\"io%zx\",\"pid\":%" PRIu32
				",\"tid\":%" PRIu32 ",\"ts\":", p->tid, i + 1, p->pid, p->tid);
			ts_us(o->out, k ? p->ts : p->a <= p->ts ? p->ts - p->a : 0);
			if (!k)
				fprintf(o->out, ",\"args\":{\"%s\":%" PRIu64 ",\"latency_ns\":%" PRIu64 "}",
					p->extra ? "write_bytes" : "read_bytes", p->b, p->a);
			fputs("}", o->out);
		}
		o->st.io++;
	}
}

/* holds: async slices of the acquirer's process, one id per generation hold */
static void write_holds(struct pf_out *o)
{
	const struct analysis *a = o->a;
	size_t i;
	int k;

	for (i = 0; i < a->holds.n; i++) {
		const struct an_span *s = AN_AT(&a->holds, struct an_span, i);

		for (k = 0; k < 2; k++) {
			begin(o, k ? "e" : "b");
			fputs(",\"cat\":\"hold\",\"name\":\"hold ", o->out);
			json_raw(o->out, a->m->resources[s->resource].name);
			fprintf(o->out, "\",\"id\":\"0x%zx\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":",
				i + 1, s->pid, s->tid);
			ts_us(o->out, k ? s->end : s->start);
			if (!k) {
				fputs(",\"args\":{\"descriptor\":", o->out);
				json_str(o->out, a->m->events[s->descriptor].id);
				fprintf(o->out, ",\"instance\":\"0x%" PRIx64 "\",\"generation\":%" PRIu64 "}",
					s->instance, s->generation);
			}
			fputs("}", o->out);
		}
		o->st.spans++;
	}
}

static void write_counters(struct pf_out *o)
{
	const struct analysis *a = o->a;
	size_t i, k;

	for (k = 0; k < a->m->n_resources; k++) {
		const struct an_vec *sv = &a->series[k];

		for (i = 0; i < sv->n; i++) {
			const struct an_point_res *p = AN_AT(sv, struct an_point_res, i);

			begin(o, "C");
			fputs(",\"name\":", o->out);
			json_str(o->out, a->m->resources[k].name);
			fprintf(o->out, ",\"pid\":%" PRIu32 ",\"ts\":", o->counter_pid);
			ts_us(o->out, p->ts);
			fprintf(o->out, ",\"args\":{\"live_instances\":%" PRId64 ",\"outstanding_units\":%" PRId64
				",\"acquire_minus_release\":%" PRId64 "}}", p->live, p->units, p->imbalance);
		}
	}
}

int export__perfetto_stats(const struct analysis *a, FILE *out, struct perfetto_stats *st)
{
	struct pf_out o = { .a = a, .out = out, .first = true };
	struct pf_slice *v = NULL;
	size_t n = 0, i;
	int err;

	if (!a || !out)
		return -EINVAL;
	if (!a->finished)
		return -EAGAIN;
	err = find_flows(&o) ?: collect(&o, &v, &n) ?: nest(v, n, &o.st.clipped);
	if (err)
		goto out;
	o.counter_pid = n ? v[0].pid : a->holds.n ? AN_AT(&a->holds, struct an_span, 0)->pid : 0;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\","
	      "\"ts\":\"microseconds of CLOCK_MONOTONIC, as perf record -k mono\"},\"traceEvents\":[",
	      out);
	write_names(&o, v, n);
	for (i = 0; i < n; i++)
		write_slice(&o, &v[i]);
	write_holds(&o);
	write_ios(&o);
	write_uses(&o);
	for (i = 0; i < o.n_flows; i++)
		write_flow(&o, &o.flows[i], i + 1);
	o.st.flows = o.n_flows;
	write_counters(&o);
	fputs("\n]}\n", out);
	err = ferror(out) ? -EIO : 0;
out:
	free(v);
	free(o.flows);
	if (st)
		*st = o.st;
	return err;
}

int export__perfetto(const struct analysis *a, FILE *out, size_t *n_spans)
{
	struct perfetto_stats st;
	int err = export__perfetto_stats(a, out, &st);

	if (n_spans)
		*n_spans = err ? 0 : st.spans;
	return err;
}
