/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * datafile.c: creates the demo's data file and reads its pages past the
 * page cache, so that every buffer-pool miss is real block I/O (which
 * probity can join to the WAIT it explains).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "datafile.h"
#include "rng.h"

#define WRITE_CHUNK_PAGES 256u	/* 1 MiB per write */
#define PAGE_WORDS (DATAFILE_PAGE_SIZE / sizeof(uint64_t))
#define HDR_WORDS (sizeof(struct datafile_page_hdr) / sizeof(uint64_t))

struct datafile {
	int fd;
	enum datafile_io io;
	uint64_t pages;
	long fs_magic;
	int own_dir;
	char dir[PATH_MAX];
	char path[PATH_MAX];
	char fs_name[32];
};

static const struct {
	long magic;
	const char *name;
	int memory;
} fs_table[] = {
	{ 0xef53, "ext4", 0 },
	{ 0x58465342, "xfs", 0 },
	{ 0x9123683e, "btrfs", 0 },
	{ 0xf2f52010, "f2fs", 0 },
	{ 0x2fc12fc1, "zfs", 0 },
	{ 0x794c7630, "overlayfs", 0 },
	{ 0x6969, "nfs", 0 },
	{ 0x01021994, "tmpfs", 1 },
	{ 0x858458f6, "ramfs", 1 },
};

static uint64_t page_checksum(const uint64_t *words)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = HDR_WORDS; i < PAGE_WORDS; i++)
		h = (h ^ words[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static void page_fill(uint64_t *words, uint64_t pageno, uint64_t seed, int bad)
{
	uint64_t s = rng_stream(seed, pageno);
	struct datafile_page_hdr hdr;
	size_t i;

	for (i = HDR_WORDS; i < PAGE_WORDS; i++)
		words[i] = rng_next(&s);
	hdr.pageno = pageno;
	hdr.checksum = page_checksum(words) ^ (bad ? 1 : 0);
	memcpy(words, &hdr, sizeof(hdr));
}

int datafile_page_check(const void *page, uint64_t pageno, uint64_t *digest)
{
	const uint64_t *words = page;
	struct datafile_page_hdr hdr;
	uint64_t sum;

	memcpy(&hdr, page, sizeof(hdr));
	sum = page_checksum(words);
	if (digest)
		*digest = sum;
	if (hdr.pageno != pageno || hdr.checksum != sum)
		return -EBADMSG;
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int set_direct(int fd, int on)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -errno;
	flags = on ? (flags | O_DIRECT) : (flags & ~O_DIRECT);
	if (fcntl(fd, F_SETFL, flags) < 0)
		return -errno;
	return 0;
}

static void identify_fs(struct datafile *df)
{
	struct statfs st;
	size_t i;

	if (fstatfs(df->fd, &st) < 0) {
		snprintf(df->fs_name, sizeof(df->fs_name), "unknown");
		return;
	}
	df->fs_magic = (long)st.f_type;
	for (i = 0; i < sizeof(fs_table) / sizeof(fs_table[0]); i++) {
		if (fs_table[i].magic == df->fs_magic) {
			snprintf(df->fs_name, sizeof(df->fs_name), "%s", fs_table[i].name);
			return;
		}
	}
	snprintf(df->fs_name, sizeof(df->fs_name), "fs:0x%lx", (unsigned long)df->fs_magic);
}

int datafile_fs_is_memory(const struct datafile *df)
{
	size_t i;

	for (i = 0; i < sizeof(fs_table) / sizeof(fs_table[0]); i++)
		if (fs_table[i].magic == df->fs_magic)
			return fs_table[i].memory;
	return 0;
}

/* Writes every page; O_DIRECT when the file is in that mode, falling back
 * (once, on EINVAL) when the filesystem accepts the flag but not the I/O. */
static int fill_file(struct datafile *df, uint64_t bad_pages, uint64_t seed)
{
	size_t chunk = (size_t)WRITE_CHUNK_PAGES * DATAFILE_PAGE_SIZE;
	uint64_t first, n, i;
	void *buf = NULL;
	int err;

	err = posix_memalign(&buf, DATAFILE_PAGE_SIZE, chunk);
	if (err)
		return -err;
	for (first = 0; first < df->pages; first += n) {
		n = df->pages - first;
		if (n > WRITE_CHUNK_PAGES)
			n = WRITE_CHUNK_PAGES;
		for (i = 0; i < n; i++)
			page_fill((uint64_t *)((char *)buf + i * DATAFILE_PAGE_SIZE),
				  first + i, seed, first + i < bad_pages);
		err = pwrite_full(df->fd, buf, (size_t)n * DATAFILE_PAGE_SIZE,
				  (off_t)(first * DATAFILE_PAGE_SIZE));
		if (err == -EINVAL && df->io == DATAFILE_IO_DIRECT) {
			err = set_direct(df->fd, 0);
			if (err)
				break;
			df->io = DATAFILE_IO_FADVISE;
			n = 0; /* write this chunk again */
			continue;
		}
		if (err)
			break;
	}
	free(buf);
	if (err)
		return err;
	if (fdatasync(df->fd) < 0)
		return -errno;
	/* Written through the cache (fallback mode): drop it, so reads start cold. */
	err = posix_fadvise(df->fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err)
		return -err;
	/* No readahead: one miss reads one page. */
	err = posix_fadvise(df->fd, 0, 0, POSIX_FADV_RANDOM);
	return -err;
}

/* Reads the last page back (never a bad one); a filesystem may accept
 * O_DIRECT writes yet refuse O_DIRECT reads of this size. */
static int verify_read(struct datafile *df)
{
	uint64_t last = df->pages - 1;
	void *buf = NULL;
	int err;

	err = posix_memalign(&buf, DATAFILE_PAGE_SIZE, DATAFILE_PAGE_SIZE);
	if (err)
		return -err;
	err = datafile_read(df, last, buf);
	if (err == -EINVAL && df->io == DATAFILE_IO_DIRECT) {
		err = set_direct(df->fd, 0);
		if (!err) {
			df->io = DATAFILE_IO_FADVISE;
			err = datafile_read(df, last, buf);
		}
	}
	if (!err)
		err = datafile_page_check(buf, last, NULL);
	free(buf);
	return err;
}

struct datafile *datafile_new(const struct datafile_opts *opts, const char **errstep)
{
	struct datafile *df;
	const char *step = "allocate";
	int err = 0, n;

	if (!opts || opts->pages == 0 || opts->bad_pages >= opts->pages) {
		if (errstep)
			*errstep = "check options";
		errno = EINVAL;
		return NULL;
	}
	df = calloc(1, sizeof(*df));
	if (!df) {
		err = -errno;
		goto fail;
	}
	df->fd = -1;
	df->pages = opts->pages;
	if (opts->dir) {
		n = snprintf(df->dir, sizeof(df->dir), "%s", opts->dir);
	} else {
		const char *base = getenv("TMPDIR");

		/* /var/tmp rather than /tmp: /tmp is often tmpfs (no block I/O). */
		if (!base || !*base)
			base = "/var/tmp";
		n = snprintf(df->dir, sizeof(df->dir), "%s/probity-demo.XXXXXX", base);
	}
	step = "build the data path";
	if (n < 0 || (size_t)n >= sizeof(df->dir)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	if (!opts->dir) {
		step = "create a temporary directory";
		if (!mkdtemp(df->dir)) {
			err = -errno;
			goto fail;
		}
		df->own_dir = 1;
	}
	step = "build the data path";
	n = snprintf(df->path, sizeof(df->path), "%s/probity-demo.%ld.dat", df->dir,
		     (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(df->path)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	step = "create the data file";
	df->fd = open(df->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (df->fd < 0) {
		err = -errno;
		goto fail;
	}
	identify_fs(df);
	step = "enable O_DIRECT";
	err = set_direct(df->fd, 1);
	if (err == -EINVAL) {
		df->io = DATAFILE_IO_FADVISE;
		err = 0;
	} else if (err) {
		goto fail;
	} else {
		df->io = DATAFILE_IO_DIRECT;
	}
	step = "write the data file";
	err = fill_file(df, opts->bad_pages, opts->seed);
	if (err)
		goto fail;
	step = "read the data file back";
	err = verify_read(df);
	if (err)
		goto fail;
	return df;
fail:
	if (errstep)
		*errstep = step;
	datafile_free(df);
	errno = -err;
	return NULL;
}

void datafile_free(struct datafile *df)
{
	if (!df)
		return;
	if (df->fd >= 0) {
		if (close(df->fd) < 0)
			fprintf(stderr, "probity-demo: close %s: %s\n", df->path, strerror(errno));
		if (unlink(df->path) < 0)
			fprintf(stderr, "probity-demo: unlink %s: %s\n", df->path, strerror(errno));
	}
	if (df->own_dir && rmdir(df->dir) < 0)
		fprintf(stderr, "probity-demo: rmdir %s: %s\n", df->dir, strerror(errno));
	free(df);
}

int datafile_read(struct datafile *df, uint64_t pageno, void *buf)
{
	off_t off = (off_t)(pageno * DATAFILE_PAGE_SIZE);
	ssize_t n;
	int err;

	if (pageno >= df->pages)
		return -EINVAL;
	if (df->io == DATAFILE_IO_FADVISE) {
		err = posix_fadvise(df->fd, off, DATAFILE_PAGE_SIZE, POSIX_FADV_DONTNEED);
		if (err)
			return -err;
	}
	do {
		n = pread(df->fd, buf, DATAFILE_PAGE_SIZE, off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != DATAFILE_PAGE_SIZE)
		return -EIO;
	return 0;
}

uint64_t datafile_pages(const struct datafile *df)
{
	return df->pages;
}

enum datafile_io datafile_io(const struct datafile *df)
{
	return df->io;
}

const char *datafile_io_name(enum datafile_io io)
{
	return io == DATAFILE_IO_DIRECT ? "O_DIRECT" : "fadvise";
}

const char *datafile_path(const struct datafile *df)
{
	return df->path;
}

const char *datafile_fs_name(const struct datafile *df)
{
	return df->fs_name;
}
