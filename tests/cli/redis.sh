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
# Then the healthy report: no finding above severity 20, and a planted
# pathology (BLPOP consumers piling up on a key nobody pushes to) whose
# report ranks redis.blocked #1.
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
# planted: consumers pile up in BLPOP on a queue key whose producer holds
# off. REDIS_PILE connections are opened before the recording (so the
# pile is not confused with new connections), then send BLPOP one by one
# over ~2 s while recorded and are still blocked when the recording ends
# (the server's own confirmation: INFO blocked_clients = REDIS_PILE); then
# one LPUSH serves them all. The report's #1 finding must be about
# redis.blocked (blocked clients that only grow), above severity 20.
REDIS_PILE=32
phase "planted: $REDIS_PILE BLPOP clients on a key nobody pushes to"
python3 -c 'import os, socket, sys, time
port, n, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
open(d + "/pile.connected", "w").close()
while not os.path.exists(d + "/pile.go"):
    time.sleep(0.05)
for s in socks:
    s.sendall(b"*3\r\n$5\r\nBLPOP\r\n$15\r\nprobity:starved\r\n$2\r\n30\r\n")
    time.sleep(0.06)
got = sum(1 for s in socks if s.recv(256).startswith(b"*2"))
print("served %d" % got)' "$PORT" $REDIS_PILE "$W" >"$W/pile.out" 2>&1 &
PILE=$!
real_on_exit "kill $PILE"
i=0
while [ ! -e "$W/pile.connected" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$P" -j record -o "$W/p.trace" -m "$M/clients.yaml" --cgroup "$REAL_CGROUP" --events \
	>"$W/prec" 2>"$W/prerr" &
PREC=$!
real_on_exit "kill -INT $PREC"
i=0
while [ ! -s "$W/p.trace" ]; do
	kill -0 $PREC 2>/dev/null || { echo "FAIL: record planted: $(tail -3 "$W/prerr")"; exit 1; }
	[ $i -lt 600 ] || { echo "FAIL: record planted did not attach in 60 s"; exit 1; }
	sleep 0.1; i=$((i + 1))
done
touch "$W/pile.go"
i=0
while [ $i -lt 200 ] && [ "$(redis-cli -h 127.0.0.1 -p "$PORT" INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" != $REDIS_PILE ]; do
	sleep 0.1; i=$((i + 1))
done
BLOCKED=$(redis-cli -h 127.0.0.1 -p "$PORT" INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')
echo "INFO blocked_clients: ${BLOCKED:-?} (of $REDIS_PILE)"
[ "${BLOCKED:-0}" = $REDIS_PILE ] || err "blocked_clients ${BLOCKED:-?}, not $REDIS_PILE: nothing planted"
sleep 0.5
kill -INT $PREC; wait $PREC || err "record planted failed: $(tail -3 "$W/prerr")"
i=0 v=""
while [ $i -lt $REDIS_PILE ]; do v="$v x$i"; i=$((i + 1)); done
# shellcheck disable=SC2086
redis-cli -h 127.0.0.1 -p "$PORT" LPUSH probity:starved $v >/dev/null
wait $PILE || err "BLPOP clients: $(cat "$W/pile.out")"
echo "BLPOP clients: $(cat "$W/pile.out")"
"$P" -j report "$W/p.trace" >"$W/p.json" 2>"$W/p.err" || err "report planted: $(cat "$W/p.err")"
python3 - "$W/p.json" "$HEALTHY_MAX" <<'PY' || fail=1
import json, sys
r, mx = json.load(open(sys.argv[1])), float(sys.argv[2])
f = r['findings']
if not f:
    print('FAIL planted: no finding'); sys.exit(1)
for x in f[:3]:
    print('  finding: %s %s severity %.1f: %s' % (x['kind'], x['resource'], x['severity'], x.get('summary', '')))
ok = f[0]['resource'] == 'redis.blocked' and f[0]['severity'] > mx
print('%s planted: #1 is about redis.blocked, above severity %g' % ('ok  ' if ok else 'FAIL', mx))
sys.exit(0 if ok else 1)
PY
phase "done"
exit $fail
