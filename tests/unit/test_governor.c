/* SPDX-License-Identifier: BSD-2-Clause */
/* test_governor.c: record --budget's pieces that need no BPF: budget
 * parsing, the default cost table per site class (the calibration plug-in
 * point), the target's CPU time sources, where a plan puts the measured
 * OS effects (gov_meter.c). */
#include "harness.h"
#include <unistd.h>
#include "record/governor.h"
#include "record/governor_int.h"

TEST(budget_parsing)
{
	double f = 0;

	ASSERT_OK(gov_parse_budget("2%", &f));
	ASSERT_TRUE(f > 0.0199 && f < 0.0201);
	ASSERT_OK(gov_parse_budget("0.5", &f));
	ASSERT_TRUE(f > 0.00499 && f < 0.00501);
	ASSERT_OK(gov_parse_budget("100%", &f));
	ASSERT_ERR(gov_parse_budget("0", &f), -EINVAL);
	ASSERT_ERR(gov_parse_budget("-1%", &f), -EINVAL);
	ASSERT_ERR(gov_parse_budget("101", &f), -EINVAL);
	ASSERT_ERR(gov_parse_budget("2%%", &f), -EINVAL);
	ASSERT_ERR(gov_parse_budget("x", &f), -EINVAL);
	ASSERT_ERR(gov_parse_budget("", &f), -EINVAL);
	ASSERT_ERR(gov_parse_budget("nan", &f), -EINVAL);
}

/* one descriptor per site class: emulated entry, nop5 entry, a span
 * (entry + return), USDT */
TEST(cost_per_site_class)
{
	struct plan_site sites[5] = { 0 };
	struct plan_descriptor descs[4] = { 0 };
	struct plan p = { 0 };
	struct gov_site_costs c;
	struct gov_cost_source src = { 0 };

	sites[0].cookie = 0;
	sites[0].insn_len = 1;
	snprintf(sites[0].insn_text, sizeof(sites[0].insn_text), "push rbp");
	sites[1].cookie = 1;
	sites[1].insn_len = 5;
	snprintf(sites[1].insn_text, sizeof(sites[1].insn_text), "nop dword ptr [rax + rax]");
	sites[2].cookie = 2;
	sites[2].insn_len = 1;
	snprintf(sites[2].insn_text, sizeof(sites[2].insn_text), "push rbp");
	sites[3].cookie = 2 | PLAN_COOKIE_RETURN;
	sites[3].retprobe = true;
	sites[4].cookie = 3;
	sites[4].usdt = true;
	p.sites = sites;
	p.n_sites = 5;
	p.descriptors = descs;
	p.n_descriptors = 4;
	gov_costs__default(&c);
	ASSERT_OK(gov_cost_source__from_plan(&src, &p, &c));
	ASSERT_EQ(src.n, 4);
	ASSERT_TRUE(src.ns_per_hit[0] == GOV_DEFAULT_ENTRY_EMULATED_NS);
	ASSERT_TRUE(src.ns_per_hit[1] == GOV_DEFAULT_ENTRY_NOP5_NS);
	ASSERT_TRUE(src.ns_per_hit[2] == GOV_DEFAULT_ENTRY_EMULATED_NS + GOV_DEFAULT_RET_EXTRA_NS);
	ASSERT_TRUE(src.ns_per_hit[3] == GOV_DEFAULT_USDT_NS);
	ASSERT_STRSTR(src.origin, "not calibrated");
	gov_cost_source__free(&src);
}

TEST(cpu_time_sources)
{
	pid_t self = getpid(), gone = 0x3ffffff0;
	volatile unsigned long x = 0;
	uint64_t t;

	for (unsigned long i = 0; i < 200000000ul && gov_cpu_ns_pids(&self, 1) == 0; i++)
		x += i;	/* burn at least one clock tick */
	t = gov_cpu_ns_pids(&self, 1);
	ASSERT_GT(t, 0);
	ASSERT_U64_EQ(gov_cpu_ns_pids(&gone, 1), 0);
	ASSERT_U64_EQ(gov_cpu_ns_cgroup("/nonexistent/cgroup"), 0);
}

/* The OS effects in a plan: on the always-on side while the always-on
 * set with them fits half the allowance (a cheap resource's rule); else
 * inside the windows, paid by the windows' duty; never gated (no gate in
 * the engine): fixed, counted with the must-keep sites (over budget). */
TEST(effects_plan)
{
	struct gov_fx f = { .gate = true, .rate = 1e6 };
	double on = 2e6, hot = 50e6;

	gov_fx_plan(&f, 10e6, &on, &hot);	/* 2 + 1 <= 10 / 2 */
	ASSERT_FALSE(f.windowed);
	ASSERT_TRUE(on == 3e6 && hot == 50e6 && f.fixed == 0);

	f.rate = 4e6;
	on = 2e6;
	gov_fx_plan(&f, 10e6, &on, &hot);	/* 2 + 4 > 10 / 2 */
	ASSERT_TRUE(f.windowed);
	ASSERT_TRUE(on == 2e6 && hot == 54e6 && f.fixed == 0);

	f.gate = false;
	on = 2e6;
	hot = 50e6;
	gov_fx_plan(&f, 10e6, &on, &hot);	/* cannot be turned off */
	ASSERT_FALSE(f.windowed);
	ASSERT_TRUE(on == 6e6 && hot == 50e6 && f.fixed == 4e6);

	f.gate = true;
	f.rate = 0;			/* none measured (no statistics) */
	on = 2e6;
	gov_fx_plan(&f, 1e6, &on, &hot);
	ASSERT_FALSE(f.windowed);
	ASSERT_TRUE(on == 2e6 && f.fixed == 0);
}
