/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_tmp.h: scratch directories for fuzz targets that need real files:
 * made under /dev/shm when writable (the code under test fsyncs), else
 * /tmp, and removed after every input. */
#ifndef PROBITY_FUZZ_TMP_H
#define PROBITY_FUZZ_TMP_H

#include <ftw.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>

static char base[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* remove dir and everything below it */
static void fuzz_tmp_remove(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
