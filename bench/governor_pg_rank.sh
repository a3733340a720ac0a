#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# governor_pg_rank.sh: the planted PostgreSQL contention under
# record --budget (issue 13, "Diagnosis kept") -> the "postgresql_ranking"
# section of bench/results/governor.json
#   bench/governor_pg_rank.sh [BUILD_DIR]   (default build; root: BPF, PostgreSQL 15)
# A throwaway cluster (bench/real/lib.sh: temp dir, free loopback port,
# user postgres, stopped by the trap on every path). Per run: one session
# holds advisory lock 42 for HOLD seconds while pgbench clients (-c 3)
# queue on pg_advisory_lock(42) (the planted case of tests/cli/postgres.sh),
# under `probity record --all -m manifests/postgresql-15/lock.yaml
# --budget 2%`; the #1 finding of `probity -j report` must be about the
# advisory lock (pg.advisory). Then CLEAN runs at each of 1/2/5 %: pgbench
# -S alone (nobody holds a lock): no confidence change and no finding
# above severity 20 (as tests/cli/postgres.sh "healthy").
# GOV_PG_RANK_RUNS (20), GOV_PG_CLEAN_RUNS (1), GOV_PG_HOLD (3).
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=$(cd "$BUILD" && pwd)
. bench/real/lib.sh
P="$BUILD/probity"
MAN=manifests/postgresql-15/lock.yaml
RUNS=${GOV_PG_RANK_RUNS:-20}
CLEAN=${GOV_PG_CLEAN_RUNS:-1}
HOLD=${GOV_PG_HOLD:-3}
say() { printf 'bench/governor_pg_rank: %s\n' "$*" >&2; }
pg_bench_cluster bench/governor_pg_rank -s 1 -I dtgp
cat >"$W/adv.sql" <<'EOF'
SELECT pg_advisory_lock(42);
SELECT pg_advisory_unlock(42);
EOF
chown postgres "$W/adv.sql"
load0=$(cut -d' ' -f1 /proc/loadavg)

# (run, not i: bench/real/lib.sh's functions use i)
run=0
while [ $run -lt "$RUNS" ]; do
	pg_session "$W" "$PORT" 6 "holder$run"
	echo "$PG_SESSION_PID" >"$W/p$run.holder"
	real_rec_start "p$run" -m "$MAN" --all --budget 2%
	pg_send 6 "SELECT pg_advisory_lock(42);"
	sleep 0.3
	pg_bench "$W" "$PORT" -n -c 3 -j 1 -T $((HOLD + 1)) -f "$W/adv.sql" >"$W/p$run.pgbench" 2>&1 &
	PB=$!
	sleep "$HOLD"
	pg_send 6 "SELECT pg_advisory_unlock(42);"
	pg_send 6 '\q'
	wait $PB || say "run $run: pgbench failed: $(tail -1 "$W/p$run.pgbench")"
	pg_wait_backends "$PM" || true
	real_rec_stop || true
	"$P" -j report "$W/p$run.trace" >"$W/p$run.json" 2>/dev/null || echo '{}' >"$W/p$run.json"
	say "run $run: $(python3 -c "import json,sys; f=json.load(open(sys.argv[1])).get('findings') or [{}]; print(f[0].get('kind'), f[0].get('resource'))" "$W/p$run.json")"
	run=$((run + 1))
done
run=0
while [ $run -lt "$CLEAN" ]; do
	for b in 1 2 5; do
		n="c$b.$run"
		real_rec_start "$n" -m "$MAN" --all --budget "$b%"
		pg_bench "$W" "$PORT" -n -S -c 4 -j 2 -T 4 >"$W/$n.pgbench" 2>&1 || true
		pg_wait_backends "$PM" || true
		real_rec_stop || true
		"$P" -j report "$W/$n.trace" >"$W/$n.json" 2>/dev/null || echo '{}' >"$W/$n.json"
		"$P" -j health "$W/$n.trace" >"$W/$n.health" 2>/dev/null || true
	done
	run=$((run + 1))
done
load1=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$W" "$RUNS" "$CLEAN" "$HOLD" "$load0" "$load1" <<'PY'
import json, sys, datetime, subprocess
w, runs, clean, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
HEALTHY_MAX = 20
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return {}
tops, first = {}, 0
for i in range(runs):
    fs = load('%s/p%d.json' % (w, i)).get('findings') or []
    top = '%s %s' % (fs[0]['kind'], fs[0]['resource']) if fs else 'none'
    tops[top] = tops.get(top, 0) + 1
    first += bool(fs) and fs[0]['resource'] in ('pg.advisory', 'pg.lock.advisory')
cl = {}
for b in (1, 2, 5):
    bad = []
    for i in range(clean):
        r, h = load('%s/c%d.%d.json' % (w, b, i)), load('%s/c%d.%d.health' % (w, b, i))
        bad += [(f['kind'], f['resource'], round(f['severity'], 1)) for f in r.get('findings') or []
                if f['severity'] > HEALTHY_MAX]
        bad += [('change', c['id'], c['to']) for c in h.get('changes') or []]
    cl['budget_%d%%' % b] = {'runs': clean, 'bad': bad}
rev = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
out = {'date_utc': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
       'git_commit': rev, 'loadavg_1min_before_after': [float(sys.argv[5]), float(sys.argv[6])],
       'method': 'throwaway PostgreSQL 15 cluster; per run, a session holds advisory lock 42 for '
                 '%s s while pgbench -c 3 queues on pg_advisory_lock(42), under record --all -m '
                 'manifests/postgresql-15/lock.yaml --budget 2%%; #1 of probity -j report must be '
                 'pg.advisory; clean: pgbench -S -c 4 -T 4 at --budget 1/2/5 %%, no confidence '
                 'change and no finding above severity %d' % (hold, HEALTHY_MAX),
       'planted': {'expected': 'pg.advisory', 'runs': runs, 'ranked_first': first,
                   'rate': round(first / runs, 3) if runs else None,
                   'meets_95pct': runs >= 20 and first >= 0.95 * runs, 'tops_seen': tops},
       'clean': cl}
path = 'bench/results/governor.json'
d = load(path)
d['postgresql_ranking'] = out
json.dump(d, open(path, 'w'), indent=2)
print(json.dumps(out, indent=1))
PY
