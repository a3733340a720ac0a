/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest.h: the in-memory model of a probity resource manifest (v1).
 *
 * A manifest is a versioned contract: for one exact build (GNU build-id)
 * it says where WAIT / ACQUIRE / USE / RELEASE happen and how a resource
 * instance, its units and its generation are derived from runtime values.
 * docs/manifest.md documents every field. The parser (manifest.c) builds
 * this model with libyaml and reports every problem as a positioned
 * diagnostic; nothing here knows about BPF or ELF.
 */
#ifndef PROBITY_MANIFEST_H
#define PROBITY_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "common/errtext.h"

#define MANIFEST_VERSION	1
#define PB_MAX_DEREF		3	/* dereference levels in a value */
#define PB_MAX_UPROBE_ARG	5	/* arg0..arg5 (x86-64 SysV registers) */
#define PB_MAX_USDT_ARG		11	/* arg0..arg11 (libbpf USDT limit) */
#define PB_BUILD_ID_MAX		64	/* bytes */
#define PB_BUILD_ID_MIN		4	/* bytes (8 hex digits) */
#define PB_MANIFEST_MAX_BYTES	(4 << 20)	/* larger files are refused */
#define PB_MANIFEST_MAX_EVENTS	10000
#define PB_MANIFEST_MAX_ITEMS	10000	/* targets, resources */

struct pb_loc {
	int line;	/* 1-based; 0 when unknown */
	int col;	/* 1-based */
};

enum pb_res_class {
	PB_CLASS_POOL = 0,
	PB_CLASS_QUEUE,
	PB_CLASS_CACHE,
	PB_CLASS_LOCK,
	PB_CLASS_CREDIT,
	PB_CLASS_CONNECTION,
	PB_CLASS_OTHER,
	PB_CLASS__COUNT,
};

enum pb_event_kind {
	PB_EV_WAIT = 0,
	PB_EV_ACQUIRE,
	PB_EV_USE,
	PB_EV_RELEASE,
	PB_EV__COUNT,
};

enum pb_site_at {
	PB_AT_ENTRY = 0,	/* at symbol+offset (offset 0 = function entry) */
	PB_AT_RETURN,		/* at function return (uretprobe); offset must be 0 */
	PB_AT_SPAN,		/* WAIT only: entry to return of the function */
};

enum pb_confidence {
	PB_CONF_CANDIDATE = 0,	/* proposed, never validated */
	PB_CONF_VALIDATED,
	PB_CONF_SUSPECT,
	PB_CONF_STALE,
	PB_CONF_DEGRADED,	/* only set by `plan --rebind`, never in a file */
};

enum pb_prov_source {
	PB_PROV_STATIC_ANALYSIS = 0,
	PB_PROV_LLM,
	PB_PROV_DEVELOPER,
	PB_PROV_USDT,
};

enum pb_returns {
	PB_RET_UNSPECIFIED = 0,	/* not declared */
	PB_RET_VALUE,		/* function returns a value (declared) */
	PB_RET_VOID,		/* function returns nothing (declared) */
};

enum pb_gen_rule {
	PB_GEN_ON_ACQUIRE = 0,	/* new generation on ACQUIRE of an inactive instance */
	PB_GEN_COUNTER,		/* generation read from a value (event.generation) */
};

/* resource `scope` (docs/manifest.md): which processes share an instance */
enum pb_scope {
	PB_SCOPE_PROCESS = 0,	/* default: an instance is (process, value) */
	PB_SCOPE_SHARED,	/* (value) alone: memory every process maps at
				 * the same address; RELEASE may come from
				 * another process than the ACQUIRE */
};

/* A value expression, e.g. `arg1`, `retval`, `42`, `*u64(arg0 + 16)`,
 * `*u32(*u64(arg0 + 8) + 4)`, `s32(retval)`.
 *
 * Evaluation (the same in user space and, later, in BPF):
 *   v = base (argN / retval / constant)
 *   for i in 0..n_deref-1: v = *(uN *)(v + deref[i].offset)   (zero-extended)
 *   v = v + final_offset
 *   if cast_size: truncate to cast_size bytes, sign-extend if cast_signed
 */
enum pb_val_base {
	PB_VAL_NONE = 0,	/* field absent */
	PB_VAL_CONST,
	PB_VAL_ARG,
	PB_VAL_RETVAL,
};

struct pb_deref {
	int64_t offset;	/* added before the load */
	uint8_t size;	/* 1, 2, 4 or 8 bytes */
};

struct pb_value {
	enum pb_val_base base;
	uint8_t arg;		/* PB_VAL_ARG: argument index */
	int64_t constant;	/* PB_VAL_CONST */
	uint8_t n_deref;	/* 0..PB_MAX_DEREF */
	struct pb_deref deref[PB_MAX_DEREF];
	int64_t final_offset;
	uint8_t cast_size;	/* 0 = none, else 1/2/4/8 */
	bool cast_signed;
	char *text;		/* the expression as written (for messages) */
	struct pb_loc loc;
};

enum pb_cmp_op {
	PB_CMP_EQ = 0,
	PB_CMP_NE,
	PB_CMP_LT,
	PB_CMP_LE,
	PB_CMP_GT,
	PB_CMP_GE,
};

/* `when: <value> <op> <integer>` */
struct pb_guard {
	bool present;
	struct pb_value lhs;
	enum pb_cmp_op op;
	int64_t rhs;
	char *text;
	struct pb_loc loc;
};

/* `expect: [{next: [USE, RELEASE], within: 500ms}]` */
struct pb_transition {
	uint32_t next_mask;	/* bit (1 << enum pb_event_kind) per allowed next kind */
	uint64_t within_ns;	/* 0 = no bound */
	struct pb_loc loc;
};

/* `predicts: [{effect: block_io}, {effect: off_cpu, min_duration: 1ms}]`:
 * the OS effect an occurrence of the event should have, checked at runtime
 * against the scheduler / block-I/O / fault streams (docs/validation.md,
 * "Cross-layer checks"). Values index pb_desc_stats.pred_*[] (events.h). */
enum pb_effect {
	PB_FX_OFF_CPU = 0,	/* the thread blocks (goes off CPU asleep) inside the call */
	PB_FX_BLOCK_IO,		/* the thread issues block I/O inside the call */
	PB_FX_PAGE_FAULT,	/* the thread takes a user page fault inside the call */
	PB_FX_WAKES_WAITER,	/* RELEASE: the releasing thread wakes a thread
				 * blocked in a WAIT span on the resource */
	PB_FX__COUNT,
};

struct pb_prediction {
	enum pb_effect effect;
	uint64_t min_duration_ns;	/* 0 = every call; else only calls this long are judged */
	char *waiter;			/* wakes_waiter: the WAIT event woken, as written
					 * (NULL: the resource's only WAIT span) */
	int waiter_idx;			/* event index of the WAIT, -1 until resolved */
	struct pb_loc loc;
};

struct pb_provenance {
	bool present;		/* the event has a provenance block */
	enum pb_prov_source source;
	char *evidence;		/* free text; may be NULL */
	char *date;		/* YYYY-MM-DD; may be NULL */
	struct pb_loc loc;
};

struct pb_target {
	char *id;		/* optional in a single-target manifest (then "main") */
	char *binary;		/* path, or a soname such as libc.so.6 */
	uint8_t build_id[PB_BUILD_ID_MAX];
	size_t build_id_len;	/* bytes */
	struct pb_loc loc;
	struct pb_loc binary_loc;	/* of the binary value (for plan messages) */
	struct pb_loc build_id_loc;	/* of the build_id value */
};

struct pb_resource {
	char *name;		/* e.g. pg.buffer_pool.buffer */
	enum pb_res_class class;
	char *units;		/* e.g. "pages", "bytes", "connections" */
	bool has_capacity;
	uint64_t capacity;	/* in units */
	bool shared;		/* instance may be held by several owners at once */
	bool externally_owned;	/* USE may refer to instances never ACQUIREd */
	enum pb_gen_rule generation;
	char *description;	/* may be NULL */
	struct pb_loc loc;
	enum pb_scope scope;	/* which processes share an instance's name */
};

struct pb_site {
	int target_idx;		/* index into manifest->targets */
	char *symbol;		/* function symbol; NULL for USDT */
	uint64_t offset;	/* bytes from the symbol start */
	char *usdt_provider;	/* USDT site; NULL for symbol sites */
	char *usdt_name;
	enum pb_site_at at;
	struct pb_loc loc;	/* of the symbol or usdt value (what plan
				 * reports when the site does not resolve) */
};

struct pb_event {
	char *id;
	char *resource;		/* resource name as written */
	int resource_idx;	/* index into manifest->resources */
	enum pb_event_kind kind;
	struct pb_site site;
	struct pb_value instance;	/* required */
	struct pb_value units;		/* default: constant 1 */
	struct pb_value target;		/* USE only; optional */
	char *target_resource;		/* USE only; optional resource name */
	int target_resource_idx;	/* -1 when absent */
	struct pb_guard when;
	struct pb_value generation;	/* only for resources with generation: counter */
	enum pb_returns returns;
	struct pb_transition *expect;
	size_t n_expect;
	struct pb_prediction *predicts;	/* cross-layer predictions; may be NULL */
	size_t n_predicts;
	enum pb_confidence confidence;
	struct pb_provenance provenance;
	char *description;		/* may be NULL */
	struct pb_loc loc;
};

struct manifest {
	char *path;		/* file the manifest was read from */
	int version;		/* always MANIFEST_VERSION after a clean parse */
	char *name;
	char *description;	/* may be NULL */
	struct pb_target *targets;
	size_t n_targets;
	struct pb_resource *resources;
	size_t n_resources;
	struct pb_event *events;
	size_t n_events;
	uint8_t digest[32];	/* SHA-256 of the file bytes */
};

/* Parse and check a manifest file.
 * Returns 0 and *out on a clean manifest (warnings may be in diags);
 * -EINVAL when findings (errors) were added to diags (*out is NULL);
 * another -errno when the file cannot be read (a diag names the file).
 */
int manifest__load(const char *path, struct manifest **out, struct diags *diags);

/* Same, from memory; `name` is used as the file name in diagnostics. */
int manifest__parse(const char *name, const char *buf, size_t len,
		    struct manifest **out, struct diags *diags);

void manifest__free(struct manifest *m);

/* Look-ups; return -1 when absent. */
int manifest__find_resource(const struct manifest *m, const char *name);
int manifest__find_target(const struct manifest *m, const char *id);
int manifest__find_event(const struct manifest *m, const char *id);

/* The whole model as JSON (what `probity -j manifest show` prints); the
 * shape is documented in docs/manifest.md. NULL on allocation failure. */
json_t *manifest__to_json(const struct manifest *m);

/* Names of enum values as written in YAML ("ACQUIRE", "pool", ...). */
const char *pb_event_kind_str(enum pb_event_kind k);
const char *pb_res_class_str(enum pb_res_class c);
const char *pb_site_at_str(enum pb_site_at a);
const char *pb_confidence_str(enum pb_confidence c);
const char *pb_prov_source_str(enum pb_prov_source s);
const char *pb_cmp_op_str(enum pb_cmp_op op);
const char *pb_returns_str(enum pb_returns r);
const char *pb_gen_rule_str(enum pb_gen_rule g);
const char *pb_scope_str(enum pb_scope s);
const char *pb_effect_str(enum pb_effect fx);
/* True for the effects judged over the probed call (entry to return). */
bool pb_effect_in_call(enum pb_effect fx);

/* Parse a value expression on its own (used by the parser and tests).
 * Returns 0 or -EINVAL with a human message in err->msg ("expected ...,
 * found ...") and the 0-based column of the problem in err->col, which
 * the linter turns into a positioned finding. err may be NULL.
 */
int pb_value__parse(const char *text, struct pb_value *out, struct pb_errtext *err);
/* Print a value expression in canonical form; returns the length, or
 * -ENOSPC when buf is too small (buf is then truncated, NUL-terminated). */
int pb_value__format(const struct pb_value *v, char *buf, size_t sz);
void pb_value__free(struct pb_value *v);

/* True when v reads the return value anywhere. */
bool pb_value__uses_retval(const struct pb_value *v);
/* True when v is a plain constant (no dereference); *out gets its value
 * after the offset and the cast. */
bool pb_value__const(const struct pb_value *v, int64_t *out);

/* Parse a guard `<value> <op> <integer>` (same error conventions as
 * pb_value__parse); sets present = true on success. */
int pb_guard__parse(const char *text, struct pb_guard *out, struct pb_errtext *err);
int pb_guard__format(const struct pb_guard *g, char *buf, size_t sz);
void pb_guard__free(struct pb_guard *g);

#endif
