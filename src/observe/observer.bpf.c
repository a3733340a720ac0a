// SPDX-License-Identifier: GPL-2.0-only
/* observer.bpf.c: follow every bpf() BPF_PROG_LOAD, BPF_LINK_CREATE and
 * BPF_LINK_UPDATE on the machine through the raw syscall tracepoints
 * (tp_btf: fentry and kprobes are refused on this kernel), and hand one
 * record per completed call to user space through a ring buffer. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "observe/observer.h"

#define NR_BPF 321	/* x86_64 */

const volatile __u32 self_tgid;	/* the observer itself: excluded */

struct pending {
	__u64 enter_ns;
	__u32 cmd;
	__u32 attr_ok;
	__u32 attr[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct pending);
} obs_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} obs_events SEC(".maps");

__u64 obs_dropped;	/* ring buffer full */
__u64 obs_pending_full;	/* obs_pending full: a call not followed */

SEC("tp_btf/sys_enter")
int BPF_PROG(obs_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct pending p = {};
	__u64 cmd;

	if (id != NR_BPF || (__u32)(pid_tgid >> 32) == self_tgid)
		return 0;
	cmd = regs->di;
	if (cmd != OBS_CMD_PROG_LOAD && cmd != OBS_CMD_LINK_CREATE && cmd != OBS_CMD_LINK_UPDATE)
		return 0;
	p.cmd = cmd;
	p.enter_ns = bpf_ktime_get_ns();
	p.attr_ok = bpf_probe_read_user(p.attr, sizeof(p.attr), (void *)regs->si) == 0;
	if (bpf_map_update_elem(&obs_pending, &pid_tgid, &p, BPF_ANY))
		__sync_fetch_and_add(&obs_pending_full, 1);
	return 0;
}

/* The struct file behind fd in the current task's table. Only called for
 * fds the kernel just accepted (or returned) for this very call. */
static __always_inline struct file *fd_file(__s64 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline __u32 prog_id_of(__s64 fd)
{
	struct file *f = fd_file(fd);
	struct bpf_prog *prog;

	if (!f)
		return 0;
	prog = BPF_CORE_READ(f, private_data);
	return prog ? BPF_CORE_READ(prog, aux, id) : 0;
}

static __always_inline void link_of(__s64 fd, struct obs_bpf_syscall *e)
{
	struct file *f = fd_file(fd);
	struct bpf_link *link;

	if (!f)
		return;
	link = BPF_CORE_READ(f, private_data);
	if (!link)
		return;
	e->link_id = BPF_CORE_READ(link, id);
	e->link_type = BPF_CORE_READ(link, type);
	e->link_prog_id = BPF_CORE_READ(link, prog, aux, id);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(obs_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct obs_bpf_syscall *e;
	struct pending *p;

	p = bpf_map_lookup_elem(&obs_pending, &pid_tgid);
	if (!p)
		return 0;
	e = bpf_ringbuf_reserve(&obs_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&obs_dropped, 1);
		bpf_map_delete_elem(&obs_pending, &pid_tgid);
		return 0;
	}
	e->type = OBS_EV_BPF_SYSCALL;
	e->version = OBS_EV_VERSION;
	e->cmd = p->cmd;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->attr_ok = p->attr_ok;
	e->ret = ret;
	e->enter_ns = p->enter_ns;
	e->exit_ns = bpf_ktime_get_ns();
	e->attr[0] = p->attr[0];
	e->attr[1] = p->attr[1];
	e->attr[2] = p->attr[2];
	e->attr[3] = p->attr[3];
	e->prog_id = e->link_id = e->link_type = e->link_prog_id = 0;
	if (ret >= 0) {
		if (p->cmd == OBS_CMD_PROG_LOAD) {
			e->prog_id = prog_id_of(ret);
		} else if (p->attr_ok && p->cmd == OBS_CMD_LINK_CREATE) {
			link_of(ret, e);
			e->prog_id = prog_id_of(p->attr[0]);
		} else if (p->attr_ok && p->cmd == OBS_CMD_LINK_UPDATE) {
			link_of(p->attr[0], e);
			e->prog_id = prog_id_of(p->attr[1]);
		}
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	bpf_map_delete_elem(&obs_pending, &pid_tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
