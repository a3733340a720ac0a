// SPDX-License-Identifier: GPL-2.0-only
/* site_count.bpf.c: test-only program that counts hits per plan cookie, so
 * tests can prove that a plan's file offsets and cookies reach the right
 * code in a real process (entry, return and USDT sites separately). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#define MAX_DESC 256

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DESC);
	__type(key, __u32);
	__type(value, __u64);
} entry_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DESC);
	__type(key, __u32);
	__type(value, __u64);
} return_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DESC);
	__type(key, __u32);
	__type(value, __u64);
} usdt_hits SEC(".maps");

/* last cookie seen with the return bit, to check cookie flags reach BPF */
__u64 last_return_cookie;

static __always_inline void bump(void *map, __u64 cookie)
{
	__u32 idx = (__u32)cookie;
	__u64 *v;

	if (idx >= MAX_DESC)
		return;
	v = bpf_map_lookup_elem(map, &idx);
	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("uprobe.multi")
int count_entry(struct pt_regs *ctx)
{
	bump(&entry_hits, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uretprobe.multi")
int count_return(struct pt_regs *ctx)
{
	__u64 c = bpf_get_attach_cookie(ctx);

	last_return_cookie = c;
	bump(&return_hits, c);
	return 0;
}

SEC("usdt")
int count_usdt(struct pt_regs *ctx)
{
	bump(&usdt_hits, bpf_usdt_cookie(ctx));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
