#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# size_limits.sh: the size limits of docs/HACKING.md (issue 10) hold in src/:
# no function over 150 lines, none over 80 without an "Over 80 lines
# because ..." comment above it, no file over 800 lines. The offenders are
# what scripts/check-size.py prints; anything printed is a failure.
set -u
. tests/cli/lib.sh
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

python3 scripts/check-size.py src >"$OUT" 2>&1
rc=$?
if [ -s "$OUT" ]; then
	err "scripts/check-size.py src found offenders (exit $rc):"
	sed 's/^/    /' "$OUT"
elif [ $rc -ne 0 ]; then
	err "scripts/check-size.py src exited $rc"
else
	echo "ok: every function and file in src/ is within the size limits"
fi
exit $fail
