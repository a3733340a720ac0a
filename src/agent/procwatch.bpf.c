// SPDX-License-Identifier: GPL-2.0-only
/* procwatch.bpf.c: the agent's process watcher. Two tp_btf programs send
 * one small record per process exec and per process exit (thread-group
 * leader only) to a ring buffer; the agent (src/agent/procwatch.c) reads
 * /proc/PID/exe's build-id for each exec and attaches the matching
 * manifest. A full ring buffer is counted in `drops`, never silent: the
 * agent rescans /proc when it sees a drop. tp_btf is used rather than the
 * netlink proc connector because it needs the same capabilities as the
 * engine (CAP_BPF, CAP_PERFMON) and works in any network namespace. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "agent/procwatch_events.h"

char LICENSE[] SEC("license") = "GPL";

__u64 drops = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} pw_events SEC(".maps");

static __always_inline void send(__u32 type, __u32 pid)
{
	struct pw_event *e = bpf_ringbuf_reserve(&pw_events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&drops, 1);
		return;
	}
	e->type = type;
	e->pid = pid;
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(pw_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	send(PW_EXEC, BPF_CORE_READ(p, tgid));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pw_exit, struct task_struct *p)
{
	if (BPF_CORE_READ(p, pid) != BPF_CORE_READ(p, tgid))
		return 0;	/* a thread, not the process */
	send(PW_EXIT, BPF_CORE_READ(p, tgid));
	return 0;
}
