/* SPDX-License-Identifier: BSD-2-Clause */
/* store.c: the content-addressed object store of receipts and artifacts.
 *
 *   DIR/objects/ab/cdef...   object whose SHA-256 is abcdef... (0444)
 *   DIR/tmp/                 objects being written
 *
 * An object is written to tmp/, fsynced, renamed into objects/ and the
 * directory fsynced, so a crash leaves either no object or a whole one
 * (a leftover in tmp/ is reported by verify and removed by gc). A batch
 * (store__batch_begin/commit) does the same for many objects: all bytes
 * durable first, then all renames, then the directories synced.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "receipts/receipts_int.h"
#include "common/io.h"

static int mkdir_p(const char *path)
{
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int pb_store__open(const char *dir, const struct pb_store_opts *opts, struct pb_store **out)
{
	struct pb_store *s;
	char path[4096];
	bool no_create = PB_OPTS_GET(opts, pb_store_opts, no_create, false);
	int err;

	*out = NULL;
	if (!dir || !*dir || !PB_OPTS_VALID(opts, pb_store_opts))
		return -EINVAL;
	if (no_create) {
		snprintf(path, sizeof(path), "%s/objects", dir);
		if (access(path, F_OK))
			return -ENOENT;
	} else {
		if ((err = mkdir_p(dir)))
			return err;
		snprintf(path, sizeof(path), "%s/objects", dir);
		if ((err = mkdir_p(path)))
			return err;
		snprintf(path, sizeof(path), "%s/tmp", dir);
		if ((err = mkdir_p(path)))
			return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dir = strdup(dir);
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!s->dir || s->dir_fd < 0) {
		err = s->dir ? -errno : -ENOMEM;
		pb_store__free(s);
		return err;
	}
	json_decref(capture__target_env());	/* read the JIT sysctls now (see there) */
	*out = s;
	return 0;
}

void pb_store__free(struct pb_store *s)
{
	if (!s)
		return;
	if (s->group)
		pb_store__group_end(s);	/* a clean close is durable */
	store__batch_abort(s);
	free(s->pend);
	lifelog__close(s);
	json_decref(s->known_gens);
	if (s->dir_fd > 0)
		close(s->dir_fd);
	free(s->dir);
	free(s);
}

const char *pb_store__dir(const struct pb_store *s)
{
	return s->dir;
}

void store__object_path(const struct pb_store *s, const char *hex, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s/objects/%.2s/%s", s->dir, hex, hex + 2);
}

bool store__has(struct pb_store *s, const char *hex)
{
	char path[4096];

	store__object_path(s, hex, path, sizeof(path));
	return access(path, F_OK) == 0;
}

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

bool store__crash_hook(const char *point)
{
	const char *v = getenv(PB_CRASH_ENV);

	return v && !strcmp(v, point);
}

static bool pending_has(const struct pb_store *s, const char *hex)
{
	size_t i;

	for (i = 0; i < s->n_pend; i++)
		if (!strcmp(s->pend[i].hex, hex))
			return true;
	return false;
}

void store__batch_begin(struct pb_store *s)
{
	s->batch = true;
}

void store__batch_abort(struct pb_store *s)
{
	size_t i;

	for (i = 0; i < s->n_pend; i++) {
		unlink(s->pend[i].tmp);
		free(s->pend[i].tmp);
	}
	s->n_pend = 0;
	s->batch = false;
}

int store__batch_commit(struct pb_store *s)
{
	char path[4096], sub[4096];
	size_t i;
	int err = 0;

	s->batch = false;
	if (!s->n_pend)
		return 0;
	/* every temporary's bytes are durable before any name appears;
	 * fsync per file rather than syncfs(2), which would also flush every
	 * other process's dirty data on the filesystem */
	for (i = 0; i < s->n_pend && !err && !s->group; i++) {
		int fd = open(s->pend[i].tmp, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fsync(fd))
			err = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (err)
		goto out;
	if (store__crash_hook("store-before-rename"))
		raise(SIGKILL);
	for (i = 0; i < s->n_pend && !err; i++) {
		snprintf(sub, sizeof(sub), "%s/objects/%.2s", s->dir, s->pend[i].hex);
		store__object_path(s, s->pend[i].hex, path, sizeof(path));
		if ((err = mkdir_p(sub)))
			break;
		if (rename(s->pend[i].tmp, path))
			err = -errno;
		else if (s->group)
			err = store__group_note(s, path);
	}
	s->group_dirty = s->group_dirty || s->group;
	/* and so are the new names: each directory once */
	for (i = 0; i < s->n_pend && !err && !s->group; i++) {
		size_t j;
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = !strncmp(s->pend[j].hex, s->pend[i].hex, 2);
		if (seen)
			continue;
		snprintf(sub, sizeof(sub), "%s/objects/%.2s", s->dir, s->pend[i].hex);
		err = fsync_dir(sub);
	}
out:
	for (i = 0; i < s->n_pend; i++) {
		if (err)
			unlink(s->pend[i].tmp);
		free(s->pend[i].tmp);
	}
	s->n_pend = 0;
	return err;
}

static int put_pending(struct pb_store *s, const void *buf, size_t len, const char *hex)
{
	char tmp[4096];
	int fd, err;

	if (s->n_pend == s->cap_pend) {
		size_t cap = s->cap_pend ? 2 * s->cap_pend : 16;
		struct store_pending *p = realloc(s->pend, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pend = p;
		s->cap_pend = cap;
	}
	snprintf(tmp, sizeof(tmp), "%s/tmp/%s.%d.XXXXXX", s->dir, hex, (int)getpid());
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	err = pb_write_all(fd, buf, len);
	if (!err && fchmod(fd, 0444))
		err = -errno;
	close(fd);
	if (!err && !(s->pend[s->n_pend].tmp = strdup(tmp)))
		err = -ENOMEM;
	if (err) {
		unlink(tmp);
		return err;
	}
	strcpy(s->pend[s->n_pend].hex, hex);
	s->n_pend++;
	return 0;
}

int pb_store__put(struct pb_store *s, const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN])
{
	char tmp[4096], path[4096], sub[4096];
	int fd, err;

	err = pb_sha256_hex(buf, len, hex);
	if (err)
		return err;
	if (store__has(s, hex) || pending_has(s, hex))
		return 0;	/* deduplicated */
	if (s->batch)
		return put_pending(s, buf, len, hex);
	snprintf(sub, sizeof(sub), "%s/objects/%.2s", s->dir, hex);
	if ((err = mkdir_p(sub)))
		return err;
	snprintf(tmp, sizeof(tmp), "%s/tmp/%s.%d.XXXXXX", s->dir, hex, (int)getpid());
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	err = pb_write_all(fd, buf, len);
	if (!err && fchmod(fd, 0444))
		err = -errno;
	if (!err && !s->group && fsync(fd))
		err = -errno;
	close(fd);
	if (err)
		goto fail;
	if (store__crash_hook("store-before-rename"))
		raise(SIGKILL);
	store__object_path(s, hex, path, sizeof(path));
	if (rename(tmp, path)) {
		err = -errno;
		goto fail;
	}
	if (s->group)
		return store__group_note(s, path);
	return fsync_dir(sub);
fail:
	unlink(tmp);
	return err;
}

int pb_store__get(struct pb_store *s, const char *hex, void **buf, size_t *len)
{
	char path[4096];
	struct stat st;
	uint8_t *b = NULL;
	size_t got = 0;
	int fd, err = 0;

	*buf = NULL;
	*len = 0;
	if (!pb_is_digest_hex(hex))
		return -EINVAL;
	store__object_path(s, hex, path, sizeof(path));
	/* O_NONBLOCK and regular files only: a FIFO planted under objects/
	 * must not hang `receipts verify` in open(2) or read(2) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	b = malloc(st.st_size + 1);
	if (!b) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += n;
	}
	b[got] = 0;
	*buf = b;
	*len = got;
	b = NULL;
out:
	free(b);
	close(fd);
	return err;
}

int store__put_json(struct pb_store *s, const json_t *j, char hex[PB_DIGEST_HEX_LEN])
{
	char *txt;
	size_t len;
	/* receipts: integers within +-2^53 only (any JCS library reads them) */
	int err = canon__jcs(j, 0, &txt, &len);

	if (err)
		return err;
	err = pb_store__put(s, txt, len, hex);
	free(txt);
	return err;
}

int store__get_json(struct pb_store *s, const char *hex, json_t **out)
{
	json_error_t jerr;
	void *buf;
	size_t len;
	int err = pb_store__get(s, hex, &buf, &len);

	*out = NULL;
	if (err)
		return err;
	*out = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	return *out ? 0 : -EBADMSG;
}

int store__for_each_object(struct pb_store *s, int (*fn)(const char *hex, const char *path, void *ctx),
			   void *ctx)
{
	char path[4096], hex[600], fpath[4096 + 700];
	struct dirent *de, *fe;
	DIR *d, *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/objects", s->dir);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(d))) {
		char sub[4096 + 300];

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		f = opendir(sub);
		if (!f) {
			err = fn(de->d_name, sub, ctx);
			continue;
		}
		while (!err && (fe = readdir(f))) {
			if (fe->d_name[0] == '.')
				continue;
			snprintf(hex, sizeof(hex), "%.2s%.62s", de->d_name, fe->d_name);
			if (strlen(de->d_name) != 2 || strlen(fe->d_name) != 62)
				snprintf(hex, sizeof(hex), "%s/%s", de->d_name, fe->d_name);
			snprintf(fpath, sizeof(fpath), "%s/%s", sub, fe->d_name);
			err = fn(hex, fpath, ctx);
		}
		closedir(f);
	}
	closedir(d);
	return err;
}

int store__for_each_tmp(struct pb_store *s, int (*fn)(const char *name, const char *path, void *ctx),
			void *ctx)
{
	char path[4096], f[4400];
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/tmp", s->dir);
	d = opendir(path);
	if (!d)
		return 0;	/* no tmp/: nothing was interrupted */
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", path, de->d_name);
		err = fn(de->d_name, f, ctx);
	}
	closedir(d);
	return err;
}
