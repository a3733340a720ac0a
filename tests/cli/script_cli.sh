#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# script_cli.sh: `probity script` prints every item of a real trace (the
# demo's leak, recorded with --events; needs root): text and JSON Lines
# have one line per item and agree; per record type the counts equal what
# `probity -j report` read; a chunk and a record of unknown type inserted
# into the trace are shown as such (and warned about), never dropped; a
# missing trace is a usage error with one JSON document under -j.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
need_root

"$P" record -m "$DEMO_M" -o "$T/l.trace" --events -- \
	"$DEMO" -q --pathology leak --duration 1 --clients 2 >"$T/rec.out" 2>"$T/rec.err" ||
	{ echo "FAIL: record: $(tail -3 "$T/rec.err")"; exit 1; }
"$P" -j report "$T/l.trace" >"$T/r.json" || err "report -j failed"
"$P" script "$T/l.trace" >"$T/s.txt" || err "script failed"
"$P" -j script "$T/l.trace" >"$T/s.jsonl" || err "script -j failed"
python3 - "$T/s.txt" "$T/s.jsonl" "$T/r.json" <<'PY' || fail=1
import collections, json, sys
txt = open(sys.argv[1]).read().splitlines()
js = [json.loads(l) for l in open(sys.argv[2])]
c = json.load(open(sys.argv[3]))['counts']
n = collections.Counter(o['type'] for o in js)
bad = []
if len(txt) != len(js):
    bad.append('%d text lines, %d JSON lines' % (len(txt), len(js)))
want = {'resource': c['resource_events'], 'sched': c['sched_records'], 'wakeup': c['wakeups'],
        'block_io': c['block_io'], 'fault': c['faults'], 'snapshot': c['snapshots']}
for k, v in want.items():
    if n[k] != v:
        bad.append('%s: %d lines, report read %d' % (k, n[k], v))
if n['header'] != 1 or n['end'] != 1 or n['descriptor'] == 0:
    bad.append('header/end/descriptor lines: %d/%d/%d' % (n['header'], n['end'], n['descriptor']))
acq = [o for o in js if o['type'] == 'resource' and o['kind'] == 'ACQUIRE']
if not acq or not all(o['descriptor'] and o['resource'] and o['instance'].startswith('0x') for o in acq):
    bad.append('ACQUIRE lines lack descriptor/resource/instance')
r0 = [l for l in txt if ' resource ' in l][:1]
if not r0 or not r0[0].split()[1].count('/') == 1:
    bad.append('text record line is not "SECONDS PID/TID [CPU] TYPE ...": %r' % r0)
for b in bad:
    print('FAIL: %s' % b)
print('script: %d items, %s' % (len(js), dict(n.most_common(6))))
sys.exit(1 if bad else 0)
PY

python3 tests/cli/report_tools.py inject "$T/l.trace" "$T/u.trace" || err "cannot build the injected trace"
"$P" -j script "$T/u.trace" >"$T/u.jsonl" 2>"$T/u.err" || err "script of the injected trace failed"
python3 - "$T/u.jsonl" "$T/s.jsonl" <<'PY' || fail=1
import json, sys
u = [json.loads(l) for l in open(sys.argv[1])]
n = sum(1 for l in open(sys.argv[2]))
ur = [o for o in u if o['type'] == 'unknown_record']
uc = [o for o in u if o['type'] == 'unknown_chunks']
ok = len(ur) == 1 and ur[0]['record_type'] == 200 and len(uc) == 1 and uc[0]['chunk_types'] == [99]
ok = ok and len(u) == n + 2
print(('ok  ' if ok else 'FAIL:') + ' unknown record and chunk: %s %s (%d vs %d lines)' % (ur, uc, len(u), n))
sys.exit(0 if ok else 1)
PY
grep -q "unknown type" "$T/u.err" || err "no warning about the unknown types on stderr"

"$P" -j script "$T/missing.trace" >"$T/m.json" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || err "script of a missing trace exited $rc, not 2"
py "$T/m.json" "assert 'missing.trace' in d['error'], d" || err "no JSON error for a missing trace"
exit $fail
