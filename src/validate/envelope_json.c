/* SPDX-License-Identifier: BSD-2-Clause */
/* envelope_json.c: the envelope file (envelope.h, docs/validation.md):
 * written as JSON by 'probity train', read back by record/health.
 *
 * Every key name is below, once. Reading goes through one decoder per
 * record (document head, manifest, target, training, metric), each built
 * on json_unpack_ex; when a record does not unpack, explain() names the
 * first field that is missing or of the wrong type ("FIELD: expected ...,
 * found ..."), falling back to jansson's own error text.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "validate/envelope_int.h"
#include "common/digest.h"
#include "common/io.h"

/* ---- key names ---- */

#define EK_FORMAT	"format"
#define EK_VERSION	"version"
#define EK_MANIFEST	"manifest"
#define EK_NAME		"name"
#define EK_SHA256	"sha256"
#define EK_TARGETS	"targets"
#define EK_ID		"id"
#define EK_BUILD_ID	"build_id"
#define EK_WINDOW_MS	"window_ms"
#define EK_TRAINING	"training"
#define EK_RUNS		"runs"
#define EK_WINDOWS	"windows"
#define EK_KEY_METRICS	"key_metrics"
#define EK_UNTRAINED	"untrained"
#define EK_METRICS	"metrics"
#define EK_LO		"lo"
#define EK_HI		"hi"
#define EK_TRAINED	"trained"
#define EK_MIN		"min"
#define EK_MAX		"max"
#define EK_MEDIAN	"median"

#define ENVELOPE_MAX_FILE	(64u << 20)

/* ---- writing ---- */

json_t *envelope__to_json(const struct pb_envelope *env)
{
	json_t *o, *targets, *metrics;
	char sha[PB_DIGEST_HEX_LEN];
	size_t i;

	if (!env || !env->finished)
		return NULL;
	pb_hex(env->sha256, sizeof(env->sha256), sha);
	o = json_object();
	targets = json_array();
	metrics = json_array();
	if (!o || !targets || !metrics) {
		json_decref(o);
		json_decref(targets);
		json_decref(metrics);
		return NULL;
	}
	json_object_set_new(o, EK_FORMAT, json_string(ENVELOPE_FORMAT));
	json_object_set_new(o, EK_VERSION, json_integer(ENVELOPE_VERSION));
	json_object_set_new(o, EK_MANIFEST, json_pack("{s:s, s:s}", EK_NAME, env->manifest_name,
						     EK_SHA256, sha));
	for (i = 0; i < env->n_targets; i++)
		json_array_append_new(targets, json_pack("{s:s, s:s}", EK_ID, env->target_id[i],
							 EK_BUILD_ID, env->build_id[i]));
	json_object_set_new(o, EK_TARGETS, targets);
	json_object_set_new(o, EK_WINDOW_MS, json_integer((json_int_t)(env->window_ns / 1000000)));
	json_object_set_new(o, EK_TRAINING, json_pack("{s:I, s:I, s:b, s:I}",
		EK_RUNS, (json_int_t)env->runs, EK_WINDOWS, (json_int_t)env->windows,
		EK_KEY_METRICS, env->key_metrics, EK_UNTRAINED, (json_int_t)env->n_untrained));
	for (i = 0; i < env->n_metrics; i++) {
		const struct metric *mt = &env->metrics[i];

		json_array_append_new(metrics, json_pack("{s:s, s:f, s:f, s:{s:f, s:f, s:f, s:I}}",
			EK_NAME, mt->name, EK_LO, mt->lo, EK_HI, mt->hi, EK_TRAINED,
			EK_MIN, mt->tmin, EK_MAX, mt->tmax, EK_MEDIAN, mt->median,
			EK_WINDOWS, (json_int_t)mt->windows));
	}
	json_object_set_new(o, EK_METRICS, metrics);
	return o;
}

int envelope__write(const struct pb_envelope *env, const char *path)
{
	json_t *doc = envelope__to_json(env);
	char *text = NULL, *tmp = NULL;
	int fd = -1, err;

	if (!doc)
		return -EINVAL;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (!text || asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = pb_write_all(fd, text, strlen(text));
	if (!err)
		err = pb_write_all(fd, "\n", 1);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	fd = -1;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(text);
	return err;
}


/* ---- reading ---- */

/* one field of a record, for explain(): JSON_REAL accepts any number */
struct field {
	const char *key;
	json_type type;
};

static int perr(struct pb_errtext *err, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct pb_errtext *err, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return -EINVAL;
	n = snprintf(err->msg, sizeof(err->msg), "%s: ", name);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *json_type_str(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static const char *want_str(json_type want)
{
	switch (want) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_TRUE: return "a boolean";
	default: return "a number";
	}
}

static bool of_type(const json_t *v, json_type want)
{
	return json_typeof(v) == want || (want == JSON_REAL && json_typeof(v) == JSON_INTEGER);
}

/* A record of object o (at path, e.g. "targets[0].") did not unpack: name
 * its first field, in the order of fields, that is missing or of the wrong
 * type; jansson's text when none is. Returns -EINVAL. */
static int explain(json_t *o, const struct field *fields, size_t n, const char *path,
		   const json_error_t *je, const char *name, struct pb_errtext *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *v = json_is_object(o) ? json_object_get(o, fields[i].key) : NULL;

		if (!v)
			return perr(err, name, "%s%s: missing", path, fields[i].key);
		if (!of_type(v, fields[i].type))
			return perr(err, name, "%s%s: expected %s, found %s", path,
				    fields[i].key, want_str(fields[i].type), json_type_str(v));
	}
	return perr(err, name, "%s%s", path, je->text[0] ? je->text : "unexpected shape");
}

#define N_FIELDS(f) (sizeof(f) / sizeof((f)[0]))

static bool is_hex(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s), i;

	if (n < min || n > max || n % 2)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool number_of(json_t *v, double *out)
{
	double d = json_number_value(v);

	if (!isfinite(d))
		return false;
	*out = d;
	return true;
}

static const char *type_of_name(const char *name, int *type)
{
	int t;

	for (t = 0; t < MT__COUNT; t++) {
		size_t l = strlen(envelope_mtypes[t].name);

		if (!strncmp(name, envelope_mtypes[t].name, l) && name[l] == '/') {
			*type = t;
			return envelope_mtypes[t].name;
		}
	}
	return NULL;
}

/* {"format": "probity-envelope", "version": 1, ...} */
static int decode_head(struct pb_envelope *env, json_t *doc, const char *name,
		       struct pb_errtext *err)
{
	static const struct field format_field[] = { { EK_FORMAT, JSON_STRING } };
	static const struct field version_field[] = { { EK_VERSION, JSON_INTEGER } };
	const char *format;
	json_int_t ver;
	json_error_t je = { .text = "" };

	if (!json_is_object(doc))
		return perr(err, name, "expected a JSON object, found %s", json_type_str(doc));
	/* the format first: another kind of file is told so, whatever it holds */
	if (json_unpack_ex(doc, &je, 0, "{s:s}", EK_FORMAT, &format))
		return explain(doc, format_field, 1, "", &je, name, err);
	if (strcmp(format, ENVELOPE_FORMAT))
		return perr(err, name, "format: expected \"%s\", found \"%.64s\" (not an "
			    "envelope written by 'probity train')", ENVELOPE_FORMAT, format);
	if (json_unpack_ex(doc, &je, 0, "{s:I}", EK_VERSION, &ver))
		return explain(doc, version_field, 1, "", &je, name, err);
	if (ver != ENVELOPE_VERSION)
		return perr(err, name, "version: expected %d, found %lld%s", ENVELOPE_VERSION,
			    (long long)ver, ver > ENVELOPE_VERSION ? " (written by a newer probity)" : "");
	return 0;
}

/* "manifest": {"name": "...", "sha256": "64 hex digits"} */
static int decode_manifest(struct pb_envelope *env, json_t *doc, const char *name,
			   struct pb_errtext *err)
{
	static const struct field outer[] = { { EK_MANIFEST, JSON_OBJECT } };
	static const struct field fields[] = { { EK_SHA256, JSON_STRING } };
	json_t *man, *jname = NULL;
	const char *sha;
	json_error_t je = { .text = "" };
	size_t i;

	if (json_unpack_ex(doc, &je, 0, "{s:o}", EK_MANIFEST, &man) || !json_is_object(man))
		return explain(doc, outer, N_FIELDS(outer), "", &je, name, err);
	if (json_unpack_ex(man, &je, 0, "{s:s, s?o}", EK_SHA256, &sha, EK_NAME, &jname))
		return explain(man, fields, N_FIELDS(fields), EK_MANIFEST ".", &je, name, err);
	if (!is_hex(sha, 64, 64))
		return perr(err, name, "manifest.sha256: expected 64 lower-case hex digits, "
			    "found '%.80s'", sha);
	for (i = 0; i < 32; i++) {
		unsigned int b;

		if (sscanf(sha + 2 * i, "%2x", &b) != 1)
			return -EINVAL;	/* is_hex said it is hex */
		env->sha256[i] = (uint8_t)b;
	}
	env->manifest_name = strdup(json_is_string(jname) ? json_string_value(jname) : "");
	return env->manifest_name ? 0 : -ENOMEM;
}

/* targets[i]: {"id": "...", "build_id": "hex, up to 128 digits"} */
static int decode_target(struct pb_envelope *env, json_t *t, size_t i, const char *name,
			 struct pb_errtext *err)
{
	static const struct field fields[] = {
		{ EK_ID, JSON_STRING }, { EK_BUILD_ID, JSON_STRING },
	};
	const char *id, *bid;
	json_error_t je = { .text = "" };
	char path[32];

	snprintf(path, sizeof(path), "targets[%zu].", i);
	if (!json_is_object(t))
		return perr(err, name, "targets[%zu]: expected an object, found %s", i,
			    json_type_str(t));
	if (json_unpack_ex(t, &je, 0, "{s:s, s:s}", EK_ID, &id, EK_BUILD_ID, &bid))
		return explain(t, fields, N_FIELDS(fields), path, &je, name, err);
	env->target_id[i] = strdup(id);
	if (!env->target_id[i])
		return -ENOMEM;
	env->n_targets = i + 1;
	if (!is_hex(bid, 0, 128))
		return perr(err, name, "%sbuild_id: expected an even number (up to 128) "
			    "of lower-case hex digits, found '%.140s'", path, bid);
	snprintf(env->build_id[i], sizeof(env->build_id[i]), "%s", bid);
	return 0;
}

static int decode_targets(struct pb_envelope *env, json_t *doc, const char *name,
			  struct pb_errtext *err)
{
	static const struct field outer[] = { { EK_TARGETS, JSON_ARRAY } };
	json_t *targets, *t;
	json_error_t je = { .text = "" };
	size_t i;
	int rc;

	if (json_unpack_ex(doc, &je, 0, "{s:o}", EK_TARGETS, &targets) || !json_is_array(targets))
		return explain(doc, outer, N_FIELDS(outer), "", &je, name, err);
	if (!json_array_size(targets) || json_array_size(targets) > ENVELOPE_MAX_TARGETS)
		return perr(err, name, "targets: expected 1 to %d targets, found %zu",
			    ENVELOPE_MAX_TARGETS, json_array_size(targets));
	json_array_foreach(targets, i, t) {
		rc = decode_target(env, t, i, name, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* optional "window_ms" and "training": {"runs", "windows", "key_metrics"}
 * (informative: members of another type are ignored) */
static int decode_training(struct pb_envelope *env, json_t *doc, const char *name,
			   struct pb_errtext *err)
{
	json_t *wms = NULL, *tr = NULL, *runs = NULL, *windows = NULL, *key = NULL;

	if (json_unpack_ex(doc, NULL, 0, "{s?o, s?o}", EK_WINDOW_MS, &wms, EK_TRAINING, &tr))
		return -EINVAL;	/* doc is an object: optional members always unpack */
	if (wms) {
		if (!json_is_integer(wms) || json_integer_value(wms) < 100 ||
		    json_integer_value(wms) > 3600000)
			return perr(err, name, "window_ms: expected an integer 100..3600000");
		env->window_ns = (uint64_t)json_integer_value(wms) * 1000000ull;
	}
	if (tr && !json_is_object(tr))
		return perr(err, name, "training: expected an object, found %s",
			    json_type_str(tr));
	if (!tr)
		return 0;
	if (json_unpack_ex(tr, NULL, 0, "{s?o, s?o, s?o}", EK_RUNS, &runs, EK_WINDOWS, &windows,
			   EK_KEY_METRICS, &key))
		return -EINVAL;
	if (json_is_integer(runs) && json_integer_value(runs) >= 0)
		env->runs = (size_t)json_integer_value(runs);
	if (json_is_integer(windows) && json_integer_value(windows) >= 0)
		env->windows = (size_t)json_integer_value(windows);
	env->key_metrics = json_is_true(key);
	return 0;
}

/* metrics[idx].trained: {"min", "max", "median", "windows"}, informative:
 * members of another type are ignored */
static int decode_trained(struct metric *mt, json_t *tr)
{
	json_t *min = NULL, *max = NULL, *median = NULL, *windows = NULL;

	mt->tmin = mt->lo;
	mt->tmax = mt->hi;
	if (!tr)
		return 0;
	if (json_unpack_ex(tr, NULL, 0, "{s?o, s?o, s?o, s?o}", EK_MIN, &min, EK_MAX, &max,
			   EK_MEDIAN, &median, EK_WINDOWS, &windows))
		return -EINVAL;
	if (min && json_is_number(min))
		number_of(min, &mt->tmin);
	if (max && json_is_number(max))
		number_of(max, &mt->tmax);
	if (median && json_is_number(median))
		number_of(median, &mt->median);
	if (json_is_integer(windows) && json_integer_value(windows) >= 0)
		mt->windows = (uint64_t)json_integer_value(windows);
	return 0;
}

/* metrics[idx]: {"name": "TYPE/WHAT", "lo", "hi", "trained"?} */
static int decode_metric(struct pb_envelope *env, json_t *jm, size_t idx, const char *name,
			 struct pb_errtext *err)
{
	static const struct field name_field[] = { { EK_NAME, JSON_STRING } };
	static const struct field band_fields[] = { { EK_LO, JSON_REAL }, { EK_HI, JSON_REAL } };
	struct metric *mt = &env->metrics[idx];
	json_t *lo, *hi, *tr = NULL;
	json_error_t je = { .text = "" };
	const char *s;
	char path[64];
	int type;

	snprintf(path, sizeof(path), "metrics[%zu].", idx);
	if (!json_is_object(jm))
		return perr(err, name, "metrics[%zu]: expected an object, found %s", idx,
			    json_type_str(jm));
	if (json_unpack_ex(jm, &je, 0, "{s:s}", EK_NAME, &s))
		return explain(jm, name_field, N_FIELDS(name_field), path, &je, name, err);
	if (!s[0] || strlen(s) > MAX_NAME || !type_of_name(s, &type))
		return perr(err, name, "%sname: expected TYPE/WHAT with TYPE one of share, "
			    "ratio, guard_pass, new_generation, units_mean, duration_p50_log2, "
			    "key_aligned8, key_distinct, transition, units_p50_log2, found "
			    "'%.80s'", path, s);
	mt->type = type;
	mt->desc = mt->res = mt->kind = -1;
	mt->name = strdup(s);
	if (!mt->name)
		return -ENOMEM;
	if (json_unpack_ex(jm, &je, 0, "{s:o, s:o, s?o}", EK_LO, &lo, EK_HI, &hi, EK_TRAINED, &tr) ||
	    !json_is_number(lo) || !json_is_number(hi))
		return explain(jm, band_fields, N_FIELDS(band_fields), path, &je, name, err);
	if (!number_of(lo, &mt->lo))
		return perr(err, name, "%slo: not a finite number", path);
	if (!number_of(hi, &mt->hi))
		return perr(err, name, "%shi: not a finite number", path);
	if (mt->lo > mt->hi)
		return perr(err, name, "%slo, hi: expected lo <= hi, found [%g, %g]", path,
			    mt->lo, mt->hi);
	if (tr && !json_is_object(tr))
		return perr(err, name, "%strained: expected an object, found %s", path,
			    json_type_str(tr));
	return decode_trained(mt, tr);
}

static int decode_metrics(struct pb_envelope *env, json_t *doc, const char *name,
			  struct pb_errtext *err)
{
	static const struct field outer[] = { { EK_METRICS, JSON_ARRAY } };
	json_t *metrics, *t;
	json_error_t je = { .text = "" };
	size_t i, j;
	int rc;

	if (json_unpack_ex(doc, &je, 0, "{s:o}", EK_METRICS, &metrics) || !json_is_array(metrics))
		return explain(doc, outer, N_FIELDS(outer), "", &je, name, err);
	if (json_array_size(metrics) > MAX_METRICS)
		return perr(err, name, "metrics: more than %d", MAX_METRICS);
	env->metrics = calloc(json_array_size(metrics) + 1, sizeof(*env->metrics));
	if (!env->metrics)
		return -ENOMEM;
	json_array_foreach(metrics, i, t) {
		rc = decode_metric(env, t, i, name, err);
		env->n_metrics = i + (env->metrics[i].name ? 1 : 0);
		if (rc)
			return rc;
		if (envelope_mtypes[env->metrics[i].type].records)
			env->key_metrics = true;
		for (j = 0; j < i; j++)
			if (!strcmp(env->metrics[j].name, env->metrics[i].name))
				return perr(err, name, "metrics[%zu].name: '%.80s' already in "
					    "metrics[%zu]", i, env->metrics[i].name, j);
	}
	return 0;
}

/* The whole document, record by record, in the order a reader meets them. */
static int decode_doc(struct pb_envelope *env, json_t *doc, const char *name,
		      struct pb_errtext *err)
{
	int rc;

	rc = decode_head(env, doc, name, err);
	if (!rc)
		rc = decode_manifest(env, doc, name, err);
	if (!rc)
		rc = decode_targets(env, doc, name, err);
	if (!rc)
		rc = decode_training(env, doc, name, err);
	if (!rc)
		rc = decode_metrics(env, doc, name, err);
	if (!rc)
		env->finished = true;
	return rc;
}

struct pb_envelope *envelope__parse(const char *name, const void *buf, size_t len,
				    struct pb_errtext *err)
{
	struct pb_envelope *env;
	json_error_t jerr;
	json_t *doc;
	int rc;

	if (err)
		err->msg[0] = 0;
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		pb_errtext__set_at(err, jerr.line, 0, "%s:%d:%d: invalid JSON: %s", name, jerr.line,
				   jerr.column, jerr.text);
		errno = EINVAL;
		return NULL;
	}
	env = calloc(1, sizeof(*env));
	if (!env) {
		json_decref(doc);
		errno = ENOMEM;
		return NULL;
	}
	env->window_ns = ENVELOPE_WINDOW_NS;
	rc = decode_doc(env, doc, name, err);
	json_decref(doc);
	if (rc) {
		envelope__free(env);
		errno = -rc;
		return NULL;
	}
	return env;
}

struct pb_envelope *envelope__load(const char *path, struct pb_errtext *err)
{
	struct pb_envelope *env;
	char *buf = NULL;
	size_t len = 0;
	int rc, e;

	rc = pb_read_file(path, ENVELOPE_MAX_FILE, &buf, &len);
	if (!rc && len >= ENVELOPE_MAX_FILE) {
		free(buf);
		pb_errtext__set(err, "%s: larger than 64 MiB: not an envelope", path);
		errno = EINVAL;
		return NULL;
	}
	if (rc) {
		pb_errtext__set(err, "%s: %s", path, rc == -ENOMEM ? "out of memory" : strerror(-rc));
		errno = -rc;
		return NULL;
	}
	env = envelope__parse(path, buf, len, err);
	e = errno;
	free(buf);
	errno = e;
	return env;
}
