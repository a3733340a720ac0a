#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# agent.sh: `probity agent` follows two demo processes for ~22 s (needs
# root and BPF: skips, or fails under CI=true, without them): one is
# restarted (new pid) and re-attached; windows rotate every 4 s and only
# --keep traces stay; SIGHUP with a manifest added records it too; the
# metrics textfile and what curl fetches from --listen pass `promtool
# check metrics` (a second agent on the taken port exits 2); sd_notify
# sends READY=1, WATCHDOG=1, RELOADING=1, STOPPING=1 and STATUS= lines
# (manifests recording, windows, losses) to NOTIFY_SOCKET; every
# kept trace reads back with `probity report`; SIGTERM exits 0.
set -u
. tests/cli/lib.sh
T=$(mktemp -d /tmp/pbagent.XXXXXX)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT

# usage errors: exit 2, no BPF needed
"$P" agent --budget 0% >/dev/null 2>"$T/e1"; rc=$?
[ $rc -eq 2 ] || err "agent --budget 0% exited $rc, expected 2"
grep -q "expected a percentage" "$T/e1" || err "--budget 0%: no clear error: $(cat "$T/e1")"
"$P" agent --listen 127.0.0.1 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "agent --listen without a port exited $rc, expected 2"
"$P" agent --duty 5m/1m >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "agent --duty 5m/1m exited $rc, expected 2"
"$P" agent extra >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "agent with an argument exited $rc, expected 2"
"$P" agent -m "$T/none" --state-file "$T/s.json" --trace-dir "$T/t" --metrics-dir none \
	-d 1 >/dev/null 2>"$T/e2"; rc=$?
[ "$(id -u)" -ne 0 ] || [ $rc -eq 2 ] || err "agent on a missing manifest directory exited $rc, expected 2"
"$P" agent --help | grep -q -- "--duty" || err "agent --help lacks --duty"

need_root
command -v promtool >/dev/null || { echo "FAIL: promtool missing (scripts/install-deps.sh: prometheus)"; exit 1; }

mkdir -p "$T/m" "$T/metrics"
cp "$DEMO_M" "$T/m/demo.yaml"
# the sd_notify listener: one line per datagram
python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], 'a') as f:
    while True:
        f.write(s.recv(4096).decode().replace('\n', ' ') + '\n'); f.flush()
" "$T/notify" "$T/notify.log" &
pids="$pids $!"
"$DEMO" --clients 1 --duration 60 -q >/dev/null 2>&1 &
a=$!
"$DEMO" --clients 1 --duration 60 -q >/dev/null 2>&1 &
b=$!
pids="$pids $a $b"
for i in $(seq 200); do [ -S "$T/notify" ] && break; sleep 0.1; done	# python starts slowly on a busy machine
[ -S "$T/notify" ] || err "the sd_notify listener did not start"

# --budget off: this run is about rotation, reload and following, whose
# counts assume every probe on; the default budget is checked below
NOTIFY_SOCKET="$T/notify" WATCHDOG_USEC=2000000 "$P" -j agent -m "$T/m" --trace-dir "$T/traces" \
	--state-file "$T/state.json" --metrics-dir "$T/metrics" --rotate 4s --keep 3 --duty always \
	--interval 500ms --listen 127.0.0.1:0 --budget off >"$T/out.json" 2>"$T/err" &
ag=$!
pids="$pids $ag"
for i in $(seq 50); do grep -q READY=1 "$T/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q READY=1 "$T/notify.log" 2>/dev/null || err "no READY=1 within 5 s: $(cat "$T/err")"

# the target restarts: a new pid, re-attached
sleep 5
kill $a
"$DEMO" --clients 1 --duration 60 -q >/dev/null 2>&1 &
a2=$!
pids="$pids $a2"
# a manifest added, then SIGHUP
sleep 4
cp "$DEMO_M" "$T/m/demo2.yaml"
kill -HUP $ag
sleep 11
# --listen: what curl fetches passes promtool; the bound port is taken
port=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['listen'].rsplit(':', 1)[1])" \
	"$T/state.json" 2>/dev/null)
[ -n "$port" ] || err "the state file has no listen address: $(head -c 300 "$T/state.json")"
curl -sf --max-time 20 "http://127.0.0.1:$port/metrics" >"$T/http.prom" || err "curl /metrics failed"
promtool check metrics <"$T/http.prom" >"$T/hprom.out" 2>&1 ||
	err "promtool check metrics (HTTP): $(cat "$T/hprom.out")"
grep -Eq '^probity_agent_windows_total\{manifest="demo",result="ok"\} [1-9]' "$T/http.prom" &&
	grep -Eq '^probity_events_total\{manifest="demo",' "$T/http.prom" ||
	err "HTTP metrics lack the demo's windows or events: $(head -20 "$T/http.prom")"
curl -s -o /dev/null -w '%{http_code}' --max-time 20 "http://127.0.0.1:$port/other" | grep -q 404 ||
	err "GET /other is not 404"
"$P" agent -m "$T/m" --state-file "$T/s2.json" --trace-dir "$T/t2" --metrics-dir none \
	--listen "127.0.0.1:$port" -d 5 >/dev/null 2>"$T/e3"; rc=$?
[ $rc -eq 2 ] || err "a second agent on the taken port $port exited $rc, expected 2: $(cat "$T/e3")"
grep -q "127.0.0.1:$port" "$T/e3" || err "the taken port is not named: $(cat "$T/e3")"
sleep 2
kill -TERM $ag
wait $ag; rc=$?
[ $rc -eq 0 ] || err "agent exited $rc after SIGTERM: $(tail -5 "$T/err")"

for m in READY=1 WATCHDOG=1 RELOADING=1 STOPPING=1; do
	grep -q "$m" "$T/notify.log" || err "sd_notify: no $m in $(cat "$T/notify.log")"
done
grep -Eq 'STATUS=[12]/[12] manifests recording .*, [1-9][0-9]* windows .*; lost: [0-9]+ ringbuf drops' "$T/notify.log" ||
	err "sd_notify: no STATUS= line with windows and losses: $(grep STATUS "$T/notify.log" | tail -3)"
grep -Eq 'STATUS=2/2 manifests recording' "$T/notify.log" ||
	err "sd_notify: STATUS= never shows both manifests recording: $(grep STATUS "$T/notify.log" | tail -3)"

py "$T/out.json" "
ms = {m['stem']: m for m in d['manifests']}
assert d['format'] == 'probity-agent-state' and d['reloads'] == 1, d
dm = ms['demo']
assert dm['counts']['windows'] >= 4 and dm['counts']['windows_failed'] == 0, dm
assert dm['counts']['traces_pruned'] >= 1 and dm['counts']['events'] > 0, dm
assert ms['demo2']['counts']['windows'] >= 1, ms['demo2']
for k in ('ringbuf_drops', 'trace_write_errors', 'instances_unknown'):
    assert k in dm['losses'], dm
assert d['policy']['budget'] is None, d['policy']
" || err "state (-j): $(cat "$T/out.json")"
cmp -s "$T/state.json" /dev/null && err "state file empty"
py "$T/state.json" "assert d['manifests'][0]['stem'] == 'demo', d" || err "state file unreadable"

n=$(ls "$T/traces/demo" | wc -l)
[ "$n" -eq 3 ] || err "--keep 3: $n traces kept: $(ls "$T/traces/demo")"
found=0
for t in "$T"/traces/demo/*.trace "$T"/traces/demo2/*.trace; do
	"$P" report "$t" >/dev/null 2>"$T/rerr" || err "report $t failed: $(cat "$T/rerr")"
	"$P" script "$t" | grep -Eq "^process pid=$a2 tid=$a2 .* events=[1-9]" && found=1
done
[ $found -eq 1 ] || err "the restarted target (pid $a2) has no events in a kept trace"
# both demos are still followed at the end: events in the newest trace
last=$(ls "$T"/traces/demo/*.trace | sort | tail -1)
"$P" script "$last" >"$T/last.txt" 2>&1 || err "script $last failed"
for p in $b $a2; do
	grep -Eq "^process pid=$p tid=$p .* events=[1-9]" "$T/last.txt" ||
		err "demo pid $p has no events in the last window $last: $(grep '^process' "$T/last.txt")"
done

promtool check metrics <"$T/metrics/probity.prom" >"$T/prom.out" 2>&1 ||
	err "promtool check metrics: $(cat "$T/prom.out")"
grep -Eq '^probity_agent_windows_total\{manifest="demo",result="ok"\} [1-9]' "$T/metrics/probity.prom" ||
	err "metrics lack the demo's windows"
grep -Eq '^probity_events_total\{manifest="demo2",' "$T/metrics/probity.prom" ||
	err "metrics lack the added manifest's events"

# --budget: every window under the governor, one calibration reused
mkdir -p "$T/bm"
cp "$DEMO_M" "$T/bm/demo.yaml"
"$DEMO" --clients 2 --duration 0 -q >/dev/null 2>&1 &
bd=$!
pids="$pids $bd"
"$P" agent -m "$T/bm" --trace-dir "$T/bt" --state-file "$T/bs.json" --metrics-dir none \
	--duty always --rotate 4s --budget 5% -d 10 >/dev/null 2>"$T/berr"; rc=$?
kill $bd 2>/dev/null
[ $rc -eq 0 ] || err "agent --budget 5% exited $rc: $(tail -3 "$T/berr")"
[ -s "$T/bt/.calibration.json" ] || err "agent --budget: no reused calibration file"
n=0
for t in "$T"/bt/demo/*.trace; do
	[ -f "$t" ] || continue
	"$P" script "$t" 2>/dev/null | grep -q "governor: budget 5%" && n=$((n + 1))
done
[ $n -ge 1 ] || err "agent --budget: no window trace records the governor's budget"
# the default: every window under a 2 % budget, said so in the state
"$DEMO" --clients 2 --duration 0 -q >/dev/null 2>&1 &
bd=$!
pids="$pids $bd"
"$P" -j agent -m "$T/bm" --trace-dir "$T/dt" --state-file "$T/ds.json" --metrics-dir none \
	--duty always --rotate 4s -d 10 >"$T/dout.json" 2>"$T/derr"; rc=$?
kill $bd 2>/dev/null
[ $rc -eq 0 ] || err "agent (default budget) exited $rc: $(tail -3 "$T/derr")"
py "$T/dout.json" "assert d['policy']['budget'] == 0.02, d['policy']" ||
	err "agent (default): the state's policy.budget is not 0.02: $(head -c 600 "$T/dout.json")"
n=0
for t in "$T"/dt/demo/*.trace; do
	[ -f "$t" ] || continue
	"$P" script "$t" 2>/dev/null | grep -q "governor: budget 2%" && n=$((n + 1))
done
[ $n -ge 1 ] || err "agent (default): no window trace records the default 2% budget"
# --budget off: no governor, said so in the state
"$DEMO" --clients 2 --duration 0 -q >/dev/null 2>&1 &
bd=$!
pids="$pids $bd"
"$P" -j agent -m "$T/bm" --trace-dir "$T/ot" --state-file "$T/os.json" --metrics-dir none \
	--duty always --rotate 3s --budget off -d 5 >"$T/oout.json" 2>"$T/oerr"; rc=$?
kill $bd 2>/dev/null
[ $rc -eq 0 ] || err "agent --budget off exited $rc: $(tail -3 "$T/oerr")"
py "$T/oout.json" "assert d['policy']['budget'] is None, d['policy']" ||
	err "agent --budget off: the state's policy.budget is not null: $(head -c 600 "$T/oout.json")"
n=0
for t in "$T"/ot/demo/*.trace; do
	[ -f "$t" ] || continue
	n=$((n + 1))
	"$P" script "$t" 2>/dev/null | grep -q "governor: budget" &&
		err "agent --budget off: $t records a governor"
done
[ $n -ge 1 ] || err "agent --budget off: no window trace"
"$P" agent --budget of >/dev/null 2>"$T/e4"; rc=$?
[ $rc -eq 2 ] && grep -q "or 'off'" "$T/e4" || err "agent --budget of: exit $rc, $(cat "$T/e4")"
exit $fail
