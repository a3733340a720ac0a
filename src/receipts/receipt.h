/* SPDX-License-Identifier: BSD-2-Clause */
/* receipt.h: reading receipts back. A receipt is an in-toto Statement v1
 * whose predicate (PB_RECEIPT_PREDICATE_TYPE) names one generation of a
 * BPF program: the hashed generation body (its digest is the generation
 * id), the derived digests, the verifier result, the JIT image and the
 * artifacts (docs/receipts.md). Writing them is the generation API of
 * include/probity/receipts.h.
 */
#ifndef PROBITY_RECEIPTS_RECEIPT_H
#define PROBITY_RECEIPTS_RECEIPT_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "probity/receipts.h"
#include "receipts/schema.h"

/* The decoders below follow lifelog.h's contract: 0, or -EINVAL with err
 * naming the first wrong field (its path inside the statement); what did
 * decode is filled; strings and json_t pointers are borrowed from j and
 * valid while j is; JSON null reads as absent. */

/* generation.transforms[] / .assumptions[]: id required, evidence
 * present (null when there is none) */
struct receipt_step {
	const char *id;
	const char *description;
	const char *evidence;		/* artifact digest, or NULL */
};
int receipt_step__decode(const json_t *j, struct receipt_step *out, json_error_t *err);

/* subject[] */
struct receipt_subject {
	const char *name;		/* "bpf/xlated-insns", ... */
	const char *sha256;
};
int receipt_subject__decode(const json_t *j, struct receipt_subject *out, json_error_t *err);

/* generation.target (capture__target_env) */
struct receipt_target {
	const char *kernel_build_id, *kernel_release, *arch, *jit_backend, *jit_normalization;
	int64_t bpf_jit_enable, bpf_jit_harden, bpf_jit_kallsyms;	/* -1: unknown */
};
int receipt_target__decode(const json_t *j, struct receipt_target *out, json_error_t *err);

/* predicate.generation: what decides the generation id */
struct receipt_generation {
	const json_t *body;		/* the object itself (hashed as is) */
	const char *parent_generation_id;
	const char *specialized_insns_digest;
	const char *specialized_insns_source;	/* "submitted" / "xlated" */
	struct {
		const char *name, *version, *build_id;
	} optimizer;
	const json_t *transforms;	/* array; receipt_step__decode */
	const json_t *assumptions;	/* array; receipt_step__decode */
	const char *provenance;		/* "recorded" / "unknown" */
	const char *source_build_id;
	struct {
		const char *name;
		int64_t type;
	} program;
	struct receipt_target target;
};

struct receipt_verifier {
	bool present;			/* the four result fields all decoded */
	bool accepted;
	int64_t log_level;
	int64_t verified_insns;
	const char *log_normalized_digest;
	const char *log;		/* verifier log artifact, or NULL */
};

struct receipt_jit {
	const char *image;		/* raw JIT image artifact */
	int64_t image_len;
	const json_t *func_lens;	/* array of integers, or NULL */
	const char *normalization;
	int64_t masked_operands;
};

struct receipt_artifacts {
	const json_t *all;		/* name -> digest object, or NULL */
	const char *xlated_insns, *jit_image, *line_mapping;
	const char *submitted_insns, *verifier_log, *btf;	/* optional */
};

struct receipt_view {
	const char *type;		/* "_type" */
	const char *predicate_type;
	const json_t *subjects;		/* array; receipt_subject__decode */
	const json_t *predicate;	/* the predicate object */
	const char *schema;
	bool has_generation;
	struct receipt_generation generation;
	const char *generation_id;
	const char *parent_generation_id;
	const char *source_build_id;
	const char *original_bpf_tag, *specialized_bpf_tag;
	const char *optimizer_build_id;
	const json_t *transform_ids, *assumption_ids;
	const char *verifier_result_digest;
	const char *kernel_build_id, *jit_backend;
	const char *native_image_digest, *line_mapping_digest;
	const char *submitted_insns_digest, *xlated_insns_digest;
	struct receipt_verifier verifier;
	struct receipt_jit jit;
	struct receipt_artifacts artifacts;
	struct {
		const char *name, *version;
	} producer;
};
/* Required: "_type", "predicateType", "predicate" (an object); the rest
 * is checked when present. receipt__is_receipt() says whether the types
 * are ours. */
int receipt__decode(const json_t *j, struct receipt_view *out, json_error_t *err);

/* The generation body of a receipt predicate, whose digest is the id. */
int receipt__generation_id(const json_t *predicate, char hex[PB_DIGEST_HEX_LEN]);
bool receipt__is_receipt(const json_t *j);
/* Observer path: a receipt with provenance "unknown" for prog fd. The
 * 'loaded' entry is returned in *loaded_entry instead of being logged. */
int receipt__capture_unknown(struct pb_store *s, int prog_fd, const char *writer,
			     char gen_id[PB_DIGEST_HEX_LEN], char receipt[PB_DIGEST_HEX_LEN],
			     json_t **loaded_entry);

/* Find the receipt of a generation (id or unique prefix of >= 6 hex
 * digits, or a receipt digest) through the log's 'loaded' entries.
 * -EINVAL (bad form), -ENOENT, -ENOTUNIQ (prefix names several). */
int receipts__find_generation(struct pb_store *s, const char *what, char gen[PB_DIGEST_HEX_LEN],
			      char receipt[PB_DIGEST_HEX_LEN]);

#endif
