/* SPDX-License-Identifier: BSD-2-Clause */
/* lifelog.h: the lifecycle log of a receipt store, for its writers (the
 * generation API, the observer) and its readers (receipts, attribution):
 * entry kinds, append, read, and the typed entry decoder.
 *
 * The log is untrusted input when read back: lifelog_entry__decode checks
 * every field it fills and names the first one that is wrong.
 */
#ifndef PROBITY_RECEIPTS_LIFELOG_H
#define PROBITY_RECEIPTS_LIFELOG_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "probity/receipts.h"
#include "receipts/schema.h"

#define PB_LIFELOG_NAME "lifecycle.log"
#define PB_LIFELOG_LOCK "lifecycle.lock"
#define PB_LIFELOG_MAGIC "PBRCLOG\0"
#define PB_LIFELOG_VERSION 1

enum lifelog_kind {
	LIFE_LOADED = 1,
	LIFE_ACTIVATED = 2,
	LIFE_RETIRED = 3,
	LIFE_UNLOADED = 4,
	LIFE_LINK_UPDATED = 5,
	LIFE_OBSERVER = 6,	/* observer start/stop and miss counters */
	LIFE_DURABLE = 7,	/* group commit watermark (receipts/group.c) */
};
const char *lifelog__kind_name(uint32_t kind);
/* The kind named name, or 0 when no kind has that name. */
uint32_t lifelog__kind_of(const char *name);

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
 * -errno. A missing log is an empty log. Decode each element with
 * lifelog_entry__decode. */
int lifelog__read(struct pb_store *s, json_t **entries, const struct lifelog_problem_cb *cb);

/* A copy of entry e (from lifelog__read) as the CLI shows it: "_hash"
 * kept as "hash", "_offset" dropped. */
json_t *lifelog_entry__public(const json_t *e);

/* ---- typed entries ----
 *
 * Every decoder below fills *out from j and returns 0, or -EINVAL with
 * err naming the first field that is missing or of the wrong type
 * ("seq: Expected integer, got string", "Object item not found: kind").
 * Fields that did decode are filled even then; the others stay zero.
 * Strings and json_t pointers are borrowed from j: valid while j is.
 * A field written as JSON null reads as absent (NULL / 0). */

/* jit_ranges[]: one JIT function image */
struct lifelog_jit_range {
	uint64_t addr;		/* "0x..." (or an integer) */
	uint32_t len;
};
int lifelog_jit_range__decode(const json_t *j, struct lifelog_jit_range *out, json_error_t *err);

/* unloaded.ksymbols_unregistered[]: a BPF ksymbol unregistration */
struct lifelog_ksym {
	uint64_t addr;
	uint32_t len;
	const char *name;
	uint64_t mono_ns;
};
int lifelog_ksym__decode(const json_t *j, struct lifelog_ksym *out, json_error_t *err);

/* loaded.loader, link-updated.caller: the process behind a bpf() call */
struct lifelog_loader {
	uint32_t pid, tid;
	const char *comm;
	uint64_t syscall_enter_mono_ns, syscall_exit_mono_ns;	/* 0: not recorded */
};
int lifelog_loader__decode(const json_t *j, struct lifelog_loader *out, json_error_t *err);

/* activated.link: the link the swap targeted as the kernel reported it */
struct lifelog_link {
	uint32_t id, type, prog_id;
	int64_t ifindex;	/* -1: none */
	uint64_t netns_ino;
	const char *error;	/* bpf_link_get_info_by_fd failed */
};
int lifelog_link__decode(const json_t *j, struct lifelog_link *out, json_error_t *err);

/* The observer's counters (observer.stats in its 'stop' entry; what
 * `probity watch` prints). */
struct lifelog_observer_stats {
	uint64_t bpf_syscalls, ids_resolved_in_kernel, loads_seen, captured;
	uint64_t captured_by_fd, captured_by_id, link_creates, link_updates;
	uint64_t unloads, ksymbol_records, failed_loads;
	struct {
		uint64_t gone_before_capture, perf_records_lost, ringbuf_dropped;
		uint64_t syscalls_not_followed, fd_not_duplicated, links_unresolved;
		uint64_t log_write_errors;
	} missed;
};
int lifelog_observer_stats__decode(const json_t *j, struct lifelog_observer_stats *out,
				   json_error_t *err);
/* The JSON form (new reference, NULL on ENOMEM). */
json_t *lifelog_observer_stats__encode(const struct lifelog_observer_stats *st);

/* One entry of any kind; which fields a kind carries: docs/receipts.md. */
struct lifelog_entry {
	/* header, every kind (required: kind, seq, prev) */
	const char *kind_name;
	uint32_t kind;			/* enum lifelog_kind, 0: unknown name */
	int64_t seq;
	const char *prev;
	uint64_t mono_ns, realtime_ns;
	int64_t pid;
	const char *hash;		/* "_hash" (lifelog__read), or NULL */
	int64_t offset;			/* "_offset" (lifelog__read), or -1 */
	/* loaded, activated, retired, unloaded; link-updated: the
	 * installed generation when it is known */
	const char *generation_id;
	const char *receipt;
	uint32_t prog_id;
	/* loaded */
	const char *prog_tag, *prog_name;
	const char *source;		/* "library", "observer" */
	uint64_t load_time_boot_ns;
	uint64_t load_ns, capture_ns;	/* timing */
	const json_t *jit_ranges;	/* array or NULL; lifelog_jit_range__decode */
	const char *capture;		/* observer: "failed" / "gone" (no receipt) */
	const char *error;
	const char *captured_via;	/* "syscall-fd", "perf-bpf-event" */
	uint64_t seen_mono_ns;
	bool has_loader;
	struct lifelog_loader loader;
	/* activated */
	bool has_link;
	struct lifelog_link link;
	const json_t *link_json;	/* the link object as written, or NULL */
	const char *hook;
	uint64_t swap_begin_mono_ns, swap_end_mono_ns;
	uint64_t swap_begin_realtime_ns, swap_end_realtime_ns;
	const char *replaces;		/* generation id */
	uint32_t old_prog_id;		/* also link-updated; 0: not known */
	/* retired */
	const char *reason;
	/* unloaded */
	uint64_t perf_mono_ns;
	const json_t *ksymbols_unregistered;	/* array or NULL; lifelog_ksym__decode */
	/* link-updated */
	const char *op;			/* "create" / "update" */
	uint32_t link_id, link_type, new_prog_id;
	const char *old_generation_id, *new_generation_id;
	bool has_caller;
	struct lifelog_loader caller;
	uint64_t syscall_enter_mono_ns, syscall_exit_mono_ns;
	int64_t ifindex;		/* -1: not recorded */
	/* observer */
	const char *event;		/* "start" / "stop" */
	int64_t cpus;
	bool has_stats;
	struct lifelog_observer_stats stats;
	/* durable: entries with seq <= through_seq are on disk; state
	 * "open" (group commit starts), "sync", "final" (ends) */
	int64_t through_seq;		/* -1: none before */
	const char *durable_state;
};
int lifelog_entry__decode(const json_t *j, struct lifelog_entry *out, json_error_t *err);

#endif
