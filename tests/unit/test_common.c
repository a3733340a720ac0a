/* SPDX-License-Identifier: BSD-2-Clause */
/* test_common.c: the shared helpers in src/common: clocks, whole-file
 * reads with a size limit, growable arrays, SHA-256 from several threads. */
#include "harness.h"
#include <fcntl.h>
#include <pthread.h>
#include "common/array.h"
#include "common/clock.h"
#include "common/digest.h"
#include "common/io.h"

TEST(test_clock_monotonic_advances)
{
	uint64_t a = pb_mono_ns(), b;

	usleep(2000);
	b = pb_mono_ns();
	ASSERT_GT(a, 0);
	ASSERT_GE(b - a, 2000000);
	/* the realtime clock is past 2020 */
	ASSERT_GT(pb_realtime_ns() / PB_NSEC_PER_SEC, 1577836800ull);
}

static char *write_tmp(const char *data, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/pbcommon.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		return NULL;
	close(fd);
	return path;
}

TEST(test_read_file_whole_and_limited)
{
	char big[40000], *buf = NULL, *path;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	path = write_tmp(big, sizeof(big));
	ASSERT_NOT_NULL(path);
	ASSERT_OK(pb_read_file(path, 0, &buf, &len));
	ASSERT_EQ(len, sizeof(big));
	ASSERT_EQ(buf[len], '\0');
	ASSERT_TRUE(!memcmp(buf, big, len));
	free(buf);
	/* a limit stops the read there: the caller sees "larger than max" */
	ASSERT_OK(pb_read_file(path, 1001, &buf, &len));
	ASSERT_EQ(len, 1001);
	ASSERT_TRUE(!memcmp(buf, big, len));
	free(buf);
	unlink(path);
	ASSERT_ERR(pb_read_file(path, 0, &buf, &len), -ENOENT);
}

TEST(test_read_file_empty)
{
	char *buf = NULL, *path = write_tmp("", 0);
	size_t len = 7;

	ASSERT_NOT_NULL(path);
	ASSERT_OK(pb_read_file(path, 0, &buf, &len));
	ASSERT_EQ(len, 0);
	ASSERT_NOT_NULL(buf);
	ASSERT_EQ(buf[0], '\0');
	free(buf);
	unlink(path);
}

TEST(test_array_grow_zeroes_and_keeps)
{
	uint32_t *a = NULL;
	size_t cap = 0, n;

	for (n = 0; n < 1000; n++) {
		ASSERT_OK(PB_ARRAY_RESERVE_ONE(a, n, cap));
		ASSERT_GE(cap, n + 1);
		ASSERT_EQ(a[n], 0);	/* new room is zeroed */
		a[n] = (uint32_t)n * 3;
	}
	for (n = 0; n < 1000; n++)
		ASSERT_EQ(a[n], n * 3);
	/* no growth when there is room */
	n = cap;
	ASSERT_OK(pb_array_grow(&a, &cap, 10, sizeof(*a)));
	ASSERT_EQ(cap, n);
	ASSERT_ERR(pb_array_grow(&a, &cap, SIZE_MAX / 2 + 2, sizeof(*a)), -EOVERFLOW);
	ASSERT_EQ(cap, n);
	free(a);
}

static void *hash_abc(void *arg)
{
	uint8_t out[PB_SHA256_LEN];
	char *hex = arg;
	int i;

	for (i = 0; i < 200; i++)
		if (pb_sha256("abc", 3, out) != 0)
			return NULL;
	pb_hex(out, sizeof(out), hex);
	return hex;
}

/* digest.c fetches the SHA-256 implementation once per process: threads
 * racing to the first hash all get it (FIPS 180-2 "abc" vector) */
TEST(test_sha256_threads_agree)
{
	char hex[4][PB_DIGEST_HEX_LEN];
	pthread_t th[4];
	void *ret;
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, hash_abc, hex[i]), 0);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pthread_join(th[i], &ret), 0);
		ASSERT_NOT_NULL(ret);
		ASSERT_STREQ(hex[i], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	}
}
