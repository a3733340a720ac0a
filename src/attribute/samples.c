/* SPDX-License-Identifier: BSD-2-Clause */
/* samples.c: the sample file of `probity sample` (samples.h,
 * docs/attribution.md "Sample file format"): the shared framing with
 * magic "PBSAMPL\0", a JSON header chunk, a JSON snapshot chunk, runs of
 * fixed-width little-endian records, a JSON end chunk.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "attribute/samples.h"
#include "common/framing.h"

#define SF_BUF_SIZE (64 * 1024)

struct samples_writer {
	struct frame_writer *w;
	uint8_t *buf;
	size_t used;
	int err;
};

static int put_json(struct samples_writer *w, uint32_t type, const json_t *j)
{
	char *txt;
	int err;

	txt = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (!txt)
		return -ENOMEM;
	err = frame_writer__append(w->w, type, txt, strlen(txt));
	free(txt);
	return err;
}

int samples_writer__create(const char *path, const json_t *header, struct samples_writer **out)
{
	struct frame_writer_opts o = { .mode = 0600 };
	struct samples_writer *w;
	int err;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->buf = malloc(SF_BUF_SIZE);
	if (!w->buf) {
		err = -ENOMEM;
		goto fail;
	}
	w->w = frame_writer__create(path, PB_SAMPLES_MAGIC, PB_SAMPLES_VERSION, NULL, 0, &o);
	if (!w->w) {
		err = -errno;
		goto fail;
	}
	err = put_json(w, SF_CHUNK_HEADER, header);
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	frame_writer__close(w->w);
	free(w->buf);
	free(w);
	return err;
}

int samples_writer__snapshot(struct samples_writer *w, const json_t *snapshot)
{
	int err = samples_writer__flush(w);

	return err ?: put_json(w, SF_CHUNK_SNAPSHOT, snapshot);
}

int samples_writer__flush(struct samples_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->used)
		return 0;
	err = frame_writer__append(w->w, SF_CHUNK_RECORDS, w->buf, w->used);
	w->used = 0;
	if (err)
		w->err = err;
	return err;
}

static void *reserve(struct samples_writer *w, size_t size)
{
	void *p;

	if (w->used + size > SF_BUF_SIZE && samples_writer__flush(w))
		return NULL;
	p = w->buf + w->used;
	memset(p, 0, size);
	w->used += size;
	return p;
}

static void put16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

/* common 16-byte head: type, size, cpu, time */
static uint8_t *rec_head(struct samples_writer *w, uint16_t type, size_t size, uint32_t cpu,
			 uint64_t time)
{
	uint8_t *p = reserve(w, size);

	if (!p)
		return NULL;
	put16(p, type);
	put16(p + 2, (uint16_t)size);
	put32(p + 4, cpu);
	put64(p + 8, time);
	return p;
}

int samples_writer__sample(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t ip,
			   uint32_t pid, uint32_t tid, uint8_t mode)
{
	uint8_t *p = rec_head(w, SF_REC_SAMPLE, sizeof(struct sf_sample), cpu, time);

	if (!p)
		return w->err ?: -ENOMEM;
	put64(p + 16, ip);
	put32(p + 24, pid);
	put32(p + 28, tid);
	p[32] = mode;
	return 0;
}

int samples_writer__ksymbol(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t time_max,
			    uint64_t addr, uint32_t len, uint16_t ksym_type, uint16_t flags, const char *name)
{
	size_t nl = strnlen(name ?: "", 255), size = (40 + nl + 1 + 7) & ~(size_t)7;
	uint8_t *p = rec_head(w, SF_REC_KSYMBOL, size, cpu, time);

	if (!p)
		return w->err ?: -ENOMEM;
	put64(p + 16, addr);
	put32(p + 24, len);
	put16(p + 28, ksym_type);
	put16(p + 30, flags);
	put64(p + 32, time_max);
	memcpy(p + 40, name ?: "", nl);
	return 0;
}

int samples_writer__bpf_event(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t time_max,
			      uint16_t event, uint32_t prog_id, const uint8_t tag[8])
{
	uint8_t *p = rec_head(w, SF_REC_BPF_EVENT, sizeof(struct sf_bpf_event), cpu, time);

	if (!p)
		return w->err ?: -ENOMEM;
	put16(p + 16, event);
	put32(p + 20, prog_id);
	memcpy(p + 24, tag, 8);
	put64(p + 32, time_max);
	return 0;
}

int samples_writer__lost(struct samples_writer *w, uint32_t cpu, uint64_t time, uint64_t lost,
			 uint64_t since)
{
	uint8_t *p = rec_head(w, SF_REC_LOST, sizeof(struct sf_lost), cpu, time);

	if (!p)
		return w->err ?: -ENOMEM;
	put64(p + 16, lost);
	put64(p + 24, since);
	return 0;
}

int samples_writer__close(struct samples_writer *w, const json_t *end)
{
	int err, err2;

	if (!w)
		return 0;
	err = samples_writer__flush(w);
	if (!err && end)
		err = put_json(w, SF_CHUNK_END, end);
	if (!err)
		err = frame_writer__sync(w->w);
	err2 = frame_writer__close(w->w);
	free(w->buf);
	free(w);
	return err ?: err2;
}

/* ---------------------------------- reader ---------------------------------- */

/* The record of size bytes at p (its head already checked) into r: 0, 1
 * for a record type of a newer writer (skipped by its size), -EBADMSG.
 * The chunk's offset in the file and the record's in the chunk name it
 * in err. */
static int decode_record(const uint8_t *p, uint16_t size, off_t chunk_off, size_t off,
			 struct sf_record *r, struct pb_errtext *err)
{
	uint16_t type = get16(p);

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->cpu = get32(p + 4);
	r->time = r->time_max = get64(p + 8);
	switch (type) {
	case SF_REC_SAMPLE:
		if (size < sizeof(struct sf_sample))
			goto short_rec;
		r->sample.ip = get64(p + 16);
		r->sample.pid = get32(p + 24);
		r->sample.tid = get32(p + 28);
		r->sample.mode = p[32];
		break;
	case SF_REC_KSYMBOL:
		if (size < 48)	/* 40 + at least the NUL of the name */
			goto short_rec;
		r->ksym.addr = get64(p + 16);
		r->ksym.len = get32(p + 24);
		r->ksym.ksym_type = get16(p + 28);
		r->ksym.flags = get16(p + 30);
		r->time_max = get64(p + 32);
		if (!memchr(p + 40, 0, size - 40)) {
			pb_errtext__set(err, "chunk at offset %lld: ksymbol record at +%zu: name is not NUL-terminated",
					(long long)chunk_off, off);
			return -EBADMSG;
		}
		r->ksym.name = (const char *)p + 40;
		break;
	case SF_REC_BPF_EVENT:
		if (size < sizeof(struct sf_bpf_event))
			goto short_rec;
		r->bpf.event = get16(p + 16);
		r->bpf.prog_id = get32(p + 20);
		memcpy(r->bpf.tag, p + 24, 8);
		r->time_max = get64(p + 32);
		break;
	case SF_REC_LOST:
		if (size < sizeof(struct sf_lost))
			goto short_rec;
		r->lost.lost = get64(p + 16);
		r->lost.since = get64(p + 24);
		break;
	default:	/* a newer record type: skip it by its size */
		return 1;
	}
	if (r->time_max < r->time) {
		pb_errtext__set(err, "chunk at offset %lld: record at +%zu: time_max %llu is before time %llu",
				(long long)chunk_off, off, (unsigned long long)r->time_max,
				(unsigned long long)r->time);
		return -EBADMSG;
	}
	return 0;
short_rec:
	pb_errtext__set(err, "chunk at offset %lld: record type %u at +%zu: size %u is too small",
			(long long)chunk_off, type, off, size);
	return -EBADMSG;
}

static int parse_records(const uint8_t *p, size_t len, off_t chunk_off, const struct samples_read_cb *cb,
			 struct pb_errtext *err)
{
	size_t off = 0;
	int ret;

	while (off < len) {
		struct sf_record r;
		uint16_t size;

		if (len - off < 16) {
			pb_errtext__set(err, "chunk at offset %lld: record at +%zu: %zu bytes left, a record head is 16",
					(long long)chunk_off, off, len - off);
			return -EBADMSG;
		}
		size = get16(p + off + 2);
		if (size < 16 || size % 8 || size > len - off) {
			pb_errtext__set(err, "chunk at offset %lld: record at +%zu: bad size %u (expected a multiple of 8, 16..%zu)",
					(long long)chunk_off, off, size, len - off);
			return -EBADMSG;
		}
		ret = decode_record(p + off, size, chunk_off, off, &r, err);
		if (ret < 0)
			return ret;
		if (!ret && cb->record && (ret = cb->record(cb->ctx, &r)))
			return ret;
		off += size;
	}
	return 0;
}

bool samples__is_sample_file(const char *path)
{
	char m[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool yes;

	if (fd < 0)
		return false;
	yes = read(fd, m, 8) == 8 && !memcmp(m, PB_SAMPLES_MAGIC, 8);
	close(fd);
	return yes;
}

/* Open path as a sample file: magic, version, a file header whose bytes
 * (none defined yet) are all zero. NULL + errno, why in err. */
static struct frame_reader *open_samples(const char *path, struct pb_errtext *err)
{
	struct frame_reader *r;
	const void *hdr;
	uint32_t ver;
	size_t hl, i;

	r = frame_reader__open(path, PB_SAMPLES_MAGIC, PB_SAMPLES_VERSION, &ver, &hdr, &hl);
	if (!r) {
		int e = errno;

		if (e == EBADMSG)
			pb_errtext__set(err, "not a probity sample file (bad magic or file header)");
		else if (e == EPROTONOSUPPORT)
			pb_errtext__set(err, "sample file version is newer than %u", PB_SAMPLES_VERSION);
		else if (e == EINVAL || e == EISDIR)
			pb_errtext__set(err, "not a regular file");
		else
			pb_errtext__set(err, "%s", strerror(e));
		errno = e;
		return NULL;
	}
	for (i = 0; i < hl; i++) {
		if (((const uint8_t *)hdr)[i]) {
			pb_errtext__set(err, "file header byte %zu is not zero (unknown header field)", 16 + i);
			frame_reader__free(r);
			errno = EBADMSG;
			return NULL;
		}
	}
	return r;
}

/* A header, snapshot or end chunk: one JSON object to its callback. */
static int json_chunk(uint32_t type, const void *buf, size_t len, off_t off, bool *seen_header,
		      const struct samples_read_cb *cb, struct pb_errtext *err)
{
	json_error_t jerr;
	json_t *j;
	int ret;

	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		json_decref(j);
		pb_errtext__set(err, "chunk at offset %lld (type %u): expected a JSON object: %s",
				(long long)off, type, jerr.text);
		return -EBADMSG;
	}
	if (type == SF_CHUNK_HEADER) {
		if (*seen_header) {
			json_decref(j);
			pb_errtext__set(err, "chunk at offset %lld: a second header chunk", (long long)off);
			return -EBADMSG;
		}
		*seen_header = true;
		ret = cb->header ? cb->header(cb->ctx, j) : 0;
	} else if (type == SF_CHUNK_SNAPSHOT) {
		ret = cb->snapshot ? cb->snapshot(cb->ctx, j) : 0;
	} else {
		ret = cb->end ? cb->end(cb->ctx, j) : 0;
	}
	json_decref(j);
	return ret;
}

int samples__read(const char *path, const struct samples_read_cb *cb, struct pb_errtext *err)
{
	struct frame_reader *r;
	const void *buf;
	uint32_t type;
	size_t len;
	bool seen_header = false;
	int ret = 0, n;

	r = open_samples(path, err);
	if (!r)
		return -errno;
	while ((n = frame_reader__next(r, &type, &buf, &len)) == 1) {
		off_t off = frame_reader__offset(r) - 16 - (off_t)len;

		if (!seen_header && type != SF_CHUNK_HEADER) {
			pb_errtext__set(err, "chunk at offset %lld: type %u before the header chunk",
					(long long)off, type);
			ret = -EBADMSG;
			goto out;
		}
		if (type == SF_CHUNK_HEADER || type == SF_CHUNK_SNAPSHOT || type == SF_CHUNK_END)
			ret = json_chunk(type, buf, len, off, &seen_header, cb, err);
		else if (type == SF_CHUNK_RECORDS)
			ret = parse_records(buf, len, off, cb, err);
		/* else: unknown chunk kinds of a newer writer */
		if (ret)
			goto out;
	}
	if (n == -EBADMSG) {
		pb_errtext__set(err, "%s", frame_reader__error(r));
		ret = 1;
	} else if (n < 0) {
		pb_errtext__set(err, "%s", strerror(-n));
		ret = n;
	} else if (!seen_header) {
		pb_errtext__set(err, "no header chunk");
		ret = -EBADMSG;
	}
out:
	frame_reader__free(r);
	return ret;
}
