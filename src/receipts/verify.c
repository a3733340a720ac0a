/* verify.c: recompute every digest of a store and its lifecycle log and
 * name exactly what is missing or altered:
 *  - every object: its content must hash to its name;
 *  - every receipt: generation_id = digest of its generation body; every
 *    artifact it names present and intact; the derived digests (xlated
 *    and native normalization, verifier result, line mapping, in-toto
 *    subjects) recomputed from the artifacts;
 *  - the log: framing CRCs, the hash chain, sequence numbers, and every
 *    receipt an entry names present with the same generation id;
 *  - leftovers in tmp/ (an interrupted write) are notes, not failures.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "receipts/receipts_int.h"

struct vctx {
	struct pb_store *s;
	struct verify_result *r;
	json_t *present;	/* hex -> true (intact) / false (altered) */
	json_t *receipts;	/* hex -> receipt statement */
};

static void add(json_t *arr, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add(json_t *arr, const char *where, const char *fmt, ...)
{
	char what[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	json_array_append_new(arr, json_pack("{s:s, s:s}", "where", where, "what", what));
}

static int check_object(const char *hex, const char *path, void *ctx)
{
	struct vctx *v = ctx;
	char got[PB_DIGEST_HEX_LEN], where[128];
	json_error_t jerr;
	void *buf;
	size_t len;
	json_t *j;
	int err;

	v->r->n_objects++;
	snprintf(where, sizeof(where), "object %s", hex);
	if (!pb_is_digest_hex(hex)) {
		add(v->r->problems, where, "not a digest-named object (%s)", path);
		return 0;
	}
	err = pb_store__get(v->s, hex, &buf, &len);
	if (err) {
		/* pb_store__get: -EINVAL/-EISDIR for a FIFO, device or directory
		 * (the name was checked above) */
		add(v->r->problems, where, "unreadable: %s", err == -EINVAL || err == -EISDIR ?
		    "not a regular file" : strerror(-err));
		json_object_set_new(v->present, hex, json_false());
		return 0;
	}
	pb_sha256_hex(buf, len, got);
	if (strcmp(got, hex)) {
		add(v->r->problems, where, "altered: content hashes to %s", got);
		json_object_set_new(v->present, hex, json_false());
		free(buf);
		return 0;
	}
	json_object_set_new(v->present, hex, json_true());
	if (len && ((char *)buf)[0] == '{') {
		j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
		if (receipt__is_receipt(j)) {
			json_object_set(v->receipts, hex, j);
			v->r->n_receipts++;
		}
		json_decref(j);
	}
	free(buf);
	return 0;
}

/* Artifact `name` of receipt `where`: 1 if present and intact. */
static int artifact_ok(struct vctx *v, const char *where, const char *name, const char *hex)
{
	json_t *p;

	if (!hex || !pb_is_digest_hex(hex)) {
		add(v->r->problems, where, "%s: no valid digest", name);
		return 0;
	}
	p = json_object_get(v->present, hex);
	if (!p) {
		add(v->r->problems, where, "%s: artifact %s is missing", name, hex);
		return 0;
	}
	if (!json_is_true(p)) {
		add(v->r->problems, where, "%s: artifact %s is altered", name, hex);
		return 0;
	}
	return 1;
}

static void expect_eq(struct vctx *v, const char *where, const char *field, const char *have,
		      const char *want)
{
	if (!have || strcmp(have, want))
		add(v->r->problems, where, "%s is %s but recomputes to %s", field, have ? have : "(none)",
		    want);
}

static void check_receipt(struct vctx *v, const char *hex, json_t *stmt)
{
	json_t *p = json_object_get(stmt, "predicate");
	json_t *art = json_object_get(p, "artifacts"), *ver = json_object_get(p, "verifier");
	json_t *body = json_object_get(p, "generation"), *steps, *sv, *s;
	char where[128], got[PB_DIGEST_HEX_LEN];
	const char *a, *key;
	void *buf;
	size_t len, i;

	snprintf(where, sizeof(where), "receipt %s", hex);
	if (receipt__generation_id(p, got)) {
		add(v->r->problems, where, "no generation body");
		return;
	}
	expect_eq(v, where, "generation_id", json_string_value(json_object_get(p, "generation_id")), got);
	/* every artifact */
	json_object_foreach(art, key, sv)
		artifact_ok(v, where, key, json_string_value(sv));
	const char *step_kinds[] = { "transforms", "assumptions" };
	for (int k = 0; k < 2; k++) {
		steps = json_object_get(body, step_kinds[k]);
		json_array_foreach(steps, i, s) {
			char nm[160];

			if (json_is_null(json_object_get(s, "evidence")))
				continue;
			snprintf(nm, sizeof(nm), "%s[%s] evidence", step_kinds[k],
				 json_string_value(json_object_get(s, "id")) ?: "?");
			artifact_ok(v, where, nm, json_string_value(json_object_get(s, "evidence")));
		}
	}
	/* derived digests */
	a = json_string_value(json_object_get(art, "submitted_insns"));
	if (a)
		expect_eq(v, where, "submitted_insns_digest",
			  json_string_value(json_object_get(p, "submitted_insns_digest")), a);
	a = json_string_value(json_object_get(art, "xlated_insns"));
	if (a && json_is_true(json_object_get(v->present, a)) && !pb_store__get(v->s, a, &buf, &len)) {
		normalize__bpf_insns(buf, len);
		pb_sha256_hex(buf, len, got);
		expect_eq(v, where, "xlated_insns_digest",
			  json_string_value(json_object_get(p, "xlated_insns_digest")), got);
		free(buf);
	}
	a = json_string_value(json_object_get(art, "jit_image"));
	if (a && json_is_true(json_object_get(v->present, a)) && !pb_store__get(v->s, a, &buf, &len)) {
		if (!normalize__native_digest(buf, len, json_object_get(json_object_get(p, "jit"), "func_lens"),
					      got))
			expect_eq(v, where, "native_image_digest",
				  json_string_value(json_object_get(p, "native_image_digest")), got);
		free(buf);
	}
	a = json_string_value(json_object_get(art, "line_mapping"));
	if (a)
		expect_eq(v, where, "line_mapping_digest",
			  json_string_value(json_object_get(p, "line_mapping_digest")), a);
	a = json_string_value(json_object_get(art, "verifier_log"));
	if (a && json_is_true(json_object_get(v->present, a)) && !pb_store__get(v->s, a, &buf, &len)) {
		char *n = normalize__verifier_log(buf);

		if (n) {
			pb_sha256_hex(n, strlen(n), got);
			expect_eq(v, where, "verifier.log_normalized_digest",
				  json_string_value(json_object_get(ver, "log_normalized_digest")), got);
		}
		free(n);
		free(buf);
	}
	{
		json_t *vr = json_pack("{s:O, s:O, s:O, s:O}", "accepted", json_object_get(ver, "accepted"),
				       "log_level", json_object_get(ver, "log_level"),
				       "verified_insns", json_object_get(ver, "verified_insns"),
				       "log_normalized_digest", json_object_get(ver, "log_normalized_digest"));

		if (vr && !canon__digest(vr, got))
			expect_eq(v, where, "verifier_result_digest",
				  json_string_value(json_object_get(p, "verifier_result_digest")), got);
		else
			add(v->r->problems, where, "verifier result incomplete");
		json_decref(vr);
	}
	/* in-toto subjects name the predicate's digests */
	json_array_foreach(json_object_get(stmt, "subject"), i, s) {
		const char *nm = json_string_value(json_object_get(s, "name")) ?: "";
		const char *d = json_string_value(json_object_get(json_object_get(s, "digest"), "sha256"));
		const char *field = !strcmp(nm, "bpf/submitted-insns") ? "submitted_insns_digest" :
				    !strcmp(nm, "bpf/xlated-insns") ? "xlated_insns_digest" :
				    !strcmp(nm, "jit/native-image") ? "native_image_digest" : NULL;

		if (!field)
			add(v->r->problems, where, "unknown subject '%s'", nm);
		else if (!d || strcmp(d, json_string_value(json_object_get(p, field)) ?: ""))
			add(v->r->problems, where, "subject %s does not match %s", nm, field);
	}
}

static void log_problem(void *ctx, const char *where, const char *what)
{
	struct vctx *v = ctx;

	add(v->r->problems, where, "%s", what);
}

static void check_log(struct vctx *v)
{
	struct lifelog_problem_cb cb = { log_problem, v };
	json_t *entries = NULL, *e, *gens = json_object();
	char where[128];
	size_t i;
	int rc;

	rc = lifelog__read(v->s, &entries, &cb);
	if (rc < 0) {
		add(v->r->problems, PB_LIFELOG_NAME, "unreadable: %s", strerror(-rc));
		json_decref(gens);
		return;
	}
	v->r->n_entries = json_array_size(entries);
	json_array_foreach(entries, i, e) {
		const char *rid = json_string_value(json_object_get(e, "receipt"));
		const char *gid = json_string_value(json_object_get(e, "generation_id"));
		json_t *rec, *p;

		if (!rid)
			continue;
		snprintf(where, sizeof(where), "%s entry #%zu (%s)", PB_LIFELOG_NAME, i,
			 json_string_value(json_object_get(e, "kind")) ?: "?");
		p = json_object_get(v->present, rid);
		if (!p) {
			add(v->r->problems, where, "receipt %s is missing", rid);
			continue;
		}
		if (!json_is_true(p)) {
			add(v->r->problems, where, "receipt %s is altered", rid);
			continue;
		}
		rec = json_object_get(v->receipts, rid);
		if (!rec) {
			add(v->r->problems, where, "object %s is not a receipt", rid);
			continue;
		}
		p = json_object_get(rec, "predicate");
		if (!gid || strcmp(gid, json_string_value(json_object_get(p, "generation_id")) ?: ""))
			add(v->r->problems, where, "generation_id %s does not match receipt %s",
			    gid ? gid : "(none)", rid);
		if (gid)
			json_object_set_new(gens, gid, json_true());
	}
	/* every parent named by a receipt is a generation of this store */
	{
		const char *hex;
		json_t *rec;

		json_object_foreach(v->receipts, hex, rec) {
			const char *par = json_string_value(json_object_get(
				json_object_get(rec, "predicate"), "parent_generation_id"));

			snprintf(where, sizeof(where), "receipt %s", hex);
			if (par && !json_object_get(gens, par))
				add(v->r->problems, where, "parent generation %s has no loaded receipt in this store",
				    par);
		}
	}
	json_decref(gens);
	json_decref(entries);
}

static void check_tmp(struct vctx *v)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/tmp", v->s->dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "tmp/%s", de->d_name);
		add(v->r->notes, path, "interrupted write (never visible as an object; 'receipts gc' removes it)");
	}
	closedir(d);
}

void verify_result__clear(struct verify_result *r)
{
	json_decref(r->problems);
	json_decref(r->notes);
	memset(r, 0, sizeof(*r));
}

int verify__store(struct pb_store *s, struct verify_result *r)
{
	struct vctx v = { .s = s, .r = r };
	const char *hex;
	json_t *rec;
	int err;

	memset(r, 0, sizeof(*r));
	r->problems = json_array();
	r->notes = json_array();
	v.present = json_object();
	v.receipts = json_object();
	if (!r->problems || !r->notes || !v.present || !v.receipts) {
		err = -ENOMEM;
		goto out;
	}
	err = store__for_each_object(s, check_object, &v);
	if (err)
		goto out;
	json_object_foreach(v.receipts, hex, rec)
		check_receipt(&v, hex, rec);
	check_log(&v);
	check_tmp(&v);
out:
	json_decref(v.present);
	json_decref(v.receipts);
	return err;
}
