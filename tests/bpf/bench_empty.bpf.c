// SPDX-License-Identifier: GPL-2.0-only
/* bench_empty.bpf.c: bench-only empty uprobe programs (bench/engine_bench.c).
 * The kernel's floor for a uprobe hit: the engine's cost per event is
 * reported as a ratio to these on the same sites. `empty_single` is the
 * same program for single (perf-event) uprobe links, for the attach-time
 * comparison of one uprobe_multi link vs N single links. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("uprobe.multi")
int empty_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe.multi")
int empty_return(void *ctx)
{
	return 0;
}

SEC("uprobe")
int empty_single(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
