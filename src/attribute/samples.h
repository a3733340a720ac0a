/* SPDX-License-Identifier: BSD-2-Clause */
/* samples.h: the sample file of `probity sample` (docs/attribution.md
 * "Sample file format"): the shared framing (common/framing.h) with magic
 * "PBSAMPL\0", a JSON header chunk, a JSON snapshot chunk, runs of
 * fixed-width little-endian records, a JSON end chunk. The writer and the
 * reader are samples.c, the decoders of its JSON chunks samples_json.c.
 */
#ifndef PROBITY_ATTRIBUTE_SAMPLES_H
#define PROBITY_ATTRIBUTE_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "common/errtext.h"

#define PB_SAMPLES_MAGIC "PBSAMPL\0"
#define PB_SAMPLES_VERSION 1

/* chunk types */
#define SF_CHUNK_HEADER	  1	/* JSON: clock, machine, kernel, sampling setup */
#define SF_CHUNK_SNAPSHOT 2	/* JSON: BPF programs alive when sampling began */
#define SF_CHUNK_RECORDS  3	/* a run of binary records (below) */
#define SF_CHUNK_END	  4	/* JSON: counters when sampling stopped */

/* Binary records, little-endian, each starting with u16 type, u16 size
 * (bytes of the whole record, a multiple of 8). A reader skips a record
 * type it does not know by its size. */
#define SF_REC_SAMPLE	1
#define SF_REC_KSYMBOL	2
#define SF_REC_BPF_EVENT 3
#define SF_REC_LOST	4

#define SF_MODE_UNKNOWN 0
#define SF_MODE_KERNEL	1
#define SF_MODE_USER	2

struct sf_sample {		/* 40 bytes */
	uint16_t type, size;
	uint32_t cpu;
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint64_t ip;
	uint32_t pid, tid;
	uint8_t mode;		/* SF_MODE_* */
	uint8_t pad[7];
};

/* Side-band records carry two times: `time` (the kernel's time stamp)
 * and `time_max`, equal to it when the kernel stamped the record. When
 * the kernel's stamp is missing (0: seen on 6.18 while another perf
 * session with side-band records runs), `time` is the time of the
 * previous record on that CPU and `time_max` the time the record was
 * read: the event happened in [time, time_max]. */
struct sf_ksymbol {		/* 40 bytes + name (NUL-terminated, padded to 8) */
	uint16_t type, size;
	uint32_t cpu;
	uint64_t time;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;	/* PERF_RECORD_KSYMBOL_TYPE_* */
	uint16_t flags;		/* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
	uint64_t time_max;
};

struct sf_bpf_event {		/* 40 bytes */
	uint16_t type, size;
	uint32_t cpu;
	uint64_t time;
	uint16_t event;		/* PERF_BPF_EVENT_PROG_LOAD / _UNLOAD */
	uint16_t flags;
	uint32_t prog_id;
	uint8_t tag[8];
	uint64_t time_max;
};

struct sf_lost {		/* 32 bytes */
	uint16_t type, size;
	uint32_t cpu;
	uint64_t time;		/* when the kernel wrote the LOST record */
	uint64_t lost;		/* records lost */
	uint64_t since;		/* time of the previous record on this CPU (0: start) */
};

/* A parsed record, handed to the reader's callback. */
struct sf_record {
	uint16_t type;
	uint32_t cpu;
	uint64_t time;
	uint64_t time_max;	/* ksymbol, bpf_event: upper bound of time */
	union {
		struct { uint64_t ip; uint32_t pid, tid; uint8_t mode; } sample;
		struct { uint64_t addr; uint32_t len; uint16_t ksym_type, flags; const char *name; } ksym;
		struct { uint16_t event; uint32_t prog_id; uint8_t tag[8]; } bpf;
		struct { uint64_t lost, since; } lost;
	};
};

struct samples_writer;
/* Create path (0600) with the header (JSON object, copied). */
int samples_writer__create(const char *path, const json_t *header, struct samples_writer **out);
int samples_writer__snapshot(struct samples_writer *w, const json_t *snapshot);
int samples_writer__sample(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t ip,
			   uint32_t pid, uint32_t tid, uint8_t mode);
int samples_writer__ksymbol(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t time_max,
			    uint64_t addr, uint32_t len, uint16_t ksym_type, uint16_t flags, const char *name);
int samples_writer__bpf_event(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t time_max,
			      uint16_t event, uint32_t prog_id, const uint8_t tag[8]);
int samples_writer__lost(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t lost,
			 uint64_t since);
/* Flush buffered records as one chunk. */
int samples_writer__flush(struct samples_writer *w);
/* Flush, write the end chunk (may be NULL), close. 0 or first error. */
int samples_writer__close(struct samples_writer *w, const json_t *end);

struct samples_read_cb {
	/* each may be NULL; a non-zero return stops the read with it. The
	 * JSON chunks are objects (decode: sf_snapshot__decode, sf_end__decode) */
	int (*header)(void *ctx, const json_t *hdr);
	int (*snapshot)(void *ctx, const json_t *snap);
	int (*record)(void *ctx, const struct sf_record *r);
	int (*end)(void *ctx, const json_t *end);
	void *ctx;
};
/* Read a sample file. Returns 0 (complete), 1 (torn or corrupt tail:
 * everything before it was delivered; why in err), -EBADMSG for a file
 * that is not a sample file or is malformed inside a good chunk (why in
 * err), -errno otherwise (err says which). err may be NULL. */
int samples__read(const char *path, const struct samples_read_cb *cb, struct pb_errtext *err);
/* Does path start with the sample file magic? */
bool samples__is_sample_file(const char *path);

/* --------------------------- the JSON chunks ---------------------------
 * Key names of the header, snapshot and end chunks (written by
 * sampler.c), and typed decoders of what is read back (samples_json.c).
 * A decoder fills *out and returns 0, or -EINVAL with err (jansson's
 * error, may be NULL) naming the field and *out all zero. Strings and
 * json_t pointers are borrowed from j. An absent optional field reads as
 * 0 / NULL.
 */
/* header */
#define SFH_FORMAT		"format"		/* "probity-samples" */
#define SFH_CLOCK		"clock"
#define SFH_CLOCKID		"clockid"
#define SFH_EVENT		"event"
#define SFH_FREQ		"freq"
#define SFH_RING_PAGES		"ring_pages"
#define SFH_NCPU		"ncpu"
#define SFH_MACHINE		"machine"
#define SFH_SYSNAME		"sysname"
#define SFH_RELEASE		"release"
#define SFH_ARCH		"arch"
#define SFH_KERNEL_BUILD_ID	"kernel_build_id"
#define SFH_START_MONO_NS	"start_mono_ns"
#define SFH_START_REALTIME_NS	"start_realtime_ns"
#define SFH_PAGE_SIZE		"page_size"
/* snapshot: {mono_ns, progs: [{id, tag, name, type, load_time_boot_ns,
 * jit_ranges: [{addr: "0x...", len}]}]} */
#define SFS_MONO_NS		"mono_ns"
#define SFS_PROGS		"progs"
#define SFP_ID			"id"
#define SFP_TAG			"tag"
#define SFP_NAME		"name"
#define SFP_TYPE		"type"
#define SFP_LOAD_TIME_BOOT_NS	"load_time_boot_ns"
#define SFP_JIT_RANGES		"jit_ranges"
#define SFR_ADDR		"addr"
#define SFR_LEN			"len"
/* end: {stopped_by, stop_mono_ns, stop_realtime_ns, stats: {...}} */
#define SFE_STOPPED_BY		"stopped_by"
#define SFE_STOP_MONO_NS	"stop_mono_ns"
#define SFE_STOP_REALTIME_NS	"stop_realtime_ns"
#define SFE_STATS		"stats"

struct sf_snapshot {
	uint64_t mono_ns;		/* when the programs were enumerated */
	const json_t *progs;		/* array or NULL: sf_snapshot_prog__decode */
};
int sf_snapshot__decode(const json_t *j, struct sf_snapshot *out, json_error_t *err);

struct sf_snapshot_prog {
	uint32_t id;
	const char *tag;		/* 16 hex digits, or NULL */
	const char *name;
	const json_t *jit_ranges;	/* array or NULL: sf_jit_range__decode */
};
int sf_snapshot_prog__decode(const json_t *j, struct sf_snapshot_prog *out, json_error_t *err);

struct sf_jit_range {
	uint64_t addr;			/* "0x..." (or an integer); required */
	uint32_t len;
};
int sf_jit_range__decode(const json_t *j, struct sf_jit_range *out, json_error_t *err);

struct sf_end {
	const char *stopped_by;
	uint64_t stop_mono_ns, stop_realtime_ns;
	const json_t *stats;		/* the sampler's counters (object) or NULL */
};
int sf_end__decode(const json_t *j, struct sf_end *out, json_error_t *err);

#endif
