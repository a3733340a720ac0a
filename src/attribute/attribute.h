/* attribute.h: attribution of execution evidence to BPF program
 * generations (docs/attribution.md).
 *
 *   samples.c     the sample file (framing.h, magic "PBSAMPL\0"): writer
 *                 and reader of its fixed-width records
 *   sampler.c     `probity sample`: cpu-clock samples + ksymbol/bpf_event
 *                 side-band records through observe/perf_ring.h
 *   perfscript.c  `perf script` text of a `perf record -k mono` session
 *   timespec.c    TIME and T1..T2 syntax of --at / --window
 *   itable.c      the generation interval table: JIT address intervals
 *                 and link-activity segments -> generation id or unknown
 */
#ifndef PROBITY_ATTRIBUTE_H
#define PROBITY_ATTRIBUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define PB_NS_INF UINT64_MAX

/* ------------------------------ sample file ------------------------------ */

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
	/* each may be NULL; a non-zero return stops the read with it */
	int (*header)(void *ctx, const json_t *hdr);
	int (*snapshot)(void *ctx, const json_t *snap);
	int (*record)(void *ctx, const struct sf_record *r);
	int (*end)(void *ctx, const json_t *end);
	void *ctx;
};
/* Read a sample file. Returns 0 (complete), 1 (torn or corrupt tail:
 * everything before it was delivered; why in err), -EBADMSG for a file
 * that is not a sample file or is malformed inside a good chunk (why in
 * err), -errno otherwise. */
int samples__read(const char *path, const struct samples_read_cb *cb, char *err, size_t errsz);
/* Does path start with the sample file magic? */
bool samples__is_sample_file(const char *path);

/* -------------------------------- sampler -------------------------------- */

struct pb_sampler;
struct pb_sampler_opts {
	const char *path;	/* output file */
	unsigned int freq;	/* samples per second per CPU (default 997) */
	unsigned int pages;	/* ring data pages per CPU (default 64) */
};

struct pb_sampler_stats {
	uint64_t samples, in_bpf_jit, kernel, user, ksymbols, bpf_events, lost, lost_records;
	uint64_t snapshot_progs, bad_records, time_estimated;
};

int pb_sampler__new(const struct pb_sampler_opts *opts, struct pb_sampler **out);
/* Wait up to timeout_ms, then write what the rings hold. */
int pb_sampler__poll(struct pb_sampler *s, int timeout_ms);
void pb_sampler__stats(const struct pb_sampler *s, struct pb_sampler_stats *st);
/* Stop, drain, write the end chunk, close the file. */
int pb_sampler__finish(struct pb_sampler *s, const char *stopped_by);
void pb_sampler__free(struct pb_sampler *s);

/* ------------------------------ perf script ------------------------------ */

struct ps_sample {
	uint64_t time;		/* ns of the session's clock (-k mono: CLOCK_MONOTONIC) */
	uint64_t ip;
	uint32_t pid, tid, cpu;
	bool has_cpu;
	const char *sym;	/* symbol name or NULL ("[unknown]") */
};
/* Parse `perf script` text (-F time,cpu,pid,tid,ip,sym or the default
 * layout); fn gets each sample line. Lines that are not samples (empty,
 * comments) are skipped; a line that looks like a sample but does not
 * parse is an error naming its line. Returns 0 or -EBADMSG (err says
 * "line N: ...") or fn's non-zero return. */
int perfscript__parse(const char *text, size_t len, int (*fn)(void *ctx, const struct ps_sample *s),
		      void *ctx, char *err, size_t errsz);

/* ---------------------------- time expressions --------------------------- */

/* TIME: "mono:NS" or plain NS (CLOCK_MONOTONIC nanoseconds), "S.FRAC" or
 * "mono:S.FRAC" (CLOCK_MONOTONIC seconds, as perf script prints them);
 * "@S[.FRAC]" (CLOCK_REALTIME epoch seconds) or an ISO-8601 UTC time
 * "YYYY-MM-DDTHH:MM:SS[.FRAC]Z". */
struct pb_time {
	uint64_t ns;
	bool realtime;		/* ns is CLOCK_REALTIME, else CLOCK_MONOTONIC */
};
int pb_time__parse(const char *s, struct pb_time *t, char *err, size_t errsz);
/* "T1..T2" */
int pb_time__parse_window(const char *s, struct pb_time *t1, struct pb_time *t2, char *err,
			  size_t errsz);

/* ---------------------------- interval table ----------------------------- */

struct attr_table;

enum attr_status {
	ATTR_NOT_BPF = 0,	/* not in any known BPF JIT range */
	ATTR_GENERATION,	/* attributed */
	ATTR_UNKNOWN,
};

enum attr_reason {
	ATTR_R_NONE = 0,
	ATTR_R_NO_RECEIPT,	/* the program at this address has no lifecycle entry */
	ATTR_R_RECORDS_LOST,	/* records lost while the covering interval could change */
	ATTR_R_AMBIGUOUS,	/* more than one candidate interval */
	ATTR_R_HANDOFF_LOST,	/* (link segments) a handoff was not recorded */
	ATTR_R_SWAP_WINDOW,	/* (link segments) inside a swap's uncertainty */
	ATTR_R_NO_ACTIVATION,	/* (link segments) no activation recorded */
	ATTR_R__COUNT,
};
const char *attr_reason__name(enum attr_reason r);

struct attr_result {
	enum attr_status status;
	enum attr_reason reason;
	const char *generation_id;	/* valid while the table lives */
	uint32_t prog_id;
	uint64_t range_addr;
	uint32_t range_len;
	bool definite;			/* t lies inside the proven life of the image */
	char detail[192];
};

struct attr_table *attr_table__new(void);
void attr_table__free(struct attr_table *t);
/* Lifecycle log entries (lifelog__read's array) of one store. */
int attr_table__add_lifelog(struct attr_table *t, const json_t *entries);
/* A sample file's snapshot and side-band records (samples.c). */
int attr_table__add_snapshot(struct attr_table *t, const json_t *snapshot);
int attr_table__add_record(struct attr_table *t, const struct sf_record *r);
/* Sorting and pairing; call after the last add, before lookups. */
int attr_table__build(struct attr_table *t);
/* ip at time (CLOCK_MONOTONIC). sym (may be NULL) is the symbol name a
 * symbolizer gave (perf script): "bpf_prog_<tag>_..." names the tag. */
void attr_table__lookup(const struct attr_table *t, uint64_t time, uint64_t ip, const char *sym,
			struct attr_result *r);
/* Link key: "link:ID" for a numeric L, else "hook:L" (or L if it already
 * starts with "link:" / "hook:"). */
void attr_table__link_key(const char *l, char *key, size_t sz);
/* Generations on link key in [t1, t2] (CLOCK_MONOTONIC), as a JSON array
 * of segments (docs/attribution.md), NULL + errno ENOENT if the link has
 * no recorded activity. */
json_t *attr_table__window(const struct attr_table *t, const char *key, uint64_t t1, uint64_t t2);
/* The generation on link key at time: result as for samples (status
 * ATTR_GENERATION or ATTR_UNKNOWN with candidates named in detail);
 * *segments (may be NULL) gets the segments covering time. */
int attr_table__at(const struct attr_table *t, const char *key, uint64_t time, struct attr_result *r,
		   json_t **segments);
/* Links with recorded activity: array of keys. */
json_t *attr_table__links(const struct attr_table *t);
/* CLOCK_REALTIME -> CLOCK_MONOTONIC with the clock pair of the lifecycle
 * entry nearest in time (0 if none). */
bool attr_table__realtime_to_mono(const struct attr_table *t, uint64_t real, uint64_t *mono);
/* Counters: address intervals, programs, generations known, links. */
json_t *attr_table__stats(const struct attr_table *t);

#endif
