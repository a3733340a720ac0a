/* SPDX-License-Identifier: BSD-2-Clause */
/* progcost.c: TEMPORARY (lead's branch, replaced by w2-fxgate's version at
 * merge): the engine programs' kernel run-time statistics. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine.skel.h"

static int stats_fd = -1;

int engine__enable_stats(struct engine *e)
{
	(void)e;
	if (stats_fd >= 0)
		return 0;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	return stats_fd < 0 ? -errno : 0;
}

int engine__prog_cost(const struct engine *e, struct engine_prog_cost *out)
{
	struct bpf_program *prog;

	memset(out, 0, sizeof(*out));
	if (stats_fd < 0)
		return -ENOTSUP;
	bpf_object__for_each_program(prog, e->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		const char *sec = bpf_program__section_name(prog);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_prog_get_info_by_fd(fd, &info, &len))
			return -errno;
		if (!strncmp(sec, "tp_btf/", 7)) {
			out->effects_ns += info.run_time_ns;
			out->effects_runs += info.run_cnt;
		} else if (!strncmp(sec, "uprobe", 6) || !strncmp(sec, "uretprobe", 9) ||
			   !strncmp(sec, "usdt", 4)) {
			out->probe_ns += info.run_time_ns;
			out->probe_runs += info.run_cnt;
		} else {
			out->other_ns += info.run_time_ns;
			out->other_runs += info.run_cnt;
		}
	}
	return 0;
}

int engine__set_effects(struct engine *e, bool on)
{
	(void)e;
	(void)on;
	return -ENOTSUP;
}
