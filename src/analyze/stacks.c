// SPDX-License-Identifier: BSD-2-Clause
/* stacks.c: user stacks of a trace, symbolized and folded (see stacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/stacks.h"
#include "elf/symbolize.h"

struct st_stack {
	struct pb_rec_stack k;
	uint64_t hold_ns;	/* ACQUIRE: matched RELEASE's hold time */
	bool held;		/* hold_ns is set */
};

struct stack_set {
	struct st_stack *v;
	size_t n, cap;
	int64_t *hash;		/* ACQUIRE stacks by (resource, instance, generation):
				 * index + 1, 0 = empty; open addressing */
	size_t hcap, hn;
	struct symbolizer *sym;
	uint32_t (*parents)[2];	/* (pid, ppid) of forked processes */
	size_t n_parents;
};

#define EV_WAIT_K	0
#define EV_ACQUIRE_K	1
#define EV_RELEASE_K	3

struct stack_set *stack_set__new(void)
{
	struct stack_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->sym = symbolizer__new();
	if (!s->sym) {
		free(s);
		return NULL;
	}
	return s;
}

static uint64_t key_hash(uint32_t res, uint64_t inst, uint64_t gen)
{
	uint64_t h = (inst * 0x9e3779b97f4a7c15ull) ^ (gen * 0xc2b2ae3d27d4eb4full) ^ res;

	return h ^ (h >> 29);
}

static int64_t *hash_find(struct stack_set *s, uint32_t res, uint64_t inst, uint64_t gen)
{
	size_t i = key_hash(res, inst, gen) & (s->hcap - 1);

	for (;; i = (i + 1) & (s->hcap - 1)) {
		const struct pb_rec_stack *k;

		if (!s->hash[i])
			return &s->hash[i];
		k = &s->v[s->hash[i] - 1].k;
		if (k->resource == res && k->instance == inst && k->generation == gen)
			return &s->hash[i];
	}
}

static int hash_add(struct stack_set *s, size_t idx)
{
	const struct pb_rec_stack *k = &s->v[idx].k;
	int64_t *slot;

	if (2 * (s->hn + 1) > s->hcap) {
		int64_t *old = s->hash;
		size_t i, ocap = s->hcap;

		s->hcap = ocap ? 2 * ocap : 1024;
		s->hash = calloc(s->hcap, sizeof(*s->hash));
		if (!s->hash) {
			s->hash = old;
			s->hcap = ocap;
			return -ENOMEM;
		}
		for (i = 0; i < ocap; i++)
			if (old[i]) {
				const struct pb_rec_stack *o = &s->v[old[i] - 1].k;

				*hash_find(s, o->resource, o->instance, o->generation) = old[i];
			}
		free(old);
	}
	slot = hash_find(s, k->resource, k->instance, k->generation);
	if (!*slot)
		s->hn++;
	*slot = (int64_t)idx + 1;	/* the latest ACQUIRE of the key */
	return 0;
}

static int add_stack(struct stack_set *s, const struct pb_rec_hdr *rec, size_t len)
{
	struct st_stack *t;

	if (len < sizeof(struct pb_rec_stack) || rec->size < sizeof(struct pb_rec_stack))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;

		t = realloc(s->v, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->v = t;
		s->cap = cap;
	}
	t = &s->v[s->n];
	memset(t, 0, sizeof(*t));
	memcpy(&t->k, rec, sizeof(t->k));
	if (t->k.n_frames > PB_STACK_DEPTH)
		t->k.n_frames = PB_STACK_DEPTH;
	s->n++;
	return t->k.kind == EV_ACQUIRE_K ? hash_add(s, s->n - 1) : 0;
}

static void add_release(struct stack_set *s, const struct pb_rec_hdr *rec, size_t len)
{
	struct pb_rec_resource r;
	int64_t *slot;

	if (!s->hn || len < sizeof(r) || rec->size < sizeof(r))
		return;
	memcpy(&r, rec, sizeof(r));
	if (r.kind != EV_RELEASE_K)
		return;
	slot = hash_find(s, r.resource, r.instance, r.generation);
	if (*slot && !s->v[*slot - 1].held) {
		s->v[*slot - 1].hold_ns = r.duration_ns;
		s->v[*slot - 1].held = true;
	}
}

int stack_set__add_record(struct stack_set *s, const struct pb_rec_hdr *rec, size_t len)
{
	struct pb_rec_hdr h;

	if (!s || len < sizeof(h))
		return 0;
	memcpy(&h, rec, sizeof(h));
	if (h.version < 6 || h.version > PB_EVENTS_VERSION)
		return 0;	/* stacks exist from v6 on */
	if (h.type == PB_REC_STACK)
		return add_stack(s, rec, len);
	if (h.type == PB_REC_RESOURCE)
		add_release(s, rec, len);
	return 0;
}

int stack_set__add_maps(struct stack_set *s, const struct trace_map *m, size_t n)
{
	size_t i;
	int err;

	if (!s)
		return 0;
	for (i = 0; i < n; i++)	/* a later table of a pid replaces the earlier */
		if (!i || m[i].pid != m[i - 1].pid)
			symbolizer__reset(s->sym, m[i].pid);
	for (i = 0; i < n; i++) {
		err = symbolizer__add(s->sym, m[i].pid, m[i].path, m[i].start, m[i].end,
				      m[i].offset, m[i].build_id, m[i].build_id_len);
		if (err)
			return err;
	}
	return 0;
}

int stack_set__set_parents(struct stack_set *s, const struct trace_proc *p, size_t n)
{
	size_t i;

	if (!s)
		return 0;
	free(s->parents);
	s->n_parents = 0;
	s->parents = calloc(n + 1, sizeof(*s->parents));
	if (!s->parents)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (p[i].pid == p[i].tid && p[i].ppid && p[i].ppid != p[i].pid) {
			s->parents[s->n_parents][0] = p[i].pid;
			s->parents[s->n_parents][1] = p[i].ppid;
			s->n_parents++;
		}
	return 0;
}

/* The process whose mappings name pid's frames: pid, or the nearest
 * forked-from ancestor with mappings (a few levels). */
static uint32_t maps_pid(const struct stack_set *s, uint32_t pid)
{
	uint32_t p = pid;
	size_t i;
	int depth;

	for (depth = 0; depth < 4 && !symbolizer__knows(s->sym, p); depth++) {
		for (i = 0; i < s->n_parents && s->parents[i][0] != p; i++)
			;
		if (i == s->n_parents)
			return pid;
		p = s->parents[i][1];
	}
	return symbolizer__knows(s->sym, p) ? p : pid;
}

uint64_t stack_set__count(const struct stack_set *s)
{
	return s ? s->n : 0;
}

void stack_set__free(struct stack_set *s)
{
	if (!s)
		return;
	symbolizer__free(s->sym);
	free(s->parents);
	free(s->v);
	free(s->hash);
	free(s);
}

/* ---- folding ---- */

#define FOLD_LINE	8192

/* Append one frame name to line at *len ('; ' separated, ';' in a name
 * would split the frame: replaced). */
static void put_frame(char *line, size_t *len, const char *name)
{
	size_t n = *len;

	if (n && n < FOLD_LINE - 1)
		line[n++] = ';';
	for (; *name && n < FOLD_LINE - 1; name++)
		line[n++] = *name == ';' ? ':' : *name;
	line[n] = 0;
	*len = n;
}

static void fold_one(struct stack_set *s, const struct st_stack *t, const char *const *names,
		     size_t n_names, struct stack_folds *f, char *line)
{
	const struct pb_rec_stack *k = &t->k;
	uint32_t pid = maps_pid(s, k->hdr.pid);
	char name[512];
	size_t len = 0;
	int i;

	line[0] = 0;
	for (i = k->n_frames - 1; i >= 0; i--) {
		enum sym_result r = symbolizer__name(s->sym, pid, k->ips[i], i > 0, name,
						     sizeof(name));

		f->frames++;
		f->frames_module += r == SYM_MODULE;
		f->frames_unknown += r == SYM_UNKNOWN;
		put_frame(line, &len, name);
	}
	if (k->descriptor < n_names && names[k->descriptor])
		snprintf(name, sizeof(name), "[%s:%s]", k->kind == EV_WAIT_K ? "wait" : "hold",
			 names[k->descriptor]);
	else
		snprintf(name, sizeof(name), "[%s:desc%u]", k->kind == EV_WAIT_K ? "wait" : "hold",
			 k->descriptor);
	put_frame(line, &len, name);
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp(((const struct stack_fold *)a)->stack, ((const struct stack_fold *)b)->stack);
}

static int cmp_value(const void *a, const void *b)
{
	const struct stack_fold *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

/* Sort by stack, add up equal ones, then order by value. */
static void merge_folds(struct stack_folds *f)
{
	size_t i, o = 0;

	qsort(f->v, f->n, sizeof(*f->v), cmp_stack);
	for (i = 0; i < f->n; i++) {
		if (o && !strcmp(f->v[o - 1].stack, f->v[i].stack)) {
			f->v[o - 1].value += f->v[i].value;
			f->v[o - 1].count += f->v[i].count;
			free(f->v[i].stack);
			continue;
		}
		f->v[o++] = f->v[i];
	}
	f->n = o;
	qsort(f->v, f->n, sizeof(*f->v), cmp_value);
}

int stack_set__fold(struct stack_set *s, enum stack_value what, uint64_t min_ns,
		    const char *const *names, size_t n_names, struct stack_folds *out)
{
	uint8_t want = what == STACK_HOLDS ? EV_ACQUIRE_K : EV_WAIT_K;
	char *line = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!s || !s->n)
		return 0;
	line = malloc(FOLD_LINE);
	out->v = calloc(s->n, sizeof(*out->v));
	if (!line || !out->v)
		goto nomem;
	for (i = 0; i < s->n; i++) {
		const struct st_stack *t = &s->v[i];
		struct stack_fold *d;

		if (t->k.kind != want)
			continue;
		if (what == STACK_HOLDS && !t->held) {
			out->holds_unmatched++;
			continue;
		}
		if (what == STACK_HOLDS && t->hold_ns < min_ns) {
			out->holds_short++;
			continue;
		}
		fold_one(s, t, names, n_names, out, line);
		d = &out->v[out->n];
		d->stack = strdup(line);
		if (!d->stack)
			goto nomem;
		d->value = what == STACK_HOLDS ? t->hold_ns : t->k.duration_ns;
		d->count = 1;
		out->n++;
		out->stacks++;
		out->total += d->value;
	}
	free(line);
	merge_folds(out);
	return 0;
nomem:
	free(line);
	stack_folds__release(out);
	return -ENOMEM;
}

void stack_folds__release(struct stack_folds *f)
{
	size_t i;

	for (i = 0; f->v && i < f->n; i++)
		free(f->v[i].stack);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

void stack_folds__print(const struct stack_folds *f, FILE *out)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		fprintf(out, "%s %llu\n", f->v[i].stack, (unsigned long long)f->v[i].value);
}

void stack_folds__summary(const struct stack_folds *f, const struct analysis_counts *c,
			  FILE *out)
{
	fprintf(out, "stacks: %llu folded into %zu (%.3f ms); frames: %llu, %llu without a "
		"symbol (module+0xOFF), %llu in no recorded mapping ([unknown])",
		(unsigned long long)f->stacks, f->n, (double)f->total / 1e6,
		(unsigned long long)f->frames, (unsigned long long)f->frames_module,
		(unsigned long long)f->frames_unknown);
	if (f->holds_unmatched)
		fprintf(out, "; %llu ACQUIREs without their RELEASE in the trace",
			(unsigned long long)f->holds_unmatched);
	if (f->holds_short)
		fprintf(out, "; %llu holds shorter than --long-hold left out",
			(unsigned long long)f->holds_short);
	if (c && (c->stacks_rate_limited || c->stacks_lost || c->stacks_failed))
		fprintf(out, "; not taken: %llu over the rate limit, %llu lost, %llu failed",
			(unsigned long long)c->stacks_rate_limited,
			(unsigned long long)c->stacks_lost, (unsigned long long)c->stacks_failed);
	fputc('\n', out);
}

json_t *stack_folds__json(const struct stack_folds *f)
{
	json_t *arr = json_array(), *o;
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < f->n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I}", "stack", f->v[i].stack,
						     "value_ns", (json_int_t)f->v[i].value,
						     "count", (json_int_t)f->v[i].count));
	o = json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "folded", arr,
		      "stacks", (json_int_t)f->stacks, "total_ns", (json_int_t)f->total,
		      "frames", (json_int_t)f->frames, "frames_module", (json_int_t)f->frames_module,
		      "frames_unknown", (json_int_t)f->frames_unknown,
		      "holds_unmatched", (json_int_t)f->holds_unmatched,
		      "holds_short", (json_int_t)f->holds_short);
	return o;
}
