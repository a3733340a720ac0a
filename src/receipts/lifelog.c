/* SPDX-License-Identifier: BSD-2-Clause */
/* lifelog.c: the append-only, hash-chained lifecycle log of a store.
 *
 * DIR/lifecycle.log is a framed file (common/framing.h, magic "PBRCLOG\0",
 * version 1, no header payload). Each chunk is one entry: chunk type = the
 * entry kind (enum lifelog_kind), payload = the entry as canonical JSON
 * with "seq" (0, 1, ...) and "prev" (SHA-256 of the previous entry's
 * payload, 64 zeros for the first). The chunk CRC catches torn and
 * corrupt chunks; the chain catches an entry rewritten with a fresh CRC,
 * removed or reordered. Writers serialize on flock(DIR/lifecycle.lock)
 * and check the whole chain before appending: a broken log is reported,
 * never extended. A store handle keeps its writer open between appends
 * and skips the re-check while the file still ends where its own last
 * append left it (same inode, same size): single-writer appends cost
 * O(1), and any other writer's append triggers a full re-check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "common/framing.h"
#include "receipts/receipts_int.h"

static const char ZERO_HASH[] = "0000000000000000000000000000000000000000000000000000000000000000";

static const char *const kind_names[] = {
	[LIFE_LOADED] = "loaded",
	[LIFE_ACTIVATED] = "activated",
	[LIFE_RETIRED] = "retired",
	[LIFE_UNLOADED] = "unloaded",
	[LIFE_LINK_UPDATED] = "link-updated",
	[LIFE_OBSERVER] = "observer",
	[LIFE_DURABLE] = "durable",
};

const char *lifelog__kind_name(uint32_t kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return NULL;
}

uint32_t lifelog__kind_of(const char *name)
{
	uint32_t k;

	for (k = 1; name && k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
		if (kind_names[k] && !strcmp(kind_names[k], name))
			return k;
	return 0;
}

static void problem(const struct lifelog_problem_cb *cb, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problem(const struct lifelog_problem_cb *cb, const char *where, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (!cb || !cb->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	cb->fn(cb->ctx, where, what);
}

/* Open the log and check its file header: 0 with *out set (NULL: no log
 * yet, an empty log), 1 when the header is a problem (reported), or
 * -errno. */
static int open_log(struct pb_store *s, const struct lifelog_problem_cb *cb,
		    struct frame_reader **out)
{
	char path[4096];
	struct frame_reader *r;
	const void *hdr;
	size_t hdr_len, i;
	uint32_t ver;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/%s", s->dir, PB_LIFELOG_NAME);
	if (access(path, F_OK))
		return 0;
	r = frame_reader__open(path, PB_LIFELOG_MAGIC, PB_LIFELOG_VERSION, &ver, &hdr, &hdr_len);
	if (!r) {
		if (errno == EBADMSG || errno == EPROTONOSUPPORT) {
			problem(cb, PB_LIFELOG_NAME, "bad file header: %s", strerror(errno));
			return 1;
		}
		if (errno == EINVAL || errno == EISDIR) {	/* framing: not a regular file */
			problem(cb, PB_LIFELOG_NAME, "not a regular file (a framed log was expected)");
			return 1;
		}
		return -errno;
	}
	/* version 1 has no header payload; framing.h: a longer header is
	 * accepted only when the bytes we do not know are zero */
	for (i = 0; i < hdr_len; i++) {
		if (((const uint8_t *)hdr)[i]) {
			problem(cb, PB_LIFELOG_NAME, "bad file header: unknown header byte %zu is not zero",
				16 + i);
			frame_reader__free(r);
			return 1;
		}
	}
	*out = r;
	return 0;
}

/* Check entry #seq (chunk type `type`) against the chain so far: its
 * prev, seq and kind. Returns the number of problems. */
static int check_entry(const struct lifelog_problem_cb *cb, const char *where, const json_t *e,
		       uint32_t type, long long seq, const char *last_hash)
{
	struct lifelog_entry le;
	int n = 0;

	/* a field of the wrong type reads as absent: the checks below name it */
	lifelog_entry__decode(e, &le, NULL);
	if (!le.prev || strcmp(le.prev, last_hash)) {
		problem(cb, where, "hash chain broken: prev is %.16s..., previous entry hashes to %.16s... (an earlier entry was altered, removed or reordered)",
			le.prev ? le.prev : "(none)", last_hash);
		n++;
	}
	if (le.seq != seq) {
		problem(cb, where, "sequence number is %lld, expected %lld", (long long)le.seq, seq);
		n++;
	}
	if (!le.kind_name || !lifelog__kind_name(type) || strcmp(le.kind_name, lifelog__kind_name(type))) {
		problem(cb, where, "kind '%s' does not match chunk type %u",
			le.kind_name ? le.kind_name : "(none)", type);
		n++;
	}
	return n;
}

/* Reads the log; last_hash and next_seq describe its end. Returns the
 * number of problems or -errno. */
static int read_log(struct pb_store *s, json_t *entries, const struct lifelog_problem_cb *cb,
		    char last_hash[PB_DIGEST_HEX_LEN], long long *next_seq)
{
	char where[96], hash[PB_DIGEST_HEX_LEN];
	struct frame_reader *r;
	const void *buf;
	size_t len;
	uint32_t type;
	long long seq = 0;
	int n_problems = 0, rc;

	strcpy(last_hash, ZERO_HASH);
	*next_seq = 0;
	rc = open_log(s, cb, &r);
	if (rc || !r)
		return rc;
	for (;;) {
		off_t off = frame_reader__offset(r);
		json_error_t jerr;
		json_t *e;

		rc = frame_reader__next(r, &type, &buf, &len);
		if (rc == 0)
			break;
		snprintf(where, sizeof(where), "%s entry #%lld (offset %lld)", PB_LIFELOG_NAME, seq,
			 (long long)off);
		if (rc == -EBADMSG) {
			problem(cb, where, "torn or corrupt: %s", frame_reader__error(r));
			n_problems++;
			break;
		}
		if (rc < 0 || (rc = pb_sha256_hex(buf, len, hash)))
			goto fail;
		e = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!e || !json_is_object(e)) {
			problem(cb, where, "payload is not a JSON object");
			n_problems++;
		} else {
			n_problems += check_entry(cb, where, e, type, seq, last_hash);
			json_object_set_new(e, LK_HASH, json_string(hash));
			json_object_set_new(e, LK_OFFSET, json_integer(off));
			if (entries)
				json_array_append(entries, e);
		}
		json_decref(e);
		strcpy(last_hash, hash);
		seq++;
	}
	frame_reader__free(r);
	*next_seq = seq;
	return n_problems;
fail:
	frame_reader__free(r);
	return rc;
}

int lifelog__read(struct pb_store *s, json_t **entries, const struct lifelog_problem_cb *cb)
{
	char last[PB_DIGEST_HEX_LEN];
	long long seq;
	json_t *arr = json_array();
	int rc;

	*entries = NULL;
	if (!arr)
		return -ENOMEM;
	rc = read_log(s, arr, cb, last, &seq);
	if (rc < 0) {
		json_decref(arr);
		return rc;
	}
	*entries = arr;
	return rc;
}

static int lock_log(struct pb_store *s)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", s->dir, PB_LIFELOG_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			int err = -errno;

			close(fd);
			return err;
		}
	}
	return fd;
}

void lifelog__close(struct pb_store *s)
{
	frame_writer__close(s->log_w);
	s->log_w = NULL;
}

/* Under the lock: is the cached writer still at the end of the file? */
static bool cache_valid(struct pb_store *s, const char *path)
{
	struct stat st;

	if (!s->log_w || stat(path, &st))
		return false;
	return (unsigned long)st.st_ino == s->log_ino && (uint64_t)st.st_size == s->log_end;
}

/* A new log appears whole or not at all: its header is written to a
 * temporary name, fsynced and renamed (under the log lock), so a crash
 * while creating it never leaves a torn header that reads as a damaged
 * log (tests/cli/fault_kill.sh found one at the first write). */
static int create_log(const char *path)
{
	struct frame_writer_opts copts = { .fsync_each = true, .mode = 0600 };
	struct frame_writer *w;
	char tmp[4096 + 8];
	int err;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);	/* a leftover of an earlier crash; we hold the lock */
	w = frame_writer__create(tmp, PB_LIFELOG_MAGIC, PB_LIFELOG_VERSION, NULL, 0, &copts);
	if (!w)
		return -errno;
	err = frame_writer__close(w);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int lifelog__append(struct pb_store *s, uint32_t kind, json_t *entry, char hash_out[PB_DIGEST_HEX_LEN])
{
	/* group commit (group.c): no fsync per entry, one per batch */
	struct frame_writer_opts wopts = { .fsync_each = !s->group, .mode = 0600 };
	char path[4096], hash[PB_DIGEST_HEX_LEN];
	struct stat st;
	char *txt = NULL;
	size_t len;
	int lock_fd, rc, err;

	if (!lifelog__kind_name(kind) || !json_is_object(entry))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", s->dir, PB_LIFELOG_NAME);
	lock_fd = lock_log(s);
	if (lock_fd < 0)
		return lock_fd;
	if (!cache_valid(s, path)) {
		lifelog__close(s);
		rc = read_log(s, NULL, NULL, s->log_last, &s->log_seq);
		if (rc != 0) {
			err = rc < 0 ? rc : -EBADMSG;
			goto out;
		}
		if (s->log_seq == 0 && access(path, F_OK)) {
			err = create_log(path);
			if (err)
				goto out;
		}
		s->log_w = frame_writer__open_append(path, PB_LIFELOG_MAGIC, NULL, NULL, &wopts);
		if (!s->log_w) {
			err = -errno;
			goto out;
		}
		if (fstat(frame_writer__fd(s->log_w), &st)) {
			err = -errno;
			lifelog__close(s);
			goto out;
		}
		s->log_ino = st.st_ino;
		s->log_end = frame_writer__bytes(s->log_w);
	}
	json_object_set_new(entry, LK_KIND, json_string(lifelog__kind_name(kind)));
	json_object_set_new(entry, LK_SEQ, json_integer(s->log_seq));
	json_object_set_new(entry, LK_PREV, json_string(s->log_last));
	/* the writer's own times and pid, unless it gave them */
	if (!json_object_get(entry, LK_MONO_NS))
		json_object_set_new(entry, LK_MONO_NS, json_integer((json_int_t)pb_mono_ns()));
	if (!json_object_get(entry, LK_REALTIME_NS))
		json_object_set_new(entry, LK_REALTIME_NS, json_integer((json_int_t)pb_realtime_ns()));
	if (!json_object_get(entry, LK_PID))
		json_object_set_new(entry, LK_PID, json_integer(getpid()));
	/* a watermark covers every entry before it (group.c), counted under
	 * the lock from the log as it is, not as this handle last saw it */
	if (kind == LIFE_DURABLE && json_is_null(json_object_get(entry, LK_THROUGH_SEQ)))
		json_object_set_new(entry, LK_THROUGH_SEQ, json_integer(s->log_seq - 1));
	err = canon__encode(entry, &txt, &len);
	if (err)
		goto out;
	err = pb_sha256_hex(txt, len, hash);
	if (err)
		goto out;
	err = frame_writer__append(s->log_w, kind, txt, len);
	if (err) {
		lifelog__close(s);	/* unknown state: re-check next time */
		goto out;
	}
	strcpy(s->log_last, hash);
	s->log_seq++;
	s->group_dirty = s->group_dirty || s->group;
	s->log_end = frame_writer__bytes(s->log_w);
	if (hash_out)
		strcpy(hash_out, hash);
out:
	free(txt);
	flock(lock_fd, LOCK_UN);
	close(lock_fd);
	return err;
}

json_t *lifelog_entry__public(const json_t *e)
{
	json_t *c = json_deep_copy(e);

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	json_object_set(c, LK_PUBLIC_HASH, json_object_get(c, LK_HASH));
	json_object_del(c, LK_HASH);
	json_object_del(c, LK_OFFSET);
	return c;
}
