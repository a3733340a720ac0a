/* SPDX-License-Identifier: BSD-2-Clause */
/* procs.c: the processes a recording follows (docs/record.md "Many
 * processes"): the engine's tracked-process map read at each snapshot
 * into the recorder's table, new and exited processes (and the threads
 * of each new one, with their names) written to the trace as
 * TRACE_CHUNK_PROCS, the final table at the end; the instance-map size
 * from the manifest; the `--pid` hint for servers that fork workers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/array.h"
#include "contract/manifest.h"
#include "record/recorder_int.h"

#define RECORDER_MIN_INSTANCES	65536u
#define RECORDER_MAX_INSTANCES	(64u << 20)
#define THREADS_PER_PROC	256	/* thread names read per process */

uint32_t recorder_instance_entries(const struct manifest *m, uint32_t override)
{
	uint64_t n = 0;
	size_t i;

	if (override)
		return override;
	/* every declared capacity can be live at once, plus room for the
	 * resources without one and for tombstones */
	for (i = 0; i < m->n_resources; i++)
		if (m->resources[i].has_capacity)
			n += m->resources[i].capacity;
	n += RECORDER_MIN_INSTANCES;
	return n > RECORDER_MAX_INSTANCES ? RECORDER_MAX_INSTANCES : (uint32_t)n;
}

/* the table entry of (pid, tid), created when missing; NULL on ENOMEM */
static struct trace_proc *proc_slot(struct recorder *r, uint32_t pid, uint32_t tid, bool *fresh)
{
	size_t i;

	*fresh = false;
	for (i = r->n_procs; i-- > 0;)
		if (r->procs[i].pid == pid && r->procs[i].tid == tid)
			return &r->procs[i];
	if (pb_array_grow((void **)&r->procs, &r->procs_cap, r->n_procs + 1, sizeof(*r->procs)))
		return NULL;
	*fresh = true;
	memset(&r->procs[r->n_procs], 0, sizeof(*r->procs));
	r->procs[r->n_procs].pid = pid;
	r->procs[r->n_procs].tid = tid;
	return &r->procs[r->n_procs++];
}

static void read_comm(const char *path, char *comm)
{
	char buf[sizeof(((struct trace_proc *)0)->comm)] = { 0 };
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	if (buf[n - 1] == '\n')
		buf[n - 1] = 0;
	memcpy(comm, buf, sizeof(buf));
}

/* The threads of a live process and their names (best effort: threads
 * that come and go between snapshots are named by number only). */
static void add_threads(struct recorder *r, uint32_t pid, uint64_t now)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && n < THREADS_PER_PROC) {
		uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		struct trace_proc *t;
		bool fresh;

		if (!tid || tid == pid)
			continue;
		t = proc_slot(r, pid, tid, &fresh);
		if (!t)
			break;
		n++;
		if (!fresh)
			continue;
		t->first_ts = now;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
		read_comm(path, t->comm);
		t->flags = PB_PROC_SEEN;
		r->procs_dirty = true;
	}
	closedir(d);
}

struct procs_walk {
	struct recorder *r;
	uint64_t now;
	int err;
};

static int on_proc(uint32_t tgid, const struct pb_proc *p, void *ctx)
{
	struct procs_walk *w = ctx;
	struct recorder *r = w->r;
	struct trace_proc *t;
	bool fresh, exited = p->flags & PB_PROC_EXITED;
	char path[64];

	if (p->flags & PB_PROC_EXCLUDED)
		return 0;
	t = proc_slot(r, tgid, tgid, &fresh);
	if (!t)
		return w->err = -ENOMEM;
	if (!fresh && t->flags == p->flags && t->events == p->events)
		return 0;
	if (fresh || (exited && !t->exit_ts))
		r->procs_dirty = true;	/* written at once: new or just exited */
	t->ppid = p->ppid;
	t->flags = p->flags;
	t->first_ts = p->first_ts;
	t->exit_ts = p->exit_ts;
	t->events = p->events;
	t->held_at_exit = p->held_at_exit;
	t->exit_code = p->exit_code;
	memcpy(t->comm, p->comm, sizeof(t->comm));
	if (!exited) {	/* the name after exec, e.g. of the spawned command */
		snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
		read_comm(path, t->comm);
	}
	t->comm[sizeof(t->comm) - 1] = 0;
	if (fresh && !exited)
		add_threads(r, tgid, w->now);
	return 0;
}

int recorder_procs_update(struct recorder *r, bool final)
{
	struct procs_walk w = { .r = r, .now = r->snap.ts_ns };
	size_t i;
	int err;

	err = engine__procs(r->e, on_proc, &w);
	if (!err)
		err = w.err;
	if (err)
		return err;
	if (final)	/* threads started since their process was first seen */
		for (i = 0; i < r->n_procs; i++)
			if (r->procs[i].pid == r->procs[i].tid && !r->procs[i].exit_ts)
				add_threads(r, r->procs[i].pid, w.now);
	err = recorder_maps_update(r);	/* maps.c: stacks' symbols */
	if (err)
		return err;
	if (!r->procs_dirty && !final)
		return 0;
	r->procs_dirty = false;
	/* the whole table each time: small, and a cut trace keeps the last */
	return trace_writer__procs(r->w, r->procs, r->n_procs);
}

/* Children of pid running the same executable (a server that forks its
 * workers: they are not recorded by --pid). */
static int same_exe_children(pid_t pid)
{
	char path[64], exe[512], cexe[512], buf[4096];
	ssize_t n, m;
	char *s, *save = NULL;
	int fd, count = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	m = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (m <= 0)
		return 0;
	buf[m] = 0;
	for (s = strtok_r(buf, " \n", &save); s; s = strtok_r(NULL, " \n", &save)) {
		snprintf(path, sizeof(path), "/proc/%s/exe", s);
		n = readlink(path, cexe, sizeof(cexe) - 1);
		if (n > 0 && (cexe[n] = 0, !strcmp(cexe, exe)))
			count++;
	}
	return count;
}

void recorder_fork_hint(struct recorder *r)
{
	size_t i;

	for (i = 0; i <= r->o.n_pids; i++) {
		pid_t pid = i < r->o.n_pids ? r->o.pids[i] : r->o.pid;
		int n;

		if (pid <= 0 || (n = same_exe_children(pid)) <= 0)
			continue;
		recorder_say(r->o.message, r->o.ctx, PB_LOG_WARN,
			     "pid %d has %d child process%s running the same program (a server "
			     "that forks workers?): --pid records pid %d only; use --all (or "
			     "--cgroup PATH) to record every process of the build", (int)pid, n,
			     n == 1 ? "" : "es", (int)pid);
	}
}
