#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# plan_estimate.sh: `plan` cost classes and `plan --estimate --pid PID`
# (issue 13 §4) on a running demo (needs root and BPF): every site has its
# cost class, the count-only programs count the hits of the functions every
# request calls, each site's overhead is hits x its class's cost, the total
# adds them up, and two symbol WAITs of one resource are not offered as
# each other's cheaper equivalent. No timing is asserted.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
dp=
trap '[ -n "$dp" ] && kill $dp 2>/dev/null; rm -rf "$T"' EXIT

"$P" plan "$DEMO_M" --estimate >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--estimate without --pid exited $rc, expected 2"
"$P" -j plan "$DEMO_M" >"$T/p.json" || err "plan failed"
py "$T/p.json" "
cls = {s['event'] + '/' + s['at']: s['cost_class'] for s in d['sites']}
assert cls['page_read_miss/entry'] == 'single-step', cls
assert cls['page_get/return'] == 'return', cls
assert cls['page_put/entry'] == 'emulated', cls
" || err "plan cost classes: $(head -c 600 "$T/p.json")"
"$P" plan "$DEMO_M" | grep -q "cost class" || err "plan text has no cost class column"

need_root
"$DEMO" --clients 2 --duration 60 -q >/dev/null 2>&1 &
dp=$!
sleep 0.5
"$P" -j plan "$DEMO_M" --estimate --pid $dp -d 1.5 >"$T/e.json" 2>"$T/e.err" ||
	err "plan --estimate failed: $(cat "$T/e.err")"
py "$T/e.json" "
e = d['estimate']
assert e['pid'] == $dp and e['duration_s'] > 1 and e['calibrated'], e
s = {x['site']: x for x in e['sites']}
for k in ('page_get (bufpool_get+0x0 entry)', 'page_put (bufpool_put+0x0 entry)',
          'conn_query (connpool_query+0x0 entry)'):
    assert s[k]['hits'] > 0 and s[k]['class'] == 'emulated', s[k]
    assert abs(s[k]['cpu_share_pct'] - s[k]['hits_per_s'] * s[k]['cost_ns'] / 1e7) < 1e-6, s[k]
total = sum(x['hits_per_s'] * x['cost_ns'] for x in e['sites']) / 1e6
assert abs(total - e['total_ms_per_s']) < 1e-6 * max(1, total), (total, e['total_ms_per_s'])
assert e['process_cpu_s'] > 0 and e['total_process_cpu_pct'] > 0, e
assert e['cheaper_equivalents'] == [], e['cheaper_equivalents']
" || err "estimate: $(head -c 1500 "$T/e.json")"
"$P" plan "$DEMO_M" --estimate --pid $dp -d 0.5 >"$T/e.txt" 2>&1 || err "plan --estimate (text) failed"
grep -q "^total: .* of one CPU" "$T/e.txt" || err "text estimate: $(tail -5 "$T/e.txt")"
exit $fail
