/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * realmut_rec.h: the semantic-site hooks of the real-code mutation
 * benchmark (bench/realmut, issue 15), compiled into PostgreSQL 15's
 * buffer manager by patches/hooks.patch.
 *
 * REALMUT_EVENT(KIND, NAME, BUF, ARG) marks one semantic event of a shared
 * buffer (BUF = the Buffer number, 1..NBuffers):
 *   - without -DREALMUT_INSTR it is nothing (the plain build: the manifest,
 *     system-only and bare arms run it);
 *   - with -DREALMUT_INSTR it is a sys/sdt.h probe realmut:NAME(BUF, ARG)
 *     (the USDT arm) and a call of the in-process recorder, which writes a
 *     fixed-size record to DATADIR/realmut_rec/PID.bin when that directory
 *     exists (the compiled-in arm, the ground truth; otherwise one
 *     predictable branch).
 * The hooks sit in the source, so they move with the code as
 * compiler-inserted events do.
 */
#ifndef REALMUT_REC_H
#define REALMUT_REC_H

#define REALMUT_PIN 1		/* a backend-private pin taken (refcount + 1) */
#define REALMUT_UNPIN 2		/* a backend-private pin dropped */
#define REALMUT_LOCK 3		/* buffer content lock acquired (ARG = mode) */
#define REALMUT_UNLOCK 4	/* buffer content lock released */
#define REALMUT_VICTIM 5	/* StrategyGetBuffer chose this buffer */
#define REALMUT_LOOKUP 6	/* BufTableLookup: BUF = hit, 0 = miss */

/* one record, 24 bytes, host byte order */
typedef struct realmut_record
{
	unsigned short kind;
	unsigned short arg;
	int			buf;
	unsigned int pid;
	unsigned int tid;
	unsigned long long ns;		/* CLOCK_MONOTONIC */
} realmut_record;

#ifdef REALMUT_INSTR
#include <sys/sdt.h>
#include "miscadmin.h"			/* MyProcPid */
/*
 * PostgreSQL's generated probes.h defines _SDT_HAS_SEMAPHORES, so every
 * sys/sdt.h probe in this translation unit names a semaphore
 * PROVIDER_NAME_semaphore (realmut_rec.c defines ours in .probes)
 */
extern unsigned short realmut_pin_semaphore, realmut_unpin_semaphore,
			realmut_lock_semaphore, realmut_unlock_semaphore,
			realmut_victim_semaphore, realmut_lookup_semaphore;
extern int	realmut_rec_state;	/* 0 unknown, 1 on, -1 off (this process) */
extern int	realmut_rec_pid;
extern void realmut_rec(int kind, int buf, int arg);

#define REALMUT_EVENT(KIND, NAME, BUF, ARG) \
	do { \
		DTRACE_PROBE2(realmut, NAME, (int) (BUF), (int) (ARG)); \
		if (realmut_rec_state >= 0 || realmut_rec_pid != MyProcPid) \
			realmut_rec((KIND), (int) (BUF), (int) (ARG)); \
	} while (0)
#else
#define REALMUT_EVENT(KIND, NAME, BUF, ARG) ((void) 0)
#endif

#endif							/* REALMUT_REC_H */
