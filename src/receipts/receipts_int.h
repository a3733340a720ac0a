/* receipts_int.h: what the receipts modules share inside libprobity
 * (canonical JSON, the object store's internals, the lifecycle log, the
 * bpf_prog_info capture and the digest normalizations). The CLI
 * (src/cli/receipts.c) and the observer (src/observe/) use it too.
 */
#ifndef PROBITY_RECEIPTS_INT_H
#define PROBITY_RECEIPTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "probity/receipts.h"
#include "common/clock.h"

#define PB_RECEIPT_PREDICATE_TYPE "https://probity.dev/receipt/v1"
#define PB_INTOTO_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define PB_LIFELOG_NAME "lifecycle.log"
#define PB_LIFELOG_LOCK "lifecycle.lock"
#define PB_LIFELOG_MAGIC "PBRCLOG\0"
#define PB_LIFELOG_VERSION 1

/* ---- canon.c: canonical JSON (sorted keys, compact, no reals) ---- */
/* Encode j canonically into *out (malloc'ed, NUL-terminated). -EINVAL
 * when j holds a real number. */
int canon__encode(const json_t *j, char **out, size_t *len);
/* SHA-256 of the canonical encoding. */
int canon__digest(const json_t *j, char hex[PB_DIGEST_HEX_LEN]);
int pb_sha256_hex(const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN]);
bool pb_is_digest_hex(const char *s);

/* ---- store.c ---- */
struct store_pending {
	char *tmp;
	char hex[PB_DIGEST_HEX_LEN];
};

struct frame_writer;

struct pb_store {
	char *dir;
	int dir_fd;
	bool batch;			/* between batch_begin and commit/abort */
	struct store_pending *pend;
	size_t n_pend, cap_pend;
	/* lifecycle log writer kept open between appends (lifelog.c): valid
	 * while the file still ends where our last append left it */
	struct frame_writer *log_w;
	uint64_t log_end;
	unsigned long log_ino;
	char log_last[PB_DIGEST_HEX_LEN];
	long long log_seq;
	json_t *known_gens;		/* generation id -> receipt, loaded here */
};
/* Batch puts: objects are written to tmp/ first; commit fsyncs them all,
 * renames them all into objects/, then fsyncs their directories. Same
 * guarantee as single puts (no object is visible before its bytes are
 * durable, a crash before the renames leaves none of the batch), and no
 * object of a receipt appears long before the others. abort unlinks the
 * temporaries. */
void store__batch_begin(struct pb_store *s);
int store__batch_commit(struct pb_store *s);
void store__batch_abort(struct pb_store *s);
/* Object path into buf ("DIR/objects/ab/cdef..."). */
void store__object_path(const struct pb_store *s, const char *hex, char *buf, size_t sz);
bool store__has(struct pb_store *s, const char *hex);
/* Canonical JSON object: encode, put. */
int store__put_json(struct pb_store *s, const json_t *j, char hex[PB_DIGEST_HEX_LEN]);
int store__get_json(struct pb_store *s, const char *hex, json_t **out);
/* Call fn for each object file (hex name) in the store. */
int store__for_each_object(struct pb_store *s, int (*fn)(const char *hex, const char *path, void *ctx),
			   void *ctx);
/* Test hook: PROBITY_TEST_CRASH=store-before-rename makes store__put
 * SIGKILL itself after the temporary file is written and fsynced. */
#define PB_CRASH_ENV "PROBITY_TEST_CRASH"

/* ---- lifelog.c: hash-chained lifecycle log on framing.h ---- */
enum lifelog_kind {
	LIFE_LOADED = 1,
	LIFE_ACTIVATED = 2,
	LIFE_RETIRED = 3,
	LIFE_UNLOADED = 4,
	LIFE_LINK_UPDATED = 5,
	LIFE_OBSERVER = 6,	/* observer start/stop and miss counters */
};
const char *lifelog__kind_name(uint32_t kind);
/* Append entry (a JSON object; gets "kind", "seq", "prev", "mono_ns",
 * "realtime_ns", "pid" unless present) under an exclusive flock. The
 * chain is read and checked first: a torn or broken log refuses the
 * append with -EBADMSG. hash (may be NULL) gets the entry's digest. */
int lifelog__append(struct pb_store *s, uint32_t kind, json_t *entry, char hash[PB_DIGEST_HEX_LEN]);

struct lifelog_problem_cb {
	void (*fn)(void *ctx, const char *where, const char *what);
	void *ctx;
};
/* Read every entry: *entries is an array of the entry objects, each with
 * "_hash" and "_offset" added. Problems (torn tail, CRC, broken chain,
 * kind mismatch) go to cb; returns the number of problems found or
 * -errno. A missing log is an empty log. */
int lifelog__read(struct pb_store *s, json_t **entries, const struct lifelog_problem_cb *cb);

/* ---- capture.c: bpf_prog_info, kernel and JIT environment ---- */
struct pb_capture {
	uint32_t prog_id;
	uint32_t prog_type;
	char name[16];
	uint8_t tag[8];
	uint64_t load_time;
	uint32_t verified_insns;
	uint32_t btf_id;
	uint8_t *xlated; uint32_t xlated_len;
	uint8_t *jited; uint32_t jited_len;
	uint64_t *ksyms; uint32_t nr_ksyms;
	uint32_t *func_lens; uint32_t nr_func_lens;
	uint8_t *line_info; uint32_t nr_line_info, line_info_rec_size;
	uint64_t *jited_line_info; uint32_t nr_jited_line_info;
	uint8_t *btf; uint32_t btf_len;
};
int capture__prog_fd(int fd, struct pb_capture **out);
void capture__free(struct pb_capture *c);
/* {"kernel_build_id","kernel_release","arch","jit_backend",
 *  "bpf_jit_enable","bpf_jit_harden","bpf_jit_kallsyms"} */
json_t *capture__target_env(void);
int capture__kernel_build_id(char *hex, size_t sz);
/* "addr"/"len" array from jited_ksyms + jited_func_lens */
json_t *capture__jit_ranges(const struct pb_capture *c);

/* ---- normalize.c ---- */
/* Zero the operands of external call/jmp rel32, movabs imm64 and
 * sign-extended kernel-address imm32 in an x86-64 JIT image (in place).
 * Returns how many operands were masked or -errno; -EOPNOTSUPP on an
 * architecture without a normalizer (image left as is). */
int normalize__jit_image(uint8_t *img, size_t len, const uint32_t *func_lens, uint32_t nr_funcs);
const char *normalize__jit_scheme(void);
/* Zero the map fd / map id of every ld_imm64 pseudo-map instruction. */
void normalize__bpf_insns(uint8_t *insns, size_t len);
/* Verifier log without its timing lines. */
char *normalize__verifier_log(const char *log);
/* Recompute the native image digest of a raw JIT image artifact. */
int normalize__native_digest(const void *img, size_t len, const json_t *func_lens,
			     char hex[PB_DIGEST_HEX_LEN]);

/* ---- generation.c ---- */
/* The generation body of a receipt predicate, whose digest is the id. */
int receipt__generation_id(const json_t *predicate, char hex[PB_DIGEST_HEX_LEN]);
bool receipt__is_receipt(const json_t *j);
/* Observer path: a receipt with provenance "unknown" for prog fd. */
int receipt__capture_unknown(struct pb_store *s, int prog_fd, const char *writer,
			     char gen_id[PB_DIGEST_HEX_LEN], char receipt[PB_DIGEST_HEX_LEN],
			     json_t **loaded_entry);

int receipts__find_generation(struct pb_store *s, const char *what, char gen[PB_DIGEST_HEX_LEN],
			      char receipt[PB_DIGEST_HEX_LEN]);

void lifelog__close(struct pb_store *s);

/* ---- verify.c ---- */
struct verify_result {
	json_t *problems;	/* array of {"where","what"} */
	json_t *notes;		/* array of {"where","what"} (not failures) */
	size_t n_objects, n_receipts, n_entries;
};
int verify__store(struct pb_store *s, struct verify_result *r);
void verify_result__clear(struct verify_result *r);

#endif
