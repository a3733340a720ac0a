/* SPDX-License-Identifier: BSD-2-Clause */
/* decode.c: the typed decoders of every JSON record the receipts
 * subsystem reads back (lifecycle entries and their parts, receipts,
 * the observer's counters, verify's findings): the one place that reads
 * the key names of receipts/schema.h.
 *
 * Each record is a table of fields (key, type, required or not, where it
 * goes); every field is unpacked with jansson's json_unpack_ex, and its
 * error text is kept with the field's path in front ("predicate.jit.
 * image_len: Expected integer, got string"). The first error wins, but
 * every field that decodes is still filled, so a reader of untrusted
 * input can go on with what is there (lifelog__read reports a broken
 * chain rather than dropping the entry).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "receipts/canon.h"
#include "receipts/lifelog.h"
#include "receipts/receipt.h"
#include "receipts/verify.h"

enum field_type {
	F_STR,		/* const char * */
	F_I64,		/* int64_t */
	F_U64,		/* uint64_t, >= 0 */
	F_U32,		/* uint32_t */
	F_BOOL,		/* bool */
	F_OBJ,		/* const json_t *, an object */
	F_ARR,		/* const json_t *, an array */
	F_ADDR,		/* uint64_t from "0x..." or a non-negative integer */
};

enum presence {
	OPT,		/* may be absent; null reads as absent */
	REQ,		/* must be there, not null */
	REQ_NULL,	/* must be there, may be null (reads as absent) */
};

struct field {
	const char *key;
	enum field_type type;
	enum presence presence;
	size_t off;
};
#define FLD(st, key, type, req, member) { key, type, req, offsetof(st, member) }
#define N(a) (sizeof(a) / sizeof((a)[0]))

struct decoder {
	json_error_t *err;
	int rc;
};

static int fail(struct decoder *d, const char *path, const char *key, const json_error_t *e,
		const char *text)
{
	if (d->rc)
		return d->rc;	/* the first error wins */
	d->rc = -EINVAL;
	if (!d->err)
		return d->rc;
	if (e)
		*d->err = *e;
	else
		memset(d->err, 0, sizeof(*d->err));
	snprintf(d->err->text, sizeof(d->err->text), "%s%s%s%s%s", path, *path && key ? "." : "",
		 key ?: "", *path || key ? ": " : "", text);
	return d->rc;
}

static int parse_hex_addr(const char *s, uint64_t *out)
{
	char *end;

	if (strncmp(s, "0x", 2))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return errno || end == s + 2 || *end ? -EINVAL : 0;
}

static int decode_value(struct decoder *d, const char *path, const struct field *f, json_t *v,
			void *out)
{
	char *dst = (char *)out + f->off;
	const char *s;
	json_int_t i;
	json_error_t e;
	char text[96];
	int b;

	switch (f->type) {
	case F_STR:
		if (json_unpack_ex(v, &e, 0, "s", &s))
			return fail(d, path, f->key, &e, e.text);
		*(const char **)dst = s;
		return 0;
	case F_BOOL:
		if (json_unpack_ex(v, &e, 0, "b", &b))
			return fail(d, path, f->key, &e, e.text);
		*(bool *)dst = b;
		return 0;
	case F_OBJ:
		if (!json_is_object(v) && json_unpack_ex(v, &e, JSON_VALIDATE_ONLY, "{}"))
			return fail(d, path, f->key, &e, e.text);
		*(const json_t **)dst = v;
		return 0;
	case F_ARR:
		if (json_unpack_ex(v, &e, JSON_VALIDATE_ONLY, "[]"))
			return fail(d, path, f->key, &e, e.text);
		*(const json_t **)dst = v;
		return 0;
	case F_ADDR:
		if (json_is_string(v)) {
			if (parse_hex_addr(json_string_value(v), (uint64_t *)dst))
				return fail(d, path, f->key, NULL, "Expected a 0x-prefixed hex address");
			return 0;
		}
		__attribute__((fallthrough));	/* an integer address */
	case F_I64:
	case F_U64:
	case F_U32:
		if (json_unpack_ex(v, &e, 0, "I", &i))
			return fail(d, path, f->key, &e, e.text);
		if (f->type == F_I64) {
			*(int64_t *)dst = i;
			return 0;
		}
		if (i < 0 || (f->type == F_U32 && i > UINT32_MAX)) {
			snprintf(text, sizeof(text), "Expected an integer in [0, %s], got %lld",
				 f->type == F_U32 ? "2^32-1" : "2^63-1", (long long)i);
			return fail(d, path, f->key, NULL, text);
		}
		if (f->type == F_U32)
			*(uint32_t *)dst = (uint32_t)i;
		else
			*(uint64_t *)dst = (uint64_t)i;
		return 0;
	}
	return 0;
}

/* Decode the fields fs of object obj (path: where obj is, "" at the top)
 * into out. A NULL obj (an optional object that is absent) decodes to
 * nothing. */
static void decode_fields(struct decoder *d, const json_t *obj, const char *path,
			  const struct field *fs, size_t n, void *out)
{
	json_error_t e;
	size_t i;

	if (!obj)
		return;
	/* json_unpack only to word an error: an object unpack allocates a
	 * key set, twice per field, and decoding is per entry per read */
	if (!json_is_object(obj)) {
		json_unpack_ex((json_t *)obj, &e, JSON_VALIDATE_ONLY, "{}");
		fail(d, path, NULL, &e, e.text);
		return;
	}
	for (i = 0; i < n; i++) {
		json_t *v = json_object_get(obj, fs[i].key);

		if (!v && fs[i].presence != OPT) {
			json_unpack_ex((json_t *)obj, &e, 0, "{s:o}", fs[i].key, &v);
			fail(d, path, NULL, &e, e.text);	/* names the missing key */
			continue;
		}
		if (!v || (json_is_null(v) && fs[i].presence != REQ))
			continue;	/* absent: stays zero */
		decode_value(d, path, &fs[i], v, out);
	}
}

static int finish(struct decoder *d)
{
	return d->rc;
}

/* ---------------------------- lifecycle entries ---------------------------- */

static const struct field jit_range_fields[] = {
	FLD(struct lifelog_jit_range, JRK_ADDR, F_ADDR, REQ, addr),
	FLD(struct lifelog_jit_range, JRK_LEN, F_U32, OPT, len),
};

int lifelog_jit_range__decode(const json_t *j, struct lifelog_jit_range *out, json_error_t *err)
{
	struct decoder d = { err, 0 };

	memset(out, 0, sizeof(*out));
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", jit_range_fields, N(jit_range_fields), out);
	return finish(&d);
}

static const struct field ksym_fields[] = {
	FLD(struct lifelog_ksym, KSK_ADDR, F_ADDR, REQ, addr),
	FLD(struct lifelog_ksym, KSK_LEN, F_U32, OPT, len),
	FLD(struct lifelog_ksym, KSK_NAME, F_STR, OPT, name),
	FLD(struct lifelog_ksym, KSK_MONO_NS, F_U64, OPT, mono_ns),
};

int lifelog_ksym__decode(const json_t *j, struct lifelog_ksym *out, json_error_t *err)
{
	struct decoder d = { err, 0 };

	memset(out, 0, sizeof(*out));
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", ksym_fields, N(ksym_fields), out);
	return finish(&d);
}

static const struct field loader_fields[] = {
	FLD(struct lifelog_loader, LDRK_PID, F_U32, OPT, pid),
	FLD(struct lifelog_loader, LDRK_TID, F_U32, OPT, tid),
	FLD(struct lifelog_loader, LDRK_COMM, F_STR, OPT, comm),
	FLD(struct lifelog_loader, LDRK_SYSCALL_ENTER_MONO_NS, F_U64, OPT, syscall_enter_mono_ns),
	FLD(struct lifelog_loader, LDRK_SYSCALL_EXIT_MONO_NS, F_U64, OPT, syscall_exit_mono_ns),
};

static void decode_loader(struct decoder *d, const json_t *j, const char *path,
			  struct lifelog_loader *out)
{
	memset(out, 0, sizeof(*out));
	decode_fields(d, j, path, loader_fields, N(loader_fields), out);
}

int lifelog_loader__decode(const json_t *j, struct lifelog_loader *out, json_error_t *err)
{
	struct decoder d = { err, 0 };

	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_loader(&d, j, "", out);
	return finish(&d);
}

static const struct field link_fields[] = {
	FLD(struct lifelog_link, LINKK_ID, F_U32, OPT, id),
	FLD(struct lifelog_link, LINKK_TYPE, F_U32, OPT, type),
	FLD(struct lifelog_link, LINKK_PROG_ID, F_U32, OPT, prog_id),
	FLD(struct lifelog_link, LINKK_IFINDEX, F_I64, OPT, ifindex),
	FLD(struct lifelog_link, LINKK_NETNS_INO, F_U64, OPT, netns_ino),
	FLD(struct lifelog_link, LINKK_ERROR, F_STR, OPT, error),
};

static void decode_link(struct decoder *d, const json_t *j, const char *path, struct lifelog_link *out)
{
	memset(out, 0, sizeof(*out));
	out->ifindex = -1;
	decode_fields(d, j, path, link_fields, N(link_fields), out);
}

int lifelog_link__decode(const json_t *j, struct lifelog_link *out, json_error_t *err)
{
	struct decoder d = { err, 0 };

	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_link(&d, j, "", out);
	return finish(&d);
}

#define OSF(key, member) FLD(struct lifelog_observer_stats, key, F_U64, OPT, member)
static const struct field stats_fields[] = {
	OSF(OSK_BPF_SYSCALLS, bpf_syscalls),
	OSF(OSK_IDS_RESOLVED, ids_resolved_in_kernel),
	OSF(OSK_LOADS_SEEN, loads_seen),
	OSF(OSK_CAPTURED, captured),
	OSF(OSK_CAPTURED_BY_FD, captured_by_fd),
	OSF(OSK_CAPTURED_BY_ID, captured_by_id),
	OSF(OSK_LINK_CREATES, link_creates),
	OSF(OSK_LINK_UPDATES, link_updates),
	OSF(OSK_UNLOADS, unloads),
	OSF(OSK_KSYMBOL_RECORDS, ksymbol_records),
	OSF(OSK_FAILED_LOADS, failed_loads),
};

static const struct field missed_fields[] = {
	OSF(OMK_GONE_BEFORE_CAPTURE, missed.gone_before_capture),
	OSF(OMK_PERF_RECORDS_LOST, missed.perf_records_lost),
	OSF(OMK_RINGBUF_DROPPED, missed.ringbuf_dropped),
	OSF(OMK_SYSCALLS_NOT_FOLLOWED, missed.syscalls_not_followed),
	OSF(OMK_FD_NOT_DUPLICATED, missed.fd_not_duplicated),
	OSF(OMK_LINKS_UNRESOLVED, missed.links_unresolved),
	OSF(OMK_LOG_WRITE_ERRORS, missed.log_write_errors),
};
#undef OSF

struct stats_objs {
	const json_t *missed;
};

static const struct field stats_obj_fields[] = {
	FLD(struct stats_objs, OSK_MISSED, F_OBJ, OPT, missed),
};

static void decode_stats(struct decoder *d, const json_t *j, const char *path, const char *mpath,
			 struct lifelog_observer_stats *out)
{
	struct stats_objs o = { 0 };

	memset(out, 0, sizeof(*out));
	decode_fields(d, j, path, stats_fields, N(stats_fields), out);
	decode_fields(d, j, path, stats_obj_fields, N(stats_obj_fields), &o);
	decode_fields(d, o.missed, mpath, missed_fields, N(missed_fields), out);
}

int lifelog_observer_stats__decode(const json_t *j, struct lifelog_observer_stats *out,
				   json_error_t *err)
{
	struct decoder d = { err, 0 };

	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_stats(&d, j, "", OSK_MISSED, out);
	return finish(&d);
}

json_t *lifelog_observer_stats__encode(const struct lifelog_observer_stats *s)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
			 OSK_BPF_SYSCALLS, (json_int_t)s->bpf_syscalls,
			 OSK_IDS_RESOLVED, (json_int_t)s->ids_resolved_in_kernel,
			 OSK_LOADS_SEEN, (json_int_t)s->loads_seen,
			 OSK_CAPTURED, (json_int_t)s->captured,
			 OSK_CAPTURED_BY_FD, (json_int_t)s->captured_by_fd,
			 OSK_CAPTURED_BY_ID, (json_int_t)s->captured_by_id,
			 OSK_LINK_CREATES, (json_int_t)s->link_creates,
			 OSK_LINK_UPDATES, (json_int_t)s->link_updates,
			 OSK_UNLOADS, (json_int_t)s->unloads,
			 OSK_KSYMBOL_RECORDS, (json_int_t)s->ksymbol_records,
			 OSK_FAILED_LOADS, (json_int_t)s->failed_loads,
			 OSK_MISSED,
			 OMK_GONE_BEFORE_CAPTURE, (json_int_t)s->missed.gone_before_capture,
			 OMK_PERF_RECORDS_LOST, (json_int_t)s->missed.perf_records_lost,
			 OMK_RINGBUF_DROPPED, (json_int_t)s->missed.ringbuf_dropped,
			 OMK_SYSCALLS_NOT_FOLLOWED, (json_int_t)s->missed.syscalls_not_followed,
			 OMK_FD_NOT_DUPLICATED, (json_int_t)s->missed.fd_not_duplicated,
			 OMK_LINKS_UNRESOLVED, (json_int_t)s->missed.links_unresolved,
			 OMK_LOG_WRITE_ERRORS, (json_int_t)s->missed.log_write_errors);
}

#define LE(key, type, req, member) FLD(struct lifelog_entry, key, type, req, member)
static const struct field entry_fields[] = {
	LE(LK_KIND, F_STR, REQ, kind_name),
	LE(LK_SEQ, F_I64, REQ, seq),
	LE(LK_PREV, F_STR, REQ, prev),
	LE(LK_MONO_NS, F_U64, OPT, mono_ns),
	LE(LK_REALTIME_NS, F_U64, OPT, realtime_ns),
	LE(LK_PID, F_I64, OPT, pid),
	LE(LK_HASH, F_STR, OPT, hash),
	LE(LK_OFFSET, F_I64, OPT, offset),
	LE(LK_GENERATION_ID, F_STR, OPT, generation_id),
	LE(LK_RECEIPT, F_STR, OPT, receipt),
	LE(LK_PROG_ID, F_U32, OPT, prog_id),
	/* loaded */
	LE(LK_PROG_TAG, F_STR, OPT, prog_tag),
	LE(LK_PROG_NAME, F_STR, OPT, prog_name),
	LE(LK_SOURCE, F_STR, OPT, source),
	LE(LK_LOAD_TIME_BOOT_NS, F_U64, OPT, load_time_boot_ns),
	LE(LK_JIT_RANGES, F_ARR, OPT, jit_ranges),
	LE(LK_CAPTURE, F_STR, OPT, capture),
	LE(LK_ERROR, F_STR, OPT, error),
	LE(LK_CAPTURED_VIA, F_STR, OPT, captured_via),
	LE(LK_SEEN_MONO_NS, F_U64, OPT, seen_mono_ns),
	/* activated */
	LE(LK_LINK, F_OBJ, OPT, link_json),
	LE(LK_HOOK, F_STR, OPT, hook),
	LE(LK_SWAP_BEGIN_MONO_NS, F_U64, OPT, swap_begin_mono_ns),
	LE(LK_SWAP_END_MONO_NS, F_U64, OPT, swap_end_mono_ns),
	LE(LK_SWAP_BEGIN_REALTIME_NS, F_U64, OPT, swap_begin_realtime_ns),
	LE(LK_SWAP_END_REALTIME_NS, F_U64, OPT, swap_end_realtime_ns),
	LE(LK_REPLACES, F_STR, OPT, replaces),
	LE(LK_OLD_PROG_ID, F_U32, OPT, old_prog_id),
	/* retired */
	LE(LK_REASON, F_STR, OPT, reason),
	/* unloaded */
	LE(LK_PERF_MONO_NS, F_U64, OPT, perf_mono_ns),
	LE(LK_KSYMBOLS_UNREGISTERED, F_ARR, OPT, ksymbols_unregistered),
	/* link-updated */
	LE(LK_OP, F_STR, OPT, op),
	LE(LK_LINK_ID, F_U32, OPT, link_id),
	LE(LK_LINK_TYPE, F_U32, OPT, link_type),
	LE(LK_NEW_PROG_ID, F_U32, OPT, new_prog_id),
	LE(LK_OLD_GENERATION_ID, F_STR, OPT, old_generation_id),
	LE(LK_NEW_GENERATION_ID, F_STR, OPT, new_generation_id),
	LE(LK_SYSCALL_ENTER_MONO_NS, F_U64, OPT, syscall_enter_mono_ns),
	LE(LK_SYSCALL_EXIT_MONO_NS, F_U64, OPT, syscall_exit_mono_ns),
	LE(LK_IFINDEX, F_I64, OPT, ifindex),
	/* durable */
	LE(LK_THROUGH_SEQ, F_I64, OPT, through_seq),
	LE(LK_DURABLE_STATE, F_STR, OPT, durable_state),
	/* observer */
	LE(LK_EVENT, F_STR, OPT, event),
	LE(LK_CPUS, F_I64, OPT, cpus),
};
#undef LE

struct entry_objs {
	const json_t *timing, *loader, *caller, *stats;
};

static const struct field entry_obj_fields[] = {
	FLD(struct entry_objs, LK_TIMING, F_OBJ, OPT, timing),
	FLD(struct entry_objs, LK_LOADER, F_OBJ, OPT, loader),
	FLD(struct entry_objs, LK_CALLER, F_OBJ, OPT, caller),
	FLD(struct entry_objs, LK_STATS, F_OBJ, OPT, stats),
};

static const struct field timing_fields[] = {
	FLD(struct lifelog_entry, TIMK_LOAD_NS, F_U64, OPT, load_ns),
	FLD(struct lifelog_entry, TIMK_CAPTURE_NS, F_U64, OPT, capture_ns),
};

int lifelog_entry__decode(const json_t *j, struct lifelog_entry *out, json_error_t *err)
{
	struct decoder d = { err, 0 };
	struct entry_objs o = { 0 };

	memset(out, 0, sizeof(*out));
	out->offset = -1;
	out->ifindex = -1;
	out->through_seq = -1;
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", entry_fields, N(entry_fields), out);
	decode_fields(&d, j, "", entry_obj_fields, N(entry_obj_fields), &o);
	decode_fields(&d, o.timing, LK_TIMING, timing_fields, N(timing_fields), out);
	if (out->link_json) {
		out->has_link = true;
		decode_link(&d, out->link_json, LK_LINK, &out->link);
	}
	if (o.loader) {
		out->has_loader = true;
		decode_loader(&d, o.loader, LK_LOADER, &out->loader);
	}
	if (o.caller) {
		out->has_caller = true;
		decode_loader(&d, o.caller, LK_CALLER, &out->caller);
	}
	if (o.stats) {
		out->has_stats = true;
		decode_stats(&d, o.stats, LK_STATS, LK_STATS "." OSK_MISSED, &out->stats);
	}
	if (out->kind_name)
		out->kind = lifelog__kind_of(out->kind_name);
	return finish(&d);
}

/* --------------------------------- receipts --------------------------------- */

static const struct field step_fields[] = {
	FLD(struct receipt_step, STEPK_ID, F_STR, REQ, id),
	FLD(struct receipt_step, STEPK_DESCRIPTION, F_STR, OPT, description),
	FLD(struct receipt_step, STEPK_EVIDENCE, F_STR, REQ_NULL, evidence),
};

int receipt_step__decode(const json_t *j, struct receipt_step *out, json_error_t *err)
{
	struct decoder d = { err, 0 };

	memset(out, 0, sizeof(*out));
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", step_fields, N(step_fields), out);
	return finish(&d);
}

struct subject_objs {
	const json_t *digest;
};

static const struct field subject_fields[] = {
	FLD(struct receipt_subject, SUBJ_NAME, F_STR, REQ, name),
};
static const struct field subject_obj_fields[] = {
	FLD(struct subject_objs, SUBJ_DIGEST, F_OBJ, REQ, digest),
};
static const struct field subject_digest_fields[] = {
	FLD(struct receipt_subject, SUBJ_DIGEST_SHA256, F_STR, REQ, sha256),
};

int receipt_subject__decode(const json_t *j, struct receipt_subject *out, json_error_t *err)
{
	struct decoder d = { err, 0 };
	struct subject_objs o = { 0 };

	memset(out, 0, sizeof(*out));
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", subject_fields, N(subject_fields), out);
	decode_fields(&d, j, "", subject_obj_fields, N(subject_obj_fields), &o);
	decode_fields(&d, o.digest, SUBJ_DIGEST, subject_digest_fields, N(subject_digest_fields), out);
	return finish(&d);
}

#define RV(key, type, req, member) FLD(struct receipt_view, key, type, req, member)
static const struct field statement_fields[] = {
	RV(RK_TYPE, F_STR, REQ, type),
	RV(RK_PREDICATE_TYPE, F_STR, REQ, predicate_type),
	RV(RK_SUBJECT, F_ARR, OPT, subjects),
	RV(RK_PREDICATE, F_OBJ, REQ, predicate),
};

static const struct field predicate_fields[] = {
	RV(PK_SCHEMA, F_STR, OPT, schema),
	RV(PK_GENERATION, F_OBJ, OPT, generation.body),
	RV(PK_GENERATION_ID, F_STR, OPT, generation_id),
	RV(PK_PARENT_GENERATION_ID, F_STR, OPT, parent_generation_id),
	RV(PK_SOURCE_BUILD_ID, F_STR, OPT, source_build_id),
	RV(PK_ORIGINAL_BPF_TAG, F_STR, OPT, original_bpf_tag),
	RV(PK_SPECIALIZED_BPF_TAG, F_STR, OPT, specialized_bpf_tag),
	RV(PK_OPTIMIZER_BUILD_ID, F_STR, OPT, optimizer_build_id),
	RV(PK_TRANSFORM_IDS, F_ARR, OPT, transform_ids),
	RV(PK_ASSUMPTION_IDS, F_ARR, OPT, assumption_ids),
	RV(PK_VERIFIER_RESULT_DIGEST, F_STR, OPT, verifier_result_digest),
	RV(PK_KERNEL_BUILD_ID, F_STR, OPT, kernel_build_id),
	RV(PK_JIT_BACKEND, F_STR, OPT, jit_backend),
	RV(PK_NATIVE_IMAGE_DIGEST, F_STR, OPT, native_image_digest),
	RV(PK_LINE_MAPPING_DIGEST, F_STR, OPT, line_mapping_digest),
	RV(PK_SUBMITTED_INSNS_DIGEST, F_STR, OPT, submitted_insns_digest),
	RV(PK_XLATED_INSNS_DIGEST, F_STR, OPT, xlated_insns_digest),
	RV(PK_ARTIFACTS, F_OBJ, OPT, artifacts.all),
};

struct predicate_objs {
	const json_t *verifier, *jit, *producer;
};

static const struct field predicate_obj_fields[] = {
	FLD(struct predicate_objs, PK_VERIFIER, F_OBJ, OPT, verifier),
	FLD(struct predicate_objs, PK_JIT, F_OBJ, OPT, jit),
	FLD(struct predicate_objs, PK_PRODUCER, F_OBJ, OPT, producer),
};

static const struct field generation_fields[] = {
	RV(GK_PARENT_GENERATION_ID, F_STR, OPT, generation.parent_generation_id),
	RV(GK_SPECIALIZED_INSNS_DIGEST, F_STR, OPT, generation.specialized_insns_digest),
	RV(GK_SPECIALIZED_INSNS_SOURCE, F_STR, OPT, generation.specialized_insns_source),
	RV(GK_TRANSFORMS, F_ARR, OPT, generation.transforms),
	RV(GK_ASSUMPTIONS, F_ARR, OPT, generation.assumptions),
	RV(GK_PROVENANCE, F_STR, OPT, generation.provenance),
	RV(GK_SOURCE_BUILD_ID, F_STR, OPT, generation.source_build_id),
};

struct generation_objs {
	const json_t *optimizer, *program, *target;
};

static const struct field generation_obj_fields[] = {
	FLD(struct generation_objs, GK_OPTIMIZER, F_OBJ, OPT, optimizer),
	FLD(struct generation_objs, GK_PROGRAM, F_OBJ, OPT, program),
	FLD(struct generation_objs, GK_TARGET, F_OBJ, OPT, target),
};

static const struct field optimizer_fields[] = {
	RV(OPTK_NAME, F_STR, OPT, generation.optimizer.name),
	RV(OPTK_VERSION, F_STR, OPT, generation.optimizer.version),
	RV(OPTK_BUILD_ID, F_STR, OPT, generation.optimizer.build_id),
};

static const struct field program_fields[] = {
	RV(PROGK_NAME, F_STR, OPT, generation.program.name),
	RV(PROGK_TYPE, F_I64, OPT, generation.program.type),
};

static const struct field target_fields[] = {
	RV(TGTK_KERNEL_BUILD_ID, F_STR, OPT, generation.target.kernel_build_id),
	RV(TGTK_KERNEL_RELEASE, F_STR, OPT, generation.target.kernel_release),
	RV(TGTK_ARCH, F_STR, OPT, generation.target.arch),
	RV(TGTK_JIT_BACKEND, F_STR, OPT, generation.target.jit_backend),
	RV(TGTK_JIT_NORMALIZATION, F_STR, OPT, generation.target.jit_normalization),
	RV(TGTK_BPF_JIT_ENABLE, F_I64, OPT, generation.target.bpf_jit_enable),
	RV(TGTK_BPF_JIT_HARDEN, F_I64, OPT, generation.target.bpf_jit_harden),
	RV(TGTK_BPF_JIT_KALLSYMS, F_I64, OPT, generation.target.bpf_jit_kallsyms),
};

/* the verifier result digest's body: all four or it is incomplete */
static const struct field verifier_result_fields[] = {
	RV(VERK_ACCEPTED, F_BOOL, REQ, verifier.accepted),
	RV(VERK_LOG_LEVEL, F_I64, REQ, verifier.log_level),
	RV(VERK_VERIFIED_INSNS, F_I64, REQ, verifier.verified_insns),
	RV(VERK_LOG_NORMALIZED_DIGEST, F_STR, REQ, verifier.log_normalized_digest),
};

static const struct field verifier_fields[] = {
	RV(VERK_LOG, F_STR, OPT, verifier.log),
};

static const struct field jit_fields[] = {
	RV(JITK_IMAGE, F_STR, OPT, jit.image),
	RV(JITK_IMAGE_LEN, F_I64, OPT, jit.image_len),
	RV(JITK_FUNC_LENS, F_ARR, OPT, jit.func_lens),
	RV(JITK_NORMALIZATION, F_STR, OPT, jit.normalization),
	RV(JITK_MASKED_OPERANDS, F_I64, OPT, jit.masked_operands),
};

static const struct field artifact_fields[] = {
	RV(ARTK_XLATED_INSNS, F_STR, OPT, artifacts.xlated_insns),
	RV(ARTK_JIT_IMAGE, F_STR, OPT, artifacts.jit_image),
	RV(ARTK_LINE_MAPPING, F_STR, OPT, artifacts.line_mapping),
	RV(ARTK_SUBMITTED_INSNS, F_STR, OPT, artifacts.submitted_insns),
	RV(ARTK_VERIFIER_LOG, F_STR, OPT, artifacts.verifier_log),
	RV(ARTK_BTF, F_STR, OPT, artifacts.btf),
};

static const struct field producer_fields[] = {
	RV(PRODK_NAME, F_STR, OPT, producer.name),
	RV(PRODK_VERSION, F_STR, OPT, producer.version),
};
#undef RV

#define P RK_PREDICATE "."
#define PG P PK_GENERATION "."

static void decode_generation(struct decoder *d, struct receipt_view *out)
{
	struct generation_objs g = { 0 };
	const json_t *body = out->generation.body;

	out->generation.target.bpf_jit_enable = -1;
	out->generation.target.bpf_jit_harden = -1;
	out->generation.target.bpf_jit_kallsyms = -1;
	if (!body)
		return;
	out->has_generation = true;
	decode_fields(d, body, P PK_GENERATION, generation_fields, N(generation_fields), out);
	decode_fields(d, body, P PK_GENERATION, generation_obj_fields, N(generation_obj_fields), &g);
	decode_fields(d, g.optimizer, PG GK_OPTIMIZER, optimizer_fields, N(optimizer_fields), out);
	decode_fields(d, g.program, PG GK_PROGRAM, program_fields, N(program_fields), out);
	decode_fields(d, g.target, PG GK_TARGET, target_fields, N(target_fields), out);
}

static void decode_verifier(struct decoder *d, const json_t *ver, struct receipt_view *out)
{
	struct decoder vd = { NULL, 0 };

	if (!ver)
		return;
	decode_fields(&vd, ver, P PK_VERIFIER, verifier_result_fields, N(verifier_result_fields), out);
	out->verifier.present = vd.rc == 0;
	/* again with the caller's error, for the text */
	if (vd.rc)
		decode_fields(d, ver, P PK_VERIFIER, verifier_result_fields,
			      N(verifier_result_fields), out);
	decode_fields(d, ver, P PK_VERIFIER, verifier_fields, N(verifier_fields), out);
}

int receipt_target__decode(const json_t *j, struct receipt_target *out, json_error_t *err)
{
	struct decoder d = { err, 0 };
	struct receipt_view v;

	memset(&v, 0, sizeof(v));
	v.generation.target.bpf_jit_enable = -1;
	v.generation.target.bpf_jit_harden = -1;
	v.generation.target.bpf_jit_kallsyms = -1;
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", target_fields, N(target_fields), &v);
	*out = v.generation.target;
	return finish(&d);
}

bool receipt__is_receipt(const json_t *j)
{
	struct decoder d = { NULL, 0 };
	struct receipt_view v;

	memset(&v, 0, sizeof(v));
	if (!json_is_object(j))
		return false;
	decode_fields(&d, j, "", statement_fields, N(statement_fields), &v);	/* the types suffice */
	return !strcmp(v.type ?: "", PB_INTOTO_STATEMENT_TYPE) &&
	       !strcmp(v.predicate_type ?: "", PB_RECEIPT_PREDICATE_TYPE);
}

int receipt__generation_id(const json_t *predicate, char hex[PB_DIGEST_HEX_LEN])
{
	struct receipt_view v;
	struct decoder d = { NULL, 0 };

	memset(&v, 0, sizeof(v));
	decode_fields(&d, predicate, RK_PREDICATE, predicate_fields, N(predicate_fields), &v);
	if (!v.generation.body)
		return -EINVAL;
	return canon__digest(v.generation.body, hex);
}

int receipt__decode(const json_t *j, struct receipt_view *out, json_error_t *err)
{
	struct decoder d = { err, 0 };
	struct predicate_objs p = { 0 };

	memset(out, 0, sizeof(*out));
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", statement_fields, N(statement_fields), out);
	decode_fields(&d, out->predicate, RK_PREDICATE, predicate_fields, N(predicate_fields), out);
	decode_fields(&d, out->predicate, RK_PREDICATE, predicate_obj_fields, N(predicate_obj_fields),
		      &p);
	decode_generation(&d, out);
	decode_verifier(&d, p.verifier, out);
	decode_fields(&d, p.jit, P PK_JIT, jit_fields, N(jit_fields), out);
	decode_fields(&d, out->artifacts.all, P PK_ARTIFACTS, artifact_fields, N(artifact_fields), out);
	decode_fields(&d, p.producer, P PK_PRODUCER, producer_fields, N(producer_fields), out);
	return finish(&d);
}

#undef P
#undef PG

/* ------------------------------ verify findings ------------------------------ */

static const struct field finding_fields[] = {
	FLD(struct verify_finding, VFK_WHERE, F_STR, REQ, where),
	FLD(struct verify_finding, VFK_WHAT, F_STR, REQ, what),
};

int verify_finding__decode(const json_t *j, struct verify_finding *out, json_error_t *err)
{
	struct decoder d = { err, 0 };

	memset(out, 0, sizeof(*out));
	if (!j)
		fail(&d, "", NULL, NULL, "Expected object, got nothing");
	decode_fields(&d, j, "", finding_fields, N(finding_fields), out);
	return finish(&d);
}
