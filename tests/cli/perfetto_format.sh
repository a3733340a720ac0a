#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# perfetto_format.sh: `probity export --perfetto` on the demo's planted
# pool contention (real BPF, needs root) is valid Chrome/Perfetto
# trace-event JSON (tests/cli/report_tools.py checks the required fields
# of every phase; no trace_processor is packaged for Debian or npm) and
# keeps probity's promises: timestamps are absolute CLOCK_MONOTONIC (inside
# the recording's own window, and not after this machine's uptime), every
# thread track is named, slices nest per thread, and release -> wakeup flow
# arrows exist where the report counts release-woken waits.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
need_root

"$P" record -m "$DEMO_M" -o "$T/c.trace" --events -- \
	"$DEMO" -q --pathology pool-contention --duration 2 --clients 4 >"$T/rec.out" 2>"$T/rec.err" ||
	{ echo "FAIL: record: $(tail -3 "$T/rec.err")"; exit 1; }
"$P" -j report "$T/c.trace" >"$T/r.json" || err "report -j failed"
"$P" -j export --perfetto "$T/c.trace" -o "$T/c.json" >"$T/e.json" 2>"$T/e.err" ||
	err "export failed: $(cat "$T/e.err")"
first=$(py "$T/r.json" "print(d['first_ts_ns'])")
last=$(py "$T/r.json" "print(d['last_ts_ns'])")
python3 tests/cli/report_tools.py trace-events "$T/c.json" "$first" "$last" >"$T/check.out"
rc=$?
cat "$T/check.out"
[ $rc -eq 0 ] || err "the trace-event check failed"
python3 - "$T/c.json" "$T/e.json" "$T/r.json" <<'PY' || fail=1
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
st, r = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
up = float(open('/proc/uptime').read().split()[0])
bad = []
ts = [e['ts'] for e in ev if 'ts' in e]
if not ts or max(ts) / 1e6 > up or min(ts) / 1e6 < 1e-3:
    bad.append('timestamps are not CLOCK_MONOTONIC microseconds (max %.1f s, uptime %.1f s)' % (max(ts) / 1e6, up))
waits = sum(1 for e in ev if e['ph'] == 'X' and e['name'] == 'WAIT demo.pool.page')
offcpu = sum(1 for e in ev if e['ph'] == 'X' and e.get('cat') == 'off_cpu')
flows = sum(1 for e in ev if e['ph'] == 's')
io = sum(1 for e in ev if e['ph'] == 'b' and e.get('cat') == 'block_io')
if waits < 100 or offcpu == 0:
    bad.append('%d WAIT demo.pool.page slices, %d off-CPU slices' % (waits, offcpu))
if flows == 0 or flows != st['flows']:
    bad.append('%d flow arrows in the file, %d reported' % (flows, st['flows']))
if io == 0 or io != st['block_io_slices']:
    bad.append('%d block I/O slices in the file, %d reported' % (io, st['block_io_slices']))
if st['clipped'] != 0:
    bad.append('%d slices clipped: something crossed its parent' % st['clipped'])
names = [e for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name']
if len(names) != st['threads']:
    bad.append('%d thread_name events for %d threads' % (len(names), st['threads']))
for b in bad:
    print('FAIL: %s' % b)
print('export: %d WAIT, %d off-CPU, %d block I/O, %d flows, %d threads (%d named)' %
      (waits, offcpu, io, flows, st['threads'], st['named_threads']))
sys.exit(1 if bad else 0)
PY
exit $fail
