#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# health_live.sh: `probity health` during a recording, with real BPF. The
# borrowed object pool (tests/fixtures/validation) goes stale within ~1 s;
# record it for 8 s in the background and read the trace while it is
# written: health says "recording in progress" with record's pid, shows
# obj_get suspect/stale before the end, and --follow -j prints one JSON
# line per refresh until the recording ends, the last one complete. A
# recorder killed with SIGKILL leaves a trace that reads as cut, not live.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root
[ -x "$FIX/objpool_borrowed" ] || { echo "FAIL: $FIX/objpool_borrowed not built (make test-unit)"; exit 1; }
sed "s|@BINARY@|$FIX/objpool_borrowed|" tests/fixtures/validation/objpool.manifest.yaml >"$T/b.tmpl"
scripts/fill-build-id.sh "$T/b.tmpl" "$FIX/objpool_borrowed" "$T/b.yaml" || exit 1

# 8 s: python3 may take seconds to start on a loaded machine; the polls use grep
"$P" record -m "$T/b.yaml" -o "$T/b.trace" -- "$FIX/objpool_borrowed" 8 >"$T/rec.out" 2>"$T/rec.err" &
REC=$!
# in progress, with record's pid, as soon as the plan and a snapshot are written
i=0; live=""
while [ $i -lt 60 ] && kill -0 $REC 2>/dev/null; do
	sleep 0.1; i=$((i + 1))
	"$P" -j health "$T/b.trace" >"$T/h0.json" 2>/dev/null || [ $? -eq 1 ] || continue
	grep -q '"in_progress":true' "$T/h0.json" && grep -q '"descriptors":\[{' "$T/h0.json" &&
		{ live=1; break; }
done
[ -n "$live" ] || err "health never saw the recording in progress: $(cat "$T/h0.json" 2>/dev/null)"
grep -q "\"recorder_pid\":$REC," "$T/h0.json" || err "in progress: recorder_pid is not record's pid $REC"
grep -q '"complete":false' "$T/h0.json" || err "in progress: complete is not false"
"$P" health "$T/b.trace" >"$T/h0.txt"
grep -q "recording in progress (pid $REC" "$T/h0.txt" || err "text: no 'recording in progress (pid $REC': $(head -1 "$T/h0.txt")"
# the state changes while it records: suspect or stale before the end
i=0; seen=""
while [ $i -lt 60 ] && kill -0 $REC 2>/dev/null; do
	"$P" -j health "$T/b.trace" >"$T/h1.json" 2>/dev/null
	grep -q '"in_progress":true' "$T/h1.json" &&
		grep -qE '"id":"obj_get","initial":"validated","state":"(suspect|stale)"' "$T/h1.json" &&
		{ seen=1; break; }
	sleep 0.1; i=$((i + 1))
done
[ -n "$seen" ] && echo "ok   live: obj_get $(grep -oE '"id":"obj_get","initial":"validated","state":"[a-z]+"' "$T/h1.json" | sed 's/.*state":"//; s/"//') while recording" ||
	err "live: obj_get never read suspect/stale while recording"
# follow to the end: JSON lines, the last one final
"$P" -j health --follow --interval 200 "$T/b.trace" >"$T/follow.jsonl"
rc=$?
wait $REC
[ $rc -eq 1 ] || err "health --follow exited $rc, expected 1 (obj_get stale)"
python3 -c "import json,sys
ls = [json.loads(l) for l in open(sys.argv[1])]
assert len(ls) >= 3, len(ls)
assert all(d['in_progress'] for d in ls[:-1]), [d['in_progress'] for d in ls]
last = ls[-1]
assert not last['in_progress'] and last['complete'] and last['recorder_pid'] is None, last
g = [x for x in last['descriptors'] if x['id'] == 'obj_get'][0]
assert g['state'] == 'stale', g
ev = [[x for x in d['descriptors'] if x['id'] == 'obj_get'][0]['events'] for d in ls]
assert ev == sorted(ev) and ev[-1] > ev[0], ev
print('ok   follow: %d refreshes, obj_get events %d -> %d, final stale' % (len(ls), ev[0], ev[-1]))" "$T/follow.jsonl" ||
	err "follow: $(head -c 600 "$T/follow.jsonl")"
# SIGKILLed recorder: cut, not live
"$P" record -m "$T/b.yaml" -o "$T/k.trace" -- "$FIX/objpool_borrowed" 10 >/dev/null 2>&1 &
REC=$!
# kill it once it is recording (the trace reads as in progress), not
# after a fixed sleep: under load the recorder may not have opened it yet
i=0
until "$P" -j health "$T/k.trace" 2>/dev/null |
	python3 -c "import json,sys; sys.exit(0 if json.load(sys.stdin).get('in_progress') else 1)" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] && kill -0 $REC 2>/dev/null || { err "killed recorder: never started recording"; break; }
	sleep 0.1
done
kill -9 $REC; wait $REC 2>/dev/null
"$P" -j health "$T/k.trace" >"$T/k.json"
# the target record started outlives it: end it by the pid the trace names
TP=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['target_pid'])" "$T/k.json")
[ -n "$TP" ] && [ "$TP" -gt 1 ] && kill "$TP" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert not d['in_progress'] and not d['complete'], d" "$T/k.json" ||
	err "killed recorder: trace reads as in progress or complete"
"$P" health "$T/k.trace" | grep -q "cut short: no recorder holds it" || err "killed recorder: text does not say cut short"
exit $fail
