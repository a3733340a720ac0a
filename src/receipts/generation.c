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

struct pb_generation {
	struct pb_store *s;
	json_t *opts;		/* parent, source build id, optimizer, provenance */
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

#define OPT(o, f) ((o) && (o)->sz > offsetof(struct pb_generation_opts, f) ? (o)->f : NULL)

int pb_generation__begin(struct pb_store *s, const struct pb_generation_opts *o,
			 struct pb_generation **out)
{
	struct pb_generation *g;
	const char *prov = OPT(o, provenance) ?: "recorded";
	const char *parent = OPT(o, parent_generation_id);

	*out = NULL;
	if (!s || (o && o->sz < sizeof(size_t)))
		return -EINVAL;
	if (strcmp(prov, "recorded") && strcmp(prov, "unknown"))
		return -EINVAL;
	if (parent && !pb_is_digest_hex(parent))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = s;
	g->opts = json_pack("{s:o, s:o, s:s, s:s, s:s, s:s}",
			    "parent_generation_id", str_or_null(parent),
			    "source_build_id", str_or_null(OPT(o, source_build_id)),
			    "optimizer_name", OPT(o, optimizer_name) ?: "none",
			    "optimizer_version", OPT(o, optimizer_version) ?: "",
			    "optimizer_build_id", OPT(o, optimizer_build_id) ?: "",
			    "provenance", prov);
	g->transforms = json_array();
	g->assumptions = json_array();
	if (!g->opts || !g->transforms || !g->assumptions) {
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
	json_decref(g->opts);
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
	json_array_foreach(arr, i, v)
		if (!strcmp(json_string_value(json_object_get(v, "id")), id))
			return -EEXIST;
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
	return json_array_append_new(arr, json_pack("{s:s, s:s, s:o}", "id", id, "description",
						    desc ?: "", "evidence", ev ? json_string(hex) : json_null()))
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
int receipt__generation_id(const json_t *predicate, char hex[PB_DIGEST_HEX_LEN])
{
	const json_t *body = json_object_get(predicate, "generation");

	if (!json_is_object(body))
		return -EINVAL;
	return canon__digest(body, hex);
}

bool receipt__is_receipt(const json_t *j)
{
	return json_is_object(j) &&
	       !strcmp(json_string_value(json_object_get(j, "_type")) ?: "", PB_INTOTO_STATEMENT_TYPE) &&
	       !strcmp(json_string_value(json_object_get(j, "predicateType")) ?: "",
		       PB_RECEIPT_PREDICATE_TYPE);
}

static json_t *ids_of(const json_t *arr)
{
	json_t *ids = json_array(), *v;
	size_t i;

	json_array_foreach(arr, i, v)
		json_array_append(ids, json_object_get(v, "id"));
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
		const char *gid = json_string_value(json_object_get(e, "generation_id"));
		const char *rid = json_string_value(json_object_get(e, "receipt"));

		/* the log is untrusted input: an entry without a "kind" must
		 * not crash, and gid/rid are copied into 65-byte buffers, so
		 * anything but a 64-digit hex digest is skipped (verify
		 * reports such entries) */
		if (!pb_is_digest_hex(gid) || !pb_is_digest_hex(rid) ||
		    strcmp(json_string_value(json_object_get(e, "kind")) ?: "", "loaded"))
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
	json_t *r = NULL;
	const char *t;

	snprintf(out, 17, "%s", own);
	if (!parent || receipts__find_generation(s, parent, gen, rec) || store__get_json(s, rec, &r))
		return;
	t = json_string_value(json_object_get(json_object_get(r, "predicate"), "original_bpf_tag"));
	if (t)
		snprintf(out, 17, "%s", t);
	json_decref(r);
}

static json_t *subject(const char *name, const char *hex)
{
	return json_pack("{s:s, s:{s:s}}", "name", name, "digest", "sha256", hex);
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

static int capture_and_record(struct pb_generation *g, const struct capture_in *in, json_t **loaded_out)
{
	char sub[PB_DIGEST_HEX_LEN], xl_raw[PB_DIGEST_HEX_LEN], xl_norm[PB_DIGEST_HEX_LEN];
	char jit_raw[PB_DIGEST_HEX_LEN], line[PB_DIGEST_HEX_LEN], vlog[PB_DIGEST_HEX_LEN];
	char vlog_norm[PB_DIGEST_HEX_LEN], vres[PB_DIGEST_HEX_LEN], btf[PB_DIGEST_HEX_LEN];
	char tag[17], orig[17];
	struct pb_capture *c = NULL;
	json_t *target = NULL, *body = NULL, *verifier = NULL, *pred = NULL, *stmt = NULL;
	json_t *func_lens = NULL, *loaded = NULL, *artifacts;
	uint8_t *copy = NULL;
	char *nlog = NULL;
	uint64_t t0 = pb_mono_ns();
	const char *parent = json_string_value(json_object_get(g->opts, "parent_generation_id"));
	uint32_t i;
	int err, masked;

	if (g->captured)
		return -EALREADY;
	err = capture__prog_fd(in->prog_fd, &c);
	if (err)
		return err;
	store__batch_begin(g->s);	/* artifacts + receipt: one durable commit */
	for (i = 0; i < g->n_ev; i++)
		if ((err = pb_store__put(g->s, g->ev[i].buf, g->ev[i].len, sub)))
			goto out;
	/* instructions: submitted (normalized) and xlated (raw + normalized) */
	if (in->submitted) {
		copy = malloc(in->submitted_len + 1);
		if (!copy) { err = -ENOMEM; goto out; }
		memcpy(copy, in->submitted, in->submitted_len);
		normalize__bpf_insns(copy, in->submitted_len);
		if ((err = pb_store__put(g->s, copy, in->submitted_len, sub)))
			goto out;
		free(copy);
		copy = NULL;
	}
	if ((err = pb_store__put(g->s, c->xlated, c->xlated_len, xl_raw)))
		goto out;
	copy = malloc(c->xlated_len + 1);
	if (!copy) { err = -ENOMEM; goto out; }
	memcpy(copy, c->xlated, c->xlated_len);
	normalize__bpf_insns(copy, c->xlated_len);
	pb_sha256_hex(copy, c->xlated_len, xl_norm);
	free(copy);
	copy = NULL;
	/* JIT image: raw as artifact, digest of the normalized image */
	if ((err = pb_store__put(g->s, c->jited, c->jited_len, jit_raw)))
		goto out;
	copy = malloc(c->jited_len + 1);
	if (!copy) { err = -ENOMEM; goto out; }
	memcpy(copy, c->jited, c->jited_len);
	masked = normalize__jit_image(copy, c->jited_len, c->func_lens, c->nr_func_lens);
	pb_sha256_hex(copy, c->jited_len, g->native);
	free(copy);
	copy = NULL;
	func_lens = json_array();
	for (i = 0; i < c->nr_func_lens; i++)
		json_array_append_new(func_lens, json_integer(c->func_lens[i]));
	if ((err = put_line_mapping(g->s, c, line)))
		goto out;
	if (c->btf && (err = pb_store__put(g->s, c->btf, c->btf_len, btf)))
		goto out;
	/* verifier: log artifact; result digest over the stable parts */
	if (in->log && (err = pb_store__put(g->s, in->log, strlen(in->log), vlog)))
		goto out;
	nlog = normalize__verifier_log(in->log);
	if (!nlog) { err = -ENOMEM; goto out; }
	pb_sha256_hex(nlog, strlen(nlog), vlog_norm);
	verifier = json_pack("{s:b, s:I, s:I, s:o, s:s}", "accepted", 1,
			     "log_level", (json_int_t)in->log_level,
			     "verified_insns", (json_int_t)c->verified_insns,
			     "log", in->log ? json_string(vlog) : json_null(),
			     "log_normalized_digest", vlog_norm);
	{
		json_t *vr = json_pack("{s:b, s:I, s:I, s:s}", "accepted", 1,
				       "log_level", (json_int_t)in->log_level,
				       "verified_insns", (json_int_t)c->verified_insns,
				       "log_normalized_digest", vlog_norm);
		err = canon__digest(vr, vres);
		json_decref(vr);
		if (err)
			goto out;
	}
	for (i = 0; i < 8; i++)
		sprintf(tag + 2 * i, "%02x", c->tag[i]);
	original_tag(g->s, parent, tag, orig);
	target = capture__target_env();
	body = json_pack("{s:O, s:s, s:s, s:{s:O, s:O, s:O}, s:O, s:O, s:O, s:O, s:{s:s, s:I}, s:O}",
			 "parent_generation_id", json_object_get(g->opts, "parent_generation_id"),
			 "specialized_insns_digest", in->submitted ? sub : xl_norm,
			 "specialized_insns_source", in->submitted ? "submitted" : "xlated",
			 "optimizer",
			 "name", json_object_get(g->opts, "optimizer_name"),
			 "version", json_object_get(g->opts, "optimizer_version"),
			 "build_id", json_object_get(g->opts, "optimizer_build_id"),
			 "transforms", g->transforms,
			 "assumptions", g->assumptions,
			 "provenance", json_object_get(g->opts, "provenance"),
			 "source_build_id", json_object_get(g->opts, "source_build_id"),
			 "program", "name", c->name, "type", (json_int_t)c->prog_type,
			 "target", target);
	if (!body || !target || !verifier) { err = -ENOMEM; goto out; }
	pred = json_object();
	json_object_set(pred, "generation", body);
	if ((err = canon__digest(body, g->gen_id)))
		goto out;
	artifacts = json_pack("{s:s, s:s, s:s}", "xlated_insns", xl_raw, "jit_image", jit_raw,
			      "line_mapping", line);
	if (in->submitted)
		json_object_set_new(artifacts, "submitted_insns", json_string(sub));
	if (in->log)
		json_object_set_new(artifacts, "verifier_log", json_string(vlog));
	if (c->btf)
		json_object_set_new(artifacts, "btf", json_string(btf));
	json_object_set_new(pred, "schema", json_string("probity.receipt/v1"));
	json_object_set_new(pred, "generation_id", json_string(g->gen_id));
	json_object_set(pred, "parent_generation_id", json_object_get(g->opts, "parent_generation_id"));
	json_object_set(pred, "source_build_id", json_object_get(g->opts, "source_build_id"));
	json_object_set_new(pred, "original_bpf_tag", json_string(orig));
	json_object_set_new(pred, "specialized_bpf_tag", json_string(tag));
	json_object_set(pred, "optimizer_build_id", json_object_get(g->opts, "optimizer_build_id"));
	json_object_set_new(pred, "transform_ids", ids_of(g->transforms));
	json_object_set_new(pred, "assumption_ids", ids_of(g->assumptions));
	json_object_set_new(pred, "verifier_result_digest", json_string(vres));
	json_object_set(pred, "kernel_build_id", json_object_get(target, "kernel_build_id"));
	json_object_set(pred, "jit_backend", json_object_get(target, "jit_backend"));
	json_object_set_new(pred, "native_image_digest", json_string(g->native));
	json_object_set_new(pred, "line_mapping_digest", json_string(line));
	json_object_set_new(pred, "submitted_insns_digest", in->submitted ? json_string(sub) : json_null());
	json_object_set_new(pred, "xlated_insns_digest", json_string(xl_norm));
	json_object_set_new(pred, "verifier", verifier);
	verifier = NULL;
	json_object_set_new(pred, "jit", json_pack("{s:s, s:I, s:O, s:s, s:I}", "image", jit_raw,
						   "image_len", (json_int_t)c->jited_len,
						   "func_lens", func_lens,
						   "normalization", normalize__jit_scheme(),
						   "masked_operands", (json_int_t)(masked < 0 ? 0 : masked)));
	json_object_set_new(pred, "artifacts", artifacts);
	json_object_set_new(pred, "producer", json_pack("{s:s, s:s}", "name", "probity",
							"version", PROBITY_VERSION));
	stmt = json_pack("{s:s, s:[], s:s, s:O}", "_type", PB_INTOTO_STATEMENT_TYPE, "subject",
			 "predicateType", PB_RECEIPT_PREDICATE_TYPE, "predicate", pred);
	if (!stmt) { err = -ENOMEM; goto out; }
	if (in->submitted)
		json_array_append_new(json_object_get(stmt, "subject"), subject("bpf/submitted-insns", sub));
	json_array_append_new(json_object_get(stmt, "subject"), subject("bpf/xlated-insns", xl_norm));
	json_array_append_new(json_object_get(stmt, "subject"), subject("jit/native-image", g->native));
	if ((err = store__put_json(g->s, stmt, g->receipt)) || (err = store__batch_commit(g->s)))
		goto out;
	/* the per-load facts go to the lifecycle log, not the receipt */
	json_decref(g->jit_ranges);
	g->jit_ranges = capture__jit_ranges(c);
	g->prog_id = c->prog_id;
	loaded = json_pack("{s:s, s:s, s:I, s:s, s:s, s:O, s:I, s:s, s:{s:I, s:I}}",
			   "generation_id", g->gen_id, "receipt", g->receipt,
			   "prog_id", (json_int_t)c->prog_id, "prog_tag", tag, "prog_name", c->name,
			   "jit_ranges", g->jit_ranges,
			   "load_time_boot_ns", (json_int_t)c->load_time,
			   "source", in->source,
			   "timing", "load_ns", (json_int_t)in->load_ns,
			   "capture_ns", (json_int_t)(pb_mono_ns() - t0));
	if (!loaded) { err = -ENOMEM; goto out; }
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
	if (g->s->batch || g->s->n_pend)
		store__batch_abort(g->s);
	json_decref(loaded);
	json_decref(stmt);
	json_decref(pred);
	json_decref(body);
	json_decref(target);
	json_decref(verifier);
	json_decref(func_lens);
	free(nlog);
	free(copy);
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

#define COPT(o, f, def) ((o) && (o)->sz > offsetof(struct pb_capture_opts, f) ? (o)->f : (def))

int pb_generation__capture_fd_opts(struct pb_generation *g, int prog_fd,
				   const struct pb_capture_opts *o)
{
	struct capture_in in = { .prog_fd = prog_fd, .source = "library" };

	if (!g || prog_fd < 0 || (o && o->sz < sizeof(size_t)))
		return -EINVAL;
	in.submitted = COPT(o, submitted_insns, NULL);
	in.submitted_len = COPT(o, submitted_len, 0);
	in.log = COPT(o, verifier_log, NULL);
	in.log_level = COPT(o, log_level, 0);
	in.load_ns = COPT(o, load_ns, 0);
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
		return json_pack("{s:s}", "error", strerror(errno));
	j = json_pack("{s:I, s:I, s:I}", "id", (json_int_t)info.id, "type", (json_int_t)info.type,
		      "prog_id", (json_int_t)info.prog_id);
	if (info.type == BPF_LINK_TYPE_XDP)
		json_object_set_new(j, "ifindex", json_integer(info.xdp.ifindex));
	else if (info.type == BPF_LINK_TYPE_TCX)
		json_object_set_new(j, "ifindex", json_integer(info.tcx.ifindex));
	else if (info.type == BPF_LINK_TYPE_NETNS)
		json_object_set_new(j, "netns_ino", json_integer(info.netns.netns_ino));
	return j;
}

#define AOPT(o, f, def) ((o) && (o)->sz > offsetof(struct pb_activation_opts, f) ? (o)->f : (def))

static int log_retired(struct pb_generation *g, const char *reason, uint64_t mono, uint64_t real)
{
	json_t *e = json_pack("{s:s, s:s, s:I, s:s}", "generation_id", g->gen_id, "receipt",
			      g->receipt, "prog_id", (json_int_t)g->prog_id, "reason", reason ?: "");
	int err;

	if (!e)
		return -ENOMEM;
	if (mono) {
		json_object_set_new(e, "mono_ns", json_integer((json_int_t)mono));
		json_object_set_new(e, "realtime_ns", json_integer((json_int_t)real));
	}
	err = lifelog__append(g->s, LIFE_RETIRED, e, NULL);
	json_decref(e);
	return err;
}

int pb_generation__activate(struct pb_generation *g, const struct pb_activation_opts *o,
			    pb_swap_fn_t swap, void *ctx)
{
	struct pb_generation *old = AOPT(o, replaces, NULL);
	const char *hook = AOPT(o, hook, NULL);
	int link_fd;
	uint64_t m0, r0, m1, r1;
	uint32_t old_prog_id = 0;
	json_t *e;
	int err;

	if (!g || !g->captured || !swap || (old && !old->captured))
		return -EINVAL;
	/* what the kernel says the link runs right before the swap: names
	 * the predecessor even when the swapper lost track of it (a swap
	 * whose records were lost) */
	link_fd = AOPT(o, link_fd, -1);
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
	link_fd = AOPT(o, link_fd, -1);	/* after: a swap may create the link */
	e = json_pack("{s:s, s:s, s:I, s:o, s:o, s:O, s:I, s:I, s:I, s:I, s:o}",
		      "generation_id", g->gen_id, "receipt", g->receipt,
		      "prog_id", (json_int_t)g->prog_id,
		      "link", link_identity(link_fd),
		      "hook", str_or_null(hook),
		      "jit_ranges", g->jit_ranges,
		      "swap_begin_mono_ns", (json_int_t)m0, "swap_end_mono_ns", (json_int_t)m1,
		      "swap_begin_realtime_ns", (json_int_t)r0, "swap_end_realtime_ns", (json_int_t)r1,
		      "replaces", old ? json_string(old->gen_id) : json_null());
	if (!e)
		return -ENOMEM;
	if (old_prog_id)
		json_object_set_new(e, "old_prog_id", json_integer(old_prog_id));
	json_object_set_new(e, "mono_ns", json_integer((json_int_t)m1));
	json_object_set_new(e, "realtime_ns", json_integer((json_int_t)r1));
	err = lifelog__append(g->s, LIFE_ACTIVATED, e, NULL);
	json_decref(e);
	if (!err && old)
		err = log_retired(old, AOPT(o, retire_reason, NULL) ?: "replaced", m1, r1);
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
	e = json_pack("{s:s, s:s, s:I}", "generation_id", g->gen_id, "receipt", g->receipt,
		      "prog_id", (json_int_t)g->prog_id);
	if (!e)
		return -ENOMEM;
	err = lifelog__append(g->s, LIFE_UNLOADED, e, NULL);
	json_decref(e);
	return err;
}
