/* SPDX-License-Identifier: BSD-2-Clause */
/* test_pictures.c: the report's pictures (src/analyze/pictures.c): log2
 * histogram bars as bpftrace prints them, sparklines scaled between the
 * series' min and max, durations with 3 significant digits. */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "analyze/pictures.h"

#define LOW	"\u2581"
#define HIGH	"\u2588"

TEST(test_sparkline_rising_series)
{
	int64_t v[5] = { 0, 10, 20, 30, 40 };
	char buf[128];

	pictures__sparkline(v, 5, sizeof(v[0]), 64, buf, sizeof(buf));
	/* 5 cells of 3 UTF-8 bytes, lowest first, highest last */
	ASSERT_EQ(strlen(buf), 15);
	ASSERT_TRUE(!strncmp(buf, LOW, 3));
	ASSERT_STREQ(buf + 12, HIGH);
}

/* Two values that differ but round to the same double: the span is 0 in
 * double, so every cell is the lowest (fuzz_records found the 0/0 NaN
 * cast to unsigned: tests/fuzz/corpus/fuzz_records/ubsan-sparkline-nan) */
TEST(test_sparkline_span_lost_in_double)
{
	int64_t v[3] = { (int64_t)1 << 62, ((int64_t)1 << 62) + 1, (int64_t)1 << 62 };
	char buf[64];

	pictures__sparkline(v, 3, sizeof(v[0]), 64, buf, sizeof(buf));
	ASSERT_STREQ(buf, LOW LOW LOW);
}

TEST(test_sparkline_width_takes_max_per_cell)
{
	int64_t v[100];
	char buf[64 * 4 + 1];
	size_t i;

	for (i = 0; i < 100; i++)
		v[i] = i == 57 ? 1000 : 0;	/* one spike */
	pictures__sparkline(v, 100, sizeof(v[0]), 10, buf, sizeof(buf));
	ASSERT_EQ(strlen(buf), 30);		/* 10 cells */
	/* the spike survives the downsampling, in cell 5 (57 * 10 / 100) */
	ASSERT_TRUE(!strncmp(buf + 15, HIGH, 3));
	ASSERT_TRUE(!strncmp(buf, LOW, 3));
	ASSERT_NOT_NULL(strstr(buf, LOW LOW LOW LOW LOW));
}

TEST(test_sparkline_flat_and_strided)
{
	struct { int64_t ts, x; } p[3] = { { 1, 7 }, { 2, 7 }, { 3, 7 } };
	char buf[32];

	/* a flat series draws the lowest block; stride skips the other field */
	pictures__sparkline(&p[0].x, 3, sizeof(p[0]), 64, buf, sizeof(buf));
	ASSERT_STREQ(buf, LOW LOW LOW);
	pictures__sparkline(&p[0].x, 0, sizeof(p[0]), 64, buf, sizeof(buf));
	ASSERT_STREQ(buf, "");
}

TEST(test_hist_bars_scaled_to_max)
{
	uint64_t b[PB_HIST_BUCKETS] = { 0 };
	struct picture_hist h = { .id = "w", .resource = "r", .what = "wait", .buckets = b };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ASSERT_NOT_NULL(f);
	b[10] = 40;	/* [1.02us, 2.05us) */
	b[12] = 1;	/* a non-empty bucket always gets one @ */
	h.count = 41;
	pictures__print_hist(&h, f, 40);
	fclose(f);
	/* buckets 10..12, empty 11 included, nothing before or after */
	ASSERT_STRSTR(out, "[1.02us, 2.05us)");
	ASSERT_STRSTR(out, "40 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|");
	ASSERT_STRSTR(out, "0 |                                        |");
	ASSERT_STRSTR(out, "1 |@                                       |");
	ASSERT_NULL(strstr(out, "[512ns"));
	ASSERT_NULL(strstr(out, "[8.19us"));
	free(out);
}

TEST(test_fmt_dur_three_digits)
{
	char b[24];

	pictures__fmt_dur(b, sizeof(b), 512);
	ASSERT_STREQ(b, "512ns");
	pictures__fmt_dur(b, sizeof(b), 65536);
	ASSERT_STREQ(b, "65.5us");
	pictures__fmt_dur(b, sizeof(b), 1048576);
	ASSERT_STREQ(b, "1.05ms");
	pictures__fmt_dur(b, sizeof(b), 2147483648.0);
	ASSERT_STREQ(b, "2.15s");
}
