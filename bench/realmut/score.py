#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""score.py: score the four arms of bench/realmut.sh (issue 15).

    score.py --cells DIR --mutations mutations.json --variants "clean ..." -o OUT
    score.py --cell DIR/V.ARM     (score one finished cell into its cache)

DIR holds one directory per run (bench/realmut.sh writes them):
  V.ARM/      ARM in usdt, manifest, sysonly: rec/*.bin (the compiled-in
              recorder's log of that very run: the ground truth),
              script.jsonl (`probity -j script` of the arm's trace),
              report.json (`probity -j report`), rec.rc, rec.json, rec.err,
              pgbench.out
  V.plan/     as_written.{json,rc}, rebind.{json,rc} (`probity -j plan` of
              the Debian-bound manifest on V's plain build), build_id_*
  overhead.MODE.R/pgbench.out
Every number is explained in docs/benchmark.md ("Real-code mutation
benchmark (issue 15)"). tests/cli/realmut_smoke.sh runs this on the
fixture tests/fixtures/realmut/ and checks that it can fail.
"""
import argparse
import hashlib
import json
import multiprocessing
import os
import platform
import re
import struct
import subprocess
import sys
import time

REC = struct.Struct('<HHiIIQ')
KINDS = {1: 'pin', 2: 'unpin', 3: 'lock', 4: 'unlock', 5: 'victim', 6: 'lookup'}
# an arm's (resource, kind) -> the ground-truth kind it claims to mark
ARM_KIND = {('pg.buffer.pin', 'ACQUIRE'): 'pin', ('pg.buffer.pin', 'RELEASE'): 'unpin',
            ('pg.buffer.content', 'ACQUIRE'): 'lock',
            ('pg.buffer.content', 'RELEASE'): 'unlock'}
SCORED = ('pin', 'unpin', 'lock', 'unlock')
ARMS = ('usdt', 'manifest', 'manifest_sym', 'sysonly')
# below this precision or recall (either, any scored kind) an arm's model
# is truly broken for that build: the measured ground truth, not a guess
BROKEN_BELOW = 0.9


def read_truth(d, t0=None, t1=None):
    """The compiled-in log: records in [t0, t1] (CLOCK_MONOTONIC ns)."""
    recs = []
    rd = os.path.join(d, 'rec')
    if not os.path.isdir(rd):
        return recs
    for fn in sorted(os.listdir(rd)):
        with open(os.path.join(rd, fn), 'rb') as f:
            data = f.read()
        data = data[:len(data) - len(data) % REC.size]
        for kind, arg, buf, pid, tid, ns in REC.iter_unpack(data):
            if (t0 is None or ns >= t0) and (t1 is None or ns <= t1):
                recs.append((ns, kind, buf, pid, arg))
    recs.sort()
    return recs


RES_RE = re.compile(r'"kind":"(\w+)","descriptor":"[^"]*","resource":"([^"]*)",'
                    r'"instance":"(0x[0-9a-fA-F]+)","generation":(\d+)')
TS_RE = re.compile(r'"ts_ns":(\d+)')
TID_RE = re.compile(r'"tid":(\d+)')
# the same, in the order `probity script` writes them (fast path)
RES_FAST = re.compile(r'\{"type":"resource","ts_ns":(\d+),"pid":\d+,"tid":(\d+),"cpu":\d+,'
                      r'"kind":"(\w+)","descriptor":"[^"]*","resource":"([^"]*)",'
                      r'"instance":"(0x[0-9a-fA-F]+)","generation":(\d+)')
SCHED_IN = re.compile(r'\{"type":"sched","ts_ns":(\d+),"pid":\d+,"tid":(\d+),"cpu":\d+,'
                      r'"switch":"in","off_cpu_ns":(\d+)')


def _num(rx, line):
    m = rx.search(line)
    return int(m.group(1)) if m else None


def read_jsonl(path):
    """`probity -j script` lines. Resource records (most of a trace) are
    read by a regex into {type, kind, resource, instance, generation};
    scheduler and wakeup records are only counted ({type}); the rest is
    parsed whole."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if line.startswith('{"type":"resource"'):
                m = RES_FAST.match(line)
                if m:
                    out.append({'type': 'resource', 'kind': m.group(3), 'resource': m.group(4),
                                'instance': m.group(5), 'generation': int(m.group(6)),
                                'ts_ns': int(m.group(1)), 'tid': int(m.group(2))})
                    continue
                m = RES_RE.search(line)
                if m:
                    out.append({'type': 'resource', 'kind': m.group(1), 'resource': m.group(2),
                                'instance': m.group(3), 'generation': int(m.group(4)),
                                'ts_ns': _num(TS_RE, line), 'tid': _num(TID_RE, line)})
                    continue
            elif line.startswith(('{"type":"wakeup"', '{"type":"stack"')):
                continue
            elif line.startswith('{"type":"sched"'):
                # only an "in" switch matters: it carries the off-CPU time
                # that just ended
                m = SCHED_IN.match(line)
                out.append({'type': 'sched', 'ts_ns': int(m.group(1)), 'tid': int(m.group(2)),
                            'off_cpu_ns': int(m.group(3))} if m else {'type': 'sched'})
                continue
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path, default=''):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def per_buffer(items):
    """items: (kind, buf) -> {kind: {buf: count}}"""
    out = {k: {} for k in SCORED}
    for kind, buf in items:
        if kind in out:
            out[kind][buf] = out[kind].get(buf, 0) + 1
    return out


def pin_generations(recs):
    """Truth: per buffer, how many times its pin count (over all backends)
    went 0 -> 1. Unpins of pins taken before the window are ignored."""
    held, gens = {}, {}
    for _, kind, buf, _, _ in recs:
        if kind == 1:
            if held.get(buf, 0) == 0:
                gens[buf] = gens.get(buf, 0) + 1
            held[buf] = held.get(buf, 0) + 1
        elif kind == 2 and held.get(buf, 0) > 0:
            held[buf] -= 1
    return gens


def truth_counts(recs):
    out = {v: 0 for v in KINDS.values()}
    for r in recs:
        if r[1] in KINDS:
            out[KINDS[r[1]]] += 1
    return out


def site_scores(truth_pb, arm_pb):
    """Event-site precision/recall per kind, matched per buffer."""
    out = {}
    for k in SCORED:
        t, a = truth_pb[k], arm_pb[k]
        tt, at = sum(t.values()), sum(a.values())
        m = sum(min(a.get(b, 0), c) for b, c in t.items())
        out[k] = {'truth': tt, 'arm': at, 'matched': m,
                  'precision': round(m / at, 4) if at else None,
                  'recall': round(m / tt, 4) if tt else None}
    return out


def confidence_changes(script):
    """(id, from, to, reason, t_s) per confidence note, t_s = seconds from
    the trace start to the last snapshot before the note."""
    start, last, out = None, None, []
    pat = re.compile(r'confidence: (\S+) (\S+) -> (\S+): (.*)')
    for it in script:
        t = it.get('type')
        if t == 'header':
            start = it.get('start_mono_ns')
        elif t == 'snapshot':
            last = it.get('ts_ns')
        elif t == 'note':
            m = pat.match(it.get('text', ''))
            if m:
                ts = (last - start) / 1e9 if last and start else None
                out.append({'id': m.group(1), 'from': m.group(2), 'to': m.group(3),
                            'reason': m.group(4), 't_s': round(ts, 3) if ts is not None else None})
    return out


def arm_events(script):
    items, gens, io, sched = [], {}, {'issue': 0, 'complete': 0}, 0
    t0 = t1 = None
    for it in script:
        t = it.get('type')
        if t == 'header':
            t0 = it.get('start_mono_ns')
        elif t == 'end':
            t1 = it.get('end_mono_ns')
        elif t == 'resource':
            k = ARM_KIND.get((it.get('resource'), it.get('kind')))
            if k is None:
                continue
            try:
                buf = int(str(it.get('instance')), 16)
            except ValueError:
                continue
            items.append((k, buf))
            if k == 'pin':
                gens.setdefault(buf, set()).add(it.get('generation'))
        elif t == 'block_io':
            io[it.get('phase', 'issue')] = io.get(it.get('phase', 'issue'), 0) + 1
        elif t == 'sched':
            sched += 1
    return items, {b: len(g) for b, g in gens.items()}, io, sched, t0, t1


def held_at(changes, queries, after_release=True):
    """changes: (ts, tid, delta, buf); queries: (ts, tid, i). Returns
    {i: (bufs, after)}: the buffers tid pinned at ts, or, when it pinned
    none and its last pin event was the release of buffer b, ({b}, True)
    (PostgreSQL issues a written buffer's writeback right after the unpin:
    ScheduleBufferTagForWriteback in SyncOneBuffer). One time-ordered
    sweep; an unpin of a pin taken before the window is ignored (count
    floored at 0)."""
    evs = [(ts, 0, tid, d, b) for ts, tid, d, b in changes if ts is not None and tid is not None]
    evs += [(ts, 1, tid, i, None) for ts, tid, i in queries]
    evs.sort(key=lambda e: (e[0], e[1]))
    held, last, out = {}, {}, {}
    for ts, q, tid, x, b in evs:
        h = held.setdefault(tid, {})
        if q:
            if h:
                out[x] = (set(h), False)
            elif after_release and tid in last and last[tid][0] < 0:
                out[x] = ({last[tid][1]}, True)
            continue
        last[tid] = (x, b)
        if x > 0:
            h[b] = h.get(b, 0) + 1
        elif h.get(b, 0) > 1:
            h[b] -= 1
        else:
            h.pop(b, None)
    return out


def cross_layer(recs, script, report):
    """Cross-layer causal attribution (docs/benchmark.md): each block I/O
    the server's threads issued and each off-CPU interval they had, tied
    to the buffer pins that thread held at that moment (or, holding none,
    the buffer it released last: held_at; the truth side only). Truth: the
    compiled-in log of the same run; the arm: its own pin ACQUIRE/RELEASE
    records (the join `report` makes for I/O while holding). An I/O is
    right when the arm names one of the buffers the truth says was pinned.
    Roles: a process with buffer lookups in the truth is a backend, one
    with pins but no lookups is background (bgwriter, checkpointer)."""
    lookers = {pid for _, k, _, pid, _ in recs if k == 6}
    pinners = {pid for _, k, _, pid, _ in recs if k in (1, 2)}
    truth_ch = [(ns, pid, 1 if k == 1 else -1, b) for ns, k, b, pid, _ in recs if k in (1, 2)]
    arm_ch = []
    for it in script:
        if it.get('type') != 'resource' or it.get('resource') != 'pg.buffer.pin':
            continue
        d = {'ACQUIRE': 1, 'RELEASE': -1}.get(it.get('kind'))
        try:
            b = int(str(it.get('instance')), 16)
        except ValueError:
            continue
        if d:
            arm_ch.append((it.get('ts_ns'), it.get('tid'), d, b))
    ios = [it for it in script if it.get('type') == 'block_io' and it.get('phase') == 'issue']
    offs = [it for it in script if it.get('type') == 'sched' and it.get('off_cpu_ns')]
    qi = [(it.get('ts_ns'), it.get('tid'), i) for i, it in enumerate(ios)]
    qo = [(it['ts_ns'] - it['off_cpu_ns'], it.get('tid'), -1 - i) for i, it in enumerate(offs)
          if it.get('ts_ns')]
    qi = [q for q in qi if q[0] is not None and q[1] is not None]
    qo = [q for q in qo if q[1] is not None]
    # the arm side is the join `report` makes: while holding only; so is
    # the truth's off-CPU side (an idle backend's last unpin caused no wait)
    th = held_at(truth_ch, qi)
    th.update(held_at(truth_ch, qo, after_release=False))
    ah = held_at(arm_ch, qi + qo, after_release=False)

    def role(tid):
        return 'backend' if tid in lookers else 'background' if tid in pinners else 'other'
    io = {'issued': len(ios), 'by_role': {}, 'writes_by_role': {}, 'truth_tied': 0,
          'truth_tied_by_role': {}, 'truth_after_release': 0, 'arm_tied': 0, 'arm_right': 0}
    for i, it in enumerate(ios):
        r = role(it.get('tid'))
        io['by_role'][r] = io['by_role'].get(r, 0) + 1
        if it.get('op') == 'write':
            io['writes_by_role'][r] = io['writes_by_role'].get(r, 0) + 1
        t, after = th.get(i, (set(), False))
        a = ah.get(i, (set(), False))[0]
        if t:
            io['truth_tied'] += 1
            io['truth_tied_by_role'][r] = io['truth_tied_by_role'].get(r, 0) + 1
            io['truth_after_release'] += 1 if after else 0
        io['arm_tied'] += 1 if a else 0
        io['arm_right'] += 1 if t & a else 0
    off = {'ns': 0, 'truth_tied_ns': 0, 'truth_tied_ns_by_role': {}, 'arm_tied_ns': 0,
           'arm_right_ns': 0}
    for i, it in enumerate(offs):
        ns, r = it['off_cpu_ns'], role(it.get('tid'))
        t = th.get(-1 - i, (set(), False))[0]
        a = ah.get(-1 - i, (set(), False))[0]
        off['ns'] += ns
        if t:
            off['truth_tied_ns'] += ns
            off['truth_tied_ns_by_role'][r] = off['truth_tied_ns_by_role'].get(r, 0) + ns
        off['arm_tied_ns'] += ns if a else 0
        off['arm_right_ns'] += ns if t & a else 0

    def ratio(x, y):
        return round(x / y, 4) if y else None
    # what the report itself said (a long-holds finding carries the join
    # as evidence io_while_holding; none when no hold was long)
    said = None
    for f in (report or {}).get('findings', []):
        if f.get('resource') != 'pg.buffer.pin':
            continue
        for e in f.get('evidence', []) or []:
            if isinstance(e, dict) and e.get('key') == 'io_while_holding':
                said = (said or 0) + int(e.get('value') or 0)
    return {'block_io': io, 'io_recall': ratio(io['arm_right'], io['truth_tied']),
            'io_precision': ratio(io['arm_right'], io['arm_tied']),
            'off_cpu': off, 'off_cpu_recall': ratio(off['arm_right_ns'], off['truth_tied_ns']),
            'report_io_while_holding_pin': said}


def identity_score(truth_g, arm_g):
    if not truth_g and not arm_g:
        return None
    m = sum(min(arm_g.get(b, 0), c) for b, c in truth_g.items())
    den = max(sum(truth_g.values()), sum(arm_g.values()))
    return round(m / den, 4) if den else None


def tps(path):
    m = re.search(r'tps = ([0-9.]+) \(without', read_text(path))
    return float(m.group(1)) if m else None


def refusal(cdir):
    """The events `record` refused (its -j document on a refused plan)."""
    j = read_json(os.path.join(cdir, 'rec.json')) or {}
    return ['%s: %s' % (d.get('event'), d.get('reason'))
            for d in j.get('plan', {}).get('descriptors', []) if d.get('status') == 'refused']


def verdict(arm, rc, report, changes, sites, refused=()):
    """What the arm concluded about its own model: refused, changed
    (stale or suspect), valid, or unknown (no buffer model / no events)."""
    if arm == 'sysonly':
        return 'unknown', None, None
    if rc == 1:
        return 'refused', '; '.join(refused) or 'plan refused on this build', 0.0
    bad = [c for c in changes if c['to'] in ('stale', 'suspect')]
    if bad:
        return 'changed', bad[0]['id'] + ' ' + bad[0]['to'] + ': ' + bad[0]['reason'], bad[0]['t_s']
    if not any(s['arm'] for s in sites.values()):
        return 'unknown', 'no buffer events recorded', None
    up = [c['id'] for c in changes if c['to'] == 'validated']
    if up:
        return 'valid', 'promoted to validated: ' + ', '.join(sorted(set(up))), None
    # neither promoted nor suspect: the run neither confirmed nor doubted
    return 'unconfirmed', 'descriptors stayed candidate/degraded', None


def certainty(state, report, changes):
    """The arm's own certainty in its verdict (docs/benchmark.md)."""
    if state == 'refused':
        return 1.0
    if state == 'changed':
        c = [f.get('certainty') for f in (report or {}).get('findings', [])
             if f.get('kind') in ('model_stale', 'model_suspect') and f.get('certainty') is not None]
        return round(max(c), 3) if c else None
    if state in ('valid', 'unconfirmed'):
        conf = (report or {}).get('confidence', [])
        active = [c for c in conf if c.get('state')]
        if not active:
            return None
        return round(sum(1 for c in active if c['state'] == 'validated') / len(active), 3)
    return None


def score_cell(cdir, arm):
    script = read_jsonl(os.path.join(cdir, 'script.jsonl'))
    report = read_json(os.path.join(cdir, 'report.json'))
    rc = int(read_text(os.path.join(cdir, 'rec.rc'), '-1') or -1)
    items, arm_g, io, sched, t0, t1 = arm_events(script)
    recs = read_truth(cdir, t0, t1)
    truth_pb = per_buffer((KINDS.get(k), b) for _, k, b, _, _ in recs)
    sites = site_scores(truth_pb, per_buffer(items))
    changes = confidence_changes(script)
    state, reason, t_detect = verdict(arm, rc, report, changes, sites, refusal(cdir))
    lookups = [b for _, k, b, _, _ in recs if k == 6]
    truth_g = pin_generations(recs)
    covered = [s for s in sites.values() if s['arm']]
    broken = None
    if arm != 'sysonly' and rc != 1 and covered:
        broken = any((s['precision'] or 0) < BROKEN_BELOW or (s['recall'] or 0) < BROKEN_BELOW
                     for s in sites.values() if s['truth'])
    findings = [f.get('kind') for f in (report or {}).get('findings', [])]
    return {
        'arm': arm, 'record_rc': rc, 'events_in_window': len(recs),
        'truth_counts': truth_counts(recs),
        'sites': sites,
        'lifetime_identity': identity_score(truth_g, arm_g) if arm != 'sysonly' else None,
        'truth_pin_generations': sum(truth_g.values()),
        'arm_pin_generations': sum(arm_g.values()),
        'stale': {'state': state, 'reason': reason, 'time_to_detect_s': t_detect,
                  'confidence_changes': changes[:12]},
        'model_truly_broken': broken,
        'findings': findings[:12],
        'cross_layer': dict(cross_layer(recs, script, report),
                            buffer_misses=sum(1 for b in lookups if b == 0),
                            lookups=len(lookups), block_io_records=io, sched_records=sched),
        'certainty': certainty(state, report, changes),
        'tps': tps(os.path.join(cdir, 'pgbench.out')),
        'loadavg': read_text(os.path.join(cdir, 'loadavg')) or None,
    }


def scorer_key():
    """Cached cell scores are this scorer's only: keyed by its own text."""
    with open(os.path.abspath(__file__), 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def score_cell_cached(cdir, arm, key):
    """score_cell, kept in CELL/score.KEY.json (newer than the cell's
    script.jsonl) so that `score.py --cell` can score a finished cell while
    the benchmark runs the next ones; the result is the same either way."""
    cache = os.path.join(cdir, 'score.%s.%s.json' % (arm, key))
    src = os.path.join(cdir, 'script.jsonl')
    try:
        if os.path.getmtime(cache) >= os.path.getmtime(src):
            with open(cache) as f:
                return json.load(f)
    except (OSError, ValueError):
        pass
    c = score_cell(cdir, arm)
    with open(cache + '.tmp', 'w') as f:
        json.dump(c, f)
    os.replace(cache + '.tmp', cache)
    return c


def diagnosis(cell, mut):
    """right / wrong / unknown, against the measured truth and the
    mutation's known effect: a leak finding is always wrong (every variant
    releases every pin: checked on the truth log)."""
    st = cell['stale']['state']
    if st == 'unknown' or cell['model_truly_broken'] is None and st != 'refused':
        return 'unknown'
    if 'leak' in cell['findings']:
        return 'wrong'
    broken = cell['model_truly_broken'] if st != 'refused' else True
    said = st in ('changed', 'refused')
    return 'right' if said == broken else 'wrong'


def plan_summary(pdir):
    out = {}
    for what in ('as_written', 'rebind', 'clean_rebind'):
        j = read_json(os.path.join(pdir, what + '.json')) or {}
        descs = j.get('plan', j).get('descriptors', [])
        out[what] = {'rc': int(read_text(os.path.join(pdir, what + '.rc'), '-1') or -1),
                     'resolved': [d['event'] for d in descs if d.get('status') == 'ok'],
                     'refused': [{'event': d['event'], 'reason': d.get('reason')}
                                 for d in descs if d.get('status') != 'ok'],
                     'error': read_text(os.path.join(pdir, what + '.err'))[:400] or None}
    out['build_id_plain'] = read_text(os.path.join(pdir, 'build_id_plain')) or None
    out['build_id_instr'] = read_text(os.path.join(pdir, 'build_id_instr')) or None
    return out


def confusion(cells):
    m = {'true_changed': {'said_changed': 0, 'said_valid': 0, 'unconfirmed': 0, 'unknown': 0},
         'true_unchanged': {'said_changed': 0, 'said_valid': 0, 'unconfirmed': 0, 'unknown': 0}}
    for c in cells:
        st = c['stale']['state']
        truth = c['model_truly_broken'] if st != 'refused' else True
        if truth is None:
            truth = c.get('expected_broken')
        if truth is None:
            continue
        row = m['true_changed' if truth else 'true_unchanged']
        row['said_changed' if st in ('changed', 'refused') else
            'said_valid' if st == 'valid' else st if st == 'unconfirmed' else 'unknown'] += 1
    return m


def overhead(cdir, rounds):
    modes = {}
    for fn in sorted(os.listdir(cdir)):
        if fn.startswith('overhead.'):
            _, mode, _ = fn.split('.')
            t = tps(os.path.join(cdir, fn, 'pgbench.out'))
            la = read_text(os.path.join(cdir, fn, 'loadavg'))
            if la:
                modes.setdefault('_load', []).append(float(la.split()[0]))
            if t is not None:
                modes.setdefault(mode, []).append(t)
    bare = modes.get('bare')
    base = sum(bare) / len(bare) if bare else None
    load = modes.pop('_load', [])
    out = {m: {'tps': v, 'mean_tps': round(sum(v) / len(v), 1),
               'ratio_to_bare': round(sum(v) / len(v) / base, 4) if base else None}
           for m, v in modes.items()}
    if load:
        out['loadavg_1min'] = {'min': min(load), 'max': max(load)}
    return out


def machine():
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    cpu = None
    try:
        with open('/proc/cpuinfo') as f:
            cpu = next((ln.split(':', 1)[1].strip() for ln in f if ln.startswith('model name')), None)
    except OSError:
        pass
    return {'kernel': platform.release(), 'cpus': os.cpu_count(), 'cpu_model': cpu,
            'loadavg': read_text('/proc/loadavg'), 'os': sh(['sh', '-c', '. /etc/os-release; echo $PRETTY_NAME']),
            'gcc': (sh(['gcc', '--version']) or '').split('\n')[0] or None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cell', help='score one finished cell V.ARM into its cache, nothing else')
    ap.add_argument('--cells')
    ap.add_argument('--mutations')
    ap.add_argument('--variants')
    ap.add_argument('-o', '--output')
    for k in ('run-s', 'clients', 'scale', 'rounds', 'elapsed'):
        ap.add_argument('--' + k, type=int, default=None)
    ap.add_argument('--shared-buffers', default=None)
    ap.add_argument('--mode', default=None)
    ap.add_argument('--loadavg-start', default=None)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    if not a.cell and not (a.cells and a.mutations and a.variants and a.output):
        ap.error('--cells, --mutations, --variants and -o are required (or --cell)')
    if a.cell:
        score_cell_cached(a.cell, os.path.basename(a.cell).split('.', 1)[1], scorer_key())
        return 0
    muts = {m['name']: m for m in read_json(a.mutations)['mutations']}
    cells, per_arm = [], {}
    # each cell is read whole (a 10 s tpcb run's trace is ~400 MB of
    # script lines): score them in parallel, one process per CPU
    todo = [(os.path.join(a.cells, v + '.' + arm), arm) for v in a.variants.split()
            for arm in ARMS if os.path.isdir(os.path.join(a.cells, v + '.' + arm))]
    key = scorer_key()
    with multiprocessing.Pool(max(1, min(a.jobs, len(todo) or 1))) as pool:
        scored = dict(zip(todo, pool.starmap(score_cell_cached, [t + (key,) for t in todo])))
    for v in a.variants.split():
        mut = muts.get(v, {})
        for arm in ARMS:
            cdir = os.path.join(a.cells, v + '.' + arm)
            if (cdir, arm) not in scored:
                continue
            c = scored[(cdir, arm)]
            c['variant'] = v
            c['expected'] = mut.get('expected', {}).get(arm)
            c['expected_broken'] = mut.get('expected_broken', {}).get(arm)
            c['diagnosis'] = diagnosis(c, mut)
            cells.append(c)
            per_arm.setdefault(arm, []).append(c)
        # the compiled-in arm is the ground truth itself: its own row
        tc = next((c for c in cells if c['variant'] == v and c['truth_counts']['pin']), None)
        if tc:
            cells.append({'variant': v, 'arm': 'compiled', 'truth_counts': tc['truth_counts'],
                          'stale': {'state': 'valid', 'reason': 'moves with the code (ground truth)',
                                    'time_to_detect_s': None}, 'model_truly_broken': False,
                          # the recorder sees no I/O: its attribution is the
                          # truth side of every arm's cross_layer join
                          'cross_layer': {'io_recall': 1.0, 'io_precision': 1.0,
                                          'note': 'the truth side of the join (its pins '
                                                  'against the block I/O an arm recorded)'},
                          'diagnosis': 'right', 'certainty': 1.0})
    plans = {v: plan_summary(os.path.join(a.cells, v + '.plan')) for v in a.variants.split()
             if os.path.isdir(os.path.join(a.cells, v + '.plan'))}
    loads = [float(c['loadavg'].split()[0]) for c in cells if c.get('loadavg')]
    out = {
        'benchmark': 'realmut', 'issue': 15, 'generated': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'machine': machine(),
        'method': {'variants': a.variants.split(), 'run_s': a.run_s, 'clients': a.clients,
                   'scale': a.scale, 'shared_buffers': a.shared_buffers, 'mode': a.mode,
                   'loadavg_start': a.loadavg_start,
                   'loadavg_1min_cells': {'min': min(loads), 'max': max(loads)} if loads else None,
                   'overhead_rounds': len(overhead(a.cells, a.rounds).get('bare', {}).get('tps', [])),
                   'elapsed_s': a.elapsed, 'broken_below': BROKEN_BELOW,
                   'doc': 'docs/benchmark.md, Real-code mutation benchmark (issue 15)'},
        'mutations': list(muts.values()),
        'plans': plans,
        'cells': cells,
        'confusion': {arm: confusion(cs) for arm, cs in per_arm.items()},
        'calibration': {arm: [{'variant': c['variant'], 'certainty': c['certainty'],
                               'correct': c['diagnosis'] == 'right'}
                              for c in cs if c['diagnosis'] != 'unknown']
                        for arm, cs in per_arm.items()},
        'overhead': overhead(a.cells, a.rounds),
    }
    with open(a.output, 'w') as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
