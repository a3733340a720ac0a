/* SPDX-License-Identifier: BSD-2-Clause */
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
	json_array_append_new(arr, json_pack("{s:s, s:s}", VFK_WHERE, where, VFK_WHAT, what));
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
	err = pb_sha256_hex(buf, len, got);
	if (err) {
		free(buf);
		return err;
	}
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

/* Artifact hex, present and intact, read into *buf (caller frees). */
static bool artifact_get(struct vctx *v, const char *hex, void **buf, size_t *len)
{
	return hex && json_is_true(json_object_get(v->present, hex)) &&
	       !pb_store__get(v->s, hex, buf, len);
}

static void expect_eq(struct vctx *v, const char *where, const char *field, const char *have,
		      const char *want)
{
	if (!have || strcmp(have, want))
		add(v->r->problems, where, "%s is %s but recomputes to %s", field, have ? have : "(none)",
		    want);
}

/* Every artifact the receipt names, and every step's evidence. */
static void check_artifacts(struct vctx *v, const char *where, const struct receipt_view *rv)
{
	const json_t *steps[] = { rv->generation.transforms, rv->generation.assumptions }, *sv;
	const char *step_kinds[] = { GK_TRANSFORMS, GK_ASSUMPTIONS }, *key;
	size_t i;
	int k;

	json_object_foreach((json_t *)rv->artifacts.all, key, sv)
		artifact_ok(v, where, key, json_string_value(sv));
	for (k = 0; k < 2; k++) {
		json_array_foreach(steps[k], i, sv) {
			struct receipt_step st;
			char nm[160];
			int bad = receipt_step__decode(sv, &st, NULL);

			if (!bad && !st.evidence)
				continue;	/* no evidence */
			snprintf(nm, sizeof(nm), "%s[%s] evidence", step_kinds[k], st.id ?: "?");
			artifact_ok(v, where, nm, bad ? NULL : st.evidence);
		}
	}
}

/* The digests derived from artifacts, recomputed. */
static int check_derived(struct vctx *v, const char *where, const struct receipt_view *rv)
{
	const struct receipt_artifacts *a = &rv->artifacts;
	char got[PB_DIGEST_HEX_LEN];
	void *buf;
	size_t len;
	int err = 0;

	if (a->submitted_insns)
		expect_eq(v, where, PK_SUBMITTED_INSNS_DIGEST, rv->submitted_insns_digest,
			  a->submitted_insns);
	if (artifact_get(v, a->xlated_insns, &buf, &len)) {
		normalize__bpf_insns(buf, len);
		if (!(err = pb_sha256_hex(buf, len, got)))
			expect_eq(v, where, PK_XLATED_INSNS_DIGEST, rv->xlated_insns_digest, got);
		free(buf);
	}
	if (!err && artifact_get(v, a->jit_image, &buf, &len)) {
		if (!normalize__native_digest(buf, len, rv->jit.func_lens, got))
			expect_eq(v, where, PK_NATIVE_IMAGE_DIGEST, rv->native_image_digest, got);
		free(buf);
	}
	if (a->line_mapping)
		expect_eq(v, where, PK_LINE_MAPPING_DIGEST, rv->line_mapping_digest, a->line_mapping);
	if (!err && artifact_get(v, a->verifier_log, &buf, &len)) {
		char *n = normalize__verifier_log(buf);

		if (n && !(err = pb_sha256_hex(n, strlen(n), got)))
			expect_eq(v, where, PK_VERIFIER "." VERK_LOG_NORMALIZED_DIGEST,
				  rv->verifier.log_normalized_digest, got);
		free(n);
		free(buf);
	}
	if (!err && rv->verifier.present &&
	    !receipt__verifier_result_digest(rv->verifier.accepted, rv->verifier.log_level,
					     rv->verifier.verified_insns,
					     rv->verifier.log_normalized_digest, got))
		expect_eq(v, where, PK_VERIFIER_RESULT_DIGEST, rv->verifier_result_digest, got);
	else if (!err)
		add(v->r->problems, where, "verifier result incomplete");
	return err;
}

/* in-toto subjects name the predicate's digests */
static void check_subjects(struct vctx *v, const char *where, const struct receipt_view *rv)
{
	const json_t *s;
	size_t i;

	json_array_foreach(rv->subjects, i, s) {
		struct receipt_subject sj;
		const char *nm, *field, *want;

		receipt_subject__decode(s, &sj, NULL);	/* what is missing is named below */
		nm = sj.name ?: "";
		field = NULL;
		want = NULL;
		if (!strcmp(nm, "bpf/submitted-insns")) {
			field = PK_SUBMITTED_INSNS_DIGEST;
			want = rv->submitted_insns_digest;
		} else if (!strcmp(nm, "bpf/xlated-insns")) {
			field = PK_XLATED_INSNS_DIGEST;
			want = rv->xlated_insns_digest;
		} else if (!strcmp(nm, "jit/native-image")) {
			field = PK_NATIVE_IMAGE_DIGEST;
			want = rv->native_image_digest;
		}
		if (!field)
			add(v->r->problems, where, "unknown subject '%s'", nm);
		else if (!sj.sha256 || strcmp(sj.sha256, want ?: ""))
			add(v->r->problems, where, "subject %s does not match %s", nm, field);
	}
}

static int check_receipt(struct vctx *v, const char *hex, const json_t *stmt)
{
	struct receipt_view rv;
	char where[128], got[PB_DIGEST_HEX_LEN];
	int err;

	snprintf(where, sizeof(where), "receipt %s", hex);
	receipt__decode(stmt, &rv, NULL);	/* each check names what it misses */
	if (receipt__generation_id(rv.predicate, got)) {
		add(v->r->problems, where, "no generation body");
		return 0;
	}
	expect_eq(v, where, PK_GENERATION_ID, rv.generation_id, got);
	check_artifacts(v, where, &rv);
	err = check_derived(v, where, &rv);
	if (!err)
		check_subjects(v, where, &rv);
	return err;
}

static void log_problem(void *ctx, const char *where, const char *what)
{
	struct vctx *v = ctx;

	add(v->r->problems, where, "%s", what);
}

/* The receipt an entry names: present, intact, a receipt, and of the
 * generation the entry says. */
static void check_entry_receipt(struct vctx *v, size_t i, const struct lifelog_entry *le,
				json_t *gens)
{
	struct receipt_view rv;
	char where[128];
	json_t *p, *rec;

	snprintf(where, sizeof(where), "%s entry #%zu (%s)", PB_LIFELOG_NAME, i, le->kind_name ?: "?");
	p = json_object_get(v->present, le->receipt);
	if (!p) {
		add(v->r->problems, where, "receipt %s is missing", le->receipt);
		return;
	}
	if (!json_is_true(p)) {
		add(v->r->problems, where, "receipt %s is altered", le->receipt);
		return;
	}
	rec = json_object_get(v->receipts, le->receipt);
	if (!rec) {
		add(v->r->problems, where, "object %s is not a receipt", le->receipt);
		return;
	}
	receipt__decode(rec, &rv, NULL);
	if (!le->generation_id || strcmp(le->generation_id, rv.generation_id ?: ""))
		add(v->r->problems, where, "generation_id %s does not match receipt %s",
		    le->generation_id ? le->generation_id : "(none)", le->receipt);
	if (le->generation_id)
		json_object_set_new(gens, le->generation_id, json_true());
}

static void check_log(struct vctx *v)
{
	struct lifelog_problem_cb cb = { log_problem, v };
	json_t *entries = NULL, *e, *gens = json_object(), *rec;
	char where[128];
	const char *hex;
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
		struct lifelog_entry le;

		lifelog_entry__decode(e, &le, NULL);	/* the chain checks named what is wrong */
		if (le.receipt)
			check_entry_receipt(v, i, &le, gens);
	}
	/* every parent named by a receipt is a generation of this store */
	json_object_foreach(v->receipts, hex, rec) {
		struct receipt_view rv;

		receipt__decode(rec, &rv, NULL);
		snprintf(where, sizeof(where), "receipt %s", hex);
		if (rv.parent_generation_id && !json_object_get(gens, rv.parent_generation_id))
			add(v->r->problems, where, "parent generation %s has no loaded receipt in this store",
			    rv.parent_generation_id);
	}
	json_decref(gens);
	json_decref(entries);
}

static int note_tmp(const char *name, const char *path, void *ctx)
{
	struct vctx *v = ctx;
	char where[600];

	snprintf(where, sizeof(where), "tmp/%s", name);
	add(v->r->notes, where, "interrupted write (never visible as an object; 'receipts gc' removes it)");
	return 0;
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
		if ((err = check_receipt(&v, hex, rec)))
			goto out;
	check_log(&v);
	err = store__for_each_tmp(s, note_tmp, &v);
out:
	json_decref(v.present);
	json_decref(v.receipts);
	return err;
}
