#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# sample_progress.sh: `probity sample` prints its per-second progress only
# when stderr is a terminal (a log or a pipe gets the start line and the
# summary alone), and on a terminal rewrites one line in place. The
# terminal is a pseudo-terminal from util-linux script(1). Needs root
# (perf_event cpu-clock for every CPU).
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
need_root

"$P" sample -o "$T/a.samples" -d 2.2 >"$T/a.out" 2>"$T/a.err" ||
	{ echo "FAIL: sample: $(tail -3 "$T/a.err")"; exit 1; }
grep -q 'sampling into' "$T/a.err" || err "no start line on stderr"
! grep -q 'samples, .* in BPF JIT' "$T/a.err" || err "progress printed to a non-terminal stderr: $(cat "$T/a.err")"
grep -q '^sample: [0-9]* samples' "$T/a.out" || err "no summary on stdout"

if ! command -v script >/dev/null 2>&1; then
	[ "${CI:-}" = true ] && { echo "FAIL: script(1) (bsdutils) missing under CI=true"; exit 1; }
	echo "skip: no script(1) for a pseudo-terminal"; exit 77
fi
script -qec "$P sample -o $T/b.samples -d 2.2" "$T/tty.log" >/dev/null 2>&1 </dev/null ||
	err "sample on a pseudo-terminal failed: $(tail -c 300 "$T/tty.log")"
grep -q 'probity sample: [0-9]*s, [0-9]* samples' "$T/tty.log" || err "no progress on a terminal: $(tail -c 300 "$T/tty.log")"
grep -q "$(printf '\r')probity sample: " "$T/tty.log" || err "progress does not rewrite its line (no CR)"
exit $fail
