/* SPDX-License-Identifier: BSD-2-Clause */
/* procwatch.h: process exec/exit events for the agent (procwatch.bpf.c:
 * tp_btf sched_process_exec / sched_process_exit and a ring buffer).
 *
 *	pw = procwatch__new();
 *	n = procwatch__poll(pw, timeout_ms, fn, ctx);	// fn per event
 *	procwatch__drops(pw);				// ring buffer full
 *	procwatch__free(pw);
 */
#ifndef PROBITY_PROCWATCH_H
#define PROBITY_PROCWATCH_H

#include <stdint.h>
#include <sys/types.h>

struct procwatch;

enum procwatch_kind { PROCWATCH_EXEC = 1, PROCWATCH_EXIT = 2 };

typedef void (*procwatch_fn)(enum procwatch_kind kind, pid_t pid, void *ctx);

/* Load and attach. NULL + errno (EPERM: not privileged). */
struct procwatch *procwatch__new(void);
/* Wait up to timeout_ms for events and call fn for each: the number of
 * events, or -errno. */
int procwatch__poll(struct procwatch *pw, int timeout_ms, procwatch_fn fn, void *ctx);
/* Events lost because the ring buffer was full, so far. */
uint64_t procwatch__drops(const struct procwatch *pw);
void procwatch__free(struct procwatch *pw);

#endif
