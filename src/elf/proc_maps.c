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

#include "elf/elf_image.h"

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

int proc_mappings__read(pid_t pid, struct proc_mapping **out)
{
	struct proc_mapping *v = NULL;
	char fname[64], *line = NULL;
	int n = 0, cap = 0, i, err = 0;
	size_t line_sz = 0;
	struct stat exe_st;
	bool have_exe;
	FILE *f = NULL;

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

	for (;;) {
		struct proc_mapping *p = NULL;
		struct maps_line m;
		size_t len;
		bool deleted = false;
		dev_t dev;

		errno = 0;
		if (getline(&line, &line_sz, f) < 0) {
			/* reading maps of a process that exits midway fails
			 * with ESRCH; of one we may not trace, with EACCES */
			if (ferror(f)) {
				err = pid_gone_or(errno ? errno : EIO);
				goto out;
			}
			break;
		}
		if (!parse_maps_line(line, &m))
			continue;
		/* anonymous memory, [heap], [stack], [vdso], [vvar]... */
		if (m.ino == 0 || m.path[0] != '/')
			continue;
		len = strlen(m.path);
		if (len > strlen(DELETED_SUFFIX) &&
		    !strcmp(m.path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
			m.path[len - strlen(DELETED_SUFFIX)] = '\0';
			deleted = true;
		}
		dev = makedev(m.major, m.minor);
		for (i = 0; i < n; i++)
			if (v[i].dev == dev && v[i].ino == (ino_t)m.ino)
				break;
		if (i < n) {
			/* keep the first mapping, unless this is the first
			 * executable one */
			if (v[i].exec || !m.exec)
				continue;
			p = &v[i];
			free(p->path);
			p->path = NULL;
		} else {
			if (n == cap) {
				int ncap = cap ? cap * 2 : 16;
				struct proc_mapping *t = realloc(v, ncap * sizeof(*t));

				if (!t) {
					err = -ENOMEM;
					goto out;
				}
				v = t;
				cap = ncap;
			}
			p = &v[n++];
			memset(p, 0, sizeof(*p));
			p->map_path = strdup(m.path);
			if (!p->map_path) {
				err = -ENOMEM;
				goto out;
			}
		}
		p->start = m.start;
		p->end = m.end;
		p->pgoff = m.pgoff;
		p->exec = m.exec;
		p->deleted = deleted;
		p->dev = dev;
		p->ino = (ino_t)m.ino;
		p->path = resolve_path(pid, &m, deleted);
		if (!p->path) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* The main executable goes first. stat() of /proc/PID/exe follows
	 * the magic link to the mapped inode; the device number of maps and
	 * stat can differ on overlayfs, so the inode decides, the device
	 * only breaks ties. */
	if (have_exe && n > 1) {
		int pick = -1;

		for (i = 0; i < n; i++) {
			if (v[i].ino != exe_st.st_ino)
				continue;
			if (pick < 0 || v[i].dev == exe_st.st_dev)
				pick = i;
		}
		if (pick > 0) {
			struct proc_mapping t = v[pick];

			memmove(&v[1], &v[0], pick * sizeof(*v));
			v[0] = t;
		}
	}

out:
	free(line);
	if (f)
		fclose(f);
	if (err) {
		proc_mappings__free(v, n);
		return err;
	}
	*out = v;
	return n;
}
