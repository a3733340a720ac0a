/* SPDX-License-Identifier: BSD-2-Clause */
/* gc.c: garbage collection of a receipt store: remove the objects no
 * lifecycle entry reaches (through its receipt: the receipt, its
 * artifacts and its steps' evidence) and the leftovers of interrupted
 * writes in tmp/, both only when older than a minimum age.
 *
 * Writers put objects first and log them afterwards, under the log's
 * lock: gc holds that lock while it decides, and spares objects younger
 * than min_age, which a writer may have put and not logged yet. A
 * damaged log is never used to decide what is unreachable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "receipts/receipts_int.h"

struct gc_ctx {
	struct pb_store *s;
	const struct store_gc_opts *o;
	struct store_gc_result *r;
	json_t *reachable;	/* hex -> true */
	time_t now;
};

static void mark(json_t *reach, const char *hex)
{
	if (hex && pb_is_digest_hex(hex))
		json_object_set_new(reach, hex, json_true());
}

static void mark_steps(json_t *reach, const json_t *steps)
{
	const json_t *v;
	size_t i;

	json_array_foreach(steps, i, v) {
		struct receipt_step st;

		receipt_step__decode(v, &st, NULL);	/* the evidence is what matters */
		mark(reach, st.evidence);
	}
}

/* The receipt and every object it names. */
static void mark_receipt(struct pb_store *s, json_t *reach, const char *rec)
{
	struct receipt_view v;
	json_t *stmt = NULL, *a;
	const char *k;

	mark(reach, rec);
	if (store__get_json(s, rec, &stmt))
		return;
	receipt__decode(stmt, &v, NULL);	/* mark what is there */
	json_object_foreach((json_t *)v.artifacts.all, k, a)
		mark(reach, json_string_value(a));
	mark_steps(reach, v.generation.transforms);
	mark_steps(reach, v.generation.assumptions);
	json_decref(stmt);
}

/* Remove path (name: how the result lists it) if old enough. */
static void remove_old(struct gc_ctx *g, const char *name, const char *path, const struct stat *st)
{
	if (!g->o->dry_run && unlink(path))
		return;
	g->r->removed++;
	g->r->bytes_removed += st->st_size;
	json_array_append_new(g->r->removed_objects, json_string(name));
}

static int gc_object(const char *hex, const char *path, void *ctx)
{
	struct gc_ctx *g = ctx;
	struct stat st;

	if (json_object_get(g->reachable, hex))
		return 0;
	if (stat(path, &st) || S_ISDIR(st.st_mode) || g->now - st.st_mtime < g->o->min_age) {
		g->r->kept_young++;
		return 0;
	}
	remove_old(g, hex, path, &st);
	return 0;
}

static int gc_tmp(const char *name, const char *path, void *ctx)
{
	struct gc_ctx *g = ctx;
	char shown[600];
	struct stat st;

	if (stat(path, &st) || g->now - st.st_mtime < g->o->min_age)
		return 0;
	snprintf(shown, sizeof(shown), "tmp/%s", name);
	remove_old(g, shown, path, &st);
	return 0;
}

static int lock_store(struct pb_store *s)
{
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", s->dir, PB_LIFELOG_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Mark everything the log's entries reach: 0, or the log's problem
 * count / -errno (then nothing is decided). */
static int mark_reachable(struct gc_ctx *g)
{
	json_t *entries = NULL, *e;
	size_t i;
	int rc;

	rc = lifelog__read(g->s, &entries, NULL);
	if (rc == 0) {
		json_array_foreach(entries, i, e) {
			struct lifelog_entry le;

			lifelog_entry__decode(e, &le, NULL);	/* the receipt is what matters */
			if (le.receipt)
				mark_receipt(g->s, g->reachable, le.receipt);
		}
	}
	json_decref(entries);
	return rc;
}

int store__gc(struct pb_store *s, const struct store_gc_opts *o, struct store_gc_result *r)
{
	struct gc_ctx g = { .s = s, .o = o, .r = r, .now = time(NULL) };
	int lock_fd, err;

	memset(r, 0, sizeof(*r));
	lock_fd = lock_store(s);
	if (lock_fd < 0) {
		r->failed = STORE_GC_LOCK;
		return lock_fd;
	}
	g.reachable = json_object();
	r->removed_objects = json_array();
	if (!g.reachable || !r->removed_objects) {
		err = -ENOMEM;
		goto out;
	}
	err = mark_reachable(&g);
	if (err) {
		r->failed = STORE_GC_LOG;
		err = err < 0 ? err : -EBADMSG;
		goto out;
	}
	r->reachable = json_object_size(g.reachable);
	store__for_each_object(s, gc_object, &g);
	store__for_each_tmp(s, gc_tmp, &g);
out:
	close(lock_fd);
	json_decref(g.reachable);
	return err;
}

void store_gc_result__clear(struct store_gc_result *r)
{
	json_decref(r->removed_objects);
	memset(r, 0, sizeof(*r));
}
