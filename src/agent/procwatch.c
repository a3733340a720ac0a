// SPDX-License-Identifier: BSD-2-Clause
/* procwatch.c: the user side of procwatch.bpf.c (procwatch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "common/log.h"
#include "agent/procwatch.h"
#include "agent/procwatch_events.h"
#include "procwatch.skel.h"

struct procwatch {
	struct procwatch_bpf *skel;
	struct ring_buffer *rb;
	procwatch_fn fn;
	void *ctx;
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct procwatch *pw = ctx;
	const struct pw_event *e = data;

	if (len < sizeof(*e) || !pw->fn)
		return 0;
	pw->fn(e->type == PW_EXEC ? PROCWATCH_EXEC : PROCWATCH_EXIT, (pid_t)e->pid, pw->ctx);
	return 0;
}

struct procwatch *procwatch__new(void)
{
	struct procwatch *pw = calloc(1, sizeof(*pw));
	int err;

	if (!pw)
		return NULL;
	pw->skel = procwatch_bpf__open_and_load();
	if (!pw->skel) {
		err = -errno;
		pr_warn("agent: cannot load the process watcher: %s\n", strerror(-err));
		goto fail;
	}
	err = procwatch_bpf__attach(pw->skel);
	if (err) {
		pr_warn("agent: cannot attach tp_btf sched_process_exec/exit: %s\n",
			strerror(-err));
		goto fail;
	}
	pw->rb = ring_buffer__new(bpf_map__fd(pw->skel->maps.pw_events), on_event, pw, NULL);
	if (!pw->rb) {
		err = -errno;
		goto fail;
	}
	return pw;
fail:
	procwatch__free(pw);
	errno = -err;
	return NULL;
}

int procwatch__poll(struct procwatch *pw, int timeout_ms, procwatch_fn fn, void *ctx)
{
	int n;

	pw->fn = fn;
	pw->ctx = ctx;
	n = ring_buffer__poll(pw->rb, timeout_ms);
	if (n == -EINTR)
		return 0;
	return n;
}

uint64_t procwatch__drops(const struct procwatch *pw)
{
	return pw->skel->bss->drops;
}

void procwatch__free(struct procwatch *pw)
{
	if (!pw)
		return;
	ring_buffer__free(pw->rb);
	procwatch_bpf__destroy(pw->skel);
	free(pw);
}
