#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# agent_forks.sh: `probity agent` follows the processes a target forks
# (needs root and BPF), on the process-tree fixture
# (tests/fixtures/multiproc/forker.c): the parent is running (waiting for
# a file) when the agent attaches to it; it then forks two workers without
# exec (no exec event: the recorder follows forks). Process k does
# (k + 1) * 100 iterations of 4 events: the window has the parent and both
# workers with exact counts (--budget off: no probe is windowed). The workers outlive the window (-e): the
# next window lists them as targets (counted `forked`), and both windows
# read back with `probity report`.
set -u
. tests/cli/lib.sh
T=$(mktemp -d /tmp/pbagentk.XXXXXX)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
need_root

mkdir -p "$T/m"
cp "$FIX/multiproc/forker" "$T/forker"
cp "$FIX/multiproc/forker.yaml" "$T/m/forker.yaml"
# the parent waits for $T/go, works, forks, and every process then waits 12 s
"$T/forker" -c 2 -n 100 -w "$T/go" -e 12000 >/dev/null 2>&1 &
f=$!
pids="$pids $f"
"$P" -j agent -m "$T/m" --trace-dir "$T/traces" --state-file "$T/state.json" --metrics-dir none \
	--rotate 6s --duty always --interval 500ms --budget off >"$T/out.json" 2>"$T/err" &
ag=$!
pids="$pids $ag"
i=0
# attached: the window's trace has its header (written after attach)
until [ -n "$(find "$T/traces/forker" -name '*.trace' -size +0 2>/dev/null)" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || { err "the parent is not recorded within 30 s: $(tail -3 "$T/err")"; break; }
	sleep 0.1
done
touch "$T/go"
# the first window ends at 6 s; the second (the workers as targets) then runs
i=0
until py "$T/state.json" "assert len(d['manifests'][0]['targets']) == 3 and d['windows'] >= 1" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 300 ] || { err "the workers are not targets within 30 s: $(cat "$T/state.json")"; break; }
	sleep 0.1
done
sleep 2
kill -TERM $ag
wait $ag; rc=$?
[ $rc -eq 0 ] || err "agent exited $rc: $(tail -3 "$T/err")"
grep -q "child process.*--pid records pid" "$T/err" && err "the agent warns about forks it follows"

py "$T/out.json" "
m = d['manifests'][0]
assert m['counts']['forked'] == 2 and m['counts']['windows'] >= 2, m
assert m['counts']['windows_failed'] == 0, m
" || err "state: $(cat "$T/out.json")"
set -- $(ls "$T/traces/forker" | sort)
[ $# -ge 2 ] || err "expected >= 2 windows, found $#"
"$P" script "$T/traces/forker/$1" >"$T/w1" || err "script $1 failed"
python3 -c "
import re, sys
ev = {}
for l in open(sys.argv[1]):
    m = re.match(r'process pid=(\d+) tid=(\d+) .*events=(\d+)', l)
    if m and m.group(1) == m.group(2):
        ev[int(m.group(1))] = int(m.group(3))
assert ev.get($f) == 400, ('parent', ev)
assert sorted(ev.values()) == [400, 800, 1200], ev
" "$T/w1" || err "the first window did not record the forked workers exactly: $(grep '^process' "$T/w1")"
for t in "$T"/traces/forker/*.trace; do
	"$P" report "$t" >/dev/null 2>"$T/rerr" || err "report $t: $(cat "$T/rerr")"
done
"$P" script "$T/traces/forker/$2" | grep -c "^process pid=\([0-9]*\) tid=\1 " >"$T/n2"
[ "$(cat "$T/n2")" -ge 3 ] || err "the second window does not list the parent and both workers"
exit $fail
