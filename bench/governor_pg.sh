#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# governor_pg.sh: record --budget on a real multi-process server (issue 13
# section 2) -> the "postgresql" section of bench/results/governor.json
#   bench/governor_pg.sh [BUILD_DIR]   (default build; root: BPF, PostgreSQL 15)
# A throwaway cluster (bench/real/lib.sh: temp dir, free loopback port,
# user postgres, stopped by the trap on every path), pgbench -i -s SCALE.
# Per round, interleaved: pgbench -S (-c 4 -j 2 -T SECS) alone, under
# `probity record --all -m manifests/postgresql-15/MANIFEST` with no budget,
# and with --budget 1%, 2%, 5%. Measured overhead = 1 - tps / the same
# round's alone tps; the governor's whole-run estimate is recorded next to
# it. GOV_PG_MANIFEST (default lwlock.yaml), GOV_PG_ROUNDS (3),
# GOV_PG_SECS (15), GOV_PG_SCALE (10).
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=$(cd "$BUILD" && pwd)
. bench/real/lib.sh
P="$BUILD/probity"
MAN=manifests/postgresql-15/${GOV_PG_MANIFEST:-lwlock.yaml}
ROUNDS=${GOV_PG_ROUNDS:-3}
SECS=${GOV_PG_SECS:-15}
SCALE=${GOV_PG_SCALE:-10}
say() { printf 'bench/governor_pg: %s\n' "$*" >&2; }
[ "$(id -u)" -eq 0 ] || { say "needs root (BPF)"; exit 1; }
for x in "$PG_BIN/postgres" "$PG_BIN/pgbench" "$P"; do
	[ -x "$x" ] || { say "missing $x"; exit 1; }
done
real_session postgres
pg_start "$W" "$PORT"
PM=$PG_PID
pg_bench "$W" "$PORT" -i -s "$SCALE" -q >"$W/init.log" 2>&1
load0=$(cut -d' ' -f1 /proc/loadavg)


r=0
while [ $r -lt "$ROUNDS" ]; do
	for cfg in alone none 1 2 5; do
		n="$cfg.$r"
		case $cfg in
		alone) ;;
		none) real_rec_start "$n" -m "$MAN" --all ;;
		*) real_rec_start "$n" -m "$MAN" --all --budget "$cfg%" ;;
		esac
		pg_bench "$W" "$PORT" -n -S -c 4 -j 2 -T "$SECS" >"$W/$n.out" 2>&1 || true
		[ "$cfg" = alone ] || real_rec_stop || true
		pg_wait_backends "$PM" || true
		say "round $r $cfg: $(grep -o 'tps = [0-9.]*' "$W/$n.out" | head -1)"
	done
	r=$((r + 1))
done
load1=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$W" "$ROUNDS" "$SECS" "$SCALE" "$MAN" "$load0" "$load1" <<'PY'
import json, re, sys, datetime
w, rounds, secs, scale, man = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def tps(n):
    try:
        m = re.search(r'tps = ([0-9.]+)', open('%s/%s.out' % (w, n)).read())
        return float(m.group(1)) if m else None
    except OSError:
        return None
def summ(n):
    try:
        d = [json.loads(l) for l in open('%s/%s.rec' % (w, n)) if l.startswith('{')]
    except (OSError, ValueError):
        return {}
    return d[-1] if d else {}
cfgs = ['none', '1', '2', '5']
alone = [tps('alone.%d' % r) for r in range(rounds)]
runs = {}
for c in cfgs:
    rows = []
    for r in range(rounds):
        t, s = tps('%s.%d' % (c, r)), summ('%s.%d' % (c, r))
        b = s.get('budget') or {}
        rows.append({'tps': t, 'measured_overhead': round(1 - t / alone[r], 3) if t and alone[r] else None,
                     'estimated_overhead_cpu': b.get('estimated_overhead_cpu'),
                     'over_budget': b.get('over_budget'), 'windows_opened': b.get('windows_opened'),
                     'windows_postponed': b.get('windows_postponed'), 'measured': b.get('measured'),
                     'must_keep': [x['id'] for x in b.get('descriptors', []) if x['state'] == 'must_keep'],
                     'windowed': [g['resource'] for g in b.get('resources', []) if g.get('windowed')],
                     'processes': s.get('processes')})
    runs['unbudgeted' if c == 'none' else 'budget_%s%%' % c] = rows
def mean(v):
    v = [x for x in v if x is not None]
    return round(sum(v) / len(v), 4) if v else None
a = [x for x in alone if x]
out = {'date_utc': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
       'loadavg_1min_before_after': [float(sys.argv[6]), float(sys.argv[7])],
       'method': 'throwaway PostgreSQL 15 cluster, pgbench -i -s %s; per round, interleaved: pgbench -n -S -c 4 -j 2 -T %s alone, under record --all -m %s (no budget), --budget 1%%, 2%%, 5%%; measured overhead = 1 - tps / the same round alone' % (scale, secs, man),
       'rounds': rounds, 'alone_tps': alone,
       'alone_noise_band': round((max(a) - min(a)) / max(a), 3) if a else None,
       'runs': runs,
       'summary': {k: {'measured_overhead_mean': mean([x['measured_overhead'] for x in v]),
                       'estimated_overhead_cpu_mean': mean([x['estimated_overhead_cpu'] for x in v])}
                   for k, v in runs.items()}}
path = 'bench/results/governor.json'
try:
    d = json.load(open(path))
except (OSError, ValueError):
    d = {}
d['postgresql'] = out
json.dump(d, open(path, 'w'), indent=2)
print(json.dumps(out['summary'], indent=1))
PY
