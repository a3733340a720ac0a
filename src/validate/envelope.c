/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope.c: distribution envelopes (envelope.h, docs/validation.md):
 * training.
 *
 * One metric = one number per window of evidence (a ratio between
 * counters of the window). Training keeps every window's value and turns
 * their spread into a band; checking (envelope_check.c) computes the same
 * numbers over the same kind of window and counts the windows outside the
 * band. Pure bookkeeping over counters and records: no BPF; the file
 * (envelope_json.c) is JSON. The metrics and windows themselves live in
 * envelope_metrics.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/envelope_int.h"
#include "common/array.h"

/* ---- training ---- */

static int binding_copy(struct pb_envelope *env, const struct manifest *m,
			const struct envelope_binding *b)
{
	size_t i;

	if (b->n_targets != m->n_targets || b->n_targets > ENVELOPE_MAX_TARGETS)
		return -EINVAL;
	memcpy(env->sha256, b->manifest_sha256, sizeof(env->sha256));
	env->n_targets = b->n_targets;
	for (i = 0; i < b->n_targets; i++) {
		env->target_id[i] = strdup(m->targets[i].id ? m->targets[i].id : "?");
		if (!env->target_id[i])
			return -ENOMEM;
		snprintf(env->build_id[i], sizeof(env->build_id[i]), "%s", b->build_id[i]);
	}
	env->manifest_name = strdup(m->name ? m->name : "");
	return env->manifest_name ? 0 : -ENOMEM;
}

struct pb_envelope *envelope__new(const struct manifest *m, const struct envelope_binding *b)
{
	struct pb_envelope *env;
	int err;

	if (!m || !b) {
		errno = EINVAL;
		return NULL;
	}
	env = calloc(1, sizeof(*env));
	if (!env)
		return NULL;
	env->window_ns = ENVELOPE_WINDOW_NS;
	env->key_metrics = true;
	err = binding_copy(env, m, b);
	if (!err)
		err = env_layout_init(&env->lay, m);
	if (!err)
		err = env_window_init(&env->win, env->lay.n_desc, env->lay.n_res);
	if (!err)
		err = env_gen_candidates(&env->lay, &env->metrics, &env->n_metrics);
	if (err) {
		envelope__free(env);
		errno = -err;
		return NULL;
	}
	return env;
}

int envelope__begin_run(struct pb_envelope *env, bool has_records)
{
	if (!env || env->finished)
		return -EINVAL;
	env_window_restart(&env->win);
	env->in_run = true;
	env->runs++;
	if (!has_records)
		env->key_metrics = false;
	return 0;
}

int envelope__record(struct pb_envelope *env, const void *rec, size_t len)
{
	if (!env || !rec || !env->in_run)
		return -EINVAL;
	return env_window_record(&env->win, rec, len);
}

int envelope__snapshot(struct pb_envelope *env, uint64_t ts_ns,
		       const struct pb_desc_stats *cum, size_t n_desc)
{
	size_t i;
	double v;
	int err;

	if (!env || !env->in_run || (!cum && n_desc))
		return -EINVAL;
	if (env_window_snapshot(&env->win, ts_ns, cum, n_desc, env->window_ns) != 1)
		return 0;
	for (i = 0; i < env->n_metrics; i++) {
		struct metric *mt = &env->metrics[i];

		if (!env_metric_value(mt, &env->lay, &env->win, cum, &v))
			continue;
		err = PB_ARRAY_RESERVE_ONE(mt->vals, mt->n_vals, mt->cap_vals);
		if (err)
			return err;
		mt->vals[mt->n_vals++] = v;
	}
	env->windows++;
	env_window_advance(&env->win, ts_ns, cum);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Band = [min - h, max + h], h = max(BAND_SPREAD x (max - min),
 * BAND_REL x |median|, the type's floor); never below 0 (every metric is
 * a non-negative quantity). */
static void band_from(struct metric *mt)
{
	double spread, h, med;

	qsort(mt->vals, mt->n_vals, sizeof(double), cmp_double);
	mt->tmin = mt->vals[0];
	mt->tmax = mt->vals[mt->n_vals - 1];
	med = mt->n_vals % 2 ? mt->vals[mt->n_vals / 2] :
	      (mt->vals[mt->n_vals / 2 - 1] + mt->vals[mt->n_vals / 2]) / 2;
	mt->median = med;
	spread = mt->tmax - mt->tmin;
	h = BAND_SPREAD * spread;
	if (BAND_REL * fabs(med) > h)
		h = BAND_REL * fabs(med);
	if (envelope_mtypes[mt->type].floor > h)
		h = envelope_mtypes[mt->type].floor;
	mt->lo = mt->tmin - h < 0 ? 0 : mt->tmin - h;
	mt->hi = mt->tmax + h;
	mt->windows = mt->n_vals;
}

int envelope__finish(struct pb_envelope *env)
{
	size_t i, n = 0;

	if (!env || env->finished)
		return -EINVAL;
	for (i = 0; i < env->n_metrics; i++) {
		struct metric *mt = &env->metrics[i];
		bool keep = mt->n_vals >= ENVELOPE_MIN_WINDOWS &&
			    (!envelope_mtypes[mt->type].records || env->key_metrics);

		if (!keep) {
			if (!envelope_mtypes[mt->type].records || env->key_metrics)
				env->n_untrained++;
			free(mt->name);
			free(mt->vals);
			continue;
		}
		band_from(mt);
		free(mt->vals);
		mt->vals = NULL;
		mt->n_vals = mt->cap_vals = 0;
		env->metrics[n++] = *mt;
	}
	env->n_metrics = n;
	env->finished = true;
	env->in_run = false;
	if (!env->runs)
		env->key_metrics = false;
	return n ? 0 : -ENODATA;
}

size_t envelope__n_metrics(const struct pb_envelope *env)
{
	return env ? env->n_metrics : 0;
}

size_t envelope__n_runs(const struct pb_envelope *env)
{
	return env ? env->runs : 0;
}

size_t envelope__n_windows(const struct pb_envelope *env)
{
	return env ? env->windows : 0;
}

bool envelope__has_key_metrics(const struct pb_envelope *env)
{
	return env && env->key_metrics;
}

size_t envelope__n_untrained(const struct pb_envelope *env)
{
	return env ? env->n_untrained : 0;
}

void envelope__free(struct pb_envelope *env)
{
	size_t i;

	if (!env)
		return;
	env_metrics_free(env->metrics, env->n_metrics);
	for (i = 0; i < ENVELOPE_MAX_TARGETS; i++)
		free(env->target_id[i]);
	free(env->manifest_name);
	env_layout_free(&env->lay);
	env_window_free(&env->win);
	free(env);
}
