#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""table.py: the markdown tables of docs/benchmark.md ("Real-code mutation
benchmark (issue 15)") from bench/results/realmut.json, so the document
shows what the run measured and nothing typed by hand.

    table.py [bench/results/realmut.json]
"""
import json
import sys


def pr(s):
    if not s or s.get('precision') is None or s.get('recall') is None:
        return '—'
    return '%.2f/%.2f' % (s['precision'], s['recall'])


def pct(x):
    return '—' if x is None else '%.2f' % x


def roles(d):
    return ', '.join('%s %d' % (k, v) for k, v in sorted((d or {}).items())) or '0'


def main():
    j = json.load(open(sys.argv[1] if len(sys.argv) > 1 else 'bench/results/realmut.json'))
    print('| variant | arm | verdict | pin P/R | unpin P/R | lock P/R | unlock P/R |'
          ' lifetime identity | truly broken | diagnosis |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for c in j['cells']:
        if c['arm'] == 'compiled':
            continue
        st = c['stale']
        why = (st.get('reason') or '')[:90]
        s = c.get('sites', {})
        li = c.get('lifetime_identity') if st['state'] != 'refused' else None
        print('| %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s |' % (
            c['variant'], c['arm'], st['state'], ' (%s)' % why if why else '',
            pr(s.get('pin')), pr(s.get('unpin')), pr(s.get('lock')), pr(s.get('unlock')),
            '—' if li is None else '%.3f' % li,
            {True: 'yes', False: 'no', None: '—'}[c.get('model_truly_broken')],
            c.get('diagnosis')))
    print()
    print('| variant | arm | block I/O issued (by role) | writes (by role) |'
          ' truth: I/O under a pin (by role) | arm tied | arm right | I/O recall |'
          ' I/O precision | off-CPU under a pin: truth s | off-CPU recall | tps |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for c in j['cells']:
        x = c.get('cross_layer') or {}
        io = x.get('block_io')
        if not io:
            continue
        off = x.get('off_cpu') or {}
        print('| %s | %s | %d (%s) | %s | %d (%s) | %d | %d | %s | %s | %.1f | %s | %s |' % (
            c['variant'], c['arm'], io['issued'], roles(io['by_role']),
            roles(io['writes_by_role']), io['truth_tied'], roles(io['truth_tied_by_role']),
            io['arm_tied'], io['arm_right'], pct(x.get('io_recall')),
            pct(x.get('io_precision')), off.get('truth_tied_ns', 0) / 1e9,
            pct(x.get('off_cpu_recall')),
            '—' if c.get('tps') is None else '%.0f' % c['tps']))
    print()
    ov = j.get('overhead', {})
    print('overhead:', ', '.join('%s %s (%s)' % (m, v.get('ratio_to_bare'), v.get('tps'))
                                 for m, v in ov.items() if isinstance(v, dict) and 'tps' in v),
          '| load', ov.get('loadavg_1min'))
    print('method:', json.dumps(j.get('method')))
    print('confusion:', json.dumps(j.get('confusion')))
    print('calibration:', json.dumps(j.get('calibration')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
