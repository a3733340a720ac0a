/* SPDX-License-Identifier: BSD-2-Clause */
/* trace.h: the probity trace file (`probity record` writes it, `probity
 * report` / `export` read it), on top of the shared framing in
 * common/framing.h. docs/trace-format.md documents every byte.
 *
 *   header payload: struct trace_header (manifest SHA-256, target
 *                   build-ids, clock id, start time, pid, flags)
 *   chunks, in file order:
 *     TRACE_CHUNK_MANIFEST  the manifest file's bytes (names offline)
 *     TRACE_CHUNK_PLAN      descriptor -> site mapping (struct trace_plan_*)
 *     then any mix of
 *     TRACE_CHUNK_RECORDS   ring-buffer records as raw bytes (engine/events.h)
 *     TRACE_CHUNK_SNAPSHOT  aggregate stats at one time (struct trace_snap_hdr)
 *     TRACE_CHUNK_NOTE      one line of text (lost evidence, missing probes)
 *     TRACE_CHUNK_PROCS     processes and threads recorded: pid, names (comm),
 *                           events, exit (struct trace_procs_hdr + entries)
 *     TRACE_CHUNK_MAPS      executable mappings of recorded processes, for
 *                           offline stack symbolization (struct trace_maps_hdr
 *                           + entries)
 *     TRACE_CHUNK_COST      the probes' cost model: calibrated cost per site
 *                           class, then (the last one) overhead per
 *                           descriptor (struct trace_cost_hdr + entries)
 *     TRACE_CHUNK_END       clean end with totals (struct trace_end)
 *
 * All multi-byte fields are little-endian, fixed width. A file without
 * TRACE_CHUNK_END was cut (SIGKILL, crash, full disk): the reader returns
 * everything up to the last complete chunk and says so.
 */
#ifndef PROBITY_TRACE_H
#define PROBITY_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine/events.h"

#define TRACE_MAGIC		"PBTRACE\0"	/* 8 bytes, NUL included */
#define TRACE_VERSION		1
#define TRACE_MAX_TARGETS	8

enum trace_chunk_type {
	TRACE_CHUNK_MANIFEST = 1,
	TRACE_CHUNK_PLAN = 2,
	TRACE_CHUNK_RECORDS = 3,
	TRACE_CHUNK_SNAPSHOT = 4,
	TRACE_CHUNK_NOTE = 5,
	TRACE_CHUNK_END = 6,
	TRACE_CHUNK_PROCS = 7,		/* older readers skip it (unknown type) */
	TRACE_CHUNK_MAPS = 8,		/* likewise */
	TRACE_CHUNK_COST = 9,		/* older readers skip it (unknown type) */
};

/* trace_header.flags */
#define TRACE_F_EVENTS		(1u << 0)	/* recorded with --events (records present) */
#define TRACE_F_SPAWNED		(1u << 1)	/* target started by record (-- CMD) */
#define TRACE_F_MULTI		(1u << 2)	/* several processes: --all, --cgroup,
						 * --pid repeated, or -- CMD's forks
						 * (TRACE_CHUNK_PROCS names them) */

struct trace_build_id {
	uint32_t len;			/* bytes used in id[], 0 = none */
	uint8_t id[64];
};

/* The header payload (after framing's 16 fixed bytes). 648 bytes. */
struct trace_header {
	uint8_t manifest_sha256[32];
	uint32_t clock_id;		/* CLOCK_MONOTONIC (1): every ts_ns in the file */
	uint32_t pid;			/* target tgid */
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC at start */
	uint64_t start_real_ns;		/* CLOCK_REALTIME at the same moment */
	uint32_t flags;			/* TRACE_F_* */
	uint32_t n_targets;		/* build_ids used */
	uint32_t events_version;	/* PB_EVENTS_VERSION of the records */
	uint32_t _pad;
	struct trace_build_id build_ids[TRACE_MAX_TARGETS];	/* per plan target */
};

/* TRACE_CHUNK_PLAN payload: trace_plan_hdr, then n_descriptors x
 * trace_plan_desc, then n_sites x trace_plan_site. */
struct trace_plan_hdr {
	uint32_t n_descriptors;		/* = manifest events */
	uint32_t n_sites;
	uint32_t n_resources;		/* = manifest resources */
	uint32_t _pad;
};

struct trace_plan_desc {
	uint32_t event;			/* manifest event index */
	uint8_t confidence;		/* enum pb_confidence (effective) */
	uint8_t status;			/* enum plan_desc_status: 0 ok, 1 refused */
	uint16_t _pad;
	uint32_t n_sites;
	uint32_t _pad2;
};

#define TRACE_SITE_RETURN	(1u << 0)
#define TRACE_SITE_USDT		(1u << 1)
#define TRACE_SITE_STASH	(1u << 2)

struct trace_plan_site {
	uint32_t descriptor;
	uint32_t target;		/* plan target index = header build_ids index */
	uint32_t flags;			/* TRACE_SITE_* */
	uint32_t _pad;
	uint64_t vaddr;
	uint64_t file_offset;
	uint64_t cookie;
};

/* TRACE_CHUNK_SNAPSHOT payload: trace_snap_hdr, then n_desc x desc_size
 * bytes (struct pb_desc_stats), n_res x res_size bytes (struct
 * pb_res_stats), then engine_size bytes (struct pb_engine_stats). Sizes
 * are stored so a newer writer's longer structs still read. Counters are
 * cumulative since the start of the recording. */
struct trace_snap_hdr {
	uint64_t ts_ns;			/* CLOCK_MONOTONIC */
	uint32_t n_desc;
	uint32_t n_res;
	uint32_t desc_size;
	uint32_t res_size;
	uint32_t engine_size;
	uint32_t _pad;
};

/* TRACE_CHUNK_PROCS payload: trace_procs_hdr, then n x entry_size bytes
 * (struct trace_proc; a longer entry from a newer writer still reads).
 * One entry per process (tid == pid) or thread (tid != pid); a later
 * entry for the same (pid, tid) replaces an earlier one (a process first
 * seen, then exited; the final table at the end of the recording). */
struct trace_procs_hdr {
	uint32_t n;
	uint32_t entry_size;
};

struct trace_proc {
	uint32_t pid;			/* tgid */
	uint32_t tid;			/* = pid for the process itself */
	uint32_t ppid;			/* tracked parent (forked), else 0 */
	uint32_t flags;			/* PB_PROC_* (engine/events.h) */
	uint64_t first_ts;		/* CLOCK_MONOTONIC: tracked from */
	uint64_t exit_ts;		/* exited at, 0 = alive at the end */
	uint64_t events;		/* resource events in it (processes) */
	uint64_t held_at_exit;		/* instances that ended with its exit */
	int32_t exit_code;		/* wait-status style (exit_code of the task) */
	uint32_t _pad;
	char comm[16];			/* NUL-padded process / thread name */
};

/* TRACE_CHUNK_MAPS payload: trace_maps_hdr, then n x entry_size bytes
 * (struct trace_map; a longer entry from a newer writer still reads).
 * The executable file mappings of one or more recorded processes, written
 * when record first sees a process and again when its executable
 * changes (exec): the entries of a later chunk for a pid replace the
 * earlier ones. A stack record's ips of process pid are symbolized
 * against them (report --folded). */
struct trace_maps_hdr {
	uint32_t n;
	uint32_t entry_size;
};

#define TRACE_MAP_PATH		256

struct trace_map {
	uint32_t pid;			/* tgid */
	uint32_t build_id_len;		/* bytes used in build_id[], 0 = none */
	uint64_t start, end;		/* the executable mapping [start, end) */
	uint64_t offset;		/* its file offset (page aligned) */
	uint8_t build_id[40];
	char path[TRACE_MAP_PATH];	/* as /proc/PID/maps prints it (NUL-padded) */
};

/* TRACE_CHUNK_COST payload: trace_cost_hdr, then n_classes x class_size
 * bytes (struct trace_cost_class, one per enum pb_site_class of
 * engine/calib.h, in that order), then n_desc x desc_size bytes (struct
 * trace_cost_desc). Written after the plan with the calibration only
 * (n_desc 0) and again before the end with the estimates; a reader keeps
 * the last one. docs/record.md "Cost model". */
#define TRACE_COST_CALIBRATED	(1u << 0)	/* measured on this kernel (else defaults) */
#define TRACE_COST_CACHED	(1u << 1)	/* from a calibration file */
#define TRACE_COST_CPU		(1u << 2)	/* target_cpu_ns was read */
#define TRACE_COST_CLASSES	5

struct trace_cost_hdr {
	uint32_t n_classes;
	uint32_t class_size;
	uint32_t n_desc;
	uint32_t desc_size;
	uint32_t flags;			/* TRACE_COST_* */
	uint32_t calls;			/* calls timed per class */
	uint64_t wall_ns;		/* recording time the estimates cover */
	uint64_t target_cpu_ns;		/* the target's CPU time over it (/proc/PID/stat
					 * utime+stime, or the cgroup's cpu.stat) */
};

struct trace_cost_class {
	uint32_t cls;			/* enum pb_site_class */
	uint32_t measured;		/* 1: measured, 0: default figure */
	uint64_t p50_ns;		/* per hit */
	uint64_t p90_ns;
};

struct trace_cost_desc {
	uint32_t descriptor;
	uint32_t classes;		/* probes per event: a bit per enum pb_site_class */
	uint64_t hits;			/* events the probes fired for */
	uint64_t cost_ns;		/* per event (p50 figures) */
	uint64_t est_ns;		/* hits x cost_ns */
};

/* TRACE_CHUNK_END payload. */
enum trace_stop_reason {
	TRACE_STOP_SIGNAL = 1,		/* SIGINT / SIGTERM */
	TRACE_STOP_DURATION = 2,	/* -d elapsed */
	TRACE_STOP_TARGET_EXIT = 3,
	TRACE_STOP_ERROR = 4,
};

struct trace_end {
	uint64_t end_mono_ns;
	uint64_t records;		/* records written to the file */
	uint64_t ringbuf_drops;		/* records the kernel could not reserve */
	uint64_t snapshots;
	uint32_t stop_reason;		/* enum trace_stop_reason */
	int32_t target_status;		/* wait status of a spawned target, else -1 */
};

/* One snapshot as handed to the writer or returned by the reader. */
struct trace_snapshot {
	uint64_t ts_ns;
	uint32_t n_desc;
	uint32_t n_res;
	const struct pb_desc_stats *desc;	/* n_desc entries */
	const struct pb_res_stats *res;		/* n_res entries */
	struct pb_engine_stats engine;
};

/* ---- writer ---- */

struct trace_writer;
struct plan;

/* Create path (mode 0600, truncated) and write the header. NULL + errno. */
struct trace_writer *trace_writer__create(const char *path, const struct trace_header *hdr);
int trace_writer__manifest(struct trace_writer *w, const void *bytes, size_t len);
int trace_writer__plan(struct trace_writer *w, const struct plan *p);
/* Buffer one ring-buffer record (a whole record, hdr.size bytes); the
 * buffer becomes one TRACE_CHUNK_RECORDS chunk when full or on flush. */
int trace_writer__record(struct trace_writer *w, const void *rec, size_t len);
int trace_writer__flush(struct trace_writer *w);
int trace_writer__snapshot(struct trace_writer *w, const struct trace_snapshot *s);
int trace_writer__note(struct trace_writer *w, const char *text);
/* One TRACE_CHUNK_PROCS chunk of n entries (n may be 0: nothing written). */
int trace_writer__procs(struct trace_writer *w, const struct trace_proc *p, size_t n);
/* One TRACE_CHUNK_MAPS chunk of n entries (n may be 0: nothing written). */
int trace_writer__maps(struct trace_writer *w, const struct trace_map *m, size_t n);
/* One TRACE_CHUNK_COST chunk (h->n_classes classes, h->n_desc entries;
 * the sizes are filled in). */
int trace_writer__cost(struct trace_writer *w, const struct trace_cost_hdr *h,
		       const struct trace_cost_class *cls, const struct trace_cost_desc *desc);
/* Flush, write TRACE_CHUNK_END. */
int trace_writer__end(struct trace_writer *w, const struct trace_end *e);
uint64_t trace_writer__records(const struct trace_writer *w);
uint64_t trace_writer__bytes(const struct trace_writer *w);
/* Close (flushing buffered records, without END if not ended). 0 or first
 * error. Accepts NULL. */
int trace_writer__close(struct trace_writer *w);

/* ---- reader ---- */

struct trace_reader;

enum trace_item_type {
	TRACE_ITEM_RECORD = 1,		/* item.rec, item.rec_len: one record */
	TRACE_ITEM_SNAPSHOT = 2,	/* item.snap */
	TRACE_ITEM_NOTE = 3,		/* item.note (NUL-terminated) */
	TRACE_ITEM_END = 4,		/* item.end */
	TRACE_ITEM_PROCS = 5,		/* item.procs, item.n_procs */
	TRACE_ITEM_MAPS = 6,		/* item.maps, item.n_maps */
	TRACE_ITEM_COST = 7,		/* item.cost, item.cost_classes, item.cost_desc */
};

struct trace_item {
	enum trace_item_type type;
	const struct pb_rec_hdr *rec;	/* 8-byte aligned, valid until next call */
	size_t rec_len;
	struct trace_snapshot snap;	/* arrays valid until next call */
	const char *note;
	struct trace_end end;
	const struct trace_proc *procs;	/* valid until next call */
	size_t n_procs;
	const struct trace_map *maps;	/* valid until next call */
	size_t n_maps;
	struct trace_cost_hdr cost;	/* sizes normalised to this reader's */
	struct trace_cost_class cost_classes[TRACE_COST_CLASSES];
	const struct trace_cost_desc *cost_desc;	/* cost.n_desc, valid until next call */
};

/* Open path, check the header, and read the manifest and plan chunks.
 * NULL + errno: EBADMSG not a trace / corrupt header or first chunks,
 * EPROTONOSUPPORT newer version, or the open(2) errno. */
struct trace_reader *trace_reader__open(const char *path);
const struct trace_header *trace_reader__header(const struct trace_reader *r);
/* The manifest bytes as recorded (NOT NUL-terminated; len in *len). */
const void *trace_reader__manifest(const struct trace_reader *r, size_t *len);
const struct trace_plan_desc *trace_reader__descriptors(const struct trace_reader *r, size_t *n);
const struct trace_plan_site *trace_reader__sites(const struct trace_reader *r, size_t *n);
size_t trace_reader__n_resources(const struct trace_reader *r);

/* Next record / snapshot / note / end, in file order: 1 and *item, 0 at
 * the end of the readable data (clean or cut: see trace_reader__ended),
 * -errno on I/O error. Records with an unknown type are returned too
 * (skip them by hdr.type); a malformed record size stops the chunk. */
int trace_reader__next(struct trace_reader *r, struct trace_item *item);
/* Back to the first item after the plan chunk. 0 or -errno. */
int trace_reader__rewind(struct trace_reader *r);
/* Chunks of a type this reader does not know (a newer writer's) are
 * skipped by next(); how many so far, and the types of the first
 * TRACE_UNKNOWN_TYPES_KEPT in *types (n in *n_types; both may be NULL). */
#define TRACE_UNKNOWN_TYPES_KEPT	8
uint64_t trace_reader__unknown_chunks(const struct trace_reader *r, const uint32_t **types,
				      size_t *n_types);
/* After next() returned 0: true when the file ended with TRACE_CHUNK_END. */
bool trace_reader__ended_cleanly(const struct trace_reader *r);
/* Why the file is cut ("chunk at offset N: truncated"), or NULL. */
const char *trace_reader__cut_reason(const struct trace_reader *r);
void trace_reader__free(struct trace_reader *r);

/* ---- live recordings ----
 * While `record` writes a trace it holds a POSIX read lock (fcntl
 * F_SETLK) on the whole file, through a descriptor it keeps open until
 * the end; the kernel drops it when the recorder exits, however it ends.
 * A reader asks F_GETLK who holds it: a trace without an end chunk and
 * with a holder is a recording in progress, without one it was cut. */

/* Take the lock on path (after trace_writer__create). The descriptor, to
 * keep open until the trace is closed, or -errno. */
int trace_live__hold(const char *path);
/* 1 when a process is writing path (*pid: its pid, 0 when it is in
 * another pid namespace), 0 when none, or -errno. */
int trace_live__holder(const char *path, int *pid);

#endif
