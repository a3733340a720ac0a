#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# redis.sh: the shipped Redis 7.0 manifest on a real server (real BPF,
# root; skips without root, redis-server or redis-benchmark, and fails
# instead under CI=true). A throwaway redis-server (bench/real/lib.sh:
# temp directory, free loopback port, user redis, no persistence, its own
# cgroup, stopped by the trap on every path) runs redis_workload (SET/GET/
# LPUSH by redis-benchmark, 3 clients blocked in BLPOP, evictions under
# maxmemory 2 MB) under `record --cgroup <its cgroup> -m clients.yaml`
# (the distribution's own redis-server service is not counted), and
# probity's counts must EQUAL Redis's own INFO counters read in the same
# run (the mapping: bench/real/redis_compare.py, docs/servers.md).
# Then the healthy report: no finding above severity 20.
set -u
. tests/cli/lib.sh
. bench/real/lib.sh
HEALTHY_MAX=20
M=manifests/redis-7

need_root
missing=""
[ -x "$REDIS_BIN" ] || missing="redis-server"
command -v redis-benchmark >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || missing="$missing redis-tools"
id redis >/dev/null 2>&1 || missing="$missing user redis"
real_require_tools "$missing"

real_session redis || { echo "FAIL: no temp directory"; exit 1; }
redis_start "$W" "$PORT" || { echo "FAIL: cannot start a throwaway redis-server"; exit 1; }
phase "redis-server $REDIS_PID, 127.0.0.1:$PORT, $W, cgroup $REAL_CGROUP"

redis_info "$PORT" "$W/info0" || { echo "FAIL: INFO"; exit 1; }
"$P" -j record -o "$W/t.trace" -m "$M/clients.yaml" --cgroup "$REAL_CGROUP" --events \
	>"$W/rec" 2>"$W/rerr" &
REC=$!
real_on_exit "kill -INT $REC"
i=0
while [ ! -s "$W/t.trace" ]; do
	kill -0 $REC 2>/dev/null || { echo "FAIL: record: $(tail -3 "$W/rerr")"; exit 1; }
	[ $i -lt 600 ] || { echo "FAIL: record did not attach in 60 s"; exit 1; }
	sleep 0.1; i=$((i + 1))
done
phase "workload"
redis_workload "$PORT" "$W" 20000 3 || err "workload failed: $(tail -3 "$W/bench.out")"
kill -INT $REC; wait $REC || err "record failed: $(tail -3 "$W/rerr")"
redis_info "$PORT" "$W/info1" || { echo "FAIL: INFO"; exit 1; }
"$P" -j health "$W/t.trace" >"$W/health.json" || err "health"
python3 bench/real/redis_compare.py "$W/health.json" "$W/info0" "$W/info_mid" "$W/info1" 3 || fail=1

"$P" -j report "$W/t.trace" >"$W/report.json" 2>"$W/report.err" || err "report: $(cat "$W/report.err")"
python3 - "$W/report.json" "$HEALTHY_MAX" <<'PY' || fail=1
import json, sys
r, mx = json.load(open(sys.argv[1])), float(sys.argv[2])
over = [(f['kind'], f['resource'], f['severity']) for f in r['findings'] if f['severity'] > mx]
top = '; '.join('%s %s sev %.1f' % (f['kind'], f['resource'], f['severity']) for f in r['findings'][:3])
print('%s healthy: %d findings, none above %g%s (%s)' % ('FAIL' if over else 'ok  ', len(r['findings']), mx,
      (': ' + str(over)) if over else '', top))
sys.exit(1 if over else 0)
PY
phase "done"
exit $fail
