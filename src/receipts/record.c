/* SPDX-License-Identifier: BSD-2-Clause */
/* record.c: a loaded program becomes a receipt. Capture its
 * bpf_prog_info, store the artifacts (instructions, JIT image, line
 * mapping, BTF, verifier log, the steps' evidence) and the in-toto
 * statement naming them in one durable batch, then log 'loaded' with the
 * per-load facts (prog id, JIT ranges, timing). Also: finding a
 * generation's receipt through the log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/version.h"
#include "receipts/receipts_int.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *ids_of(const json_t *arr)
{
	json_t *ids = json_array(), *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		struct receipt_step st;

		if (!receipt_step__decode(v, &st, NULL))
			json_array_append_new(ids, json_string(st.id));
	}
	return ids;
}

/* Line mapping artifact ("PBLM", docs/receipts.md): BTF line info records
 * as the kernel returned them, then each JIT line address as (function
 * index, offset in that function), so it does not depend on where the
 * image was placed. */
static int put_line_mapping(struct pb_store *s, const struct pb_capture *c, char hex[PB_DIGEST_HEX_LEN])
{
	size_t li = (size_t)c->nr_line_info * c->line_info_rec_size;
	size_t len = 16 + li + 4 + 8 * (size_t)c->nr_jited_line_info;
	uint8_t *buf = calloc(1, len), *p = buf;
	uint32_t v, i, f;
	int err;

	if (!buf)
		return -ENOMEM;
	memcpy(p, "PBLM", 4);
	v = 1; memcpy(p + 4, &v, 4);
	memcpy(p + 8, &c->nr_line_info, 4);
	memcpy(p + 12, &c->line_info_rec_size, 4);
	p += 16;
	memcpy(p, c->line_info, li);
	p += li;
	memcpy(p, &c->nr_jited_line_info, 4);
	p += 4;
	for (i = 0; i < c->nr_jited_line_info; i++, p += 8) {
		uint64_t a = c->jited_line_info[i];
		uint32_t off = 0, fidx = UINT32_MAX;

		for (f = 0; f < c->nr_ksyms && f < c->nr_func_lens; f++) {
			if (a >= c->ksyms[f] && a < c->ksyms[f] + c->func_lens[f]) {
				fidx = f;
				off = (uint32_t)(a - c->ksyms[f]);
				break;
			}
		}
		memcpy(p, &fidx, 4);
		memcpy(p + 4, &off, 4);
	}
	err = pb_store__put(s, buf, len, hex);
	free(buf);
	return err;
}

/* Find the receipt of a generation (id or unique prefix of >= 6 hex
 * digits, or a receipt digest) through the log's 'loaded' entries. */
int receipts__find_generation(struct pb_store *s, const char *what, char gen[PB_DIGEST_HEX_LEN],
			      char receipt[PB_DIGEST_HEX_LEN])
{
	json_t *entries = NULL, *e, *known;
	size_t i, n = strlen(what);
	int found = 0, rc;

	if (n < 6 || n > 64)
		return -EINVAL;
	known = json_object_get(s->known_gens, what);	/* loaded through this handle */
	if (n == 64 && json_is_string(known)) {
		strcpy(gen, what);
		strcpy(receipt, json_string_value(known));
		return 0;
	}
	rc = lifelog__read(s, &entries, NULL);
	if (rc < 0)
		return rc;
	json_array_foreach(entries, i, e) {
		struct lifelog_entry le;
		const char *gid, *rid;

		lifelog_entry__decode(e, &le, NULL);	/* what decodes is enough */
		gid = le.generation_id;
		rid = le.receipt;

		/* the log is untrusted input: an entry without a "kind" must
		 * not crash, and gid/rid are copied into 65-byte buffers, so
		 * anything but a 64-digit hex digest is skipped (verify
		 * reports such entries) */
		if (!pb_is_digest_hex(gid) || !pb_is_digest_hex(rid) || le.kind != LIFE_LOADED)
			continue;
		if (strncmp(gid, what, n) && strncmp(rid, what, n))
			continue;
		if (found && strcmp(gen, gid)) {
			json_decref(entries);
			return -ENOTUNIQ;
		}
		if (!found) {
			strcpy(gen, gid);
			strcpy(receipt, rid);
		}
		found = 1;
	}
	json_decref(entries);
	return found ? 0 : -ENOENT;
}

static void original_tag(struct pb_store *s, const char *parent, const char *own, char out[17])
{
	char gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN];
	struct receipt_view v;
	json_t *r = NULL;

	snprintf(out, 17, "%s", own);
	if (!parent || receipts__find_generation(s, parent, gen, rec) || store__get_json(s, rec, &r))
		return;
	receipt__decode(r, &v, NULL);	/* the tag alone matters here */
	if (v.original_bpf_tag)
		snprintf(out, 17, "%s", v.original_bpf_tag);
	json_decref(r);
}

static json_t *subject(const char *name, const char *hex)
{
	return json_pack("{s:s, s:{s:s}}", SUBJ_NAME, name, SUBJ_DIGEST, SUBJ_DIGEST_SHA256, hex);
}



/* The digests one capture produces (hex, PB_DIGEST_HEX_LEN each). */
struct capture_digests {
	char sub[PB_DIGEST_HEX_LEN];		/* submitted insns, normalized */
	char xl_raw[PB_DIGEST_HEX_LEN];		/* xlated insns artifact */
	char xl_norm[PB_DIGEST_HEX_LEN];	/* xlated insns, normalized */
	char jit_raw[PB_DIGEST_HEX_LEN];	/* JIT image artifact */
	char line[PB_DIGEST_HEX_LEN];		/* line mapping artifact */
	char vlog[PB_DIGEST_HEX_LEN];		/* verifier log artifact */
	char vlog_norm[PB_DIGEST_HEX_LEN];	/* verifier log, normalized */
	char vres[PB_DIGEST_HEX_LEN];		/* verifier result */
	char btf[PB_DIGEST_HEX_LEN];		/* BTF artifact */
	char tag[17], orig[17];			/* bpf tag, the root's bpf tag */
	int masked;				/* JIT operands masked */
};

/* Put a normalized copy of insns (len bytes) or only digest it. */
static int digest_normalized_insns(struct pb_store *s, const void *insns, size_t len, bool put,
				   char hex[PB_DIGEST_HEX_LEN])
{
	uint8_t *copy = malloc(len + 1);
	int err;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, insns, len);
	normalize__bpf_insns(copy, len);
	err = put ? pb_store__put(s, copy, len, hex) : pb_sha256_hex(copy, len, hex);
	free(copy);
	return err;
}

/* Instructions: submitted (normalized) and xlated (raw + normalized);
 * the JIT image: raw as artifact, digest of the normalized image. */
static int put_code(struct pb_generation *g, const struct capture_in *in, const struct pb_capture *c,
		    struct capture_digests *d)
{
	uint8_t *copy;
	int err;

	if (in->submitted &&
	    (err = digest_normalized_insns(g->s, in->submitted, in->submitted_len, true, d->sub)))
		return err;
	if ((err = pb_store__put(g->s, c->xlated, c->xlated_len, d->xl_raw)) ||
	    (err = digest_normalized_insns(g->s, c->xlated, c->xlated_len, false, d->xl_norm)) ||
	    (err = pb_store__put(g->s, c->jited, c->jited_len, d->jit_raw)))
		return err;
	copy = malloc(c->jited_len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, c->jited, c->jited_len);
	d->masked = normalize__jit_image(copy, c->jited_len, c->func_lens, c->nr_func_lens);
	err = pb_sha256_hex(copy, c->jited_len, g->native);
	free(copy);
	if (err)
		return err;
	if ((err = put_line_mapping(g->s, c, d->line)))
		return err;
	return c->btf ? pb_store__put(g->s, c->btf, c->btf_len, d->btf) : 0;
}

/* Verifier: log artifact; the result digest over the stable parts. */
static int put_verifier(struct pb_generation *g, const struct capture_in *in,
			const struct pb_capture *c, struct capture_digests *d, json_t **verifier)
{
	char *nlog;
	int err;

	*verifier = NULL;
	if (in->log && (err = pb_store__put(g->s, in->log, strlen(in->log), d->vlog)))
		return err;
	nlog = normalize__verifier_log(in->log);
	if (!nlog)
		return -ENOMEM;
	err = pb_sha256_hex(nlog, strlen(nlog), d->vlog_norm);
	free(nlog);
	if (err || (err = receipt__verifier_result_digest(true, in->log_level, c->verified_insns,
							  d->vlog_norm, d->vres)))
		return err;
	*verifier = json_pack("{s:b, s:I, s:I, s:o, s:s}", VERK_ACCEPTED, 1,
			      VERK_LOG_LEVEL, (json_int_t)in->log_level,
			      VERK_VERIFIED_INSNS, (json_int_t)c->verified_insns,
			      VERK_LOG, in->log ? json_string(d->vlog) : json_null(),
			      VERK_LOG_NORMALIZED_DIGEST, d->vlog_norm);
	return *verifier ? 0 : -ENOMEM;
}

/* The hashed generation body: everything that decides what this
 * generation is. */
static json_t *generation_body(const struct pb_generation *g, const struct capture_in *in,
			       const struct pb_capture *c, const struct capture_digests *d,
			       json_t *target)
{
	const struct gen_opts *o = &g->opts;

	return json_pack("{s:o, s:s, s:s, s:{s:s, s:s, s:s}, s:O, s:O, s:s, s:o, s:{s:s, s:I}, s:O}",
			 GK_PARENT_GENERATION_ID, str_or_null(o->parent),
			 GK_SPECIALIZED_INSNS_DIGEST, in->submitted ? d->sub : d->xl_norm,
			 GK_SPECIALIZED_INSNS_SOURCE, in->submitted ? "submitted" : "xlated",
			 GK_OPTIMIZER,
			 OPTK_NAME, o->optimizer_name,
			 OPTK_VERSION, o->optimizer_version,
			 OPTK_BUILD_ID, o->optimizer_build_id,
			 GK_TRANSFORMS, g->transforms,
			 GK_ASSUMPTIONS, g->assumptions,
			 GK_PROVENANCE, o->provenance,
			 GK_SOURCE_BUILD_ID, str_or_null(o->source_build_id),
			 GK_PROGRAM, PROGK_NAME, c->name, PROGK_TYPE, (json_int_t)c->prog_type,
			 GK_TARGET, target);
}

static json_t *artifacts_of(const struct capture_in *in, const struct pb_capture *c,
			    const struct capture_digests *d)
{
	json_t *a = json_pack("{s:s, s:s, s:s}", ARTK_XLATED_INSNS, d->xl_raw, ARTK_JIT_IMAGE, d->jit_raw,
			      ARTK_LINE_MAPPING, d->line);

	if (a && in->submitted)
		json_object_set_new(a, ARTK_SUBMITTED_INSNS, json_string(d->sub));
	if (a && in->log)
		json_object_set_new(a, ARTK_VERIFIER_LOG, json_string(d->vlog));
	if (a && c->btf)
		json_object_set_new(a, ARTK_BTF, json_string(d->btf));
	return a;
}

static json_t *jit_of(const struct pb_capture *c, const struct capture_digests *d)
{
	json_t *func_lens = json_array();
	uint32_t i;

	for (i = 0; func_lens && i < c->nr_func_lens; i++)
		json_array_append_new(func_lens, json_integer(c->func_lens[i]));
	return json_pack("{s:s, s:I, s:o, s:s, s:I}", JITK_IMAGE, d->jit_raw,
			 JITK_IMAGE_LEN, (json_int_t)c->jited_len, JITK_FUNC_LENS, func_lens,
			 JITK_NORMALIZATION, normalize__jit_scheme(),
			 JITK_MASKED_OPERANDS, (json_int_t)(d->masked < 0 ? 0 : d->masked));
}

/* The receipt predicate around body (g->gen_id is its digest). */
static json_t *predicate_of(const struct pb_generation *g, const struct capture_in *in,
			    const struct pb_capture *c, const struct capture_digests *d,
			    json_t *body, json_t *target, json_t *verifier)
{
	const struct gen_opts *o = &g->opts;
	struct receipt_target t;
	json_t *pred;

	receipt_target__decode(target, &t, NULL);	/* ours: always decodes */
	pred = json_pack("{s:O, s:s, s:s, s:o, s:o, s:s, s:s, s:s, s:o, s:o, s:s}",
			 PK_GENERATION, body,
			 PK_SCHEMA, PB_RECEIPT_SCHEMA,
			 PK_GENERATION_ID, g->gen_id,
			 PK_PARENT_GENERATION_ID, str_or_null(o->parent),
			 PK_SOURCE_BUILD_ID, str_or_null(o->source_build_id),
			 PK_ORIGINAL_BPF_TAG, d->orig,
			 PK_SPECIALIZED_BPF_TAG, d->tag,
			 PK_OPTIMIZER_BUILD_ID, o->optimizer_build_id,
			 PK_TRANSFORM_IDS, ids_of(g->transforms),
			 PK_ASSUMPTION_IDS, ids_of(g->assumptions),
			 PK_VERIFIER_RESULT_DIGEST, d->vres);
	if (!pred)
		return NULL;
	json_object_set_new(pred, PK_KERNEL_BUILD_ID, str_or_null(t.kernel_build_id));
	json_object_set_new(pred, PK_JIT_BACKEND, str_or_null(t.jit_backend));
	json_object_set_new(pred, PK_NATIVE_IMAGE_DIGEST, json_string(g->native));
	json_object_set_new(pred, PK_LINE_MAPPING_DIGEST, json_string(d->line));
	json_object_set_new(pred, PK_SUBMITTED_INSNS_DIGEST,
			    in->submitted ? json_string(d->sub) : json_null());
	json_object_set_new(pred, PK_XLATED_INSNS_DIGEST, json_string(d->xl_norm));
	json_object_set(pred, PK_VERIFIER, verifier);
	json_object_set_new(pred, PK_JIT, jit_of(c, d));
	json_object_set_new(pred, PK_ARTIFACTS, artifacts_of(in, c, d));
	json_object_set_new(pred, PK_PRODUCER, json_pack("{s:s, s:s}", PRODK_NAME, "probity",
							 PRODK_VERSION, PROBITY_VERSION));
	return pred;
}

/* The in-toto statement: subjects are the digests of the code. */
static json_t *statement_of(const struct pb_generation *g, const struct capture_in *in,
			    const struct capture_digests *d, json_t *pred)
{
	json_t *subj = json_array();

	if (subj && in->submitted)
		json_array_append_new(subj, subject("bpf/submitted-insns", d->sub));
	if (subj) {
		json_array_append_new(subj, subject("bpf/xlated-insns", d->xl_norm));
		json_array_append_new(subj, subject("jit/native-image", g->native));
	}
	return json_pack("{s:s, s:o, s:s, s:O}", RK_TYPE, PB_INTOTO_STATEMENT_TYPE, RK_SUBJECT, subj,
			 RK_PREDICATE_TYPE, PB_RECEIPT_PREDICATE_TYPE, RK_PREDICATE, pred);
}

/* Artifacts, then the receipt naming them, in one durable batch. */
static int put_receipt(struct pb_generation *g, const struct capture_in *in,
		       const struct pb_capture *c, struct capture_digests *d)
{
	json_t *target = NULL, *body = NULL, *verifier = NULL, *pred = NULL, *stmt = NULL;
	char ev[PB_DIGEST_HEX_LEN];
	uint32_t i;
	int err = 0;

	store__batch_begin(g->s);	/* artifacts + receipt: one durable commit */
	for (i = 0; i < g->n_ev && !err; i++)
		err = pb_store__put(g->s, g->ev[i].buf, g->ev[i].len, ev);
	if (err || (err = put_code(g, in, c, d)) || (err = put_verifier(g, in, c, d, &verifier)))
		goto out;
	for (i = 0; i < 8; i++)
		sprintf(d->tag + 2 * i, "%02x", c->tag[i]);
	original_tag(g->s, g->opts.parent, d->tag, d->orig);
	target = capture__target_env();
	body = target ? generation_body(g, in, c, d, target) : NULL;
	if (!body) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = canon__digest(body, g->gen_id)))
		goto out;
	pred = predicate_of(g, in, c, d, body, target, verifier);
	stmt = pred ? statement_of(g, in, d, pred) : NULL;
	if (!stmt) {
		err = -ENOMEM;
		goto out;
	}
	if (!(err = store__put_json(g->s, stmt, g->receipt)))
		err = store__batch_commit(g->s);
out:
	if (g->s->batch || g->s->n_pend)
		store__batch_abort(g->s);
	json_decref(stmt);
	json_decref(pred);
	json_decref(body);
	json_decref(target);
	json_decref(verifier);
	return err;
}

/* The per-load facts: they go to the lifecycle log, not the receipt. */
static json_t *loaded_entry(const struct pb_generation *g, const struct capture_in *in,
			    const struct pb_capture *c, const char *tag, uint64_t t0)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:s, s:O, s:I, s:s, s:{s:I, s:I}}",
			 LK_GENERATION_ID, g->gen_id, LK_RECEIPT, g->receipt,
			 LK_PROG_ID, (json_int_t)c->prog_id, LK_PROG_TAG, tag, LK_PROG_NAME, c->name,
			 LK_JIT_RANGES, g->jit_ranges,
			 LK_LOAD_TIME_BOOT_NS, (json_int_t)c->load_time,
			 LK_SOURCE, in->source,
			 LK_TIMING, TIMK_LOAD_NS, (json_int_t)in->load_ns,
			 TIMK_CAPTURE_NS, (json_int_t)(pb_mono_ns() - t0));
}

/* Capture prog fd, store artifacts and receipt, then log 'loaded' (or
 * hand the entry to loaded_out, for the observer to complete). */
int generation__capture_and_record(struct pb_generation *g, const struct capture_in *in,
				    json_t **loaded_out)
{
	struct capture_digests d = { .masked = 0 };
	struct pb_capture *c = NULL;
	json_t *loaded = NULL;
	uint64_t t0 = pb_mono_ns();
	int err;

	if (g->captured)
		return -EALREADY;
	err = capture__prog_fd(in->prog_fd, &c);
	if (err)
		return err;
	if ((err = put_receipt(g, in, c, &d)))
		goto out;
	json_decref(g->jit_ranges);
	g->jit_ranges = capture__jit_ranges(c);
	g->prog_id = c->prog_id;
	loaded = loaded_entry(g, in, c, d.tag, t0);
	if (!loaded) {
		err = -ENOMEM;
		goto out;
	}
	if (loaded_out) {
		*loaded_out = loaded;
		loaded = NULL;
	} else if ((err = lifelog__append(g->s, LIFE_LOADED, loaded, NULL))) {
		goto out;
	}
	g->captured = true;
	if (!g->s->known_gens)
		g->s->known_gens = json_object();
	json_object_set_new(g->s->known_gens, g->gen_id, json_string(g->receipt));
out:
	json_decref(loaded);
	capture__free(c);
	return err;
}
