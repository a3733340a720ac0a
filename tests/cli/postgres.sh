#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# postgres.sh: the shipped PostgreSQL 15 manifests on a real server (real
# BPF, root; skips without root, PostgreSQL 15 or bpftrace, and fails
# instead under CI=true). A throwaway cluster (bench/real/lib.sh: temp
# directory, free loopback port, user postgres, stopped by the trap on
# every path) runs:
#  1. counts: pgbench -S under `record --cgroup <the cluster's cgroup>
#     -m lwlock.yaml` (--all limited to this cluster) while bpftrace counts
#     PostgreSQL's own USDT probes in the same cgroup and run:
#     LWLockAcquire, ConditionalAcquire (true) and Release events must
#     EQUAL the lwlock__acquire, lwlock__condacquire and lwlock__release
#     hits, summed over every backend, and each backend's event total must
#     equal its probes' identity (docs/servers.md). Background workers are
#     kept asleep (PG_OPTS) so that the two tracers, attached a moment
#     apart, see the same events.
#  2. healthy: pgbench -S under lock.yaml: no finding above severity 20.
#  3. planted: one session holds advisory lock 42 while pgbench clients
#     queue on pg_advisory_lock(42): the #1 finding is about that lock,
#     with its wait time and the waiters' off-CPU time.
#  4. `record --pid <postmaster>` hints that the server forks its
#     backends and suggests --all.
# Without `record --all` in this build, 1-3 record single backends
# (sessions whose pid is known before they work) instead, and 4 is not
# checked; the log says so.
set -u
. tests/cli/lib.sh
. bench/real/lib.sh
HEALTHY_MAX=20
M=manifests/postgresql-15

need_root
missing=""
[ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/pgbench" ] || missing="postgresql-15 (and postgresql-contrib)"
command -v bpftrace >/dev/null 2>&1 || missing="$missing bpftrace"
id postgres >/dev/null 2>&1 || missing="$missing user postgres"
real_require_tools "$missing"

real_session postgres || { echo "FAIL: no temp directory"; exit 1; }
pg_start "$W" "$PORT" || { echo "FAIL: cannot start a throwaway cluster"; exit 1; }
PM=$PG_PID
pg_bench "$W" "$PORT" -i -s 1 -I dtgp -q >"$W/init.log" 2>&1 || { cat "$W/init.log"; exit 1; }
ALL=0
"$P" record --help 2>&1 | grep -q -- '--all' && ALL=1
phase "cluster: postmaster $PM, 127.0.0.1:$PORT, $W; record --all: $ALL"


# 1. counts against the USDT probes
PROBES="lwlock__acquire lwlock__condacquire lwlock__release lwlock__wait__start
lwlock__acquire__or__wait lwlock__acquire__or__wait__fail"
phase "counts"
if [ $ALL -eq 1 ]; then
	# --cgroup of the throwaway cluster: --all would also count other
	# PostgreSQL 15 servers on this machine (the distribution's own
	# cluster), and bpftrace is limited to the same cgroup
	pg_usdt_bt "$W/count.bt" cgroup $PROBES
	bt_start "$W/count.bt" "$W/count.bt.json" || { echo "FAIL: bpftrace did not attach"; exit 1; }
	real_rec_start count -m "$M/lwlock.yaml" --cgroup "$REAL_CGROUP" || exit 1
	pg_bench "$W" "$PORT" -n -S -c 4 -j 2 -T 2 >"$W/count.pgbench" 2>&1 || err "pgbench failed"
	pg_wait_backends "$PM" || err "backends did not exit"
else
	pg_session "$W" "$PORT" 4 count || { echo "FAIL: no session"; exit 1; }
	BP=$PG_SESSION_PID
	pg_usdt_bt "$W/count.bt" "$BP" $PROBES
	bt_start "$W/count.bt" "$W/count.bt.json" || { echo "FAIL: bpftrace did not attach"; exit 1; }
	real_rec_start count -m "$M/lwlock.yaml" --pid "$BP" || exit 1
	pg_send 4 "DO \$\$ BEGIN FOR i IN 1..3000 LOOP PERFORM abalance FROM pgbench_accounts WHERE aid = (i * 7919) % 100000 + 1; END LOOP; END \$\$;"
	pg_send 4 "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;"
	pg_send 4 "SELECT count(*) FROM pgbench_accounts;"
	pg_send 4 '\q'	# psql ends, its backend exits, record stops (target exited)
	wait "$REC_PID"
fi
real_rec_stop || true
bt_stop
"$P" -j health "$W/count.trace" >"$W/count.health" 2>&1 || err "health count.trace"
python3 - "$W/count.health" "$W/count.bt.json" "$W/count.rec" <<'EOF' || fail=1
import json, sys
h = json.load(open(sys.argv[1]))
# events the leak model inferred (charged as acquire_bypassed or
# release_missing, docs/validation.md) were not seen by any probe
ev = {d['id']: d['events'] - d.get('inferred_events', 0) for d in h['descriptors']}
bt = {}
for line in open(sys.argv[2]):
    if not line.strip():
        continue
    m = json.loads(line)
    if m.get('type') == 'map':
        for k, v in m['data'].items():
            bt[k.lstrip('@')] = v
pairs = [('lwlock_acquire', 'lwlock__acquire'), ('lwlock_cond_acquire', 'lwlock__condacquire'),
         ('lwlock_release', 'lwlock__release')]
bad = 0
for d, u in pairs:
    got, want = ev.get(d), sum(bt.get(u, {}).values())
    per = ', '.join('%s:%d' % kv for kv in sorted(bt.get(u, {}).items()))
    ok = got == want and want > 0
    bad += not ok
    print('%s %s %s events, USDT %s %d hits (%s)' % ('ok  ' if ok else 'FAIL', d, got, u, want, per))
# every backend, one by one: the events probity counted in each process
# (all 7 descriptors) against the probes' identity for the same process:
# 2 x acquire (span + ACQUIRE) + cond + 2 x or_wait + or_wait_fail
# (ACQUIRE when true, span always) + release + wait_start
procs = [json.loads(l) for l in open(sys.argv[3]) if l.startswith('{')][-1].get('processes')
if procs is not None:
    got = {str(p['pid']): p['events'] for p in procs}
    pids = set().union(*[set(v) for v in bt.values()])
    def n(probe, pid):
        return bt.get(probe, {}).get(pid, 0)
    for pid in sorted(pids):
        want = (2 * n('lwlock__acquire', pid) + n('lwlock__condacquire', pid) +
                2 * n('lwlock__acquire__or__wait', pid) + n('lwlock__acquire__or__wait__fail', pid) +
                n('lwlock__release', pid) + n('lwlock__wait__start', pid))
        ok = got.get(pid) == want
        bad += not ok
        print('%s process %s: %s events, USDT identity %d' % ('ok  ' if ok else 'FAIL', pid, got.get(pid), want))
sys.exit(1 if bad else 0)
EOF
[ $fail -eq 0 ] || { cat "$W/count.rec" "$W/count.rerr"; head -c 600 "$W/count.health"; }

# report WHAT: probity -j report $W/WHAT.trace > $W/WHAT.json
report() {
	"$P" -j report "$W/$1.trace" >"$W/$1.json" 2>"$W/$1.err" ||
		{ err "report $1: $(cat "$W/$1.err")"; return 1; }
}

# 2. healthy pgbench: no finding above HEALTHY_MAX
phase "healthy"
if [ $ALL -eq 1 ]; then
	real_rec_start healthy -m "$M/lock.yaml" --all --events || exit 1
	pg_bench "$W" "$PORT" -n -S -c 4 -j 2 -T 2 >"$W/healthy.pgbench" 2>&1 || err "pgbench failed"
	pg_wait_backends "$PM"
else
	pg_session "$W" "$PORT" 5 healthy || exit 1
	real_rec_start healthy -m "$M/lock.yaml" --pid "$PG_SESSION_PID" --events || exit 1
	pg_send 5 "DO \$\$ BEGIN FOR i IN 1..2000 LOOP PERFORM abalance FROM pgbench_accounts WHERE aid = i; END LOOP; END \$\$;"
	pg_send 5 '\q'
	wait "$REC_PID"
fi
real_rec_stop || true
report healthy && python3 - "$W/healthy.json" "$HEALTHY_MAX" <<'EOF' || fail=1
import json, sys
r, mx = json.load(open(sys.argv[1])), float(sys.argv[2])
over = [(f['kind'], f['resource'], f['severity']) for f in r['findings'] if f['severity'] > mx]
print('%s healthy: %d findings, none above %g%s' % ('FAIL' if over else 'ok  ', len(r['findings']), mx,
      (': ' + str(over)) if over else ''))
sys.exit(1 if over else 0)
EOF

# 3. planted: a session holds advisory lock 42 while clients queue on it
phase "planted"
cat >"$W/adv.sql" <<'EOF'
SELECT pg_advisory_lock(42);
SELECT pg_advisory_unlock(42);
EOF
chown postgres "$W/adv.sql"
pg_session "$W" "$PORT" 6 holder || exit 1
HOLDER=$PG_SESSION_PID
if [ $ALL -eq 1 ]; then
	real_rec_start planted -m "$M/lock.yaml" --all --events || exit 1
	pg_send 6 "SELECT pg_advisory_lock(42);"
	sleep 0.3
	pg_bench "$W" "$PORT" -n -c 3 -j 1 -T 2 -f "$W/adv.sql" >"$W/planted.pgbench" 2>&1 &
	PB=$!
	sleep 1.5
	pg_send 6 "SELECT pg_advisory_unlock(42);"
	pg_send 6 '\q'
	wait $PB || err "pgbench failed: $(tail -3 "$W/planted.pgbench")"
	pg_wait_backends "$PM" || err "backends did not exit"
else
	pg_session "$W" "$PORT" 7 waiter || exit 1
	real_rec_start planted -m "$M/lock.yaml" --pid "$PG_SESSION_PID" --events || exit 1
	pg_send 6 "SELECT pg_advisory_lock(42);"
	sleep 0.3
	for i in 1 2 3; do pg_send 7 "SELECT pg_advisory_lock(42); SELECT pg_advisory_unlock(42);"; done
	sleep 1.5
	pg_send 6 "SELECT pg_advisory_unlock(42);"
	sleep 0.3
	pg_send 7 '\q'
	pg_send 6 '\q'
fi
real_rec_stop || true
report planted && python3 - "$W/planted.json" "$HOLDER" "$ALL" <<'EOF' || fail=1
import json, sys
r, holder, all_mode = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3] == '1'
fs = r['findings']
bad = []
f = fs[0] if fs else None
if not f:
    bad.append('no finding')
else:
    keys = {e['key']: e for e in f['evidence']}
    text = ' '.join(str(e.get('text') or '') for e in f['evidence'])
    if f['resource'] not in ('pg.advisory', 'pg.lock.advisory'):
        bad.append('#1 is %s %s' % (f['kind'], f['resource']))
    wait = [e['value'] for e in f['evidence'] if e['key'] in ('wait_ns', 'caused_wait_ns')]
    if not wait or max(wait) < 5e8:
        bad.append('wait time %s < 0.5 s' % wait)
    if all_mode and holder not in text + ' ' + f.get('summary', ''):
        bad.append('holder backend %s not named' % holder)
    # the waiters slept: their off-CPU time is on the wait evidence
    off = [e['value'] for x in fs if x['resource'] == f['resource'] and x['kind'] == 'contention'
           for e in x['evidence'] if e['key'] == 'off_cpu_wait_ns']
    if not off or max(off) < 5e8:
        bad.append('waiters off-CPU %s < 0.5 s' % off)
top = '; '.join('%s %s sev %.1f' % (x['kind'], x['resource'], x['severity']) for x in fs[:3])
print('%s planted: %s' % ('FAIL' if bad else 'ok  ', ', '.join(bad) or top))
if f:
    for e in f['evidence']:
        print('    %s = %s %s' % (e['key'], e['value'], e.get('text') or ''))
sys.exit(1 if bad else 0)
EOF

# 4. the postmaster forks its backends: --pid of it hints at --all
if [ $ALL -eq 1 ]; then
	"$P" record -m "$M/lwlock.yaml" --pid "$PM" -d 0.5 -o "$W/pm.trace" >"$W/pm.out" 2>"$W/pm.err" ||
		err "record --pid postmaster: $(tail -2 "$W/pm.err")"
	grep -q -- '--all' "$W/pm.err" && echo "ok   record --pid <postmaster> suggests --all" ||
		err "record --pid <postmaster> printed no hint about --all: $(cat "$W/pm.err")"
else
	echo "note: record --all not in this build: counts, healthy and planted ran on single backends; the --pid <postmaster> hint is not checked"
fi
phase "done"
exit $fail
