#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-deps.sh: exit 0 when every build/test dependency is present,
# 1 (listing what is missing) otherwise. Used by make to decide whether
# scripts/install-deps.sh must run.
missing=""
for pc in "libbpf >= 1.3" "yaml-0.1" "jansson" "capstone" "libcrypto" "libelf" "zlib" "libdw" "libmicrohttpd" "libarchive" "libsystemd"; do
	pkg-config --exists "$pc" 2>/dev/null || missing="$missing [$pc]"
done
sdt=0; for f in /usr/include/sys/sdt.h /usr/include/*/sys/sdt.h; do [ -f "$f" ] && sdt=1; done
[ $sdt -eq 1 ] || missing="$missing systemtap-sdt-dev"
/usr/bin/python3 -c "import jsonschema, yaml" 2>/dev/null || missing="$missing python3-jsonschema python3-yaml"
for cmd in clang llc bpftool pkg-config ip perf pandoc promtool man ssh-keygen; do
	command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing="$missing $cmd"
done
# the real-server test (tests/cli/postgres.sh): PostgreSQL 15, pgbench, bpftrace
for f in /usr/lib/postgresql/15/bin/postgres /usr/lib/postgresql/15/bin/pgbench; do
	[ -x "$f" ] || missing="$missing postgresql-15/postgresql-contrib"
done
command -v bpftrace >/dev/null 2>&1 || missing="$missing bpftrace"
[ -x /usr/bin/redis-server ] && command -v redis-benchmark >/dev/null 2>&1 || missing="$missing redis-server/redis-tools"	# tests/cli/redis.sh
[ -x /usr/sbin/mariadbd ] && command -v mariadb-slap >/dev/null 2>&1 || missing="$missing mariadb-server/mariadb-client"	# tests/cli/mariadb.sh
[ -f /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ] ||
	ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
	missing="$missing libclang-rt-dev"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"	# tests/cli/report_html.sh
if [ -n "$missing" ]; then
	echo "missing:$missing" >&2
	exit 1
fi
exit 0
