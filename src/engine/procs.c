/* SPDX-License-Identifier: BSD-2-Clause */
/* procs.c: the engine's tracked processes (engine.h, docs/record.md "Many
 * processes"): the --cgroup filter, the processes user space names, the
 * walk that reports and forgets them, and the memory of the maps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/clock.h"
#include "common/log.h"
#include "engine/engine_int.h"
#include "engine.skel.h"

/* --cgroup: the directory in slot 0 of cgroup_filter (after load). */
int engine_set_cgroup(struct engine *e, const char *path)
{
	struct statfs sfs;
	uint32_t k = 0;
	int fd;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_warn("engine: cannot open cgroup %s: %s\n", path, strerror(errno));
		return -errno;
	}
	e->cgroup_fd = fd;
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		pr_warn("engine: %s is not a cgroup v2 directory (see the cgroup2 line of "
			"/proc/mounts)\n", path);
		return -ENOTDIR;
	}
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.cgroup_filter), &k, &fd, BPF_ANY)) {
		int err = -errno;

		pr_warn("engine: %s is not a cgroup v2 directory: %s\n", path, strerror(-err));
		return err;
	}
	return 0;
}

/* Read a process's name from /proc (best effort: "" when gone). */
static void proc_comm(pid_t pid, char *comm)
{
	char path[64];
	ssize_t n;
	int fd;

	memset(comm, 0, PB_COMM_LEN);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, PB_COMM_LEN - 1);
	close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = 0;
}

/* The processes user space names: --pid, the spawned command. */
int engine_add_given_procs(struct engine *e, const struct engine_opts *opts)
{
	int fd = bpf_map__fd(e->skel->maps.procs);
	size_t i, n = opts->n_pids + 1;

	for (i = 0; i < n; i++) {
		pid_t pid = i < opts->n_pids ? opts->pids[i] : opts->pid;
		struct pb_proc p = { .flags = PB_PROC_GIVEN };
		uint32_t k = (uint32_t)pid;

		if (pid <= 0)
			continue;
		p.first_ts = pb_mono_ns();
		proc_comm(pid, p.comm);
		if (bpf_map_update_elem(fd, &k, &p, BPF_ANY))
			return -errno;
	}
	return 0;
}

int engine__procs(struct engine *e, engine_proc_fn fn, void *ctx)
{
	int fd = bpf_map__fd(e->skel->maps.procs), ret = 0;
	uint32_t cur, next, gone[256];
	struct pb_proc p;
	bool first = true;
	size_t n = 0, i;

	while (!bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		first = false;
		cur = next;
		if (bpf_map_lookup_elem(fd, &cur, &p))
			continue;
		if (fn && (ret = fn(cur, &p, ctx)))
			break;
		/* forgotten once its instances were swept; deleted after
		 * the walk (a delete restarts a hash walk) */
		if ((p.flags & PB_PROC_EXITED) && p.exit_ts < e->exit_swept_ts &&
		    n < sizeof(gone) / sizeof(gone[0]))
			gone[n++] = cur;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return ret;
}

/* "memlock:" of a BPF map's fdinfo: the bytes the kernel charges for it */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

int engine__memory(const struct engine *e, struct engine_memory *out)
{
	struct bpf_map *m;

	memset(out, 0, sizeof(*out));
	bpf_object__for_each_map(m, e->skel->obj)
		if (bpf_map__fd(m) >= 0)
			out->maps_bytes += map_memlock(bpf_map__fd(m));
	out->instance_bytes = map_memlock(bpf_map__fd(e->skel->maps.instances));
	out->max_instances = bpf_map__max_entries(e->skel->maps.instances);
	out->max_procs = bpf_map__max_entries(e->skel->maps.procs);
	return 0;
}

