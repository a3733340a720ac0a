// SPDX-License-Identifier: BSD-2-Clause
/* maps.c: the executable mappings of the recorded processes into the trace
 * (TRACE_CHUNK_MAPS), so stacks (PB_REC_STACK, record --stacks) can be
 * symbolized offline: path, range, file offset and build-id of each
 * executable file mapping. Written when a process is first seen and
 * again when its executable changed (exec, e.g. the spawned command
 * after the held fork); libraries dlopen()ed later are not seen again
 * (their frames print as [unknown], counted by report --folded).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/log.h"
#include "elf/elf_image.h"
#include "elf/proc_maps.h"
#include "record/recorder_int.h"
#include "trace/trace.h"

static struct rec_maps_seen *seen_slot(struct recorder *r, uint32_t pid)
{
	struct rec_maps_seen *s;
	size_t i;

	for (i = 0; i < r->n_maps_seen; i++)
		if (r->maps_seen[i].pid == pid)
			return &r->maps_seen[i];
	if (r->n_maps_seen == r->maps_seen_cap) {
		size_t cap = r->maps_seen_cap ? 2 * r->maps_seen_cap : 16;

		s = realloc(r->maps_seen, cap * sizeof(*s));
		if (!s)
			return NULL;
		r->maps_seen = s;
		r->maps_seen_cap = cap;
	}
	s = &r->maps_seen[r->n_maps_seen++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	return s;
}

static void fill_map(struct trace_map *t, uint32_t pid, const struct proc_mapping *m)
{
	struct elf_image *img;
	int n;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->start = m->start;
	t->end = m->end;
	t->offset = m->pgoff;
	snprintf(t->path, sizeof(t->path), "%s", m->map_path ? m->map_path : m->path);
	img = elf_image__open(m->path);
	if (!img)
		return;
	n = elf_image__build_id(img, t->build_id, sizeof(t->build_id));
	t->build_id_len = n > 0 ? (uint32_t)n : 0;
	elf_image__free(img);
}

/* One process's executable mappings as one chunk. */
static int write_process(struct recorder *r, uint32_t pid)
{
	struct proc_mapping *pm = NULL;
	struct trace_map *t;
	int n, i, k = 0, err;

	n = proc_mappings__read((pid_t)pid, &pm);
	if (n <= 0)
		return 0;	/* gone already: its stacks print unsymbolized */
	t = calloc((size_t)n, sizeof(*t));
	if (!t) {
		proc_mappings__free(pm, n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (pm[i].exec)
			fill_map(&t[k++], pid, &pm[i]);
	err = trace_writer__maps(r->w, t, (size_t)k);
	free(t);
	proc_mappings__free(pm, n);
	return err;
}

int recorder_maps_update(struct recorder *r)
{
	char path[64];
	struct stat st;
	size_t i;
	int err;

	if (!r->o.stacks_per_sec)
		return 0;
	for (i = 0; i < r->n_procs; i++) {
		const struct trace_proc *p = &r->procs[i];
		struct rec_maps_seen *s;

		if (p->pid != p->tid || p->exit_ts)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
		if (stat(path, &st))
			continue;
		s = seen_slot(r, p->pid);
		if (!s)
			return -ENOMEM;
		if (s->written && s->dev == (uint64_t)st.st_dev && s->ino == (uint64_t)st.st_ino)
			continue;
		err = write_process(r, p->pid);
		if (err)
			return err;
		s->written = true;
		s->dev = (uint64_t)st.st_dev;
		s->ino = (uint64_t)st.st_ino;
	}
	return 0;
}
