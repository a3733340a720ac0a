#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""soak_summary.py WORKDIR START END MINUTES OUT: bench/soak.sh's results
as one JSON document (bench/results/soak.json). Flat means: open fds vary
by at most 2 over the run, and RSS from minute 2 (after warm-up) to the end
grows by less than 10 % or 4 MiB, whichever is larger. Linear trace growth:
the trace's records chunks cut into tenths by file offset; bytes per
record in each tenth within 25 % of the whole file's."""
import glob, json, os, platform, struct, sys


def load(path, default=None):
    try:
        with open(path) as f:
            txt = f.read().strip()
    except OSError:
        return default
    for cand in (txt, txt.splitlines()[-1] if txt else ''):
        try:
            return json.loads(cand)     # the demo shares record's stdout: JSON is the last line
        except ValueError:
            pass
    return default


def proc_series(samples, name):
    pts = [(int(t), int(r), int(f)) for t, n, r, f in samples if n == name and int(r) >= 0]
    if not pts:
        return {'samples': 0}
    rss = [p[1] for p in pts]
    fds = [p[2] for p in pts]
    base = rss[1] if len(rss) > 2 else rss[0]
    growth = rss[-1] - base
    flat_rss = growth < max(0.10 * base, 4096)
    flat_fds = max(fds) - min(fds) <= 2
    return {'samples': len(pts), 'minutes': [p[0] // 60 for p in pts],
            'rss_kib': rss, 'fds': fds,
            'rss_growth_after_warmup_kib': growth, 'fds_min': min(fds), 'fds_max': max(fds),
            'flat': bool(flat_rss and flat_fds)}


def trace_linearity(path):
    """bytes per record in each tenth of the file (records chunks only)."""
    try:
        b = open(path, 'rb').read()
    except OSError:
        return {'error': 'no trace'}
    off = struct.unpack_from('<I', b, 12)[0]
    pts = []            # (offset after chunk, cumulative records)
    recs = 0
    while off + 16 <= len(b):
        _, t, ln, _ = struct.unpack_from('<IIII', b, off)
        if t == 3:      # TRACE_CHUNK_RECORDS: struct pb_rec_hdr has u32 size at +4
            p, q = off + 16, off + 16 + ln
            while p + 8 <= q:
                sz = struct.unpack_from('<I', b, p + 4)[0]
                if sz < 8:
                    break
                recs += 1
                p += sz
        off += 16 + ln
        pts.append((off, recs))
    if not recs:
        return {'records': 0, 'bytes': len(b)}
    whole = len(b) / recs
    tenths, prev = [], (pts[0][0], pts[0][1])
    for k in range(1, 11):
        lim = len(b) * k / 10
        cand = [p for p in pts if p[0] <= lim]
        if not cand:
            continue
        cur = cand[-1]
        if cur[1] > prev[1]:
            tenths.append(round((cur[0] - prev[0]) / (cur[1] - prev[1]), 1))
            prev = cur
    lin = all(abs(x - whole) <= 0.25 * whole for x in tenths)
    return {'bytes': len(b), 'records': recs, 'bytes_per_record': round(whole, 1),
            'bytes_per_record_by_tenth': tenths, 'linear': lin}


def main():
    w, start, end, minutes, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    samples = []
    if os.path.exists(os.path.join(w, 'samples')):
        samples = [ln.split() for ln in open(os.path.join(w, 'samples')) if len(ln.split()) == 4]
    sizes = [(int(t), int(r)) for t, n, r, _ in samples if n == 'trace_bytes']
    errors = open(os.path.join(w, 'errors')).read().splitlines() if os.path.exists(os.path.join(w, 'errors')) else []
    rec = load(os.path.join(w, 'record.json'), {})
    rep = load(os.path.join(w, 'report.json'), {})
    tr = rep.get('trace', {}) if isinstance(rep, dict) else {}
    lin = trace_linearity(os.path.join(w, 'soak.trace'))
    runs = int(open(os.path.join(w, 'rejit.runs')).read()) if os.path.exists(os.path.join(w, 'rejit.runs')) else 0
    fails = open(os.path.join(w, 'rejit.failures')).read().splitlines() \
        if os.path.exists(os.path.join(w, 'rejit.failures')) else []
    gens, swaps = 0, 0
    for f in glob.glob(os.path.join(w, 'rejit.*.json')):
        d = load(f, {}) or {}
        gens += len(d.get('generations', [])) if isinstance(d.get('generations'), list) else 0
        swaps += len(d.get('swaps', [])) if isinstance(d.get('swaps'), list) else 0
    ver = {s: load(os.path.join(w, f'{s}.verify'), {}) for s in ('rejit', 'watch')}
    logs = {}
    for s in ('rejit', 'watch'):
        d = load(os.path.join(w, f'{s}.log.json'), None)
        logs[s] = len(d) if isinstance(d, list) else (len(d.get('entries', [])) if isinstance(d, dict) else None)
    attr = load(os.path.join(w, 'attribute.json'), {}) or {}
    res = {
        'benchmark': 'soak',
        'method': 'bench/soak.sh: record --events on the demo (1 client, --rate 100 --burst 8) and, '
                  'side by side, watch + sample -F 99 machine-wide with a loop of 60 s rejit runs '
                  '(config change, traffic shift each); RSS/fds from /proc each minute',
        'minutes_asked': minutes, 'seconds_run': end - start,
        'machine': {'kernel': platform.release(), 'cpus': os.cpu_count(),
                    'loadavg_at_end': [round(x, 2) for x in os.getloadavg()],
                    'note': 'shared with other engineers building and testing at the same time'},
        'errors': errors,
        'record': {
            'summary': rec,
            'recorder': proc_series(samples, 'record'),
            'trace_bytes_by_minute': [s for _, s in sizes],
            'trace': lin,
            'report_reads_completely': bool(tr.get('complete')) and not tr.get('cut_reason'),
            'report_trace': tr,
            'ringbuf_drops': tr.get('ringbuf_drops'),
        },
        'rejit': {
            'runs': runs, 'failed_runs': fails, 'generations': gens, 'swaps': swaps,
            'watch': proc_series(samples, 'watch'), 'sample': proc_series(samples, 'sample'),
            'verify': ver, 'log_entries': logs,
            'verify_clean': all(isinstance(v, dict) and v.get('ok') and not v.get('problems')
                                for v in ver.values()),
            'attribute': {'summary': attr.get('summary'), 'table': attr.get('table'),
                          'generations_attributed': len(attr.get('generations') or {}),
                          'unknown': {k: v.get('samples') for k, v in (attr.get('unknown') or {}).items()}},
        },
    }
    ok = (not errors and res['record']['recorder'].get('flat') and lin.get('linear')
          and res['record']['report_reads_completely'] and res['rejit']['verify_clean']
          and res['rejit']['watch'].get('flat') and res['rejit']['sample'].get('flat'))
    res['ok'] = bool(ok)
    with open(out + '.tmp', 'w') as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(out + '.tmp', out)
    print(json.dumps({'ok': res['ok'], 'seconds_run': res['seconds_run'], 'out': out}))
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
