/* SPDX-License-Identifier: BSD-2-Clause */
/* harness.h: a plain unit-test harness (one binary per tests/unit/test_*.c).
 *
 * TEST(name) { ... ASSERT_*(...) ... } registers a test. Each ASSERT prints
 * what was expected and what came, and ends the current test on failure.
 * The binary prints one line per test and a summary line
 * "<binary>: N passed, N failed, N skipped" that tests/run.sh adds up.
 * Exit status: 0 all passed (or skipped), 1 any failed.
 *
 * Tests that need BPF call REQUIRE_BPF(): outside CI a machine without BPF
 * skips them; under CI=true that is a failure, never a skip.
 */
#ifndef PROBITY_TEST_HARNESS_H
#define PROBITY_TEST_HARNESS_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

struct pb_test {
	const char *name;
	void (*fn)(void);
};

#define PB_MAX_TESTS 512
static struct pb_test pb_tests[PB_MAX_TESTS];
static int pb_ntests;
static int pb_cur_failed;
static int pb_cur_skipped;
static char pb_skip_reason[256];

#define TEST(n)								\
	static void n(void);						\
	__attribute__((constructor)) static void pb_reg_##n(void)	\
	{								\
		if (pb_ntests < PB_MAX_TESTS)				\
			pb_tests[pb_ntests++] = (struct pb_test){ #n, n }; \
	}								\
	static void n(void)

#define PB_FAIL(fmt, ...)						\
	do {								\
		fprintf(stderr, "  %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__); \
		pb_cur_failed = 1;					\
	} while (0)

#define ASSERT_TRUE(c)							\
	do { if (!(c)) { PB_FAIL("ASSERT_TRUE(%s) is false", #c); return; } } while (0)
#define ASSERT_FALSE(c)							\
	do { if (c) { PB_FAIL("ASSERT_FALSE(%s) is true", #c); return; } } while (0)
#define ASSERT_EQ(a, b)							\
	do { long long _a = (long long)(a), _b = (long long)(b);	\
	     if (_a != _b) { PB_FAIL("ASSERT_EQ(%s, %s): expected %lld, got %lld", \
				     #a, #b, _b, _a); return; } } while (0)
#define ASSERT_NE(a, b)							\
	do { long long _a = (long long)(a), _b = (long long)(b);	\
	     if (_a == _b) { PB_FAIL("ASSERT_NE(%s, %s): both are %lld", \
				     #a, #b, _a); return; } } while (0)
#define ASSERT_U64_EQ(a, b)						\
	do { unsigned long long _a = (a), _b = (b);			\
	     if (_a != _b) { PB_FAIL("ASSERT_U64_EQ(%s, %s): expected 0x%llx, got 0x%llx", \
				     #a, #b, _b, _a); return; } } while (0)
#define ASSERT_GT(a, b)							\
	do { long long _a = (long long)(a), _b = (long long)(b);	\
	     if (!(_a > _b)) { PB_FAIL("ASSERT_GT(%s, %s): %lld is not > %lld", \
				       #a, #b, _a, _b); return; } } while (0)
#define ASSERT_GE(a, b)							\
	do { long long _a = (long long)(a), _b = (long long)(b);	\
	     if (!(_a >= _b)) { PB_FAIL("ASSERT_GE(%s, %s): %lld is not >= %lld", \
				       #a, #b, _a, _b); return; } } while (0)
#define ASSERT_OK(e)							\
	do { long long _e = (long long)(e);				\
	     if (_e != 0) { PB_FAIL("ASSERT_OK(%s): got %lld (%s)", #e, _e, \
				    _e < 0 ? strerror((int)-_e) : "non-zero"); return; } } while (0)
#define ASSERT_ERR(e, want)						\
	do { long long _e = (long long)(e), _w = (long long)(want);	\
	     if (_e != _w) { PB_FAIL("ASSERT_ERR(%s): expected %lld, got %lld", \
				     #e, _w, _e); return; } } while (0)
#define ASSERT_NOT_NULL(p)						\
	do { if (!(p)) { PB_FAIL("ASSERT_NOT_NULL(%s): NULL (errno %d: %s)", \
				 #p, errno, strerror(errno)); return; } } while (0)
#define ASSERT_NULL(p)							\
	do { if ((p)) { PB_FAIL("ASSERT_NULL(%s): not NULL", #p); return; } } while (0)
#define ASSERT_STREQ(a, b)						\
	do { const char *_a = (a), *_b = (b);				\
	     if (!_a || !_b || strcmp(_a, _b)) { PB_FAIL("ASSERT_STREQ(%s, %s): expected \"%s\", got \"%s\"", \
				     #a, #b, _b ? _b : "(null)", _a ? _a : "(null)"); return; } } while (0)
#define ASSERT_STRSTR(hay, needle)					\
	do { const char *_h = (hay), *_n = (needle);			\
	     if (!_h || !strstr(_h, _n)) { PB_FAIL("ASSERT_STRSTR(%s, %s): \"%s\" not found in \"%s\"", \
				     #hay, #needle, _n, _h ? _h : "(null)"); return; } } while (0)

#define SKIP(fmt, ...)							\
	do { snprintf(pb_skip_reason, sizeof(pb_skip_reason), fmt, ##__VA_ARGS__); \
	     pb_cur_skipped = 1; return; } while (0)

static inline bool pb_in_ci(void)
{
	const char *ci = getenv("CI");

	return ci && (!strcmp(ci, "true") || !strcmp(ci, "1"));
}

/* Can this process load a BPF program? (an ARRAY map create is the probe) */
static inline int pb_bpf_available(char *why, size_t sz)
{
	union bpf_attr attr;
	long fd;

	if (geteuid() != 0) {
		snprintf(why, sz, "not running as root");
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0) {
		snprintf(why, sz, "bpf(BPF_MAP_CREATE) failed: %s", strerror(errno));
		return 0;
	}
	close((int)fd);
	return 1;
}

/* In a test body: skip (or fail under CI=true) when BPF is unavailable. */
#define REQUIRE_BPF()							\
	do { char _why[128];						\
	     if (!pb_bpf_available(_why, sizeof(_why))) {		\
		if (pb_in_ci()) { PB_FAIL("BPF required under CI=true: %s", _why); return; } \
		SKIP("needs BPF: %s", _why);				\
	     } } while (0)

#ifndef PB_NO_MAIN
int main(int argc, char **argv)
{
	int i, passed = 0, failed = 0, skipped = 0;
	const char *only = argc > 1 ? argv[1] : NULL;
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	for (i = 0; i < pb_ntests; i++) {
		if (only && strcmp(only, pb_tests[i].name))
			continue;
		pb_cur_failed = pb_cur_skipped = 0;
		pb_tests[i].fn();
		if (pb_cur_failed) {
			failed++;
			printf("FAIL %s.%s\n", prog, pb_tests[i].name);
		} else if (pb_cur_skipped) {
			skipped++;
			printf("skip %s.%s (%s)\n", prog, pb_tests[i].name, pb_skip_reason);
		} else {
			passed++;
			printf("ok   %s.%s\n", prog, pb_tests[i].name);
		}
		fflush(stdout);
	}
	printf("%s: %d passed, %d failed, %d skipped\n", prog, passed, failed, skipped);
	return failed ? 1 : 0;
}
#endif

#endif
