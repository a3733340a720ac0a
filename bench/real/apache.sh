#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# apache.sh: the shipped Apache 2.4 manifest measured on a real server
# (root; BPF, apache2, apache2-utils). Merges an "apache" key into
# bench/results/servers.json (other servers' keys are kept) and prints a
# summary. docs/servers.md says what each number means.
#
#   bench/real/apache.sh        (BUILD=DIR; default build)
#
# A throwaway apache2, event MPM, 2 children x 3 workers (bench/real/lib.sh
# apache_start: own config and ServerRoot in a temp dir, free loopback
# port, children as www-data, own cgroup, stopped by the trap on every
# path).
#  1. Counts. `ab -n APACHE_BENCH_N -c 4` on a 2 KiB static page under
#     `record --cgroup` of the server's cgroup (every child); probity's
#     counts against mod_status (/server-status?auto) read before and
#     after, and ab's own count (bench/real/apache_compare.py: the
#     mapping; every row must hold).
#  2. Overhead. ROUNDS interleaved rounds of `ab -n APACHE_BENCH_TPS_N
#     -c 4`: alone, and under `record --cgroup -m worker.yaml` (per
#     request: ~2 pushes/pops, one process_connection entry+return, one
#     create_connection return, one ap_increment_counts: ~6 uprobe hits).
#  3. Planted: 12 clients on a CGI sleeping 0.5 s (6 workers); the report's
#     findings are stored.
# Knobs: APACHE_BENCH_N (5000), APACHE_BENCH_TPS_N (5000), APACHE_BENCH_ROUNDS (3).
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. bench/real/lib.sh
N=${APACHE_BENCH_N:-5000}
TPS_N=${APACHE_BENCH_TPS_N:-5000}
ROUNDS=${APACHE_BENCH_ROUNDS:-3}
P="$BUILD/probity"
M=manifests/apache-2.4
say() { printf 'bench/apache: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (BPF); nothing measured"; exit 1; }
for x in "$APACHE_BIN" "$P"; do
	[ -x "$x" ] || { say "missing $x (scripts/install-deps.sh; make)"; exit 1; }
done
command -v ab >/dev/null || { say "missing ab (apache2-utils)"; exit 1; }

trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
real_tmpdir www-data; W=$REAL_DIR
PORT=$(real_free_port)
apache_start "$W" "$PORT"
WORKERS=$((APACHE_THREADS * APACHE_SERVERS))
say "apache2 $APACHE_PID on 127.0.0.1:$PORT in $W, $WORKERS workers"


# 1. counts
say "counts: $N requests, 4 clients"
REC_ARGS=--events
apache_status "$PORT" >"$W/status0"
real_rec_start counts -m "$M/worker.yaml" --cgroup "$REAL_CGROUP" $REC_ARGS
ab -q -t 120 -n "$N" -c 4 "http://127.0.0.1:$PORT/index.html" >"$W/ab.out" 2>&1
real_rec_stop || true
apache_status "$PORT" >"$W/status1"
"$P" -j health "$W/counts.trace" >"$W/health.json"
"$P" -j report "$W/counts.trace" >"$W/report.json" 2>/dev/null || true
ok=0
python3 bench/real/apache_compare.py "$W/health.json" "$W/status0" "$W/status1" "$W/ab.out" \
	"$WORKERS" 4 --json "$W/counts.json" || ok=1

# 2. overhead: requests per second alone and under record, interleaved
REC_ARGS=""
r=1
: >"$W/rps"
while [ "$r" -le "$ROUNDS" ]; do
	for mode in none probity; do
		say "overhead round $r/$ROUNDS: $mode"
		[ $mode = probity ] && real_rec_start "o_$r" -m "$M/worker.yaml" --cgroup "$REAL_CGROUP" $REC_ARGS
		ab -q -t 120 -n "$TPS_N" -c 4 "http://127.0.0.1:$PORT/index.html" 2>/dev/null |
			sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' | sed "s/^/$mode /" >>"$W/rps"
		[ $mode = probity ] && { real_rec_stop || true; }
	done
	r=$((r + 1))
done

# 3. planted: handlers slower than the worker pool
say "planted: 12 clients on a 0.5 s CGI"
REC_ARGS=--events
real_rec_start planted -m "$M/worker.yaml" --cgroup "$REAL_CGROUP" $REC_ARGS
ab -q -t 60 -n 36 -c 12 "http://127.0.0.1:$PORT/cgi/slow.cgi" >"$W/abp.out" 2>&1 || true
real_rec_stop || true
"$P" -j report "$W/planted.trace" >"$W/planted.json" 2>/dev/null || true
grep -c AH00484 "$W/logs/error.log" >"$W/ah00484" || true

python3 - "$W" "$ROUNDS" "$N" "$TPS_N" "$ok" "$WORKERS" <<'PY'
import json, os, platform, statistics, sys, time
w, rounds, n, tps_n, ok, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '0', int(sys.argv[6])
c = json.load(open(os.path.join(w, 'counts.json')))
rps = {'none': [], 'probity': []}
for line in open(os.path.join(w, 'rps')):
    m, v = line.split()
    rps[m].append(float(v))
med = {k: statistics.median(v) if v else None for k, v in rps.items()}


def findings(f):
    try:
        rep = json.load(open(os.path.join(w, f)))
    except (OSError, ValueError):
        return []
    return [{'kind': x['kind'], 'resource': x['resource'], 'severity': x['severity'],
             'summary': x.get('summary')} for x in rep.get('findings', [])]


cpu = ''
for line in open('/proc/cpuinfo'):
    if line.startswith('model name'):
        cpu = line.split(':', 1)[1].strip()
        break
c.update({
    'date': time.strftime('%Y-%m-%d', time.gmtime()), 'kernel': platform.release(),
    'machine': {'cpus': os.cpu_count(), 'cpu': cpu, 'loadavg_at_end': open('/proc/loadavg').read().split()[:3]},
    'binary': '/usr/sbin/apache2 (apache2-bin 2.4.71-1~deb12u1)',
    'build_id': 'f667045fa0c8b3a3d4c35a923f5d9d9bb08c700e',
    'manifest': 'manifests/apache-2.4/worker.yaml',
    'workload': {'requests': n, 'clients': 4, 'page': '2 KiB static', 'mpm': 'event', 'workers': workers,
                 'children': 2, 'keepalive': False},
    'overhead': {'test': 'ab -n %d -c 4 (2 KiB static page, no keep-alive)' % tps_n, 'rounds': rounds,
                 'rps_alone': rps['none'], 'rps_record': rps['probity'],
                 'median_alone': med['none'], 'median_record': med['probity'],
                 'ratio': (med['probity'] / med['none']) if med['none'] and med['probity'] else None},
    'healthy_findings': findings('report.json'),
    'planted': {'workload': 'ab -n 36 -c 12 on a CGI sleeping 0.5 s, %d workers' % workers,
                'ah00484_in_error_log': int(open(os.path.join(w, 'ah00484')).read().strip() or 0),
                'findings': findings('planted.json')[:3]},
})
out = 'bench/results/servers.json'
try:
    doc = json.load(open(out))
except (OSError, ValueError):
    doc = {}
doc['apache'] = c
tmp = out + '.tmp.%d' % os.getpid()
json.dump(doc, open(tmp, 'w'), indent=1, sort_keys=True)
f = open(tmp, 'a'); f.write('\n'); f.close()
os.replace(tmp, out)
o = c['overhead']
print('apache: counts %s; %.0f requests/s alone, %.0f under record (%.2fx)' % (
    'all hold' if c['all_hold'] else 'NOT all hold', o['median_alone'] or 0, o['median_record'] or 0, o['ratio'] or 0))
PY
exit $ok
