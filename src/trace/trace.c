/* SPDX-License-Identifier: BSD-2-Clause */
/* trace.c: trace file writer and reader (see trace.h, docs/trace-format.md).
 * Everything on disk goes through common/framing.c; this file only lays
 * out the header and chunk payloads. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "trace/trace.h"
#include "trace/trace_int.h"
#include "common/framing.h"
#include "contract/plan.h"

/* docs/trace-format.md gives these sizes: keep them */
_Static_assert(sizeof(struct trace_header) == 616, "trace_header layout");
_Static_assert(sizeof(struct trace_plan_hdr) == 16, "trace_plan_hdr layout");
_Static_assert(sizeof(struct trace_plan_desc) == 16, "trace_plan_desc layout");
_Static_assert(sizeof(struct trace_plan_site) == 40, "trace_plan_site layout");
_Static_assert(sizeof(struct trace_snap_hdr) == 32, "trace_snap_hdr layout");
_Static_assert(sizeof(struct trace_end) == 40, "trace_end layout");
_Static_assert(sizeof(struct pb_rec_hdr) == 32, "pb_rec_hdr layout");
_Static_assert(sizeof(struct pb_rec_resource) == 96, "pb_rec_resource layout");
_Static_assert(sizeof(struct pb_rec_sched) == 48, "pb_rec_sched layout");
_Static_assert(sizeof(struct pb_rec_wakeup) == 40, "pb_rec_wakeup layout");
_Static_assert(sizeof(struct pb_rec_block) == 64, "pb_rec_block layout");
_Static_assert(sizeof(struct pb_rec_fault) == 56, "pb_rec_fault layout");
_Static_assert(sizeof(struct pb_rec_exit) == 40, "pb_rec_exit layout");
_Static_assert(sizeof(struct pb_rec_violation) == 96, "pb_rec_violation layout");
_Static_assert(sizeof(struct pb_desc_stats) ==
		       64 + 8 * PB_HIST_BUCKETS + 56 + 8 * PB_INV_SLOTS + 24 * PB_FX_SLOTS,
	       "pb_desc_stats layout");
_Static_assert(PB_INV__COUNT <= PB_INV_SLOTS, "violation slots");
_Static_assert(sizeof(struct pb_res_stats) == 96 + 24 * PB_IDLE_SLOTS, "pb_res_stats layout");	/* 72 before v5, 96 before v6 */

#define TRACE_REC_BUF	(256u << 10)	/* records per chunk: at most this many bytes */

struct trace_writer {
	struct frame_writer *fw;
	uint8_t *buf;
	size_t buf_len;
	uint64_t records;
	bool ended;
	int err;
};

struct trace_writer *trace_writer__create(const char *path, const struct trace_header *hdr)
{
	struct frame_writer_opts fo = { .mode = 0600 };
	struct trace_writer *w;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->buf = malloc(TRACE_REC_BUF);
	if (!w->buf)
		goto err;
	w->fw = frame_writer__create(path, TRACE_MAGIC, TRACE_VERSION, hdr, sizeof(*hdr), &fo);
	if (!w->fw)
		goto err;
	return w;
err:
	{
		int e = errno ? errno : ENOMEM;

		free(w->buf);
		free(w);
		errno = e;
	}
	return NULL;
}

static int append(struct trace_writer *w, uint32_t type, const void *buf, size_t len)
{
	int err = frame_writer__append(w->fw, type, buf, len);

	if (err && !w->err)
		w->err = err;
	return err;
}

int trace_writer__manifest(struct trace_writer *w, const void *bytes, size_t len)
{
	return append(w, TRACE_CHUNK_MANIFEST, bytes, len);
}

int trace_writer__plan(struct trace_writer *w, const struct plan *p)
{
	struct trace_plan_hdr *h;
	struct trace_plan_desc *d;
	struct trace_plan_site *s;
	size_t len, i;
	uint8_t *buf;
	int err;

	len = sizeof(*h) + p->n_descriptors * sizeof(*d) + p->n_sites * sizeof(*s);
	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	h = (void *)buf;
	d = (void *)(h + 1);
	s = (void *)(d + p->n_descriptors);
	h->n_descriptors = (uint32_t)p->n_descriptors;
	h->n_sites = (uint32_t)p->n_sites;
	h->n_resources = (uint32_t)p->manifest->n_resources;
	for (i = 0; i < p->n_descriptors; i++) {
		d[i].event = (uint32_t)p->descriptors[i].event;
		d[i].confidence = (uint8_t)p->descriptors[i].confidence;
		d[i].status = (uint8_t)p->descriptors[i].status;
		d[i].n_sites = (uint32_t)p->descriptors[i].n_sites;
	}
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *ps = &p->sites[i];

		s[i].descriptor = (uint32_t)ps->descriptor;
		s[i].target = (uint32_t)ps->target;
		s[i].flags = (ps->retprobe ? TRACE_SITE_RETURN : 0) |
			     (ps->usdt ? TRACE_SITE_USDT : 0) |
			     ((ps->cookie & PLAN_COOKIE_STASH) ? TRACE_SITE_STASH : 0);
		s[i].vaddr = ps->vaddr;
		s[i].file_offset = ps->file_offset;
		s[i].cookie = ps->cookie;
	}
	err = append(w, TRACE_CHUNK_PLAN, buf, len);
	free(buf);
	return err;
}

int trace_writer__flush(struct trace_writer *w)
{
	int err;

	if (!w->buf_len)
		return 0;
	err = append(w, TRACE_CHUNK_RECORDS, w->buf, w->buf_len);
	w->buf_len = 0;
	return err;
}

int trace_writer__record(struct trace_writer *w, const void *rec, size_t len)
{
	size_t padded = (len + 7) & ~(size_t)7;
	int err;

	if (len < sizeof(struct pb_rec_hdr) || padded > TRACE_REC_BUF)
		return -EINVAL;
	if (w->buf_len + padded > TRACE_REC_BUF) {
		err = trace_writer__flush(w);
		if (err)
			return err;
	}
	memcpy(w->buf + w->buf_len, rec, len);
	memset(w->buf + w->buf_len + len, 0, padded - len);
	/* hdr.size is the 8-aligned slot size, so the reader can walk records */
	((struct pb_rec_hdr *)(w->buf + w->buf_len))->size = (uint32_t)padded;
	w->buf_len += padded;
	w->records++;
	return 0;
}

int trace_writer__snapshot(struct trace_writer *w, const struct trace_snapshot *s)
{
	struct trace_snap_hdr h = {
		.ts_ns = s->ts_ns, .n_desc = s->n_desc, .n_res = s->n_res,
		.desc_size = sizeof(struct pb_desc_stats),
		.res_size = sizeof(struct pb_res_stats),
		.engine_size = sizeof(struct pb_engine_stats),
	};
	size_t dl = (size_t)s->n_desc * h.desc_size, rl = (size_t)s->n_res * h.res_size;
	size_t len = sizeof(h) + dl + rl + h.engine_size;
	uint8_t *buf, *p;
	int err;

	/* records before the snapshot stay before it in the file */
	err = trace_writer__flush(w);
	if (err)
		return err;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	p = buf;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	if (dl)
		memcpy(p, s->desc, dl);
	p += dl;
	if (rl)
		memcpy(p, s->res, rl);
	p += rl;
	memcpy(p, &s->engine, h.engine_size);
	err = append(w, TRACE_CHUNK_SNAPSHOT, buf, len);
	free(buf);
	return err;
}

int trace_writer__note(struct trace_writer *w, const char *text)
{
	int err = trace_writer__flush(w);

	if (err)
		return err;
	return append(w, TRACE_CHUNK_NOTE, text, strlen(text));
}

/* A table chunk: hdr {n, entry_size}, then n entries. */
static int write_table(struct trace_writer *w, uint32_t type, const void *p, size_t n, size_t esz)
{
	struct trace_procs_hdr h = { .n = (uint32_t)n, .entry_size = (uint32_t)esz };
	size_t len = sizeof(h) + n * esz;
	uint8_t *buf;
	int err;

	if (!n)
		return 0;
	err = trace_writer__flush(w);
	if (err)
		return err;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), p, n * esz);
	err = append(w, type, buf, len);
	free(buf);
	return err;
}

int trace_writer__procs(struct trace_writer *w, const struct trace_proc *p, size_t n)
{
	return write_table(w, TRACE_CHUNK_PROCS, p, n, sizeof(*p));
}

int trace_writer__maps(struct trace_writer *w, const struct trace_map *m, size_t n)
{
	_Static_assert(sizeof(struct trace_maps_hdr) == sizeof(struct trace_procs_hdr), "table hdr");
	return write_table(w, TRACE_CHUNK_MAPS, m, n, sizeof(*m));
}

int trace_writer__cost(struct trace_writer *w, const struct trace_cost_hdr *h,
		       const struct trace_cost_class *cls, const struct trace_cost_desc *desc)
{
	void *buf = NULL;
	size_t len;
	int err = trace_writer__flush(w);

	if (!err)
		err = trace_cost__encode(h, cls, desc, &buf, &len);
	if (!err)
		err = append(w, TRACE_CHUNK_COST, buf, len);
	free(buf);
	return err;
}

int trace_writer__end(struct trace_writer *w, const struct trace_end *e)
{
	int err = trace_writer__flush(w);

	if (err)
		return err;
	err = append(w, TRACE_CHUNK_END, e, sizeof(*e));
	if (!err)
		w->ended = true;
	return err;
}

uint64_t trace_writer__records(const struct trace_writer *w)
{
	return w ? w->records : 0;
}

uint64_t trace_writer__bytes(const struct trace_writer *w)
{
	return w ? frame_writer__bytes(w->fw) + w->buf_len : 0;
}

int trace_writer__close(struct trace_writer *w)
{
	int err, cerr;

	if (!w)
		return 0;
	err = w->ended ? 0 : trace_writer__flush(w);
	cerr = frame_writer__close(w->fw);
	if (!err)
		err = w->err ? w->err : cerr;
	free(w->buf);
	free(w);
	return err;
}

/* ---- reader ---- */

struct trace_reader {
	char *path;
	struct frame_reader *fr;
	struct trace_header hdr;
	uint8_t *manifest;
	size_t manifest_len;
	struct trace_plan_desc *descs;
	size_t n_descs;
	struct trace_plan_site *sites;
	size_t n_sites;
	size_t n_resources;
	/* current records chunk */
	const uint8_t *chunk;
	size_t chunk_len, chunk_off;
	/* snapshot arrays (aligned copies) */
	struct pb_desc_stats *snap_desc;
	struct pb_res_stats *snap_res;
	char *note;
	struct trace_proc *procs;	/* the last TRACE_CHUNK_PROCS read */
	struct trace_map *maps;		/* the last TRACE_CHUNK_MAPS read */
	struct trace_cost_desc *cost_desc;	/* the last TRACE_CHUNK_COST read */
	bool ended;
	char *cut;
	uint64_t unknown_chunks;	/* skipped: type not known to this reader */
	uint32_t unknown_types[TRACE_UNKNOWN_TYPES_KEPT];
};

static int reader_start(struct trace_reader *r)
{
	const void *hdr, *buf;
	size_t hdr_len, len, i;
	uint32_t version, type;
	int ret;

	r->fr = frame_reader__open(r->path, TRACE_MAGIC, TRACE_VERSION, &version, &hdr, &hdr_len);
	if (!r->fr)
		return -errno;
	if (hdr_len < sizeof(r->hdr))
		return -EBADMSG;
	for (i = sizeof(r->hdr); i < hdr_len; i++)
		if (((const uint8_t *)hdr)[i])
			return -EBADMSG;	/* unknown non-zero header bytes */
	memcpy(&r->hdr, hdr, sizeof(r->hdr));
	/* the manifest chunk, then the plan chunk */
	ret = frame_reader__next(r->fr, &type, &buf, &len);
	if (ret != 1 || type != TRACE_CHUNK_MANIFEST)
		return ret < 0 && ret != -EBADMSG ? ret : -EBADMSG;
	if (!r->manifest) {
		r->manifest = malloc(len + 1);
		if (!r->manifest)
			return -ENOMEM;
		memcpy(r->manifest, buf, len);
		r->manifest[len] = 0;
		r->manifest_len = len;
	}
	ret = frame_reader__next(r->fr, &type, &buf, &len);
	if (ret != 1 || type != TRACE_CHUNK_PLAN)
		return ret < 0 && ret != -EBADMSG ? ret : -EBADMSG;
	if (!r->descs) {
		const struct trace_plan_hdr *ph = buf;

		/* n_resources sizes an allocation but not the chunk: bound it
		 * as the engine does (a CRC-valid plan saying 4 G resources
		 * made the reader calloc 4 G entries) */
		if (len < sizeof(*ph) || ph->n_resources > PB_MAX_RESOURCES ||
		    len != sizeof(*ph) + (size_t)ph->n_descriptors * sizeof(*r->descs) +
			   (size_t)ph->n_sites * sizeof(*r->sites))
			return -EBADMSG;
		r->n_descs = ph->n_descriptors;
		r->n_sites = ph->n_sites;
		r->n_resources = ph->n_resources;
		r->descs = calloc(r->n_descs + 1, sizeof(*r->descs));
		r->sites = calloc(r->n_sites + 1, sizeof(*r->sites));
		r->snap_desc = calloc(r->n_descs + 1, sizeof(*r->snap_desc));
		r->snap_res = calloc(r->n_resources + 1, sizeof(*r->snap_res));
		if (!r->descs || !r->sites || !r->snap_desc || !r->snap_res)
			return -ENOMEM;
		memcpy(r->descs, ph + 1, r->n_descs * sizeof(*r->descs));
		memcpy(r->sites, (const uint8_t *)(ph + 1) + r->n_descs * sizeof(*r->descs),
		       r->n_sites * sizeof(*r->sites));
	}
	return 0;
}

struct trace_reader *trace_reader__open(const char *path)
{
	struct trace_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->path = strdup(path);
	if (!r->path) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	err = reader_start(r);
	if (err) {
		trace_reader__free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

int trace_reader__rewind(struct trace_reader *r)
{
	frame_reader__free(r->fr);
	r->fr = NULL;
	r->chunk = NULL;
	r->chunk_len = r->chunk_off = 0;
	r->ended = false;
	free(r->cut);
	r->cut = NULL;
	return reader_start(r);
}

const struct trace_header *trace_reader__header(const struct trace_reader *r)
{
	return &r->hdr;
}

const void *trace_reader__manifest(const struct trace_reader *r, size_t *len)
{
	*len = r->manifest_len;
	return r->manifest;
}

const struct trace_plan_desc *trace_reader__descriptors(const struct trace_reader *r, size_t *n)
{
	*n = r->n_descs;
	return r->descs;
}

const struct trace_plan_site *trace_reader__sites(const struct trace_reader *r, size_t *n)
{
	*n = r->n_sites;
	return r->sites;
}

size_t trace_reader__n_resources(const struct trace_reader *r)
{
	return r->n_resources;
}

static int read_snapshot(struct trace_reader *r, const uint8_t *buf, size_t len,
			 struct trace_item *it)
{
	struct trace_snap_hdr h;
	size_t i, need, dsz, rsz, esz;
	const uint8_t *p;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	need = sizeof(h) + (size_t)h.n_desc * h.desc_size + (size_t)h.n_res * h.res_size +
	       h.engine_size;
	if (need != len || h.n_desc > r->n_descs || h.n_res > r->n_resources)
		return -EBADMSG;
	dsz = h.desc_size < sizeof(*r->snap_desc) ? h.desc_size : sizeof(*r->snap_desc);
	rsz = h.res_size < sizeof(*r->snap_res) ? h.res_size : sizeof(*r->snap_res);
	esz = h.engine_size < sizeof(it->snap.engine) ? h.engine_size : sizeof(it->snap.engine);
	memset(r->snap_desc, 0, r->n_descs * sizeof(*r->snap_desc));
	memset(r->snap_res, 0, r->n_resources * sizeof(*r->snap_res));
	memset(&it->snap.engine, 0, sizeof(it->snap.engine));
	p = buf + sizeof(h);
	for (i = 0; i < h.n_desc; i++, p += h.desc_size)
		memcpy(&r->snap_desc[i], p, dsz);
	for (i = 0; i < h.n_res; i++, p += h.res_size)
		memcpy(&r->snap_res[i], p, rsz);
	memcpy(&it->snap.engine, p, esz);
	it->snap.ts_ns = h.ts_ns;
	it->snap.n_desc = h.n_desc;
	it->snap.n_res = h.n_res;
	it->snap.desc = r->snap_desc;
	it->snap.res = r->snap_res;
	return 0;
}

/* A table chunk (procs, maps) into *out: n entries of esz bytes, each
 * copied at the writer's entry size, missing tail bytes zero. */
static int read_table(const uint8_t *buf, size_t len, size_t esz, void **out, size_t *n)
{
	struct trace_procs_hdr h;
	size_t i, csz;
	uint8_t *t;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (!h.entry_size || h.entry_size > 4096 || (len - sizeof(h)) / h.entry_size < h.n ||
	    (len - sizeof(h)) != (size_t)h.n * h.entry_size)
		return -EBADMSG;
	t = calloc(h.n + 1, esz);
	if (!t)
		return -ENOMEM;
	csz = h.entry_size < esz ? h.entry_size : esz;
	for (i = 0; i < h.n; i++)
		memcpy(t + i * esz, buf + sizeof(h) + i * h.entry_size, csz);
	free(*out);
	*out = t;
	*n = h.n;
	return 0;
}

static int read_procs(struct trace_reader *r, const uint8_t *buf, size_t len,
		      struct trace_item *it)
{
	size_t i;
	int err = read_table(buf, len, sizeof(*r->procs), (void **)&r->procs, &it->n_procs);

	if (err)
		return err;
	for (i = 0; i < it->n_procs; i++)
		r->procs[i].comm[sizeof(r->procs[i].comm) - 1] = 0;
	it->procs = r->procs;
	return 0;
}

static int read_maps(struct trace_reader *r, const uint8_t *buf, size_t len,
		     struct trace_item *it)
{
	size_t i;
	int err = read_table(buf, len, sizeof(*r->maps), (void **)&r->maps, &it->n_maps);

	if (err)
		return err;
	for (i = 0; i < it->n_maps; i++) {
		r->maps[i].path[TRACE_MAP_PATH - 1] = 0;
		if (r->maps[i].build_id_len > sizeof(r->maps[i].build_id))
			r->maps[i].build_id_len = 0;
	}
	it->maps = r->maps;
	return 0;
}

static void set_cut(struct trace_reader *r, const char *why)
{
	if (!r->cut)
		r->cut = strdup(why);
}

/* the next record of the current records chunk: 1, or 0 when the chunk is
 * used up (or malformed: then the reader is cut there) */
static int next_in_chunk(struct trace_reader *r, struct trace_item *it)
{
	const struct pb_rec_hdr *h;

	if (!r->chunk || r->chunk_off + sizeof(struct pb_rec_hdr) > r->chunk_len)
		return 0;
	h = (const void *)(r->chunk + r->chunk_off);
	if (h->size < sizeof(*h) || (h->size & 7) || h->size > r->chunk_len - r->chunk_off) {
		set_cut(r, "malformed record size inside a records chunk");
		return 0;
	}
	r->chunk_off += h->size;
	it->type = TRACE_ITEM_RECORD;
	it->rec = h;
	it->rec_len = h->size;
	return 1;
}

/* Over 80 lines because it is one flat switch over the chunk types, each
 * case a decode call and its cut message. */
int trace_reader__next(struct trace_reader *r, struct trace_item *it)
{
	const void *buf;
	uint32_t type;
	size_t len;
	int ret;

	memset(it, 0, sizeof(*it));
	for (;;) {
		if (next_in_chunk(r, it))
			return 1;
		r->chunk = NULL;
		if (r->ended || !r->fr)
			return 0;
		ret = frame_reader__next(r->fr, &type, &buf, &len);
		if (ret == 0) {
			if (!r->ended)
				set_cut(r, "no end chunk: the recording was cut short");
			return 0;
		}
		if (ret == -EBADMSG) {
			set_cut(r, frame_reader__error(r->fr));
			frame_reader__free(r->fr);
			r->fr = NULL;
			return 0;
		}
		if (ret < 0)
			return ret;
		switch (type) {
		case TRACE_CHUNK_RECORDS:
			r->chunk = buf;
			r->chunk_len = len;
			r->chunk_off = 0;
			continue;
		case TRACE_CHUNK_SNAPSHOT:
			if (read_snapshot(r, buf, len, it)) {
				set_cut(r, "malformed snapshot chunk");
				continue;
			}
			it->type = TRACE_ITEM_SNAPSHOT;
			return 1;
		case TRACE_CHUNK_NOTE:
			free(r->note);
			r->note = strndup(buf, len);
			if (!r->note)
				return -ENOMEM;
			it->type = TRACE_ITEM_NOTE;
			it->note = r->note;
			return 1;
		case TRACE_CHUNK_PROCS:
			ret = read_procs(r, buf, len, it);
			if (ret == -ENOMEM)
				return ret;
			if (ret) {
				set_cut(r, "malformed processes chunk");
				continue;
			}
			it->type = TRACE_ITEM_PROCS;
			return 1;
		case TRACE_CHUNK_MAPS:
			ret = read_maps(r, buf, len, it);
			if (ret == -ENOMEM)
				return ret;
			if (ret) {
				set_cut(r, "malformed mappings chunk");
				continue;
			}
			it->type = TRACE_ITEM_MAPS;
			return 1;
		case TRACE_CHUNK_COST:
			ret = trace_cost__decode(buf, len, it, &r->cost_desc);
			if (ret == -ENOMEM)
				return ret;
			if (ret) {
				set_cut(r, "malformed cost chunk");
				continue;
			}
			it->type = TRACE_ITEM_COST;
			return 1;
		case TRACE_CHUNK_END:
			memcpy(&it->end, buf, len < sizeof(it->end) ? len : sizeof(it->end));
			r->ended = true;
			it->type = TRACE_ITEM_END;
			return 1;
		default:	/* unknown chunk types are skipped, and counted */
			if (r->unknown_chunks < TRACE_UNKNOWN_TYPES_KEPT)
				r->unknown_types[r->unknown_chunks] = type;
			r->unknown_chunks++;
			continue;
		}
	}
}

uint64_t trace_reader__unknown_chunks(const struct trace_reader *r, const uint32_t **types,
				      size_t *n_types)
{
	if (types)
		*types = r->unknown_types;
	if (n_types)
		*n_types = r->unknown_chunks < TRACE_UNKNOWN_TYPES_KEPT ? r->unknown_chunks :
			   TRACE_UNKNOWN_TYPES_KEPT;
	return r->unknown_chunks;
}

bool trace_reader__ended_cleanly(const struct trace_reader *r)
{
	return r->ended;
}

const char *trace_reader__cut_reason(const struct trace_reader *r)
{
	return r->ended ? NULL : r->cut;
}

void trace_reader__free(struct trace_reader *r)
{
	if (!r)
		return;
	frame_reader__free(r->fr);
	free(r->path);
	free(r->manifest);
	free(r->descs);
	free(r->sites);
	free(r->snap_desc);
	free(r->snap_res);
	free(r->note);
	free(r->cost_desc);
	free(r->procs);
	free(r->maps);
	free(r->cut);
	free(r);
}

/* ---- live recordings ---- */

int trace_live__hold(const char *path)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETLK, &fl)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int trace_live__holder(const char *path, int *pid)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	/* F_GETLK with a write lock reports any read lock held by another process */
	if (fcntl(fd, F_GETLK, &fl))
		err = -errno;
	close(fd);
	if (err)
		return err;
	*pid = 0;
	if (fl.l_type == F_UNLCK)
		return 0;
	*pid = fl.l_pid > 0 ? (int)fl.l_pid : 0;
	return 1;
}
