#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""soak_summary.py WORKDIR START END MINUTES OUT: bench/soak.sh's results
as one JSON document (bench/results/soak.json); its "postgres" key, from
an earlier --pg run, is kept.
soak_summary.py --pg WORKDIR START END MINUTES OUT MANIFEST TPS: the
PostgreSQL soak (bench/soak.sh --pg) into OUT's "postgres" key, the rest
of OUT kept. Flat means: open fds vary
by at most 2 over the run, and RSS from minute 2 (after warm-up) to the end
grows by less than 10 % or 4 MiB, whichever is larger. Linear trace growth:
the trace's records chunks cut into tenths by file offset; bytes per
record in each tenth within 25 % of the whole file's."""
import glob, json, os, platform, re, struct, sys


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


def read_samples(w):
    """The per-minute samples, trace sizes and errors of a soak's work dir."""
    samples = []
    if os.path.exists(os.path.join(w, 'samples')):
        samples = [ln.split() for ln in open(os.path.join(w, 'samples')) if len(ln.split()) == 4]
    sizes = [(int(t), int(r)) for t, n, r, _ in samples if n == 'trace_bytes']
    errors = open(os.path.join(w, 'errors')).read().splitlines() if os.path.exists(os.path.join(w, 'errors')) else []
    return samples, sizes, errors


def write_out(out, res):
    with open(out + '.tmp', 'w') as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(out + '.tmp', out)


def pgbench_summary(w):
    """pgbench's totals (stdout) and its per-minute progress (-P 60, stderr)."""
    txt = open(os.path.join(w, 'pgbench.out')).read() if os.path.exists(os.path.join(w, 'pgbench.out')) else ''
    err = open(os.path.join(w, 'pgbench.err')).read() if os.path.exists(os.path.join(w, 'pgbench.err')) else ''
    m = re.search(r'number of transactions actually processed: (\d+)', txt)
    t = re.search(r'tps = ([\d.]+)', txt)
    lat = re.search(r'latency average = ([\d.]+) ms', txt)
    prog = [float(x) for x in re.findall(r'^progress: [\d.]+ s, ([\d.]+) tps', err, re.M)]
    fails = re.search(r'number of failed transactions: (\d+)', txt)
    return {'transactions': int(m.group(1)) if m else None, 'tps': float(t.group(1)) if t else None,
            'latency_avg_ms': float(lat.group(1)) if lat else None,
            'failed_transactions': int(fails.group(1)) if fails else None,
            'tps_by_minute': prog, 'stderr_tail': [ln for ln in err.splitlines()
                                                   if not ln.startswith('progress:')][-5:]}


def main_pg(argv):
    """bench/soak.sh --pg: the "postgres" key of OUT."""
    w, start, end, minutes, out, manifest, tps = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), \
        argv[4], argv[5], argv[6]
    samples, sizes, errors = read_samples(w)
    rec = load(os.path.join(w, 'record.json'), {}) or {}
    rep = load(os.path.join(w, 'report.json'), {})
    tr = rep.get('trace', {}) if isinstance(rep, dict) else {}
    lin = trace_linearity(os.path.join(w, 'soak.trace'))
    res = {
        'method': 'bench/soak.sh --pg: a throwaway PostgreSQL 15 cluster (bench/real/lib.sh; scale 10), '
                  f'probity record --cgroup CLUSTER --events --interval 1000 -m {manifest} while '
                  f'pgbench -n -c 4 -j 2 -R {tps} runs for the whole soak; the recorder\'s RSS/fds from '
                  '/proc and the trace size each minute; report reads the trace at the end',
        'manifest': manifest, 'pgbench_rate_tps': int(tps),
        'minutes_asked': minutes, 'seconds_run': end - start,
        'loadavg_at_end': [round(x, 2) for x in os.getloadavg()],
        'errors': errors,
        'summary': rec,
        'recorder': proc_series(samples, 'record'),
        'trace_bytes_by_minute': [s for _, s in sizes],
        'trace': lin,
        'report_reads_completely': bool(tr.get('complete')) and not tr.get('cut_reason'),
        'report_trace': tr,
        'ringbuf_drops': tr.get('ringbuf_drops'),
        'lost': rec.get('lost'),
        'pgbench': pgbench_summary(w),
    }
    res['ok'] = bool(not errors and res['recorder'].get('flat') and lin.get('linear')
                     and res['report_reads_completely'])
    cur = load(out, {}) or {}
    cur['postgres'] = res
    write_out(out, cur)
    print(json.dumps({'ok': res['ok'], 'seconds_run': res['seconds_run'], 'out': out, 'key': 'postgres'}))
    sys.exit(0 if res['ok'] else 1)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--pg':
        return main_pg(sys.argv[2:])
    w, start, end, minutes, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    samples, sizes, errors = read_samples(w)
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
    old = load(out, {}) or {}
    if 'postgres' in old:
        res['postgres'] = old['postgres']
    write_out(out, res)
    print(json.dumps({'ok': res['ok'], 'seconds_run': res['seconds_run'], 'out': out}))
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
