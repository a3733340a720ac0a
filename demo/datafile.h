/* SPDX-License-Identifier: BSD-2-Clause */
/* datafile.h: the on-disk table the buffer pool reads pages from. */
#ifndef DEMO_DATAFILE_H
#define DEMO_DATAFILE_H

#include <stdint.h>

#define DATAFILE_PAGE_SIZE 4096u

/* How page reads bypass the page cache so that every miss is block I/O. */
enum datafile_io {
	DATAFILE_IO_DIRECT,	/* O_DIRECT pread into an aligned buffer */
	DATAFILE_IO_FADVISE,	/* the filesystem refused O_DIRECT: drop the
				 * page with POSIX_FADV_DONTNEED, then pread */
};

/* Every page starts with this header; the checksum covers bytes 16..4095. */
struct datafile_page_hdr {
	uint64_t pageno;
	uint64_t checksum;
};

struct datafile_opts {
	const char *dir;	/* NULL: a fresh directory under $TMPDIR or
				 * /var/tmp, removed by datafile_free() */
	uint64_t pages;		/* file size in pages */
	uint64_t bad_pages;	/* pages 0..bad_pages-1 get a wrong checksum */
	uint64_t seed;
};

struct datafile;

/* Creates and fills the file. NULL and errno on failure; *err (if given)
 * then names the step that failed. */
struct datafile *datafile_new(const struct datafile_opts *opts, const char **err);
/* Closes and deletes the file (and the directory it created). NULL is ok. */
void datafile_free(struct datafile *df);

/* Reads page @pageno into @buf (DATAFILE_PAGE_SIZE bytes, 4 KiB aligned).
 * 0 or -errno. Safe to call from several threads at once. */
int datafile_read(struct datafile *df, uint64_t pageno, void *buf);

/* 0 when @page is page @pageno with a valid checksum, -EBADMSG otherwise;
 * *digest (if given) receives the content checksum. */
int datafile_page_check(const void *page, uint64_t pageno, uint64_t *digest);

uint64_t datafile_pages(const struct datafile *df);
enum datafile_io datafile_io(const struct datafile *df);
const char *datafile_io_name(enum datafile_io io);
const char *datafile_path(const struct datafile *df);
/* "ext4", "xfs", "tmpfs", ... or "fs:0x<magic>". */
const char *datafile_fs_name(const struct datafile *df);
/* 1 when the filesystem keeps data in memory (tmpfs, ramfs): reads then do
 * not reach a block device whatever the I/O mode. */
int datafile_fs_is_memory(const struct datafile *df);

#endif /* DEMO_DATAFILE_H */
