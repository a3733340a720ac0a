/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* observer.h: what the observer's BPF side (observer.bpf.c) and user side
 * (observer.c) share: the ring-buffer record of one bpf() syscall.
 *
 * Fixed-width fields only, a type tag first, so a record is decoded the
 * same everywhere.
 */
#ifndef PROBITY_OBSERVER_H
#define PROBITY_OBSERVER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OBS_EV_BPF_SYSCALL	1	/* struct obs_bpf_syscall */
#define OBS_EV_VERSION		2

/* bpf() commands the observer follows (uapi values) */
#define OBS_CMD_PROG_LOAD	5
#define OBS_CMD_LINK_CREATE	28
#define OBS_CMD_LINK_UPDATE	29

struct obs_bpf_syscall {
	__u32 type;		/* OBS_EV_BPF_SYSCALL */
	__u32 version;		/* OBS_EV_VERSION */
	__u32 cmd;		/* OBS_CMD_* */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 attr_ok;		/* 1: attr[] was read from user memory */
	__s64 ret;		/* syscall return: new fd, 0, or -errno */
	__u64 enter_ns;		/* CLOCK_MONOTONIC at sys_enter */
	__u64 exit_ns;		/* CLOCK_MONOTONIC at sys_exit */
	/* first 4 words of union bpf_attr:
	 *   PROG_LOAD:   prog_type, insn_cnt, -, -
	 *   LINK_CREATE: prog_fd, target_fd/ifindex, attach_type, flags
	 *   LINK_UPDATE: link_fd, new_prog_fd, flags, old_prog_fd */
	__u32 attr[4];
	/* resolved in the kernel at sys_exit from the caller's fd table
	 * (0 = not resolved), so the record names the objects even if the
	 * caller closes its fds before user space reads the record */
	__u32 prog_id;		/* PROG_LOAD: new prog; LINK_*: installed prog */
	__u32 link_id;		/* LINK_*: the link */
	__u32 link_type;
	__u32 link_prog_id;	/* LINK_*: the link's program after the call */
	char comm[16];
};

#endif
