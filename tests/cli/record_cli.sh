#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# record_cli.sh: `probity record` end to end on the demo (needs root and
# BPF: skips, or fails under CI=true, without them): usage and refusal exit
# codes, a trace file created 0600, the target spawned held and recorded
# to its exit, --events with a tiny ring buffer reports its drops, -d
# stops a running target, -j summary.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# the spawned target shares stdout: the JSON summary is the last line
json() { python3 -c "import json,sys; d=json.loads(open('$1').read().strip().splitlines()[-1]); $2"; }

# usage errors: exit 2, no BPF needed
"$P" record >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "record without -m exited $rc, expected 2"
"$P" record -m "$DEMO_M" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "record without --pid or CMD exited $rc, expected 2"
"$P" record -m "$DEMO_M" --pid 1 -- /bin/true >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "record with --pid and CMD exited $rc, expected 2"
"$P" record -m "$T/nope.yaml" -- /bin/true >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "record with an unreadable manifest exited $rc, expected 2"
"$P" record --help | grep -q -- "--events" || err "record --help lacks --events"

# refused plan (wrong build-id): exit 1 as `plan` does, no trace written
sed -E 's/(build_id: *")[0-9a-f]{8}/\100000000/' "$DEMO_M" >"$T/wrong.yaml"
cp "$DEMO" "$T/probity-demo"
"$P" plan "$T/wrong.yaml" >/dev/null 2>&1; prc=$?
"$P" record -m "$T/wrong.yaml" -o "$T/wrong.trace" -- "$T/probity-demo" -q >/dev/null 2>"$T/err"; rc=$?
[ $prc -eq 1 ] || err "plan of a wrong build-id exited $prc, expected 1"
[ $rc -eq 1 ] || err "record of a wrong build-id exited $rc, expected 1: $(cat "$T/err")"
[ -e "$T/wrong.trace" ] && err "a refused record wrote a trace file"

need_root

# 1. spawn, record to the target's exit, file 0600
"$P" record -m "$DEMO_M" -o "$T/a.trace" -- "$DEMO" --clients 2 --requests 300 -q \
	>"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] || err "record exited $rc: $(cat "$T/err")"
grep -q "stopped by target exited" "$T/out" || err "summary lacks the stop reason: $(cat "$T/out")"
grep -q "0 drops" "$T/out" || err "summary lacks '0 drops': $(cat "$T/out")"
mode=$(stat -c %a "$T/a.trace" 2>/dev/null)
[ "$mode" = 600 ] || err "trace file mode is $mode, expected 600"
head -c 8 "$T/a.trace" | grep -q PBTRACE || err "trace file lacks the PBTRACE magic"

# 2. drops: a 4 KiB ring buffer and a burst of events -> counted, reported
"$P" -j record -m "$DEMO_M" -o "$T/d.trace" --events --ringbuf-kib 4 --interval 1000 \
	-- "$DEMO" --clients 2 --requests 1500 -q >"$T/d.json" 2>"$T/derr"; rc=$?
[ $rc -eq 0 ] || err "record --events exited $rc: $(cat "$T/derr")"
json "$T/d.json" "assert d['drops'] > 0, d; assert d['records'] > 0, d" ||
	err "tiny ring buffer: drops not reported in JSON: $(cat "$T/d.json")"
"$P" record -m "$DEMO_M" -o "$T/d2.trace" --events --ringbuf-kib 4 --interval 1000 \
	-- "$DEMO" --clients 2 --requests 1500 -q >"$T/d2.out" 2>"$T/d2.err"
grep -q "records were dropped" "$T/d2.err" || err "drops not warned about on stderr: $(cat "$T/d2.err")"
grep -aq "lost evidence" "$T/d2.trace" || err "drops not noted in the trace file"

# 3. -d stops a target that would run on; the target gets SIGTERM
# (3 s: under load the demo's start-up alone took 0.6 s of a 0.7 s run)
"$P" -j record -m "$DEMO_M" -o "$T/t.trace" -d 3 -- "$DEMO" --duration 0 -q \
	>"$T/t.json" 2>"$T/terr"; rc=$?
[ $rc -eq 0 ] || err "record -d exited $rc: $(cat "$T/terr")"
json "$T/t.json" "assert d['stopped_by'] == 'duration', d; assert d['events'] > 0, d; assert d['snapshots'] >= 2, d" ||
	err "-d summary: $(cat "$T/t.json")"

# 4. --pid: attach to a running demo; stops when it exits
# The demo runs until it is told to stop, once the recording has counted
# events (a fixed run time lost the race with a slow attach under load).
"$DEMO" --clients 1 --duration 0 -q >/dev/null 2>&1 &
dpid=$!
"$P" -j record -m "$DEMO_M" -o "$T/p.trace" --pid $dpid >"$T/p.json" 2>"$T/perr" &
rpid=$!
i=0
until "$P" -j health "$T/p.trace" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if sum(x.get('events', 0) for x in d.get('descriptors', [])) > 0 else 1)" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] && kill -0 $rpid 2>/dev/null || break
	sleep 0.1
done
kill -TERM $dpid 2>/dev/null
wait $dpid
wait $rpid; rc=$?
[ $rc -eq 0 ] || err "record --pid exited $rc: $(cat "$T/perr")"
json "$T/p.json" "assert d['stopped_by'] == 'target exited', d; assert d['events'] > 0, d" ||
	err "--pid summary: $(cat "$T/p.json")"
exit $fail
