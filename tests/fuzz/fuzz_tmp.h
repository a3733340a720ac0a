/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_tmp.h: scratch directories for fuzz targets that need real files:
 * made under /dev/shm when writable, else /tmp, and removed after every
 * input. The code under test fsyncs (framing.c, store.c, group.c); on
 * tmpfs fsync/syncfs return at once (the kernel's noop_fsync), so the
 * targets pay nothing for durability while the calls and their error
 * paths still run as in production: no fuzz-only way to skip them is
 * needed (perf of fuzz_store and fuzz_lifelog: sync calls < 0.1 %). */
#ifndef PROBITY_FUZZ_TMP_H
#define PROBITY_FUZZ_TMP_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static char base[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	return 0;
}

/* Remove everything below the directory fd dfd, then close it. getdents64
 * into a stack buffer, not nftw/opendir: glibc's opendir mallocs a 32 KB
 * buffer per directory, and under ASan (quarantine, 0xbe fill, fresh
 * pages) removing a store's few directories that way was ~20 % of a
 * fuzz_store run (perf). Depth-limited like the stores the targets build.
 * keep_dirs: a store's objects/ and tmp/ right in dfd are emptied, kept. */
static void fuzz_tmp_clear(int dfd, int depth, bool keep_dirs)
{
	char buf[4096];
	long n, off;

	while (depth < 16 && (n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;) {
			struct fuzz_dirent {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (struct fuzz_dirent *)(buf + off);
			int sub;

			off += de->reclen;
			if (!strcmp(de->name, ".") || !strcmp(de->name, ".."))
				continue;
			if (!unlinkat(dfd, de->name, 0))
				continue;
			sub = openat(dfd, de->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				fuzz_tmp_clear(sub, depth + 1, false);
			if (!keep_dirs || (strcmp(de->name, "objects") && strcmp(de->name, "tmp")))
				unlinkat(dfd, de->name, AT_REMOVEDIR);
		}
	}
	close(dfd);
}

/* remove dir and everything below it */
static void fuzz_tmp_remove(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		fuzz_tmp_clear(fd, 0, false);
	rmdir(dir);
}

/* One scratch directory per process, for a target that builds a store
 * per input (fuzz_lifelog): fuzz_tmp_scratch() makes it on the first call (removed at
 * exit), fuzz_tmp_reset() empties it between inputs. A store's objects/
 * and tmp/ directly in it are emptied but kept (any other directory
 * goes), so
 * the next pb_store__open finds them as a reopened store does, and
 * everything below them is removed: each input starts from the same
 * empty store without mkdtemp + mkdir x3 + rmdir x3 per input (perf of
 * fuzz_lifelog without ASan: ~14 % of a run). The code under test still
 * opens its store handle fresh per input, so no cache carries over. */
static char scratch[128];

static void fuzz_tmp_atexit(void)
{
	fuzz_tmp_remove(scratch);
}

static const char *fuzz_tmp_scratch(const char *name)
{
	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "%s/%s.XXXXXX", base, name);
		if (!mkdtemp(scratch)) {
			scratch[0] = 0;
			return NULL;
		}
		atexit(fuzz_tmp_atexit);
	}
	return scratch;
}

static void fuzz_tmp_reset(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		fuzz_tmp_clear(fd, 0, true);
}

#endif
