#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# gen-vmlinux.sh BPFTOOL OUT: write vmlinux.h (all kernel types, for CO-RE)
# from the running kernel's BTF.
set -eu
bpftool=${1:-bpftool}
out=${2:-vmlinux.h}
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "gen-vmlinux: /sys/kernel/btf/vmlinux is missing: the kernel lacks CONFIG_DEBUG_INFO_BTF" >&2
	exit 1
fi
"$bpftool" btf dump file /sys/kernel/btf/vmlinux format c >"$out.tmp"
mv "$out.tmp" "$out"
