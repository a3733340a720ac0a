#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# agent_faults.sh: `probity agent` under faults (needs root and BPF; the
# target restart is in tests/cli/agent.sh):
#   1. corrupt manifests (bad YAML, a bad value) are logged with file and
#      line, marked invalid in the state file; the good one keeps recording
#   2. the agent is SIGKILLed: the last rotated trace reads back whole with
#      `probity report`, the one cut short up to its last complete chunk
#   3. the trace disk is full (tests/fault/faultinj.so: ENOSPC from the
#      Nth trace write on): the agent keeps running, the loss is counted in
#      the state file and the metrics, and SIGTERM still exits 0
#   4. the size cap (--max-trace-mib 1) rotates a window early; each
#      rotated trace reached the cap and reads back (--budget off: every
#      probe writes, so the cap is reached)
set -u
. tests/cli/lib.sh
T=$(mktemp -d /tmp/pbagentf.XXXXXX)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
SHIM="$PROBITY_BUILD/fixtures/faultinj.so"
need_root
[ -f "$SHIM" ] || { echo "FAIL: $SHIM missing (make $SHIM)"; exit 1; }

mkdir -p "$T/m" "$T/metrics"
cp "$DEMO_M" "$T/m/demo.yaml"
printf 'manifest: 1\nname: broken\ntargets: [ {\n' >"$T/m/bad.yaml"
sed 's/^manifest: 1$/manifest: 7/' "$DEMO_M" >"$T/m/badversion.yaml"
"$DEMO" --clients 1 --duration 60 -q >/dev/null 2>&1 &
pids="$pids $!"

# 1 + 2: corrupt manifests, then SIGKILL
"$P" agent -m "$T/m" --trace-dir "$T/traces" --state-file "$T/state.json" --metrics-dir none \
	--rotate 3s --duty always >/dev/null 2>"$T/err" &
ag=$!
pids="$pids $ag"
# three rotations of 3 s (polled: under load a window starts late)
i=0
until py "$T/state.json" "
assert [m for m in d['manifests'] if m['stem'] == 'demo'][0]['counts']['windows'] >= 3" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 1200 ] || { err "fewer than 3 windows within 120 s: $(cat "$T/state.json")"; break; }
	sleep 0.1
done
kill -0 $ag 2>/dev/null || err "the agent died with corrupt manifests: $(tail -3 "$T/err")"
grep -q "bad.yaml:4:1: .*YAML" "$T/err" || err "bad.yaml not logged with its line: $(cat "$T/err")"
grep -q "badversion.yaml:[0-9]*:" "$T/err" || err "badversion.yaml not logged with its line"
py "$T/state.json" "
ms = {m['stem']: m for m in d['manifests']}
assert ms['bad']['state'] == 'invalid' and 'bad.yaml:4:' in ms['bad']['error'], ms['bad']
assert ms['badversion']['state'] == 'invalid', ms['badversion']
assert ms['demo']['counts']['windows'] >= 2 and ms['demo']['counts']['windows_failed'] == 0, ms['demo']
" || err "state with corrupt manifests: $(cat "$T/state.json")"
kill -KILL $ag
wait $ag 2>/dev/null
set -- $(ls "$T/traces/demo" | sort)
[ $# -ge 3 ] || err "expected >= 3 traces before the SIGKILL, found $#"
last_rotated=""
cut=""
while [ $# -gt 1 ]; do last_rotated=$1; shift; done
cut=$1
"$P" report "$T/traces/demo/$last_rotated" >"$T/r1" 2>"$T/r1.err" ||
	err "the last rotated trace does not read: $(cat "$T/r1.err")"
grep -q "incomplete\|cut" "$T/r1.err" && err "the last rotated trace is incomplete: $(cat "$T/r1.err")"
"$P" script "$T/traces/demo/$last_rotated" | grep -q "^end " ||
	err "the last rotated trace has no end chunk"
"$P" report "$T/traces/demo/$cut" >/dev/null 2>"$T/r2.err" ||
	err "the trace cut by SIGKILL does not read up to its last chunk: $(cat "$T/r2.err")"

# 3: disk full for the traces from the 10th write on; state and metrics
# elsewhere (--budget off: the 10th write is counted on the traces alone,
# without the governor's calibration file in the same directory)
rm -f "$T/m/bad.yaml" "$T/m/badversion.yaml"
LD_PRELOAD="$SHIM" FAULT_PATH="$T/full" FAULT_NTH=10 FAULT_LOG="$T/fault.log" \
	"$P" -j agent -m "$T/m" --trace-dir "$T/full" --state-file "$T/state2.json" \
	--metrics-dir "$T/metrics" --rotate 3s --duty always --budget off \
	>"$T/out.json" 2>"$T/err2" &
ag=$!
pids="$pids $ag"
sleep 12
kill -0 $ag 2>/dev/null || err "the agent died on a full disk: $(tail -3 "$T/err2")"
kill -TERM $ag
wait $ag; rc=$?
[ $rc -eq 0 ] || err "agent exited $rc after SIGTERM on a full disk: $(tail -3 "$T/err2")"
[ -s "$T/fault.log" ] || err "no fault was injected"
py "$T/out.json" "
m = d['manifests'][0]
assert m['losses']['trace_write_errors'] > 0 and m['losses']['windows_failed'] >= 2, m
assert m['state'] == 'failed' and 'No space left' in m['error'], m
" || err "disk full not counted: $(cat "$T/out.json")"
grep -Eq '^probity_agent_windows_total\{manifest="demo",result="failed"\} [2-9]' "$T/metrics/probity.prom" &&
	grep -Eq '^probity_agent_lost_total\{manifest="demo",what="trace_write_errors"\} [1-9]' "$T/metrics/probity.prom" ||
	err "disk full not in the metrics: $(grep demo "$T/metrics/probity.prom")"

# 4. the size cap: --max-trace-mib 1 rotates long before --rotate 60s; every
#    rotated trace reached the cap and reads back whole
"$P" -j agent -m "$T/m" --trace-dir "$T/cap" --state-file "$T/state3.json" --metrics-dir none \
	--rotate 60s --max-trace-mib 1 --interval 100ms --duty always --budget off \
	>"$T/out3.json" 2>"$T/err3" &
ag=$!
pids="$pids $ag"
i=0
until py "$T/state3.json" "assert d['windows'] >= 3" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || { err "no rotation at the 1 MiB cap within 60 s: $(cat "$T/state3.json")"; break; }
	sleep 0.1
done
kill -TERM $ag
wait $ag; rc=$?
[ $rc -eq 0 ] || err "agent exited $rc after SIGTERM (size cap): $(tail -3 "$T/err3")"
set -- $(ls "$T/cap/demo" | sort)
[ $# -ge 3 ] || err "size cap: expected >= 3 traces (2 rotated + the last), found $#"
while [ $# -gt 1 ]; do
	sz=$(stat -c %s "$T/cap/demo/$1")
	[ "$sz" -ge 1048576 ] || err "size cap: $1 rotated at $sz bytes, before 1 MiB"
	"$P" report "$T/cap/demo/$1" >/dev/null 2>"$T/r3.err" || err "size cap: $1 does not read: $(cat "$T/r3.err")"
	shift
done
exit $fail
