/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_fx.c: the effects gate and the engine's measured program cost.
 *
 * The gate is fx_epoch in the BPF object's .bss (engine.bpf.c), written
 * through the skeleton's mmap: odd = the OS-effect programs run, even =
 * they return at once. Every change bumps it, and the programs stamp the
 * state they keep with it, so nothing seen before an off period is judged
 * after it (docs/validation.md "Cross-layer checks"). The time spent off is
 * counted here and reaches the trace as pb_engine_stats.fx_gate_*.
 *
 * The program cost reads the kernel's per-program run-time stats; they
 * run only while someone holds them on (opts.prog_stats holds them for the
 * engine's life, system-wide).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine_int.h"
#include "common/clock.h"
#include "engine.skel.h"

#define BPF_STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

int engine_fx_init(struct engine *e, const struct engine_opts *opts)
{
	int fd;

	/* epoch 1: on; 0 is never current, so state created zeroed (a new
	 * thread) is of no epoch until an effect program stamps it */
	e->skel->bss->fx_epoch = 1;
	if (!opts->prog_stats)
		return 0;
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0)
		engine_note(e, "BPF run-time stats refused by the kernel (%s): program cost "
			    "not measured", strerror(errno));
	else
		e->stats_fd = fd;
	return 0;
}

int engine__set_effects(struct engine *e, bool on)
{
	uint64_t now;
	uint32_t ep;

	if (!e || !e->skel || !e->skel->bss)
		return -EINVAL;
	if (on == !e->fx_off)
		return 0;
	now = pb_mono_ns();
	/* one writer (this engine's caller): a plain increment, published
	 * with release order for the programs' plain load */
	ep = e->skel->bss->fx_epoch + 1;
	__atomic_store_n(&e->skel->bss->fx_epoch, ep, __ATOMIC_RELEASE);
	e->fx_toggles++;
	if (on)
		e->fx_off_ns += now > e->fx_off_since ? now - e->fx_off_since : 0;
	else
		e->fx_off_since = now;
	e->fx_off = !on;
	return 0;
}

bool engine__effects_on(const struct engine *e)
{
	return e && !e->fx_off;
}

void engine_fx_stats(const struct engine *e, struct pb_engine_stats *out, uint64_t now)
{
	out->fx_gate_toggles = e->fx_toggles;
	out->fx_gate_off_ns = e->fx_off_ns;
	if (e->fx_off && now > e->fx_off_since)
		out->fx_gate_off_ns += now - e->fx_off_since;
}

void engine_fx_free(struct engine *e)
{
	if (e->stats_fd >= 0)
		close(e->stats_fd);
	e->stats_fd = -1;
}

/* Are run-time stats being counted? Held by this engine, or by the sysctl
 * (which reads back only its own setting, not other holders' fds: those
 * are not seen, and the answer is then "no", never a guess). */
static bool stats_on(const struct engine *e)
{
	char c = 0;
	int fd;

	if (e->stats_fd >= 0)
		return true;
	fd = open(BPF_STATS_SYSCTL, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1';
}

static struct engine_prog_group *prog_group(struct engine_prog_cost *out, const char *sec)
{
	if (!strncmp(sec, "tp_btf/", 7))
		return !strcmp(sec + 7, "sched_process_fork") ||
		       !strcmp(sec + 7, "sched_process_exit") ? &out->procs : &out->effects;
	if (!strncmp(sec, "uprobe", 6) || !strncmp(sec, "uretprobe", 9) ||
	    !strncmp(sec, "usdt", 4))
		return &out->probes;
	return &out->sweeps;
}

int engine__prog_cost(const struct engine *e, struct engine_prog_cost *out)
{
	struct bpf_program *prog;

	if (!e || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!stats_on(e))
		return -ENOTSUP;
	bpf_object__for_each_program(prog, e->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		struct engine_prog_group *g;
		int fd = bpf_program__fd(prog);

		if (fd < 0)	/* not loaded (tracepoint missing, not wanted) */
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_prog_get_info_by_fd(fd, &info, &len))
			return -errno;
		g = prog_group(out, bpf_program__section_name(prog));
		g->run_ns += info.run_time_ns;
		g->run_cnt += info.run_cnt;
		g->n_progs++;
	}
	return 0;
}
