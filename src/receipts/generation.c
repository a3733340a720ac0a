/* generation.c: one generation of a BPF program, from begin() through
 * load + capture (the immutable receipt) to activation, retirement and
 * unload (lifecycle log entries). See include/probity/receipts.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "common/version.h"
#include "receipts/receipts_int.h"

#define VERIFIER_LOG_SIZE (256 * 1024)
#define BPF_LOG_LEVEL_STATS 4

struct gen_opts {		/* what begin() was told, owned copies */
	char *parent;		/* NULL: a root generation */
	char *source_build_id;	/* NULL: unknown */
	char *optimizer_name, *optimizer_version, *optimizer_build_id;
	char *provenance;	/* "recorded" / "unknown" */
};

struct pb_generation {
	struct pb_store *s;
	struct gen_opts opts;
	json_t *transforms;
	json_t *assumptions;
	char gen_id[PB_DIGEST_HEX_LEN];
	char receipt[PB_DIGEST_HEX_LEN];
	char native[PB_DIGEST_HEX_LEN];
	uint32_t prog_id;
	json_t *jit_ranges;
	bool captured;
	char *log_buf;
	struct { char hex[PB_DIGEST_HEX_LEN]; void *buf; size_t len; } *ev;
	size_t n_ev;
};

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static int dup_opt(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

static int copy_opts(struct gen_opts *d, const struct pb_generation_opts *o)
{
	return dup_opt(&d->parent, PB_OPTS_GET(o, pb_generation_opts, parent_generation_id, NULL)) ?:
	       dup_opt(&d->source_build_id, PB_OPTS_GET(o, pb_generation_opts, source_build_id, NULL)) ?:
	       dup_opt(&d->optimizer_name, PB_OPTS_GET(o, pb_generation_opts, optimizer_name, NULL) ?: "none") ?:
	       dup_opt(&d->optimizer_version, PB_OPTS_GET(o, pb_generation_opts, optimizer_version, NULL) ?: "") ?:
	       dup_opt(&d->optimizer_build_id, PB_OPTS_GET(o, pb_generation_opts, optimizer_build_id, NULL) ?: "") ?:
	       dup_opt(&d->provenance, PB_OPTS_GET(o, pb_generation_opts, provenance, NULL) ?: "recorded");
}

int pb_generation__begin(struct pb_store *s, const struct pb_generation_opts *o,
			 struct pb_generation **out)
{
	const char *prov = PB_OPTS_GET(o, pb_generation_opts, provenance, NULL) ?: "recorded";
	const char *parent = PB_OPTS_GET(o, pb_generation_opts, parent_generation_id, NULL);
	struct pb_generation *g;

	*out = NULL;
	if (!s || !PB_OPTS_VALID(o, pb_generation_opts))
		return -EINVAL;
	if (strcmp(prov, "recorded") && strcmp(prov, "unknown"))
		return -EINVAL;
	if (parent && !pb_is_digest_hex(parent))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = s;
	g->transforms = json_array();
	g->assumptions = json_array();
	if (copy_opts(&g->opts, o) || !g->transforms || !g->assumptions) {
		pb_generation__free(g);
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

void pb_generation__free(struct pb_generation *g)
{
	if (!g)
		return;
	free(g->opts.parent);
	free(g->opts.source_build_id);
	free(g->opts.optimizer_name);
	free(g->opts.optimizer_version);
	free(g->opts.optimizer_build_id);
	free(g->opts.provenance);
	json_decref(g->transforms);
	json_decref(g->assumptions);
	json_decref(g->jit_ranges);
	free(g->log_buf);
	while (g->n_ev)
		free(g->ev[--g->n_ev].buf);
	free(g->ev);
	free(g);
}

static int add_step(struct pb_generation *g, json_t *arr, const char *id, const char *desc,
		    const void *ev, size_t ev_len)
{
	char hex[PB_DIGEST_HEX_LEN];
	json_t *v;
	size_t i;
	int err;

	if (!g || !id || !*id || g->captured)
		return -EINVAL;
	json_array_foreach(arr, i, v) {
		struct receipt_step st;

		if (!receipt_step__decode(v, &st, NULL) && !strcmp(st.id, id))
			return -EEXIST;
	}
	if (ev) {
		/* kept until load: stored in the same durable batch as the
		 * receipt that names it */
		void *copy = malloc(ev_len ? ev_len : 1), *grown;

		if (!copy || !(grown = realloc(g->ev, (g->n_ev + 1) * sizeof(*g->ev)))) {
			free(copy);
			return -ENOMEM;
		}
		g->ev = grown;
		memcpy(copy, ev, ev_len);
		if ((err = pb_sha256_hex(ev, ev_len, hex))) {
			free(copy);
			return err;
		}
		strcpy(g->ev[g->n_ev].hex, hex);
		g->ev[g->n_ev].buf = copy;
		g->ev[g->n_ev].len = ev_len;
		g->n_ev++;
	}
	return json_array_append_new(arr, json_pack("{s:s, s:s, s:o}", STEPK_ID, id, STEPK_DESCRIPTION,
						    desc ?: "", STEPK_EVIDENCE,
						    ev ? json_string(hex) : json_null()))
		       ? -ENOMEM : 0;
}

int pb_generation__add_transform(struct pb_generation *g, const char *id, const char *description,
				 const void *evidence, size_t evidence_len)
{
	return add_step(g, g ? g->transforms : NULL, id, description, evidence, evidence_len);
}

int pb_generation__add_assumption(struct pb_generation *g, const char *id, const char *description,
				  const void *evidence, size_t evidence_len)
{
	return add_step(g, g ? g->assumptions : NULL, id, description, evidence, evidence_len);
}

const char *pb_generation__id(const struct pb_generation *g)
{
	return g && g->captured ? g->gen_id : NULL;
}

const char *pb_generation__receipt_digest(const struct pb_generation *g)
{
	return g && g->captured ? g->receipt : NULL;
}

const char *pb_generation__native_digest(const struct pb_generation *g)
{
	return g && g->captured ? g->native : NULL;
}

uint32_t pb_generation__prog_id(const struct pb_generation *g)
{
	return g ? g->prog_id : 0;
}

/* The hashed body: everything that decides what this generation is. */
bool receipt__is_receipt(const json_t *j)
{
	struct receipt_view v;

	receipt__decode(j, &v, NULL);	/* only the two types matter here */
	return json_is_object(j) && !strcmp(v.type ?: "", PB_INTOTO_STATEMENT_TYPE) &&
	       !strcmp(v.predicate_type ?: "", PB_RECEIPT_PREDICATE_TYPE);
}

/* The verifier result digest: canonical {accepted, log_level,
 * verified_insns, log_normalized_digest}, the stable part of a load. */
int receipt__verifier_result_digest(bool accepted, int64_t log_level, int64_t verified_insns,
				    const char *log_normalized_digest, char hex[PB_DIGEST_HEX_LEN])
{
	json_t *vr = json_pack("{s:b, s:I, s:I, s:s}", VERK_ACCEPTED, accepted,
			       VERK_LOG_LEVEL, (json_int_t)log_level,
			       VERK_VERIFIED_INSNS, (json_int_t)verified_insns,
			       VERK_LOG_NORMALIZED_DIGEST, log_normalized_digest);
	int err;

	if (!vr)
		return -ENOMEM;
	err = canon__digest(vr, hex);
	json_decref(vr);
	return err;
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

struct capture_in {
	int prog_fd;
	const void *submitted;		/* insns as submitted, or NULL */
	size_t submitted_len;
	const char *log;
	uint32_t log_level;
	const char *source;		/* "library", "observer" */
	uint64_t load_ns;		/* verifier + JIT time seen by the caller */
};

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
static int capture_and_record(struct pb_generation *g, const struct capture_in *in, json_t **loaded_out)
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

int pb_generation__load(struct pb_generation *g, struct bpf_object *obj, struct bpf_program *prog)
{
	struct capture_in in = { .log_level = BPF_LOG_LEVEL_STATS, .source = "library" };
	uint64_t t0;
	int err;

	if (!g || !obj || !prog || g->captured)
		return -EINVAL;
	free(g->log_buf);
	g->log_buf = calloc(1, VERIFIER_LOG_SIZE);
	if (!g->log_buf)
		return -ENOMEM;
	/* BPF_LOG_STATS only: a few lines (insns processed, states, stack
	 * depth) at no measurable cost; level 1 would log every insn. */
	if ((err = bpf_program__set_log_buf(prog, g->log_buf, VERIFIER_LOG_SIZE)) ||
	    (err = bpf_program__set_log_level(prog, BPF_LOG_LEVEL_STATS)))
		return err;
	t0 = pb_mono_ns();
	err = bpf_object__load(obj);
	in.load_ns = pb_mono_ns() - t0;
	if (err)
		return err;
	in.prog_fd = bpf_program__fd(prog);
	in.submitted = bpf_program__insns(prog);
	in.submitted_len = bpf_program__insn_cnt(prog) * sizeof(struct bpf_insn);
	in.log = g->log_buf;
	return capture_and_record(g, &in, NULL);
}

int pb_generation__capture_fd(struct pb_generation *g, int prog_fd, const char *verifier_log,
			      uint32_t log_level)
{
	struct capture_in in = { .prog_fd = prog_fd, .log = verifier_log, .log_level = log_level,
				 .source = "library" };

	if (!g || prog_fd < 0)
		return -EINVAL;
	return capture_and_record(g, &in, NULL);
}


int pb_generation__capture_fd_opts(struct pb_generation *g, int prog_fd,
				   const struct pb_capture_opts *o)
{
	struct capture_in in = { .prog_fd = prog_fd, .source = "library" };

	if (!g || prog_fd < 0 || !PB_OPTS_VALID(o, pb_capture_opts))
		return -EINVAL;
	in.submitted = PB_OPTS_GET(o, pb_capture_opts, submitted_insns, NULL);
	in.submitted_len = PB_OPTS_GET(o, pb_capture_opts, submitted_len, 0);
	in.log = PB_OPTS_GET(o, pb_capture_opts, verifier_log, NULL);
	in.log_level = PB_OPTS_GET(o, pb_capture_opts, log_level, 0);
	in.load_ns = PB_OPTS_GET(o, pb_capture_opts, load_ns, 0);
	if (in.submitted && (!in.submitted_len || in.submitted_len % sizeof(struct bpf_insn)))
		return -EINVAL;
	return capture_and_record(g, &in, NULL);
}

int receipt__capture_unknown(struct pb_store *s, int prog_fd, const char *writer,
			     char gen_id[PB_DIGEST_HEX_LEN], char receipt[PB_DIGEST_HEX_LEN],
			     json_t **loaded_entry)
{
	struct pb_generation_opts o = { .sz = sizeof(o), .optimizer_name = "unknown",
					.provenance = "unknown" };
	struct capture_in in = { .prog_fd = prog_fd, .source = writer };
	struct pb_generation *g;
	int err = pb_generation__begin(s, &o, &g);

	if (err)
		return err;
	err = capture_and_record(g, &in, loaded_entry);
	if (!err) {
		strcpy(gen_id, g->gen_id);
		strcpy(receipt, g->receipt);
	}
	pb_generation__free(g);
	return err;
}

static json_t *link_identity(int link_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	json_t *j;

	if (link_fd <= 0)	/* 0: unset in a zeroed opts struct */
		return json_null();
	memset(&info, 0, sizeof(info));
	if (bpf_link_get_info_by_fd(link_fd, &info, &len))
		return json_pack("{s:s}", LINKK_ERROR, strerror(errno));
	j = json_pack("{s:I, s:I, s:I}", LINKK_ID, (json_int_t)info.id, LINKK_TYPE, (json_int_t)info.type,
		      LINKK_PROG_ID, (json_int_t)info.prog_id);
	if (info.type == BPF_LINK_TYPE_XDP)
		json_object_set_new(j, LINKK_IFINDEX, json_integer(info.xdp.ifindex));
	else if (info.type == BPF_LINK_TYPE_TCX)
		json_object_set_new(j, LINKK_IFINDEX, json_integer(info.tcx.ifindex));
	else if (info.type == BPF_LINK_TYPE_NETNS)
		json_object_set_new(j, LINKK_NETNS_INO, json_integer(info.netns.netns_ino));
	return j;
}


static int log_retired(struct pb_generation *g, const char *reason, uint64_t mono, uint64_t real)
{
	json_t *e = json_pack("{s:s, s:s, s:I, s:s}", LK_GENERATION_ID, g->gen_id, LK_RECEIPT,
			      g->receipt, LK_PROG_ID, (json_int_t)g->prog_id, LK_REASON, reason ?: "");
	int err;

	if (!e)
		return -ENOMEM;
	if (mono) {
		json_object_set_new(e, LK_MONO_NS, json_integer((json_int_t)mono));
		json_object_set_new(e, LK_REALTIME_NS, json_integer((json_int_t)real));
	}
	err = lifelog__append(g->s, LIFE_RETIRED, e, NULL);
	json_decref(e);
	return err;
}

int pb_generation__activate(struct pb_generation *g, const struct pb_activation_opts *o,
			    pb_swap_fn_t swap, void *ctx)
{
	struct pb_generation *old = PB_OPTS_GET(o, pb_activation_opts, replaces, NULL);
	const char *hook = PB_OPTS_GET(o, pb_activation_opts, hook, NULL);
	int link_fd;
	uint64_t m0, r0, m1, r1;
	uint32_t old_prog_id = 0;
	json_t *e;
	int err;

	if (!g || !g->captured || !swap || (old && !old->captured) ||
	    !PB_OPTS_VALID(o, pb_activation_opts))
		return -EINVAL;
	/* what the kernel says the link runs right before the swap: names
	 * the predecessor even when the swapper lost track of it (a swap
	 * whose records were lost) */
	link_fd = PB_OPTS_GET(o, pb_activation_opts, link_fd, -1);
	if (link_fd > 0) {
		struct bpf_link_info li;
		__u32 len = sizeof(li);

		memset(&li, 0, sizeof(li));
		if (!bpf_link_get_info_by_fd(link_fd, &li, &len))
			old_prog_id = li.prog_id;
	}
	r0 = pb_realtime_ns();
	m0 = pb_mono_ns();
	err = swap(ctx);
	m1 = pb_mono_ns();
	r1 = pb_realtime_ns();
	if (err)
		return err;
	link_fd = PB_OPTS_GET(o, pb_activation_opts, link_fd, -1);	/* after: a swap may create the link */
	e = json_pack("{s:s, s:s, s:I, s:o, s:o, s:O, s:I, s:I, s:I, s:I, s:o}",
		      LK_GENERATION_ID, g->gen_id, LK_RECEIPT, g->receipt,
		      LK_PROG_ID, (json_int_t)g->prog_id,
		      LK_LINK, link_identity(link_fd),
		      LK_HOOK, str_or_null(hook),
		      LK_JIT_RANGES, g->jit_ranges,
		      LK_SWAP_BEGIN_MONO_NS, (json_int_t)m0, LK_SWAP_END_MONO_NS, (json_int_t)m1,
		      LK_SWAP_BEGIN_REALTIME_NS, (json_int_t)r0, LK_SWAP_END_REALTIME_NS, (json_int_t)r1,
		      LK_REPLACES, old ? json_string(old->gen_id) : json_null());
	if (!e)
		return -ENOMEM;
	if (old_prog_id)
		json_object_set_new(e, LK_OLD_PROG_ID, json_integer(old_prog_id));
	json_object_set_new(e, LK_MONO_NS, json_integer((json_int_t)m1));
	json_object_set_new(e, LK_REALTIME_NS, json_integer((json_int_t)r1));
	err = lifelog__append(g->s, LIFE_ACTIVATED, e, NULL);
	json_decref(e);
	if (!err && old)
		err = log_retired(old, PB_OPTS_GET(o, pb_activation_opts, retire_reason, NULL) ?: "replaced", m1, r1);
	return err;
}

int pb_generation__retire(struct pb_generation *g, const char *reason)
{
	if (!g || !g->captured)
		return -EINVAL;
	return log_retired(g, reason, 0, 0);
}

int pb_generation__record_unloaded(struct pb_generation *g)
{
	json_t *e;
	int err;

	if (!g || !g->captured)
		return -EINVAL;
	e = json_pack("{s:s, s:s, s:I}", LK_GENERATION_ID, g->gen_id, LK_RECEIPT, g->receipt,
		      LK_PROG_ID, (json_int_t)g->prog_id);
	if (!e)
		return -ENOMEM;
	err = lifelog__append(g->s, LIFE_UNLOADED, e, NULL);
	json_decref(e);
	return err;
}
