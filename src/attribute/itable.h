/* SPDX-License-Identifier: BSD-2-Clause */
/* itable.h: the generation interval table (itable*.c,
 * docs/attribution.md): JIT address intervals and link-activity segments
 * of one or more stores' lifecycle logs, plus a sample file's kernel
 * records, answering "which generation owned this address (or this link)
 * at this time" with a generation id or `unknown` and the reason.
 */
#ifndef PROBITY_ATTRIBUTE_ITABLE_H
#define PROBITY_ATTRIBUTE_ITABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define PB_NS_INF UINT64_MAX

struct sf_record;	/* attribute/samples.h */
struct pb_time;		/* attribute/timespec.h */

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
	ATTR_R_NOT_DURABLE,	/* after a store's last durable log entry (group commit) */
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
/* A link segment as JSON (docs/attribution.md "Link segments"): its key
 * names, and the typed reader for printers. */
#define SEGK_LINK		"link"
#define SEGK_STATUS		"status"		/* "generation" / "unknown" */
#define SEGK_GENERATION_ID	"generation_id"		/* string or null */
#define SEGK_PROG_ID		"prog_id"
#define SEGK_START		"start"			/* {earliest, latest} */
#define SEGK_END		"end"			/* {earliest, latest}: null = still active */
#define SEGK_EARLIEST		"earliest"
#define SEGK_LATEST		"latest"
#define SEGK_IN_WINDOW		"in_window"		/* "whole" / "part" / "possibly" */
#define SEGK_SOURCE		"source"		/* "swapper" / "observer" */
#define SEGK_OLD_IMAGE_ALIVE_UNTIL "old_image_alive_until"	/* ns, "still loaded" or null */
#define SEGK_REASON		"reason"		/* unknown only */
#define SEGK_CANDIDATES		"candidates"		/* unknown only */

struct attr_segment {
	const char *link, *status, *in_window, *source;
	const char *generation_id;	/* NULL: null */
	const char *reason;		/* NULL: absent */
	uint32_t prog_id;
	int64_t start_earliest, start_latest;
	int64_t end_earliest, end_latest;	/* 0 where null */
	bool still_active;		/* end.latest is null */
	bool image_until_known;		/* old_image_alive_until is a time */
	int64_t image_until;
	const json_t *candidates;	/* array or NULL */
};
/* 0, or -EINVAL with err (may be NULL) naming the field. Strings are
 * borrowed from j. */
int attr_segment__decode(const json_t *j, struct attr_segment *out, json_error_t *err);

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
/* A parsed TIME (timespec.h) in CLOCK_MONOTONIC ns: a wall-clock time
 * converts through the clock pair of the lifecycle entry nearest to it.
 * 0, or -EINVAL when tm is wall-clock and no entry has both clocks (the
 * caller says so: "cannot convert a wall-clock time: ..."). */
int attribute__to_mono(const struct attr_table *t, const struct pb_time *tm, uint64_t *mono);

#endif
