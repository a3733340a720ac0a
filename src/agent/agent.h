/* SPDX-License-Identifier: BSD-2-Clause */
/* agent.h: `probity agent`, the long-running recorder (docs/agent.md).
 *
 * It reads every *.yaml manifest of a directory, watches processes
 * (those running now, then exec/exit events from procwatch.bpf.c),
 * matches each process's /proc/PID/exe build-id against the manifests'
 * targets and, for a manifest with live targets, runs the recorder
 * library in-process (one thread per manifest, following its live
 * target processes; a new one, e.g. a restarted target, is attached by
 * rotating at once) in windows: a window is one trace file, rotated whole every
 * rotate_ns (or earlier at max_trace_bytes), within a duty cycle
 * (duty_on_ns of every duty_period_ns; what is live across an off-period
 * or a rotation is counted as unknown). After every window it writes a
 * JSON state file and a Prometheus textfile, and keeps the newest `keep`
 * traces per manifest. A new build-id at a manifest's binary path (a
 * package upgrade) is refused, or with opts.rebind recorded rebound and
 * degraded; never silently validated. The library logs through pr_*,
 * never exits and installs no signal handler: the caller turns SIGTERM
 * into agent__stop() and SIGHUP into agent__reload(), both
 * async-signal-safe. With NOTIFY_SOCKET set it speaks systemd's
 * sd_notify protocol (READY=1, WATCHDOG=1, RELOADING=1, STOPPING=1, and
 * STATUS= lines saying what it records and what it lost). With
 * opts.listen the metrics are also served over HTTP (metrics_server).
 *
 *	a = agent__new(&opts);
 *	err = agent__run(a);		// blocks until agent__stop()
 *	j = agent__state_json(a);	// what it did
 *	agent__free(a);
 */
#ifndef PROBITY_AGENT_H
#define PROBITY_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#define AGENT_DEFAULT_MANIFEST_DIR	"/etc/probity/manifest.d"
#define AGENT_DEFAULT_TRACE_DIR		"/var/log/probity"
#define AGENT_DEFAULT_STATE_DIR		"/var/lib/probity"
#define AGENT_STATE_NAME		"agent-state.json"
#define AGENT_METRICS_NAME		"probity.prom"

struct agent;

struct agent_opts {
	const char *manifest_dir;	/* *.yaml, read at start and on reload */
	const char *trace_dir;		/* traces in DIR/MANIFEST-NAME/ */
	const char *state_file;		/* JSON state, replaced atomically */
	const char *metrics_dir;	/* AGENT_METRICS_NAME written here; NULL none */
	const char *listen;		/* "IPV4:PORT": serve the same bytes at GET
					 * /metrics (PORT 0: any free one); NULL none */
	uint64_t rotate_ns;		/* longest window (one trace file) */
	uint32_t keep;			/* traces kept per manifest (>= 1) */
	uint64_t max_trace_bytes;	/* rotate a trace early at this size; 0 none */
	uint64_t duty_on_ns;		/* record this long ... */
	uint64_t duty_period_ns;	/* ... of every period (on == period: always) */
	uint64_t interval_ns;		/* snapshot interval; 0 = recorder default */
	uint64_t duration_ns;		/* stop by itself after this long; 0 never */
	bool rebind;			/* a new build-id at a manifest's binary
					 * path is rebound (degraded), not refused */
	double budget;			/* record --budget in every window (a fraction
					 * of the targets' CPU time); 0 = off */
};

/* `probity agent`'s default --budget (docs/agent.md "Duty cycle and
 * budget": 2 % of the targets' CPU time, inside the duty cycle's on-part) */
#define AGENT_DEFAULT_BUDGET	0.02

/* Copies opts (strings must outlive the agent). NULL + errno (EINVAL:
 * a directory or state file missing, keep 0, on > period, no rotate). */
struct agent *agent__new(const struct agent_opts *opts);
/* Watch, record and rotate until agent__stop() or opts.duration_ns.
 * 0 when it ran and stopped cleanly; -errno when it could not start
 * (the process watcher could not load: EPERM without privileges;
 * opts.listen cannot be bound: EADDRINUSE, EADDRNOTAVAIL, EINVAL).
 * Failures after the start (a corrupt manifest, a window that cannot
 * be written) are logged, counted in the state and keep it running. */
int agent__run(struct agent *a);
/* Stop at the next loop turn (<= 200 ms); async-signal-safe. */
void agent__stop(struct agent *a);
/* Re-read the manifest directory at the next loop turn; async-signal-safe. */
void agent__reload(struct agent *a);
/* The state file's document (new reference), or NULL. */
json_t *agent__state_json(const struct agent *a);
void agent__free(struct agent *a);

#endif
