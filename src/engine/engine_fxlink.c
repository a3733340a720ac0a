/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_fxlink.c: detach and re-attach the gated OS-effect programs.
 *
 * Gated off (engine_fx.c), an effect program still runs on every context
 * switch and wakeup of the machine: its dispatch and one load, 75-90 ns
 * a run as the kernel's run-time stats count it, ~25 ms a second on the
 * demo, more than a 1-2 % budget. Between the windows of record --budget
 * (seconds, when the effects follow the windows) their links are
 * therefore destroyed and created again at the next window: a raw
 * tracepoint link is registered and removed without waiting for running
 * programs (unlike a uprobe's), so both take microseconds. The gate stays
 * the judge of what spans an off period: detach only with the gate off,
 * turn it on only after attaching.
 */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine.skel.h"

/* a gated program: every tp_btf one except the process fork/exit pair,
 * which keeps the tracked-process set (not gated) */
static bool gated(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return !strncmp(sec, "tp_btf/", 7) && strcmp(sec + 7, "sched_process_fork") &&
	       strcmp(sec + 7, "sched_process_exit") && bpf_program__autoload(prog);
}

int engine__effects_link(struct engine *e, bool attached)
{
	struct bpf_object_skeleton *s;
	int err = 0;

	if (!e || !e->skel || !e->skel->skeleton)
		return -EINVAL;
	if (!attached && !e->fx_off)
		return -EBUSY;	/* the gate first: nothing half-seen is judged */
	s = e->skel->skeleton;
	for (int i = 0; i < s->prog_cnt; i++) {
		const struct bpf_prog_skeleton *ps = (const void *)((const char *)s->progs +
								    (size_t)i * (size_t)s->prog_skel_sz);
		struct bpf_program *prog = *ps->prog;
		struct bpf_link **link = ps->link;

		if (!link || !gated(prog))
			continue;
		if (!attached && *link) {
			bpf_link__destroy(*link);
			*link = NULL;
		} else if (attached && !*link) {
			struct bpf_link *l = bpf_program__attach(prog);

			if (!l) {
				if (!err)
					err = -errno;
				continue;
			}
			*link = l;
		}
	}
	return err;
}
