// SPDX-License-Identifier: GPL-2.0-only
/* rcpt_xdp.bpf.c: test-only XDP program for the receipts tests. It adds a
 * marker immediate (RCPT_MARK) to a counter per packet; the tests rewrite
 * that immediate before each load to make generations that differ in one
 * instruction, as a specializer would. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define RCPT_MARK 0x5eed01

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rcpt_hits SEC(".maps");

SEC("xdp")
int rcpt_xdp(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&rcpt_hits, &key);

	if (v)
		__sync_fetch_and_add(v, RCPT_MARK);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
