/* SPDX-License-Identifier: BSD-2-Clause */
/* proc_maps.c: the binaries a running process has mapped.
 *
 * probity attaches uprobes to files, but users name processes. This reads
 * /proc/PID/exe and /proc/PID/maps and returns one entry per mapped file
 * (main executable first) with a path that opens the very file the process
 * runs, even from another mount namespace.
 *
 * Path choice: /proc/PID/root/<path> for files still on disk (works across
 * mount namespaces, stays valid as long as the process lives, and needs
 * only the ptrace-read access that reading maps needs anyway). When the
 * file is gone ("(deleted)": unlinked, or replaced by a package upgrade)
 * or the name now points at a different inode, the only way to the mapped
 * inode is /proc/PID/map_files/<start>-<end>; that needs CAP_SYS_ADMIN and
 * lives only as long as that one mapping, so it is the fallback, not the
 * default. If it is not readable either, path stays the /proc/PID/root one
 * and the caller sees deleted=true when opening it fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/array.h"
#include "elf/proc_maps.h"

#define DELETED_SUFFIX " (deleted)"

struct maps_line {
	uint64_t start, end, pgoff;
	bool exec;
	unsigned int major, minor;
	uint64_t ino;
	char *path;		/* points into the line buffer */
};

/* "start-end perms offset major:minor inode   path" */
static bool parse_maps_line(char *line, struct maps_line *m)
{
	char perms[8];
	int n = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 "%n",
		   &m->start, &m->end, perms, &m->pgoff, &m->major, &m->minor,
		   &m->ino, &n) != 7)
		return false;
	m->exec = strlen(perms) >= 3 && perms[2] == 'x';
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	line[strcspn(line, "\n")] = '\0';
	m->path = line;
	return true;
}

static int pid_gone_or(int err)
{
	return err == ENOENT || err == ESRCH ? -ESRCH : -err;
}

/* Openable path for one mapping (see the top of the file). */
static char *resolve_path(pid_t pid, const struct maps_line *m, bool deleted)
{
	char *root = NULL, *mf = NULL;
	struct stat st;

	if (asprintf(&root, "/proc/%d/root%s", (int)pid, m->path) < 0)
		return NULL;
	if (!deleted && !stat(root, &st) && st.st_ino == m->ino)
		return root;
	if (asprintf(&mf, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		     m->start, m->end) < 0) {
		free(root);
		return NULL;
	}
	if (!stat(mf, &st) && st.st_ino == m->ino) {
		free(root);
		return mf;
	}
	free(mf);
	return root;
}

void proc_mappings__free(struct proc_mapping *maps, int n)
{
	int i;

	if (!maps)
		return;
	for (i = 0; i < n; i++) {
		free(maps[i].path);
		free(maps[i].map_path);
	}
	free(maps);
}

/* The mappings collected so far, one per distinct file. */
struct mapping_set {
	struct proc_mapping *v;
	int n;
	size_t cap;
};

/* One file-backed line of maps: a new entry, or an update of its file's
 * entry (keep the first mapping, unless this is the first executable
 * one). 0 or -errno. */
static int add_mapping(pid_t pid, struct mapping_set *set, struct maps_line *m)
{
	struct proc_mapping *p = NULL;
	size_t len = strlen(m->path);
	bool deleted = false;
	dev_t dev;
	int i, err;

	if (len > strlen(DELETED_SUFFIX) &&
	    !strcmp(m->path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		m->path[len - strlen(DELETED_SUFFIX)] = '\0';
		deleted = true;
	}
	dev = makedev(m->major, m->minor);
	for (i = 0; i < set->n; i++)
		if (set->v[i].dev == dev && set->v[i].ino == (ino_t)m->ino)
			break;
	if (i < set->n) {
		if (set->v[i].exec || !m->exec)
			return 0;
		p = &set->v[i];
		free(p->path);
		p->path = NULL;
	} else {
		err = PB_ARRAY_RESERVE_ONE(set->v, (size_t)set->n, set->cap);
		if (err)
			return err;
		p = &set->v[set->n++];
		memset(p, 0, sizeof(*p));
		p->map_path = strdup(m->path);
		if (!p->map_path)
			return -ENOMEM;
	}
	p->start = m->start;
	p->end = m->end;
	p->pgoff = m->pgoff;
	p->exec = m->exec;
	p->deleted = deleted;
	p->dev = dev;
	p->ino = (ino_t)m->ino;
	p->path = resolve_path(pid, m, deleted);
	if (!p->path)
		return -ENOMEM;
	return 0;
}

/* Every file-backed line of /proc/PID/maps (f) into set. */
static int read_maps(pid_t pid, FILE *f, struct mapping_set *set)
{
	char *line = NULL;
	size_t line_sz = 0;
	int err = 0;

	for (;;) {
		struct maps_line m;

		errno = 0;
		if (getline(&line, &line_sz, f) < 0) {
			/* reading maps of a process that exits midway fails
			 * with ESRCH; of one we may not trace, with EACCES */
			if (ferror(f))
				err = pid_gone_or(errno ? errno : EIO);
			break;
		}
		if (!parse_maps_line(line, &m))
			continue;
		/* anonymous memory, [heap], [stack], [vdso], [vvar]... */
		if (m.ino == 0 || m.path[0] != '/')
			continue;
		err = add_mapping(pid, set, &m);
		if (err)
			break;
	}
	free(line);
	return err;
}

/* The main executable goes first. stat() of /proc/PID/exe follows the
 * magic link to the mapped inode; the device number of maps and stat can
 * differ on overlayfs, so the inode decides, the device only breaks
 * ties. */
static void exe_first(struct proc_mapping *v, int n, const struct stat *exe_st)
{
	int pick = -1, i;

	for (i = 0; i < n; i++) {
		if (v[i].ino != exe_st->st_ino)
			continue;
		if (pick < 0 || v[i].dev == exe_st->st_dev)
			pick = i;
	}
	if (pick > 0) {
		struct proc_mapping t = v[pick];

		memmove(&v[1], &v[0], pick * sizeof(*v));
		v[0] = t;
	}
}

int proc_mappings__read(pid_t pid, struct proc_mapping **out)
{
	struct mapping_set set = {};
	struct stat exe_st;
	char fname[64];
	bool have_exe;
	FILE *f;
	int err;

	if (!out || pid <= 0)
		return -EINVAL;
	*out = NULL;

	snprintf(fname, sizeof(fname), "/proc/%d", (int)pid);
	if (stat(fname, &exe_st))
		return pid_gone_or(errno);
	/* Kernel threads and zombies have no exe; that is not an error. */
	snprintf(fname, sizeof(fname), "/proc/%d/exe", (int)pid);
	have_exe = !stat(fname, &exe_st);

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return pid_gone_or(errno);
	err = read_maps(pid, f, &set);
	fclose(f);
	if (err) {
		proc_mappings__free(set.v, set.n);
		return err;
	}
	if (have_exe && set.n > 1)
		exe_first(set.v, set.n, &exe_st);
	*out = set.v;
	return set.n;
}
