// SPDX-License-Identifier: GPL-2.0-only
/* calib.bpf.c: count-only programs for the cost calibration (calib.c) and
 * `plan --estimate` (calib_estimate.c). Each hit adds one to hits[cookie]:
 * the cookie is a slot chosen by user space (a class during calibration,
 * a plan site index for an estimate). Nothing else, so what is timed is
 * the trap, not the program. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#define CALIB_SLOTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CALIB_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void bump(__u64 cookie)
{
	__u32 idx = (__u32)cookie;
	__u64 *v;

	if (idx >= CALIB_SLOTS)
		return;
	v = bpf_map_lookup_elem(&hits, &idx);
	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("uprobe.multi")
int calib_entry(struct pt_regs *ctx)
{
	bump(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uretprobe.multi")
int calib_return(struct pt_regs *ctx)
{
	bump(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("usdt")
int calib_usdt(struct pt_regs *ctx)
{
	bump(bpf_usdt_cookie(ctx));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
