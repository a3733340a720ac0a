/* SPDX-License-Identifier: BSD-2-Clause */
/* framing.c: framed files with CRC-checked chunks (see framing.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <sys/stat.h>
#include <zlib.h>
#include "common/framing.h"
#include "common/io.h"

struct frame_writer {
	int fd;
	bool fsync_each;
	uint64_t bytes;
	int err;
};

struct frame_reader {
	int fd;
	off_t off;
	uint8_t *hdr;
	size_t hdr_len;
	uint8_t *buf;
	size_t cap;
	char error[160];
};

static void put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint32_t chunk_crc(uint32_t type, uint32_t len, const void *buf)
{
	uint8_t tl[8];
	uLong crc = crc32(0L, Z_NULL, 0);

	put_u32(tl, type);
	put_u32(tl + 4, len);
	crc = crc32(crc, tl, sizeof(tl));
	if (len)
		crc = crc32(crc, buf, len);
	return (uint32_t)crc;
}

static int read_full(int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, off + got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += n;
	}
	return (int)got;
}

struct frame_writer *frame_writer__create(const char *path, const char magic[FRAME_MAGIC_LEN],
					  uint32_t version, const void *hdr_payload,
					  size_t hdr_len, const struct frame_writer_opts *opts)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
	mode_t mode = opts && opts->mode ? opts->mode : 0600;
	struct frame_writer *w;
	uint8_t *hdr;
	int err;

	if (hdr_len > FRAME_MAX_CHUNK) {
		errno = EINVAL;
		return NULL;
	}
	flags |= opts && opts->exclusive ? O_EXCL : O_TRUNC;
	w = calloc(1, sizeof(*w));
	if (w)
		w->fd = -1;
	hdr = calloc(1, FRAME_FILE_HDR_MIN + hdr_len);
	if (!w || !hdr) {
		err = -ENOMEM;
		goto err_out;
	}
	w->fsync_each = opts && opts->fsync_each;
	w->fd = open(path, flags, mode);
	if (w->fd < 0) {
		err = -errno;
		goto err_out;
	}
	/* O_CREAT honours the umask; the mode is a promise (traces hold
	 * application pointers), so set it explicitly */
	if (fchmod(w->fd, mode) < 0) {
		err = -errno;
		goto err_out;
	}
	memcpy(hdr, magic, FRAME_MAGIC_LEN);
	put_u32(hdr + 8, version);
	put_u32(hdr + 12, (uint32_t)(FRAME_FILE_HDR_MIN + hdr_len));
	if (hdr_len)
		memcpy(hdr + FRAME_FILE_HDR_MIN, hdr_payload, hdr_len);
	err = pb_write_all(w->fd, hdr, FRAME_FILE_HDR_MIN + hdr_len);
	if (err)
		goto err_out;
	w->bytes = FRAME_FILE_HDR_MIN + hdr_len;
	if (w->fsync_each && fsync(w->fd) < 0) {
		err = -errno;
		goto err_out;
	}
	free(hdr);
	return w;

err_out:
	if (w && w->fd >= 0)
		close(w->fd);
	free(hdr);
	free(w);
	errno = -err;
	return NULL;
}

struct frame_writer *frame_writer__open_append(const char *path,
					       const char magic[FRAME_MAGIC_LEN],
					       uint32_t *version, off_t *good_end,
					       const struct frame_writer_opts *opts)
{
	struct frame_reader *r;
	struct frame_writer *w;
	const void *hdr, *buf;
	uint32_t type;
	size_t hl, len;
	off_t end;
	int ret;

	r = frame_reader__open(path, magic, UINT32_MAX, version, &hdr, &hl);
	if (!r)
		return NULL;
	while ((ret = frame_reader__next(r, &type, &buf, &len)) == 1)
		;
	end = frame_reader__offset(r);
	frame_reader__free(r);
	if (good_end)
		*good_end = end;
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fsync_each = opts && opts->fsync_each;
	w->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (w->fd < 0) {
		int err = errno;

		free(w);
		errno = err;
		return NULL;
	}
	w->bytes = end;
	return w;
}

int frame_writer__append(struct frame_writer *w, uint32_t type, const void *buf, size_t len)
{
	uint8_t stackbuf[4096], *p = stackbuf;
	int err;

	if (w->err)
		return w->err;
	if (len > FRAME_MAX_CHUNK)
		return -E2BIG;
	if (FRAME_CHUNK_HDR + len > sizeof(stackbuf)) {
		p = malloc(FRAME_CHUNK_HDR + len);
		if (!p)
			return -ENOMEM;
	}
	put_u32(p, FRAME_CHUNK_MAGIC);
	put_u32(p + 4, type);
	put_u32(p + 8, (uint32_t)len);
	put_u32(p + 12, chunk_crc(type, (uint32_t)len, buf));
	if (len)
		memcpy(p + FRAME_CHUNK_HDR, buf, len);
	err = pb_write_all(w->fd, p, FRAME_CHUNK_HDR + len);
	if (p != stackbuf)
		free(p);
	if (!err && w->fsync_each && fsync(w->fd) < 0)
		err = -errno;
	if (err) {
		w->err = err;
		return err;
	}
	w->bytes += FRAME_CHUNK_HDR + len;
	return 0;
}

int frame_writer__sync(struct frame_writer *w)
{
	return fsync(w->fd) < 0 ? -errno : 0;
}

int frame_writer__fd(const struct frame_writer *w)
{
	return w->fd;
}

uint64_t frame_writer__bytes(const struct frame_writer *w)
{
	return w->bytes;
}

int frame_writer__close(struct frame_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = w->err;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	free(w);
	return err;
}

struct frame_reader *frame_reader__open(const char *path, const char magic[FRAME_MAGIC_LEN],
					uint32_t max_version, uint32_t *version,
					const void **hdr, size_t *hdr_len)
{
	uint8_t fixed[FRAME_FILE_HDR_MIN];
	struct frame_reader *r;
	struct stat st;
	uint32_t ver, hl;
	int n, err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	/* O_NONBLOCK: a FIFO (or device) put where a framed file belongs
	 * must be refused, not block the reader forever in open(2). The
	 * reader reads with pread(2), so only a regular file can work. */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0) {
		err = -errno;
		goto err_out;
	}
	if (fstat(r->fd, &st) < 0) {
		err = -errno;
		goto err_out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto err_out;
	}
	n = read_full(r->fd, fixed, sizeof(fixed), 0);
	if (n < 0) {
		err = n;
		goto err_out;
	}
	if (n < FRAME_FILE_HDR_MIN || memcmp(fixed, magic, FRAME_MAGIC_LEN)) {
		err = -EBADMSG;
		goto err_out;
	}
	ver = get_u32(fixed + 8);
	hl = get_u32(fixed + 12);
	/* a header longer than the file is bad: say so before allocating
	 * up to FRAME_MAX_CHUNK for it */
	if (hl < FRAME_FILE_HDR_MIN || hl > FRAME_MAX_CHUNK || hl > st.st_size) {
		err = -EBADMSG;
		goto err_out;
	}
	if (ver > max_version) {
		err = -EPROTONOSUPPORT;
		goto err_out;
	}
	r->hdr_len = hl - FRAME_FILE_HDR_MIN;
	r->hdr = calloc(1, r->hdr_len + 1);
	if (!r->hdr) {
		err = -ENOMEM;
		goto err_out;
	}
	n = read_full(r->fd, r->hdr, r->hdr_len, FRAME_FILE_HDR_MIN);
	if (n < 0 || (size_t)n != r->hdr_len) {
		err = n < 0 ? n : -EBADMSG;
		goto err_out;
	}
	r->off = hl;
	if (version)
		*version = ver;
	if (hdr)
		*hdr = r->hdr;
	if (hdr_len)
		*hdr_len = r->hdr_len;
	return r;

err_out:
	frame_reader__free(r);
	errno = -err;
	return NULL;
}

int frame_reader__next(struct frame_reader *r, uint32_t *type, const void **buf, size_t *len)
{
	uint8_t ch[FRAME_CHUNK_HDR];
	struct stat st;
	uint32_t t, l;
	int n;

	n = read_full(r->fd, ch, sizeof(ch), r->off);
	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	if (n < FRAME_CHUNK_HDR) {
		snprintf(r->error, sizeof(r->error),
			 "chunk at offset %lld: torn header (%d of %d bytes)",
			 (long long)r->off, n, FRAME_CHUNK_HDR);
		return -EBADMSG;
	}
	if (get_u32(ch) != FRAME_CHUNK_MAGIC) {
		snprintf(r->error, sizeof(r->error), "chunk at offset %lld: bad chunk magic",
			 (long long)r->off);
		return -EBADMSG;
	}
	t = get_u32(ch + 4);
	l = get_u32(ch + 8);
	if (l > FRAME_MAX_CHUNK) {
		snprintf(r->error, sizeof(r->error), "chunk at offset %lld: length %u too large",
			 (long long)r->off, l);
		return -EBADMSG;
	}
	/* a length past the end of the file is a torn payload: report it
	 * without first allocating up to FRAME_MAX_CHUNK for it (a 32-byte
	 * file must not cost 64 MiB); fstat only when the buffer grows */
	if (l + 1 > r->cap && fstat(r->fd, &st) == 0 &&
	    (off_t)l > st.st_size - r->off - FRAME_CHUNK_HDR) {
		off_t have = st.st_size - r->off - FRAME_CHUNK_HDR;

		snprintf(r->error, sizeof(r->error),
			 "chunk at offset %lld: torn payload (%lld of %u bytes)",
			 (long long)r->off, (long long)(have > 0 ? have : 0), l);
		return -EBADMSG;
	}
	if (l + 1 > r->cap) {
		uint8_t *nb = realloc(r->buf, l + 1);

		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = l + 1;
	}
	n = read_full(r->fd, r->buf, l, r->off + FRAME_CHUNK_HDR);
	if (n < 0)
		return n;
	if ((uint32_t)n < l) {
		snprintf(r->error, sizeof(r->error),
			 "chunk at offset %lld: torn payload (%d of %u bytes)",
			 (long long)r->off, n, l);
		return -EBADMSG;
	}
	if (chunk_crc(t, l, r->buf) != get_u32(ch + 12)) {
		snprintf(r->error, sizeof(r->error), "chunk at offset %lld: CRC mismatch",
			 (long long)r->off);
		return -EBADMSG;
	}
	r->off += FRAME_CHUNK_HDR + l;
	*type = t;
	*buf = r->buf;
	*len = l;
	return 1;
}

off_t frame_reader__offset(const struct frame_reader *r)
{
	return r->off;
}

const char *frame_reader__error(const struct frame_reader *r)
{
	return r->error;
}

void frame_reader__free(struct frame_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->hdr);
	free(r->buf);
	free(r);
}
