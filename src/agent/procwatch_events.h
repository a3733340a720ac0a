/* SPDX-License-Identifier: BSD-2-Clause */
/* procwatch_events.h: the record procwatch.bpf.c sends to user space
 * (procwatch.c): a process exec'd or exited. Fixed-width fields only. */
#ifndef PROBITY_PROCWATCH_EVENTS_H
#define PROBITY_PROCWATCH_EVENTS_H

#define PW_EXEC	1
#define PW_EXIT	2

struct pw_event {
	__u32 type;	/* PW_EXEC or PW_EXIT */
	__u32 pid;	/* thread-group id */
};

#endif
