#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# redis.sh: the shipped Redis 7.0 manifest measured on a real server (root;
# BPF, redis-server, redis-tools). Merges a "redis" key into
# bench/results/servers.json (other servers' keys are kept) and prints a
# summary. docs/servers.md says what each number means.
#
#   bench/real/redis.sh        (BUILD=DIR; default build)
#
# A throwaway redis-server (bench/real/lib.sh: temp dir, free loopback
# port, user redis, no persistence, its own cgroup, stopped by the trap on
# every path).
#  1. Counts. redis_workload (REDIS_BENCH_N requests of SET/GET/LPUSH by
#     redis-benchmark -c 10, 3 BLPOP clients, evictions under maxmemory
#     2 MB) under `record --cgroup` of the server's cgroup; probity's
#     counts against INFO read before, during and after
#     (bench/real/redis_compare.py: the mapping, every row must be equal).
#  2. Overhead. ROUNDS interleaved rounds of redis-benchmark -t get
#     -n REDIS_BENCH_TPS_N -c 10: alone, and under `record --cgroup -m
#     clients.yaml` (one uprobe on every call(), i.e. every command).
# Knobs: REDIS_BENCH_N (50000), REDIS_BENCH_TPS_N (100000),
# REDIS_BENCH_ROUNDS (3).
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. bench/real/lib.sh
N=${REDIS_BENCH_N:-50000}
TPS_N=${REDIS_BENCH_TPS_N:-100000}
ROUNDS=${REDIS_BENCH_ROUNDS:-3}
P="$BUILD/probity"
M=manifests/redis-7
say() { printf 'bench/redis: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (BPF); nothing measured"; exit 1; }
for x in "$REDIS_BIN" "$P"; do
	[ -x "$x" ] || { say "missing $x (scripts/install-deps.sh; make)"; exit 1; }
done
command -v redis-benchmark >/dev/null || { say "missing redis-benchmark (redis-tools)"; exit 1; }

trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
real_tmpdir redis; W=$REAL_DIR
PORT=$(real_free_port)
redis_start "$W" "$PORT"
say "redis-server $REDIS_PID on 127.0.0.1:$PORT in $W"


# 1. counts
say "counts: $N requests, 3 BLPOPs, evictions"
redis_info "$PORT" "$W/info0"
real_rec_start counts -m "$M/clients.yaml" --cgroup "$REAL_CGROUP"
redis_workload "$PORT" "$W" "$N" 3
real_rec_stop || true
redis_info "$PORT" "$W/info1"
"$P" -j health "$W/counts.trace" >"$W/health.json"
"$P" -j report "$W/counts.trace" >"$W/report.json" 2>/dev/null || true
ok=0
python3 bench/real/redis_compare.py "$W/health.json" "$W/info0" "$W/info_mid" "$W/info1" 3 \
	--json "$W/counts.json" || ok=1

# 2. overhead: GET throughput alone and under record, interleaved
r=1
: >"$W/tps"
while [ "$r" -le "$ROUNDS" ]; do
	for mode in none probity; do
		say "overhead round $r/$ROUNDS: $mode"
		[ $mode = probity ] && real_rec_start "o_$r" -m "$M/clients.yaml" --cgroup "$REAL_CGROUP"
		redis-benchmark -h 127.0.0.1 -p "$PORT" -n "$TPS_N" -c 10 -t get -q 2>/dev/null |
			tr '\r' '\n' | sed -n 's/^GET: \([0-9.]*\) requests per second.*/\1/p' |
			tail -1 | sed "s/^/$mode /" >>"$W/tps"
		[ $mode = probity ] && { real_rec_stop || true; }
	done
	r=$((r + 1))
done

python3 - "$W" "$ROUNDS" "$N" "$TPS_N" "$ok" <<'PY'
import json, os, platform, statistics, sys, time
w, rounds, n, tps_n, ok = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '0'
c = json.load(open(os.path.join(w, 'counts.json')))
tps = {'none': [], 'probity': []}
for line in open(os.path.join(w, 'tps')):
    m, v = line.split()
    tps[m].append(float(v))
med = {k: statistics.median(v) if v else None for k, v in tps.items()}
rep = json.load(open(os.path.join(w, 'report.json')))
c.update({
    'date': time.strftime('%Y-%m-%d', time.gmtime()), 'kernel': platform.release(),
    'binary': '/usr/bin/redis-check-rdb (redis-server 7.0.15-1~deb12u10)',
    'build_id': 'a50d6825e71f1473372299161f75fe50e80452de',
    'manifest': 'manifests/redis-7/clients.yaml',
    'workload': {'requests': n, 'clients': 10, 'blpops': 3, 'eviction_maxmemory': '2mb allkeys-random'},
    'overhead': {'test': 'redis-benchmark -t get -n %d -c 10' % tps_n, 'rounds': rounds,
                 'rps_alone': tps['none'], 'rps_record': tps['probity'],
                 'median_alone': med['none'], 'median_record': med['probity'],
                 'ratio': (med['probity'] / med['none']) if med['none'] and med['probity'] else None},
    'healthy_findings': [{'kind': f['kind'], 'resource': f['resource'], 'severity': f['severity']}
                         for f in rep.get('findings', [])],
})
out = 'bench/results/servers.json'
try:
    doc = json.load(open(out))
except (OSError, ValueError):
    doc = {}
doc['redis'] = c
tmp = out + '.tmp.%d' % os.getpid()
json.dump(doc, open(tmp, 'w'), indent=1, sort_keys=True)
f = open(tmp, 'a'); f.write('\n'); f.close()
os.replace(tmp, out)
o = c['overhead']
print('redis: counts %s; GET %.0f rps alone, %.0f under record (%.2fx)' % (
    'all equal' if c['all_equal'] else 'NOT all equal', o['median_alone'] or 0, o['median_record'] or 0, o['ratio'] or 0))
PY
exit $ok
