// SPDX-License-Identifier: BSD-2-Clause
/* test_calib.c: the cost calibration (engine/calib.c) on this kernel: every
 * class's probe fires on every timed call (else the class keeps its default
 * and says so), the figures are ordered p50 <= p90, a calibration file
 * round-trips, and one from another kernel is stale. No figure is compared
 * with a speed target (speeds belong in bench/). */
#include "harness.h"
#include "engine/calib.h"
#include "contract/plan.h"

TEST(calib_measures_every_class)
{
	struct pb_calib c;
	int i;

	REQUIRE_BPF();
	ASSERT_OK(calib__run(&c, &(struct calib_opts){ .batches = 5, .calls_per_batch = 100 }));
	if (c.note[0])
		fprintf(stderr, "  note: %s\n", c.note);
	ASSERT_TRUE(c.valid);
	ASSERT_EQ(c.calls, 500);
	for (i = 0; i < PB_SITE__COUNT; i++) {
		fprintf(stderr, "  %-12s p50 %8.0f ns  p90 %8.0f ns\n", pb_site_class_str(i),
			c.p50_ns[i], c.p90_ns[i]);
		ASSERT_TRUE(c.measured[i]);
		ASSERT_TRUE(c.p90_ns[i] >= c.p50_ns[i]);
		ASSERT_TRUE(calib__site_err_ns(&c, i) >= 0);
	}
	ASSERT_TRUE(c.p50_ns[PB_SITE_EMULATED] > 0);
	ASSERT_TRUE(c.entry_emulated_ns == c.p50_ns[PB_SITE_EMULATED]);
	ASSERT_TRUE(c.usdt_ns == calib__site_cost_ns(&c, PB_SITE_USDT));
}

TEST(calib_file_round_trips_and_goes_stale)
{
	char path[] = "/tmp/pb-calib-XXXXXX";
	struct pb_calib a, b;
	int fd = mkstemp(path);
	FILE *f;

	ASSERT_TRUE(fd >= 0);
	close(fd);
	calib__defaults(&a);
	a.p50_ns[PB_SITE_NOP5] = 1234.5;
	a.p90_ns[PB_SITE_NOP5] = 2000;
	a.measured[PB_SITE_NOP5] = true;
	a.calls = 77;
	ASSERT_OK(calib__save(&a, path));
	ASSERT_OK(calib__load(&b, path));
	ASSERT_TRUE(b.valid && b.cached);
	ASSERT_TRUE(b.entry_nop5_ns == 1234.5);
	ASSERT_TRUE(calib__site_err_ns(&b, PB_SITE_NOP5) == 2000 - 1234.5);
	ASSERT_TRUE(b.measured[PB_SITE_NOP5] && !b.measured[PB_SITE_USDT]);
	ASSERT_EQ(b.calls, 77);
	snprintf(a.kernel, sizeof(a.kernel), "0.0-not-this-kernel");
	ASSERT_OK(calib__save(&a, path));
	ASSERT_EQ(calib__load(&b, path), -ESTALE);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	fputs("{\"format\": \"other\"}", f);
	fclose(f);
	ASSERT_EQ(calib__load(&b, path), -EINVAL);
	unlink(path);
	ASSERT_EQ(calib__load(&b, path), -ENOENT);
}

TEST(calib_plan_site_classes)
{
	struct plan_site s = { .exec = INSN_EXEC_OPTIMIZABLE };
	struct pb_calib c;
	struct plan_site sites[2] = {
		{ .descriptor = 0, .exec = INSN_EXEC_EMULATED },
		{ .descriptor = 0, .retprobe = true, .exec = INSN_EXEC_EMULATED },
	};
	struct plan p = { .sites = sites, .n_sites = 2 };
	uint32_t bits;

	ASSERT_EQ(calib__plan_site_class(&s), PB_SITE_NOP5);
	s.exec = INSN_EXEC_UNKNOWN;
	ASSERT_EQ(calib__plan_site_class(&s), PB_SITE_SSTEP);
	s.retprobe = true;
	ASSERT_EQ(calib__plan_site_class(&s), PB_SITE_RET);
	s.usdt = true;
	ASSERT_EQ(calib__plan_site_class(&s), PB_SITE_USDT);
	calib__defaults(&c);
	/* a span: one entry trap + the return probe */
	ASSERT_TRUE(calib__desc_cost_ns(&c, &p, 0, &bits) == c.entry_emulated_ns + c.ret_ns);
	ASSERT_EQ(bits, (1u << PB_SITE_EMULATED) | (1u << PB_SITE_RET));
	ASSERT_TRUE(calib__desc_cost_ns(&c, &p, 1, &bits) == 0);
}
