#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# licenses.sh: every source file names its license in an SPDX line in its
# first three lines, and the BPF programs are GPL-2.0-only (see LICENSE).
set -u
. tests/cli/lib.sh
[ -f LICENSE ] && [ -f LICENSES/GPL-2.0-only.txt ] && [ -f LICENSES/BSD-2-Clause.txt ] ||
	err "LICENSE or LICENSES/ texts missing"
files=$(git ls-files '*.c' '*.h' '*.sh' '*.py' '*.mk' Makefile .ci/run 2>/dev/null | grep -v '^tests/fuzz/corpus/')
[ -n "$files" ] || files=$(find src tests bench scripts demo mk -name '*.[ch]' -o -name '*.sh' -o -name '*.py' -o -name '*.mk')
n=0
for f in $files; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	lic=$(head -3 "$f" | grep -o 'SPDX-License-Identifier: [A-Za-z0-9.+ -]*' | head -1 | sed 's/.*: //; s/ *$//')
	[ -n "$lic" ] || { err "$f: no SPDX-License-Identifier in its first 3 lines"; continue; }
	case "$f" in
	*.bpf.c|*.bpf.h) [ "$lic" = "GPL-2.0-only" ] || err "$f: a BPF program must be GPL-2.0-only, found '$lic'" ;;
	*) case "$lic" in BSD-2-Clause|"GPL-2.0-only OR BSD-2-Clause") ;; *) err "$f: unexpected license '$lic'" ;; esac ;;
	esac
done
[ $n -gt 100 ] || err "only $n source files checked"
exit $fail
