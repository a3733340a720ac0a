/* SPDX-License-Identifier: BSD-2-Clause */
/* agent_int.h: the agent's state, shared by the files of src/agent/ only:
 * agent.c (the loop, windows and threads), agent_catalog.c (manifest
 * directory, process identification), agent_out.c (state file, window
 * digest, trace pruning, sd_notify), agent_metrics.c (the textfile). */
#ifndef PROBITY_AGENT_INT_H
#define PROBITY_AGENT_INT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "agent/agent.h"
#include "contract/manifest.h"
#include "engine/events.h"

struct metrics_server;

#define AGENT_POLL_MS		200
#define AGENT_BID_CACHE		256

/* what the agent does with one manifest file */
enum agent_mstate {
	AGENT_M_IDLE = 0,	/* valid, no live target (or off-period) */
	AGENT_M_RECORDING,	/* a window is being recorded */
	AGENT_M_DEGRADED,	/* recording, rebound to a new build (opts.rebind) */
	AGENT_M_REFUSED,	/* its binary was replaced by another build */
	AGENT_M_INVALID,	/* the file does not load: error says why */
	AGENT_M_FAILED,		/* the last window failed: error says why */
};

/* one running window: a recorder in its own thread */
struct agent_slot {
	pthread_t th;
	bool running;		/* thread started, not yet joined */
	atomic_bool done;	/* recorder__run returned */
	struct recorder *rec;
	int err;		/* recorder__run's return */
	char trace[PATH_MAX];
	char bin_arg[PATH_MAX + 64];	/* "ID=PATH" for plan's binary override */
	const char *bins[1];	/* { bin_arg } for recorder_opts.binaries */
	pid_t *pids;		/* the targets it follows (a copy) */
	size_t n_pids;
	bool rebind;
	uint64_t start_ns;
	const char *name;	/* for messages (the manifest's file stem) */
};

/* losses and work of one manifest, counted since the agent started */
struct agent_counts {
	uint64_t windows, windows_failed, refusals;
	uint64_t records, bytes, events;
	uint64_t ringbuf_drops, write_errors, unknown_instances;
	uint64_t traces_pruned;
	uint64_t forked;	/* forked children of targets made targets */
	uint64_t rebinds;	/* new builds recorded rebound (opts.rebind) */
};

struct agent_manifest {
	char *path;		/* the file */
	char *stem;		/* file name without .yaml: trace subdirectory */
	dev_t dev;		/* identity at load, to see it changed on reload */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct manifest *m;	/* NULL: invalid */
	enum agent_mstate state;
	char error[PATH_MAX + 512];
	pid_t *pids;		/* live processes running a target */
	size_t n_pids, pids_cap;
	int target_idx;		/* the manifest target they run */
	char bin_path[PATH_MAX];	/* where that binary was found */
	char new_build_id[2 * PB_BUILD_ID_MAX + 1];	/* an upgrade seen there */
	bool rebind;		/* record the new build (opts.rebind) */
	bool seen;		/* reload: still in the directory */
	bool new_target;	/* a target appeared: re-attach (rotate now) */
	uint64_t retry_ns;	/* after a failed window, not before this */
	uint64_t children_ns;	/* forked children last looked for */
	struct agent_slot slot;
	char last_trace[PATH_MAX];
	char *metrics;		/* the last window's metrics, labelled */
	struct agent_counts c;
};

/* /proc/PID/exe identity cache: an exec'd file's build-id read once */
struct agent_bid {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	uint8_t id[PB_BUILD_ID_MAX];
	int len;		/* 0: no build-id (or not ELF) */
};

struct agent {
	struct agent_opts o;
	/* the probe-cost calibration, measured once and reused by every
	 * window (record --calibration): TRACE_DIR/.calibration.json */
	char calib_path[4096];
	struct agent_manifest **ms;	/* pointers: a window's thread holds one */
	size_t n_ms, ms_cap;
	struct procwatch *pw;
	uint64_t pw_drops_seen;
	struct agent_bid bids[AGENT_BID_CACHE];
	size_t bid_next;
	atomic_int stop, reload;
	uint64_t start_ns, start_real_ns;
	uint64_t seq;		/* trace file sequence */
	uint64_t reloads, windows;
	bool state_dirty;
	uint64_t last_state_ns, last_watchdog_ns, watchdog_usec;
	bool notify;		/* NOTIFY_SOCKET is set */
	uint64_t state_write_errors, metrics_write_errors;
	uint64_t proc_denied;	/* /proc/PID/exe unreadable (EACCES): unseen */
	struct metrics_server *http;	/* opts.listen, or NULL */
	char listen_addr[64];	/* what it is bound to: "127.0.0.1:9464" */
	char status[256];	/* the last STATUS= sent */
};

/* agent_catalog.c */
/* (Re)read the manifest directory: new files loaded, changed ones
 * reloaded (their window stopped first by the caller's stop_fn), removed
 * ones dropped. A file that does not load is AGENT_M_INVALID with its
 * first error ("FILE:LINE:COL: ..."), logged once. 0 or -errno (the
 * directory cannot be read). */
int agent_catalog_load(struct agent *a, void (*stop_fn)(struct agent *, struct agent_manifest *));
/* A process exec'd (or is found by a scan): match its executable's
 * build-id against every manifest target; note an upgrade (same path,
 * another build-id). */
void agent_catalog_exec(struct agent *a, pid_t pid);
/* Forked children of am's targets running the same build become targets
 * (no new window: the running one follows forks). */
void agent_catalog_children(struct agent *a, struct agent_manifest *am);
/* A process exited: forget it. */
void agent_catalog_exit(struct agent *a, pid_t pid);
/* Walk /proc and match every process (start, reload, lost events). */
void agent_catalog_scan(struct agent *a);
/* Drop pids that no longer exist. */
void agent_catalog_prune_pids(struct agent_manifest *am);
void agent_manifest_free(struct agent_manifest *am);

/* agent_out.c, agent_metrics.c */
const char *agent_mstate_str(enum agent_mstate s);
/* Replace the state file (tmp, fsync, rename). 0 or -errno (counted). */
int agent_write_state(struct agent *a);
/* Render the agent's own families plus each manifest's last window
 * (labelled manifest="STEM") into the textfile. 0 or -errno. */
int agent_write_metrics(struct agent *a);
/* After a window: load its trace, keep its metrics (labelled) and count
 * the instances still live at its end (unknown across the gap). */
void agent_window_digest(struct agent *a, struct agent_manifest *am);
/* Delete the oldest traces of am beyond opts.keep. */
void agent_prune_traces(struct agent *a, struct agent_manifest *am);
/* STATUS= (what it records, windows, losses) when it changed */
void agent_notify_status(struct agent *a);
/* sd_notify when NOTIFY_SOCKET is set: "READY=1", "WATCHDOG=1", ... */
void agent_notify(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
