#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# governor_est.py: the "estimates_vs_exact" section of
# bench/results/governor.json, from the runs bench/governor.sh
# (GOV_EST_RUNS=N) left in DIR: each windowed resource's acquires/s
# estimate under record --budget vs the demo's own count in the same run.
#   governor_est.py DIR RUNS SECS LOAD_BEFORE LOAD_AFTER
# Per run and resource: relative error of the estimate, whether the stated
# 95 % +- covered the exact rate (null when the estimator said "unknown":
# fewer than 2 windows), and whether the interval with the slowdown
# correction's range (low95..high95) did. Other keys of the file are kept.
import datetime
import json
import subprocess
import sys

# the demo's own count of each resource's ACQUIREs (the exact figure)
TRUTH = {'demo.pool.page': ('bufpool', 'gets'), 'demo.conn': ('connpool', 'acquires'),
         'demo.workq.slot': ('workq', 'pushes'), 'demo.tokens': ('tokens', 'takes')}


def docs(path):
    out = []
    try:
        lines = open(path).readlines()
    except OSError:
        return out
    for line in lines:
        line = line.strip()
        if line.startswith('{'):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def rows_of(path):
    d = docs(path)
    demo = next((x for x in d if 'requests_per_s' in x), None)
    summ = next((x for x in d if 'stopped_by' in x), None)
    b = (summ or {}).get('budget') or {}
    out = []
    if not demo:
        return out
    for g in b.get('resources', []):
        t = TRUTH.get(g['resource'])
        if not g.get('windowed') or not t:
            continue
        exact = demo[t[0]][t[1]] / demo['elapsed_s']
        est, err = g.get('acquires_per_s'), g.get('acquires_per_s_err95')
        lo, hi = g.get('acquires_per_s_low95'), g.get('acquires_per_s_high95')
        out.append({
            'resource': g['resource'], 'windows': g.get('windows'),
            'basis': g.get('estimate_basis'),
            'estimate_per_s': round(est, 1) if est is not None else None,
            'stated_err95': round(err, 1) if err is not None else None,
            'uncorrected_per_s': round(g.get('acquires_per_s_uncorrected') or 0, 1),
            'slowdown_share_max': round(g.get('slowdown_share_max') or 0, 3),
            'exact_per_s': round(exact, 1),
            'relative_error': round((est - exact) / exact, 3) if exact and est is not None else None,
            'covered_err95': abs(est - exact) <= err if err is not None else None,
            'covered_range': (lo <= exact and (hi is None or exact <= hi)) if lo is not None else None,
        })
    return out


def frac(v):
    v = [x for x in v if x is not None]
    return '%d/%d' % (sum(1 for x in v if x), len(v)) if v else '0/0'


def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    m = len(v) // 2
    return v[m] if len(v) % 2 else round((v[m - 1] + v[m]) / 2, 3)


def main():
    w, runs, secs, load0, load1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
        float(sys.argv[4]), float(sys.argv[5])
    res = {}
    for cfg in ('1', '2', '5'):
        per_run = [rows_of('%s/%s.%d' % (w, cfg, r)) for r in range(runs)]
        flat = [x for rr in per_run for x in rr]
        stated = [x for x in flat if x['stated_err95'] is not None]
        res['budget_%s%%' % cfg] = {
            'runs': per_run,
            'summary': {
                'estimates': len(flat),
                'with_stated_err95': len(stated),
                'unknown_err': len(flat) - len(stated),
                'covered_err95': frac([x['covered_err95'] for x in flat]),
                'covered_range': frac([x['covered_range'] for x in flat]),
                'median_abs_relative_error': median([abs(x['relative_error'])
                                                     for x in flat if x['relative_error'] is not None]),
                'median_relative_error': median([x['relative_error'] for x in flat]),
                'median_relative_error_stated': median([x['relative_error'] for x in stated]),
                'median_windows': median([x['windows'] for x in flat]),
            },
        }
    commit = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    sec = {
        'method': 'probity-demo --duration %g --clients 4 under record --budget 1/2/5%%, %d runs each, '
                  'interleaved; estimate = the governor\'s acquires/s of each windowed resource (mean of '
                  'the per-window rates after the warm-up, corrected for the probes\' slowdown); exact = '
                  'the demo\'s own count / its elapsed time in the same run; covered_err95: |estimate - '
                  'exact| <= the stated 95 %% half-width (null: the estimator said unknown); '
                  'covered_range: exact within low95..high95 (the slowdown correction\'s range)' % (secs, runs),
        'date_utc': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'git_commit': commit,
        'loadavg_1min_before_after': [load0, load1],
        'results': res,
    }
    path = 'bench/results/governor.json'
    try:
        out = json.load(open(path))
    except (OSError, ValueError):
        out = {}
    out['estimates_vs_exact'] = sec
    json.dump(out, open(path, 'w'), indent=2)
    print(json.dumps({k: v['summary'] for k, v in res.items()}, indent=1))


if __name__ == '__main__':
    main()
