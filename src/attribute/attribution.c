/* SPDX-License-Identifier: BSD-2-Clause */
/* attribution.c: `probity attribute SAMPLES` as a library (attribution.h).
 * A sample file is read twice: pass 1 adds its snapshot and kernel
 * records to the table, which is then built; pass 2 looks up every
 * sample. perf script text carries no kernel records: the table is built
 * from the stores alone and every sample line looked up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "attribute/attribution.h"
#include "attribute/perfscript.h"
#include "attribute/samples.h"
#include "common/array.h"
#include "common/io.h"

struct run {
	struct attr_table *t;
	struct attribution *a;
	bool list;
};

static struct attribution_count *count_of(struct attribution_count **arr, size_t *n, size_t *cap,
					  const char *key, const char *example)
{
	struct attribution_count *c;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*arr)[i].key, key))
			return &(*arr)[i];
	if (PB_ARRAY_RESERVE_ONE(*arr, *n, *cap))
		return NULL;
	c = &(*arr)[*n];
	memset(c, 0, sizeof(*c));
	c->key = strdup(key);
	c->example = example ? strdup(example) : NULL;
	if (!c->key || (example && !c->example)) {
		free(c->key);
		free(c->example);
		return NULL;
	}
	(*n)++;
	return c;
}

static int bump(struct attribution_count *c, uint32_t prog)
{
	size_t i;

	c->samples++;
	if (!prog)
		return 0;
	for (i = 0; i < c->n_progs; i++) {
		if (c->progs[i].prog_id == prog) {
			c->progs[i].samples++;
			return 0;
		}
	}
	if (PB_ARRAY_RESERVE_ONE(c->progs, c->n_progs, c->cap_progs))
		return -ENOMEM;
	c->progs[c->n_progs++] = (struct attribution_prog){ prog, 1 };
	return 0;
}

static int count_sample(struct run *x, uint64_t time, uint64_t ip, uint32_t cpu, uint32_t pid, uint32_t tid,
			const char *sym)
{
	struct attribution *a = x->a;
	struct attribution_count *c;
	struct attr_result r;

	a->total++;
	attr_table__lookup(x->t, time, ip, sym, &r);
	if (r.status == ATTR_NOT_BPF)
		return 0;
	a->in_jit++;
	if (r.status == ATTR_GENERATION)
		c = count_of(&a->gens, &a->n_gens, &a->cap_gens, r.generation_id, NULL);
	else
		c = count_of(&a->unknown, &a->n_unknown, &a->cap_unknown, attr_reason__name(r.reason), r.detail);
	if (!c || bump(c, r.prog_id))
		return -ENOMEM;
	if (!x->list)
		return 0;
	if (PB_ARRAY_RESERVE_ONE(a->list, a->n_list, a->cap_list))
		return -ENOMEM;
	a->list[a->n_list++] = (struct attribution_sample){
		.time_mono_ns = time, .ip = ip, .cpu = cpu, .pid = pid, .tid = tid, .r = r,
	};
	return 0;
}

/* ---------------------------------- sample file ---------------------------------- */

static int p1_snapshot(void *ctx, const json_t *snap)
{
	return attr_table__add_snapshot(ctx, snap);
}

static int p1_record(void *ctx, const struct sf_record *r)
{
	return attr_table__add_record(ctx, r);
}

static int p2_record(void *ctx, const struct sf_record *r)
{
	struct run *x = ctx;

	if (r->type == SF_REC_LOST) {
		x->a->lost += r->lost.lost;
		x->a->lost_records++;
	}
	if (r->type != SF_REC_SAMPLE)
		return 0;
	if (r->sample.mode == SF_MODE_KERNEL)
		x->a->kernel++;
	else if (r->sample.mode == SF_MODE_USER)
		x->a->user++;
	return count_sample(x, r->time, r->sample.ip, r->cpu, r->sample.pid, r->sample.tid, NULL);
}

static int p2_end(void *ctx, const json_t *end)
{
	struct run *x = ctx;
	struct sf_end e;

	json_decref(x->a->sampler_stats);
	x->a->sampler_stats = NULL;
	if (!sf_end__decode(end, &e, NULL) && e.stats) {
		x->a->sampler_stats = json_deep_copy(e.stats);
		if (!x->a->sampler_stats)
			return -ENOMEM;
	}
	return 0;
}

static int attribute_sample_file(struct run *x, const char *path, struct pb_errtext *err)
{
	struct samples_read_cb p1 = { .snapshot = p1_snapshot, .record = p1_record, .ctx = x->t };
	struct samples_read_cb p2 = { .record = p2_record, .end = p2_end, .ctx = x };
	struct pb_errtext why = { 0 };
	int rc;

	rc = samples__read(path, &p1, &why);
	if (rc < 0)
		goto fail;
	if (rc == 1)
		x->a->torn = why;
	rc = attr_table__build(x->t);
	if (rc) {
		pb_errtext__set(err, "building the interval table: %s", strerror(-rc));
		return rc;
	}
	rc = samples__read(path, &p2, &why);
	if (rc >= 0)
		return 0;
fail:
	pb_errtext__set(err, "%s: %s", path, why.msg[0] ? why.msg : strerror(-rc));
	return rc;
}

/* ---------------------------------- perf script ---------------------------------- */

static int ps_sample(void *ctx, const struct ps_sample *s)
{
	struct run *x = ctx;

	if (s->ip >= 0xffff800000000000ull)
		x->a->kernel++;
	else
		x->a->user++;
	return count_sample(x, s->time, s->ip, s->cpu, s->pid, s->tid, s->sym);
}

static int attribute_perf_script(struct run *x, const char *path, struct pb_errtext *err)
{
	struct pb_errtext why = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int rc;

	rc = pb_read_file(path, 0, &buf, &len);
	if (rc) {
		pb_errtext__set(err, "%s: %s", path, rc == -ENOMEM ? "out of memory" : strerror(-rc));
		return rc;
	}
	if (len >= 8 && !memcmp(buf, "PERFILE2", 8)) {
		pb_errtext__set(err, "%s: this is a perf.data file; give the text of 'perf script -i %s -F time,cpu,pid,tid,ip,sym --ns'",
				path, path);
		rc = -EMEDIUMTYPE;
		goto out;
	}
	rc = attr_table__build(x->t);
	if (!rc)
		rc = perfscript__parse(buf, len, ps_sample, x, &why);
	if (rc == -EBADMSG)
		pb_errtext__set(err, "%s: %s (expected perf script text or a probity sample file)", path,
				why.msg);
	else if (rc)
		pb_errtext__set(err, "%s: %s", path, strerror(-rc));
out:
	free(buf);
	return rc;
}

int attribution__run(struct attr_table *t, const struct attribution_opts *opts, struct attribution *a,
		     struct pb_errtext *err)
{
	struct run x = { .t = t, .a = a, .list = opts->list };
	struct stat st;
	int rc;

	memset(a, 0, sizeof(*a));
	if (samples__is_sample_file(opts->input)) {
		a->format = "probity sample file";
		rc = attribute_sample_file(&x, opts->input, err);
	} else if (stat(opts->input, &st)) {
		rc = -errno;
		pb_errtext__set(err, "%s: %s", opts->input, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		pb_errtext__set(err, "%s: not a regular file (expected a sample file or perf script text)",
				opts->input);
	} else {
		a->format = "perf script text";
		rc = attribute_perf_script(&x, opts->input, err);
	}
	if (rc) {
		struct pb_errtext torn = a->torn;

		attribution__clear(a);
		a->torn = torn;	/* still worth saying before the error */
	}
	return rc;
}

static void free_counts(struct attribution_count *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(c[i].key);
		free(c[i].example);
		free(c[i].progs);
	}
	free(c);
}

void attribution__clear(struct attribution *a)
{
	if (!a)
		return;
	free_counts(a->gens, a->n_gens);
	free_counts(a->unknown, a->n_unknown);
	free(a->list);
	json_decref(a->sampler_stats);
	memset(a, 0, sizeof(*a));
}
