/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope_check.c: a run against an envelope (envelope.h,
 * docs/validation.md): is the envelope bound to this manifest and build,
 * and which metrics leave their band for ENVELOPE_SUSTAIN windows in a row
 * (warnings: weak evidence, never a state).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/envelope_int.h"
#include "common/array.h"
#include "common/digest.h"

/* ---- binding ---- */

int envelope__check_binding(const struct pb_envelope *env, const struct manifest *m,
			    const struct envelope_binding *b, struct pb_errtext *err)
{
	struct layout lay;
	struct metric *cand = NULL;
	size_t n_cand = 0, i, j, t;
	char want[PB_DIGEST_HEX_LEN], have[PB_DIGEST_HEX_LEN];
	int rc;

	if (!env || !m || !b)
		return -EINVAL;
	if (memcmp(env->sha256, b->manifest_sha256, sizeof(env->sha256))) {
		pb_hex(env->sha256, 32, want);
		pb_hex(b->manifest_sha256, 32, have);
		pb_errtext__set(err, "the envelope was trained on another manifest (sha256 %.16s..., "
				"this one is %.16s...): train it again for this manifest", want, have);
		return -EINVAL;
	}
	for (t = 0; t < m->n_targets; t++) {
		const char *id = m->targets[t].id ? m->targets[t].id : "?";

		for (i = 0; i < env->n_targets; i++)
			if (!strcmp(env->target_id[i], id))
				break;
		if (i == env->n_targets) {
			pb_errtext__set(err, "target '%s' of the manifest is not in the envelope", id);
			return -EINVAL;
		}
		if (t >= b->n_targets || strcmp(env->build_id[i], b->build_id[t])) {
			pb_errtext__set(err, "target '%s': the envelope was trained on build-id %s, "
					"this run probes build-id %s: an envelope holds for one build only",
					id, env->build_id[i][0] ? env->build_id[i] : "(none)",
					t < b->n_targets && b->build_id[t][0] ? b->build_id[t] : "(none)");
			return -EINVAL;
		}
	}
	if (env->n_targets != m->n_targets) {
		pb_errtext__set(err, "the envelope names %zu target(s), the manifest %zu",
				env->n_targets, m->n_targets);
		return -EINVAL;
	}
	rc = env_layout_init(&lay, m);
	if (!rc)
		rc = env_gen_candidates(&lay, &cand, &n_cand);
	env_layout_free(&lay);
	if (rc)
		return rc;
	for (i = 0; i < env->n_metrics; i++) {
		for (j = 0; j < n_cand; j++)
			if (!strcmp(cand[j].name, env->metrics[i].name))
				break;
		if (j == n_cand) {
			pb_errtext__set(err, "metrics[%zu]: '%s' is not a metric of this manifest",
					i, env->metrics[i].name);
			rc = -EINVAL;
			break;
		}
	}
	env_metrics_free(cand, n_cand);
	return rc;
}

/* ---- checking ---- */

struct envelope_check *envelope_check__new(const struct pb_envelope *env, const struct manifest *m)
{
	struct envelope_check *chk;
	struct metric *cand = NULL;
	size_t n_cand = 0, i, j;
	int err;

	if (!env || !m || !env->finished) {
		errno = EINVAL;
		return NULL;
	}
	chk = calloc(1, sizeof(*chk));
	if (!chk)
		return NULL;
	chk->env = env;
	err = env_layout_init(&chk->lay, m);
	if (!err)
		err = env_window_init(&chk->win, chk->lay.n_desc, chk->lay.n_res);
	if (!err)
		err = env_gen_candidates(&chk->lay, &cand, &n_cand);
	if (!err) {
		chk->m = calloc(env->n_metrics + 1, sizeof(*chk->m));
		if (!chk->m)
			err = -ENOMEM;
	}
	for (i = 0; !err && i < env->n_metrics; i++) {
		for (j = 0; j < n_cand; j++)
			if (!strcmp(cand[j].name, env->metrics[i].name))
				break;
		if (j == n_cand) {
			err = -EINVAL;	/* envelope__check_binding says which */
			break;
		}
		chk->m[chk->n_m].band = &env->metrics[i];
		chk->m[chk->n_m].def = cand[j];
		chk->m[chk->n_m].def.name = env->metrics[i].name;	/* borrowed */
		chk->m[chk->n_m].def.vals = NULL;
		chk->m[chk->n_m].warning = -1;
		chk->n_m++;
	}
	env_metrics_free(cand, n_cand);
	if (err) {
		envelope_check__free(chk);
		errno = -err;
		return NULL;
	}
	return chk;
}

static int push_warning(struct envelope_check *chk, struct check_metric *cm, double v, uint64_t ts)
{
	struct envelope_warning *w;
	const struct metric *b = cm->band;
	int err;

	err = PB_ARRAY_RESERVE_ONE(chk->warnings, chk->n_warnings, chk->cap_warnings);
	if (err)
		return err;
	w = &chk->warnings[chk->n_warnings];
	memset(w, 0, sizeof(*w));
	w->metric = b->name;
	w->value = v;
	w->lo = b->lo;
	w->hi = b->hi;
	w->trained_min = b->tmin;
	w->trained_max = b->tmax;
	w->ts_ns = ts;
	w->windows_outside = cm->outside;
	w->windows_checked = cm->checked;
	snprintf(w->text, sizeof(w->text),
		 "%s = %.4g outside the envelope [%.4g, %.4g] (trained %.4g..%.4g over %llu "
		 "windows) for %u consecutive windows; weak evidence, not proof",
		 b->name, v, b->lo, b->hi, b->tmin, b->tmax, (unsigned long long)b->windows,
		 cm->run);
	cm->warning = (int)chk->n_warnings++;
	return 1;
}

int envelope_check__record(struct envelope_check *chk, const void *rec, size_t len)
{
	if (!chk || !rec)
		return -EINVAL;
	return env_window_record(&chk->win, rec, len);
}

int envelope_check__snapshot(struct envelope_check *chk, uint64_t ts_ns,
			     const struct pb_desc_stats *cum, size_t n_desc)
{
	size_t i;
	int raised = 0, rc;
	bool key_seen = false;
	double v;

	if (!chk || (!cum && n_desc))
		return -EINVAL;
	if (env_window_snapshot(&chk->win, ts_ns, cum, n_desc, chk->env->window_ns) != 1)
		return 0;
	for (i = 0; i < chk->n_m; i++) {
		struct check_metric *cm = &chk->m[i];

		if (!env_metric_value(&cm->def, &chk->lay, &chk->win, cum, &v))
			continue;
		if (envelope_mtypes[cm->def.type].records)
			key_seen = true;
		cm->checked++;
		if (v >= cm->band->lo && v <= cm->band->hi) {
			cm->run = 0;
		} else {
			cm->outside++;
			cm->run++;
			if (cm->run >= ENVELOPE_SUSTAIN && cm->warning < 0) {
				rc = push_warning(chk, cm, v, ts_ns);
				if (rc < 0)
					return rc;
				raised += rc;
			}
		}
		if (cm->warning >= 0) {
			chk->warnings[cm->warning].windows_outside = cm->outside;
			chk->warnings[cm->warning].windows_checked = cm->checked;
		}
	}
	chk->windows++;
	if (key_seen)
		chk->key_windows++;
	env_window_advance(&chk->win, ts_ns, cum);
	return raised;
}

const struct envelope_warning *envelope_check__warnings(const struct envelope_check *chk, size_t *n)
{
	*n = chk ? chk->n_warnings : 0;
	return chk ? chk->warnings : NULL;
}

uint64_t envelope_check__windows(const struct envelope_check *chk)
{
	return chk ? chk->windows : 0;
}

size_t envelope_check__n_metrics(const struct envelope_check *chk)
{
	return chk ? chk->n_m : 0;
}

json_t *envelope_check__to_json(const struct envelope_check *chk)
{
	json_t *o, *ws;
	size_t i;

	if (!chk)
		return NULL;
	o = json_object();
	ws = json_array();
	if (!o || !ws) {
		json_decref(o);
		json_decref(ws);
		return NULL;
	}
	json_object_set_new(o, "windows", json_integer((json_int_t)chk->windows));
	json_object_set_new(o, "metrics_checked", json_integer((json_int_t)chk->n_m));
	json_object_set_new(o, "key_metrics", json_boolean(chk->env->key_metrics));
	json_object_set_new(o, "key_metrics_checked", json_boolean(chk->key_windows > 0));
	for (i = 0; i < chk->n_warnings; i++) {
		const struct envelope_warning *w = &chk->warnings[i];

		json_array_append_new(ws, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I}",
			"metric", w->metric, "value", w->value, "lo", w->lo, "hi", w->hi,
			"trained_min", w->trained_min, "trained_max", w->trained_max,
			"ts_ns", (json_int_t)w->ts_ns,
			"windows_outside", (json_int_t)w->windows_outside,
			"windows_checked", (json_int_t)w->windows_checked));
	}
	json_object_set_new(o, "warnings", ws);
	return o;
}

void envelope_check__free(struct envelope_check *chk)
{
	if (!chk)
		return;
	env_layout_free(&chk->lay);
	env_window_free(&chk->win);
	free(chk->m);
	free(chk->warnings);
	free(chk);
}

