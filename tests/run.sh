#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# run.sh: run every probity test and end with one summary line
# "N passed, N failed, N skipped". Exit 0 only when nothing failed.
#
#   tests/run.sh [--build DIR] [--unit-only] [--tag NAME] [FILTER]
#
# Unit tests: each build/tests/test_* binary (one line per TEST).
# CLI tests: each tests/cli/*.sh script is one test; it exits 0 (pass),
# 77 (skip; a failure under CI=true) or anything else (fail).
set -u
BUILD=build
UNIT_ONLY=0
TAG=""
FILTER=""
while [ $# -gt 0 ]; do
	case "$1" in
	--build) BUILD=$2; shift 2 ;;
	--unit-only) UNIT_ONLY=1; shift ;;
	--tag) TAG="[$2] "; shift 2 ;;
	*) FILTER=$1; shift ;;
	esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
BUILD=$(cd "$BUILD" && pwd)
export PROBITY_BUILD="$BUILD" PROBITY_ROOT="$ROOT"
LOGDIR="$BUILD/test-logs"
mkdir -p "$LOGDIR"

passed=0 failed=0 skipped=0
failures=""

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	case "$n" in *"$FILTER"*) ;; *) continue ;; esac
	out="$LOGDIR/$n.log"
	"$t" >"$out" 2>&1
	rc=$?
	sed 's/^/  /' "$out" | grep -E '^  (ok|FAIL|skip) ' | sed "s/^  /$TAG/"
	line=$(grep -E "^$n: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$" "$out" | tail -1)
	if [ -z "$line" ]; then
		echo "${TAG}FAIL $n: no summary line (crashed? exit $rc); log: $out"
		tail -20 "$out" | sed 's/^/    /'
		failed=$((failed + 1)); failures="$failures $n"
		continue
	fi
	p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$f" -gt 0 ] || [ $rc -ne 0 ]; then
		[ "$f" -gt 0 ] || { failed=$((failed + 1)); echo "${TAG}FAIL $n exited $rc"; }
		failures="$failures $n"
		grep -vE '^(ok|skip) ' "$out" | sed 's/^/    /'
	fi
done

if [ $UNIT_ONLY -eq 0 ]; then
	for t in tests/cli/*.sh; do
		[ -f "$t" ] || continue
		n=cli.$(basename "$t" .sh)
		case "$n" in *"$FILTER"*) ;; *) continue ;; esac
		out="$LOGDIR/$n.log"
		sh "$t" >"$out" 2>&1
		rc=$?
		if [ $rc -eq 0 ]; then
			echo "${TAG}ok   $n"; passed=$((passed + 1))
		elif [ $rc -eq 77 ] && [ "${CI:-}" != "true" ]; then
			echo "${TAG}skip $n ($(tail -1 "$out"))"; skipped=$((skipped + 1))
		else
			[ $rc -eq 77 ] && echo "${TAG}FAIL $n: skipped under CI=true"
			echo "${TAG}FAIL $n (exit $rc); log: $out"
			tail -30 "$out" | sed 's/^/    /'
			failed=$((failed + 1)); failures="$failures $n"
		fi
	done
fi

[ -n "$failures" ] && echo "${TAG}failed:$failures"
echo "${TAG}$passed passed, $failed failed, $skipped skipped"
echo "$passed $failed $skipped" >"$BUILD/test-summary"
[ $failed -eq 0 ]
