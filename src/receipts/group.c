/* SPDX-License-Identifier: BSD-2-Clause */
/* group.c: group commit of a store. One fsync per generation pair
 * (object batch + log entry) costs more than the load itself on ext4
 * (bench/results/receipts.json); a specializer producing generations
 * every few milliseconds writes them without fsync and makes them
 * durable in batches.
 *
 * The log carries the durability boundary itself, as 'durable' entries
 * {through_seq, state}: "open" when group commit starts (everything
 * before it was written with fsync), "sync" after each syncfs(2) (its
 * through_seq entries were on disk before the watermark was written, so a
 * watermark that survives a crash tells the truth even though it is
 * itself written without fsync), "final" when group commit ends (fsynced:
 * the log is complete). Readers (attribute/itable_load.c) treat the
 * entries after the last watermark of a group that never reached "final"
 * as lost, and time after the last durable entry as unknown. One
 * group-committing writer per store: a watermark covers every entry
 * before it, including another writer's unsynced ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include "common/array.h"
#include "common/framing.h"
#include "receipts/receipts_int.h"

#define EXT4_SUPER_MAGIC 0xEF53

int store__group_note(struct pb_store *s, const char *path)
{
	char *p = strdup(path);

	if (!p || pb_array_grow(&s->group_paths, &s->cap_group_paths, s->n_group_paths + 1,
				sizeof(*s->group_paths))) {
		free(p);
		return -ENOMEM;
	}
	s->group_paths[s->n_group_paths++] = p;
	s->group_dirty = true;
	return 0;
}

static void forget_paths(struct pb_store *s)
{
	size_t i;

	for (i = 0; i < s->n_group_paths; i++)
		free(s->group_paths[i]);
	s->n_group_paths = 0;
}

/* ext4 (data=ordered): write and wait for the data of every object of
 * the batch, then one fsync of the log commits the journal transaction
 * that holds all of the batch's metadata (names, directories, block
 * allocations) at once. Elsewhere: syncfs(2), which also waits for other
 * processes' dirty data on that filesystem. */
static int sync_batch(struct pb_store *s)
{
	struct statfs sf;
	size_t i;
	int fd, err = 0;

	if (fstatfs(s->dir_fd, &sf) || sf.f_type != EXT4_SUPER_MAGIC || !s->log_w)
		return syncfs(s->dir_fd) ? -errno : 0;
	for (i = 0; i < s->n_group_paths && !err; i++) {
		fd = open(s->group_paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						  SYNC_FILE_RANGE_WAIT_AFTER))
			err = -errno;
		if (fd >= 0)
			close(fd);
	}
	return err ?: frame_writer__sync(s->log_w);
}

static int append_watermark(struct pb_store *s, const char *state)
{
	/* through_seq null: lifelog__append fills in the entry before this */
	json_t *e = json_pack("{s:n, s:s}", LK_THROUGH_SEQ, LK_DURABLE_STATE, state);
	int err;

	if (!e)
		return -ENOMEM;
	err = lifelog__append(s, LIFE_DURABLE, e, NULL);
	json_decref(e);
	return err;
}

int pb_store__group_begin(struct pb_store *s)
{
	int err;

	if (s->group)
		return 0;
	/* written with fsync, like every entry before it */
	if ((err = append_watermark(s, DURABLE_OPEN)))
		return err;
	lifelog__close(s);	/* reopened without fsync per entry */
	s->group = true;
	s->group_dirty = false;
	return 0;
}

int pb_store__group_sync(struct pb_store *s)
{
	int err;

	if (!s->group || !s->group_dirty)
		return 0;
	if (store__crash_hook("group-before-sync"))
		raise(SIGKILL);
	if ((err = sync_batch(s)))
		return err;
	forget_paths(s);
	if ((err = append_watermark(s, DURABLE_SYNC)))
		return err;
	s->group_dirty = false;	/* the watermark rides on the next sync */
	return 0;
}

int pb_store__group_end(struct pb_store *s)
{
	int err;

	if (!s->group)
		return 0;
	s->group_dirty = true;	/* at least the last watermark */
	err = pb_store__group_sync(s);
	s->group = false;
	forget_paths(s);
	free(s->group_paths);
	s->group_paths = NULL;
	s->cap_group_paths = 0;
	lifelog__close(s);	/* reopened with fsync per entry */
	if (!err)
		err = append_watermark(s, DURABLE_FINAL);
	return err;
}
