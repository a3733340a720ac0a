/* SPDX-License-Identifier: BSD-2-Clause */
/* proc_maps.h: the files a running process has mapped, with paths that
 * open the very inode it runs (proc_maps.c).
 */
#ifndef PROBITY_ELF_PROC_MAPS_H
#define PROBITY_ELF_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_mapping {
	char *path;		/* openable path: /proc/PID/root/<map_path>, or
				 * /proc/PID/map_files/<start>-<end> for a
				 * deleted or replaced file */
	char *map_path;		/* path as printed in /proc/PID/maps, without
				 * the " (deleted)" suffix */
	uint64_t start, end, pgoff;
	bool exec;
	bool deleted;		/* maps says "(deleted)": the file was unlinked
				 * or replaced; path then goes through
				 * /proc/PID/map_files when that is readable */
	dev_t dev;
	ino_t ino;
};

/* File-backed mappings of a process, one entry per distinct file (the
 * first executable mapping, else the first mapping). Returns count or -errno
 * (-ESRCH when the process is gone, -EACCES, ...). Caller frees with
 * proc_mappings__free. The main executable is resolved via /proc/PID/exe
 * and returned first. */
int proc_mappings__read(pid_t pid, struct proc_mapping **out);
void proc_mappings__free(struct proc_mapping *maps, int n);

#endif
