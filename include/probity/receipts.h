/* SPDX-License-Identifier: BSD-2-Clause */
/* receipts.h: execution receipts for BPF program generations.
 *
 * An optimizer (probity's own specializer, or any external one) records
 * every generation of a BPF program it produces:
 *
 *   pb_store__open()                 content-addressed store + lifecycle log
 *   pb_generation__begin()           a new generation, from a parent or none
 *   pb_generation__add_transform()   rewrite steps, with evidence artifacts
 *   pb_generation__add_assumption()  what the rewrite relies on (profile...)
 *   pb_generation__load()            load through libbpf, capture
 *                                    bpf_prog_info synchronously, write the
 *                                    immutable receipt and a 'loaded' entry
 *   pb_generation__activate()        time-stamp the caller's swap
 *                                    (bpf_link_update, prog-array update)
 *                                    and log 'activated' (+ 'retired' for
 *                                    the generation it replaced)
 *   pb_generation__retire()          log 'retired' with a reason
 *   pb_generation__record_unloaded() log 'unloaded' once the program is gone
 *
 * Receipts and artifacts are immutable objects named by their SHA-256;
 * activation and retirement live in the append-only hash-chained lifecycle
 * log (see docs/receipts.md). Every int function returns 0 or -errno;
 * free functions accept NULL.
 */
#ifndef PROBITY_RECEIPTS_H
#define PROBITY_RECEIPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PB_DIGEST_HEX_LEN 65	/* 64 hex digits + NUL */

struct bpf_object;
struct bpf_program;
struct pb_store;
struct pb_generation;

struct pb_store_opts {
	size_t sz;
	bool no_create;		/* fail with -ENOENT if the store does not exist */
};

/* Open (create unless opts->no_create) the store in directory dir. */
int pb_store__open(const char *dir, const struct pb_store_opts *opts, struct pb_store **out);
void pb_store__free(struct pb_store *s);
const char *pb_store__dir(const struct pb_store *s);

/* Group commit (docs/receipts.md "Group commit"): between begin and
 * end, objects and log entries are written without fsync; group_sync
 * makes everything written so far durable with one syncfs(2) of the
 * store's filesystem, then appends a 'durable' watermark naming the last
 * entry it covers. A crash loses at most the entries after the last
 * watermark, and attribution treats time after the last durable entry as
 * unknown. group_end syncs, logs the final watermark and fsyncs it;
 * pb_store__free ends an open group. */
int pb_store__group_begin(struct pb_store *s);
int pb_store__group_sync(struct pb_store *s);
int pb_store__group_end(struct pb_store *s);

/* Put len bytes as an object (deduplicated: an existing object is not
 * rewritten). hex gets the object's SHA-256. */
int pb_store__put(struct pb_store *s, const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN]);
/* Read object hex (malloc'ed into *buf; caller frees). -ENOENT if absent. */
int pb_store__get(struct pb_store *s, const char *hex, void **buf, size_t *len);

struct pb_generation_opts {
	size_t sz;
	const char *parent_generation_id;	/* NULL for a root generation */
	const char *source_build_id;		/* build id of the source object */
	const char *optimizer_name;		/* default "none" */
	const char *optimizer_version;		/* default "" */
	const char *optimizer_build_id;		/* default "" */
	/* "recorded" (default): the producer reported transforms and
	 * assumptions. "unknown": an observer saw only the result. */
	const char *provenance;
};

int pb_generation__begin(struct pb_store *s, const struct pb_generation_opts *opts,
			 struct pb_generation **out);
/* Evidence (may be NULL/0) is stored as an artifact; its digest goes into
 * the receipt. Ids must be unique per generation (-EEXIST). */
int pb_generation__add_transform(struct pb_generation *g, const char *id, const char *description,
				 const void *evidence, size_t evidence_len);
int pb_generation__add_assumption(struct pb_generation *g, const char *id, const char *description,
				  const void *evidence, size_t evidence_len);

/* Load obj (bpf_object__load) with a stats-level verifier log on prog,
 * then, before returning, capture prog's bpf_prog_info, store artifacts
 * and the receipt, and append 'loaded' to the lifecycle log. On a
 * verifier rejection the error is returned and nothing is logged. One
 * generation is one program: other programs of obj load as libbpf
 * decides, uncaptured (give them their own generations with
 * pb_generation__capture_fd). */
int pb_generation__load(struct pb_generation *g, struct bpf_object *obj, struct bpf_program *prog);
/* Capture an already loaded program by fd (e.g. one loaded with
 * bpf_prog_load()); verifier_log may be NULL. */
int pb_generation__capture_fd(struct pb_generation *g, int prog_fd, const char *verifier_log,
			      uint32_t log_level);

/* Same, with what the caller knows about the load: the instructions it
 * submitted to BPF_PROG_LOAD (map fds in ld_imm64 are normalized before
 * digesting, as for pb_generation__load), so the receipt names the
 * rewritten bytes, not only the kernel's translation of them. */
struct pb_capture_opts {
	size_t sz;
	const void *submitted_insns;	/* struct bpf_insn[], or NULL */
	size_t submitted_len;		/* bytes */
	const char *verifier_log;	/* may be NULL */
	uint32_t log_level;
	uint64_t load_ns;		/* the caller's verifier + JIT time, 0: unknown */
};
int pb_generation__capture_fd_opts(struct pb_generation *g, int prog_fd,
				   const struct pb_capture_opts *opts);

/* After load: the generation id and the receipt's object digest. */
const char *pb_generation__id(const struct pb_generation *g);
const char *pb_generation__receipt_digest(const struct pb_generation *g);
const char *pb_generation__native_digest(const struct pb_generation *g);
uint32_t pb_generation__prog_id(const struct pb_generation *g);

struct pb_activation_opts {
	size_t sz;
	int link_fd;			/* the link the swap targets, <= 0: none; read
				 * after swap(), so a swap that creates
				 * the link may fill it in */
	const char *hook;		/* free-form hook identity if no link */
	struct pb_generation *replaces;	/* gets a 'retired' entry, may be NULL */
	const char *retire_reason;	/* default "replaced" */
};

typedef int (*pb_swap_fn_t)(void *ctx);
/* Take CLOCK_MONOTONIC/REALTIME just before and just after swap(ctx),
 * then log 'activated' for g (and 'retired' for opts->replaces). A
 * link_fd set before the call is asked which program it runs first: the
 * entry's old_prog_id names the predecessor as the kernel saw it. The
 * swap's own error is returned and then nothing is logged. */
int pb_generation__activate(struct pb_generation *g, const struct pb_activation_opts *opts,
			    pb_swap_fn_t swap, void *ctx);
int pb_generation__retire(struct pb_generation *g, const char *reason);
/* Call after the program was closed (bpf_object__close). */
int pb_generation__record_unloaded(struct pb_generation *g);
void pb_generation__free(struct pb_generation *g);

#ifdef __cplusplus
}
#endif

#endif
