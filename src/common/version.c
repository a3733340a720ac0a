/* SPDX-License-Identifier: BSD-2-Clause */
/* version.c: versions reported by `probity version`. */
#include <stdio.h>
#include <bpf/libbpf.h>
#include "common/version.h"

const char *pb_libbpf_version(void)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	return buf;
}
