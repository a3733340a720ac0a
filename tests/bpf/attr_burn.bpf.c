// SPDX-License-Identifier: GPL-2.0-only
/* attr_burn.bpf.c: test-only XDP program for the attribution tests. It
 * spends most of each run in its own JIT code (a bounded loop of
 * arithmetic seeded with ATTR_MARK), so that cpu-clock samples taken
 * while BPF_PROG_TEST_RUN repeats it land in that code. The tests
 * rewrite the ATTR_MARK immediate before each load to make generations
 * that differ in one instruction, as a specializer would. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define ATTR_MARK 0x7a11ed

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} attr_sink SEC(".maps");

SEC("xdp")
int attr_burn(struct xdp_md *ctx)
{
	__u64 acc = ctx->data_end - ctx->data, mark;
	__u32 key = 0, i;
	__u64 *v;

	asm volatile("%0 = %1" : "=r"(mark) : "i"(ATTR_MARK));
	for (i = 0; i < 2000; i++)
		acc = acc * 6364136223846793005ull + mark + i;
	v = bpf_map_lookup_elem(&attr_sink, &key);
	if (v)
		*v += acc;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
