/* SPDX-License-Identifier: BSD-2-Clause */
/* test_framing.c: framed files: round trip, torn tails, corruption,
 * append, header checks, file mode. */
#include "harness.h"
#include <fcntl.h>
#include <sys/stat.h>
#include "common/framing.h"

static const char MAGIC[FRAME_MAGIC_LEN] = "PBTEST\0";

static char *tmp_path(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/pbframe.XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	return path;
}

static int write_n(const char *path, int n)
{
	struct frame_writer *w = frame_writer__create(path, MAGIC, 3, "hdr", 3, NULL);
	char buf[64];
	int i, err = 0;

	if (!w)
		return -errno;
	for (i = 0; i < n && !err; i++) {
		snprintf(buf, sizeof(buf), "chunk-%d", i);
		err = frame_writer__append(w, 100 + i, buf, strlen(buf));
	}
	return err ? err : frame_writer__close(w);
}

static int count_chunks(const char *path, int *bad)
{
	uint32_t ver, type;
	const void *hdr, *buf;
	size_t hl, len;
	struct frame_reader *r = frame_reader__open(path, MAGIC, 3, &ver, &hdr, &hl);
	int n = 0, ret;

	if (!r)
		return -errno;
	while ((ret = frame_reader__next(r, &type, &buf, &len)) == 1) {
		char want[64];

		snprintf(want, sizeof(want), "chunk-%d", n);
		if (type != (uint32_t)(100 + n) || len != strlen(want) || memcmp(buf, want, len))
			return -EINVAL;
		n++;
	}
	*bad = ret;
	frame_reader__free(r);
	return n;
}

TEST(round_trip_and_header)
{
	char *path = tmp_path();
	uint32_t ver = 0;
	const void *hdr;
	size_t hl;
	struct frame_reader *r;
	struct stat st;
	int bad = 1;

	ASSERT_OK(write_n(path, 10));
	ASSERT_EQ(count_chunks(path, &bad), 10);
	ASSERT_EQ(bad, 0);
	r = frame_reader__open(path, MAGIC, 3, &ver, &hdr, &hl);
	ASSERT_NOT_NULL(r);
	ASSERT_EQ(ver, 3);
	ASSERT_EQ(hl, 3);
	ASSERT_OK(memcmp(hdr, "hdr", 3));
	frame_reader__free(r);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	/* newer version than the reader knows, and a foreign magic */
	ASSERT_NULL(frame_reader__open(path, MAGIC, 2, &ver, &hdr, &hl));
	ASSERT_EQ(errno, EPROTONOSUPPORT);
	ASSERT_NULL(frame_reader__open(path, "OTHER\0\0", 3, &ver, &hdr, &hl));
	ASSERT_EQ(errno, EBADMSG);
	unlink(path);
}

TEST(torn_tail_reads_up_to_last_complete_chunk)
{
	char *path = tmp_path();
	struct stat st;
	int bad = 0, cut;

	ASSERT_OK(write_n(path, 5));
	ASSERT_OK(stat(path, &st));
	/* cut inside the payload of the last chunk, then inside its header */
	for (cut = 3; cut <= 20; cut += 17) {
		ASSERT_OK(write_n(path, 5));
		ASSERT_OK(truncate(path, st.st_size - cut));
		ASSERT_EQ(count_chunks(path, &bad), 4);
		ASSERT_ERR(bad, -EBADMSG);
	}
	unlink(path);
}

TEST(corruption_is_detected)
{
	char *path = tmp_path();
	int fd, bad = 0;
	char c;

	ASSERT_OK(write_n(path, 5));
	fd = open(path, O_RDWR);
	ASSERT_GE(fd, 0);
	/* flip a byte in the third chunk's payload: header 19 bytes, chunks
	 * of 16 + 7 bytes */
	ASSERT_EQ(pread(fd, &c, 1, 19 + 2 * 23 + 16 + 2), 1);
	c ^= 0x20;
	ASSERT_EQ(pwrite(fd, &c, 1, 19 + 2 * 23 + 16 + 2), 1);
	close(fd);
	ASSERT_EQ(count_chunks(path, &bad), 2);
	ASSERT_ERR(bad, -EBADMSG);
	unlink(path);
}

TEST(append_checks_the_tail)
{
	char *path = tmp_path();
	struct frame_writer *w;
	struct stat st;
	uint32_t ver;
	off_t good = 0;
	int bad = 0;

	ASSERT_OK(write_n(path, 3));
	w = frame_writer__open_append(path, MAGIC, &ver, &good, NULL);
	ASSERT_NOT_NULL(w);
	ASSERT_OK(frame_writer__append(w, 103, "chunk-3", 7));
	ASSERT_OK(frame_writer__close(w));
	ASSERT_EQ(count_chunks(path, &bad), 4);
	ASSERT_OK(stat(path, &st));
	ASSERT_OK(truncate(path, st.st_size - 1));
	ASSERT_NULL(frame_writer__open_append(path, MAGIC, &ver, &good, NULL));
	ASSERT_EQ(errno, EBADMSG);
	ASSERT_EQ(good, st.st_size - 23);
	unlink(path);
}
