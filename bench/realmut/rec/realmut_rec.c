/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * realmut_rec.c: the compiled-in arm's in-process recorder (see
 * realmut_rec.h). Per backend process: records are buffered and written
 * to DATADIR/realmut_rec/PID.bin (the backend's cwd is DATADIR) when the
 * buffer fills and at process exit. Opened lazily on the first event of
 * each process (a forked child re-opens: MyProcPid differs).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "realmut_rec.h"

#ifdef REALMUT_INSTR
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define REALMUT_BUF 4096

#define REALMUT_SEM __attribute__((section(".probes")))
unsigned short realmut_pin_semaphore REALMUT_SEM;
unsigned short realmut_unpin_semaphore REALMUT_SEM;
unsigned short realmut_lock_semaphore REALMUT_SEM;
unsigned short realmut_unlock_semaphore REALMUT_SEM;
unsigned short realmut_victim_semaphore REALMUT_SEM;
unsigned short realmut_lookup_semaphore REALMUT_SEM;

int			realmut_rec_state = 0;
int			realmut_rec_pid = 0;
static int	rec_fd = -1;
static int	rec_n = 0;
static bool rec_atexit = false;
static realmut_record rec_buf[REALMUT_BUF];

static void
rec_flush(void)
{
	if (rec_fd >= 0 && rec_n > 0)
	{
		ssize_t		w = write(rec_fd, rec_buf, sizeof(rec_buf[0]) * rec_n);

		(void) w;
	}
	rec_n = 0;
}

static void
rec_exit(void)
{
	if (realmut_rec_pid == MyProcPid)
		rec_flush();
}

static void
rec_open(void)
{
	char		path[64];

	/* a forked child: the parent's buffer and file are not ours */
	if (rec_fd >= 0)
		close(rec_fd);
	rec_fd = -1;
	rec_n = 0;
	realmut_rec_pid = MyProcPid;
	realmut_rec_state = -1;
	if (access("realmut_rec", W_OK) != 0)
		return;
	snprintf(path, sizeof(path), "realmut_rec/%d.bin", (int) MyProcPid);
	rec_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (rec_fd < 0)
		return;
	realmut_rec_state = 1;
	if (!rec_atexit)
	{
		atexit(rec_exit);
		rec_atexit = true;
	}
}

void
realmut_rec(int kind, int buf, int arg)
{
	struct timespec ts;
	realmut_record *r;

	if (realmut_rec_pid != MyProcPid)
		rec_open();
	if (realmut_rec_state <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = &rec_buf[rec_n++];
	r->kind = (unsigned short) kind;
	r->arg = (unsigned short) arg;
	r->buf = buf;
	r->pid = (unsigned int) MyProcPid;
	r->tid = (unsigned int) MyProcPid;	/* a PostgreSQL backend is one thread */
	r->ns = (unsigned long long) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (rec_n == REALMUT_BUF)
		rec_flush();
}
#else
/* the plain build: no recorder (ISO C forbids an empty translation unit) */
extern int	realmut_rec_plain;
#endif
