#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# rebind.sh: a manifest on another build (docs/manifest.md "Rebind and
# promotion", docs/record.md "REBIND"), with real probes.
#
# Fixture pair (tests/fixtures/rebind/rbpool.c, mk/rebind-fixtures.mk):
# the manifest is bound to rbpool_v1.
#   rbpool_v2       same semantics, other layout: record refuses it without
#                   --rebind; with it every descriptor starts degraded and
#                   clean evidence promotes it; `manifest rebind
#                   --from-trace` writes `validated` + provenance runtime,
#                   every other byte kept.
#   rbpool_changed  semantics moved: record --rebind sees the model break
#                   (stale, exit 4, never promoted); `manifest rebind`
#                   refuses: from the trace (stale) and, without one, from
#                   the USDT probe's argument count.
# Real program: the installed postgresql-15 and the other version Debian
# offers (apt-get download + dpkg -x into $PROBITY_BUILD/cache, kept for
# reruns): plan --rebind and manifest rebind resolve every site, and a
# throwaway cluster of the other version (temp dir, loopback port, user
# postgres, stopped by the trap) shows degraded -> validated on a backend.
# Under CI=true a missing postgresql-15 or a failed download FAILS.
set -u
. tests/cli/lib.sh
need_root
# a pyenv shim costs ~3 s a call on a loaded machine; the system python
# has all this test needs (json, re)
[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

RB="$FIX/rebind"
M="$RB/rbpool.manifest.yaml"
T=$(mktemp -d)
chmod 755 "$T"	# the cluster below runs as postgres
PGD=""
PGBIN_NEW=""
cleanup() {
	if [ -n "$PGD" ] && [ -f "$PGD/data/postmaster.pid" ]; then
		su postgres -s /bin/sh -c "'$PGBIN_NEW/pg_ctl' -D '$PGD/data' -m immediate -w stop" >/dev/null 2>&1
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$M" "$RB/rbpool_v1" "$RB/rbpool_v2" "$RB/rbpool_changed"; do
	[ -e "$f" ] || { echo "FAIL: missing $f (make test-unit builds it)"; exit 1; }
done

# The lines of a manifest that are not build_id / confidence / provenance
# (a provenance block, or a flow mapping on its line): must be identical.
semantic_lines() {
	python3 - "$1" <<'EOF'
import re, sys
out, skip = [], None
for line in open(sys.argv[1]).read().splitlines():
    ind = len(line) - len(line.lstrip())
    if skip is not None:
        if not line.strip() or ind > skip:
            continue
        skip = None
    s = line.strip()
    if re.match(r'(build_id|confidence):', s):
        continue
    if re.match(r'provenance:', s):
        if s == 'provenance:':
            skip = ind
        continue
    out.append(line)
print("\n".join(out))
EOF
}
same_semantics() {
	semantic_lines "$1" >"$T/a.sem"
	semantic_lines "$2" >"$T/b.sem"
	cmp -s "$T/a.sem" "$T/b.sem" || err "$3: semantic lines differ: $(diff "$T/a.sem" "$T/b.sem" | head -5)"
}

# ---- fixture: same semantics, other layout ---------------------------------
"$P" record -m "$M" --binary "$RB/rbpool_v2" -o "$T/no.trace" -- "$RB/rbpool_v2" 0.2 >"$T/no.out" 2>&1
rc=$?
[ $rc -eq 1 ] || err "record without --rebind on another build exited $rc, expected 1 (refused)"
grep -q "build-id mismatch" "$T/no.out" || err "no build-id refusal: $(cat "$T/no.out")"

"$P" -j record -m "$M" --rebind --binary "$RB/rbpool_v2" -o "$T/v2.trace" -- "$RB/rbpool_v2" 1.5 \
	>"$T/v2.json" 2>"$T/v2.err" || err "record --rebind on rbpool_v2 exited $?: $(cat "$T/v2.err")"
"$P" -j health "$T/v2.trace" >"$T/v2.health" 2>/dev/null
py "$T/v2.health" "
for x in d['descriptors']:
    assert x['initial'] == 'degraded', x
    assert x['state'] == 'validated', x
    assert x['events'] >= 150, x
    assert sum(x['violations'].values()) == 0, x
    assert 'consecutive clean windows since the re-bind' in x['reason'], x
" || err "rbpool_v2: not every descriptor went degraded -> validated: $(cat "$T/v2.health")"
tail -1 "$T/v2.json" >"$T/v2.last"	# (record -j also prints warnings and the command's output on stdout)
py "$T/v2.last" "
assert all(c['state'] == 'validated' for c in d['confidence'].values()) and len(d['confidence']) == 3, d
" || err "record -j does not list the promotions: $(cat "$T/v2.json")"

"$P" -j manifest rebind "$M" --binary "$RB/rbpool_v2" --from-trace "$T/v2.trace" -o "$T/v2.yaml" \
	>"$T/rebind.json" || err "manifest rebind --from-trace exited $?"
py "$T/rebind.json" "
assert d['written'] and d['validated'] == 3 and d['refused'] == 0, d
assert d['usdt_shape_checked'] == 1, d
" || err "manifest rebind result: $(cat "$T/rebind.json")"
same_semantics "$M" "$T/v2.yaml" "rbpool_v2"
# every other byte (comments included) kept; three events revalidated
[ "$(grep -c '^ *confidence: validated' "$T/v2.yaml")" -eq 3 ] || err "confidence not validated"
[ "$(grep -c 'source: runtime' "$T/v2.yaml")" -eq 3 ] || err "provenance not runtime: $(cat "$T/v2.yaml")"
grep -q "# no confidence or provenance here" "$T/v2.yaml" || err "a comment was lost"
"$P" manifest lint "$T/v2.yaml" >/dev/null || err "the written manifest does not lint"
"$P" -j plan "$T/v2.yaml" --binary "$RB/rbpool_v2" >"$T/plan2.json" 2>/dev/null
py "$T/plan2.json" "
assert all(t['build_id_match'] for t in d['targets']), d['targets']
assert all(x['confidence'] == 'validated' for x in d['descriptors']), d['descriptors']
" || err "the new manifest does not plan as validated on rbpool_v2"
# without a trace: candidate, never validated
"$P" manifest rebind "$M" --binary "$RB/rbpool_v2" -o "$T/v2c.yaml" >/dev/null ||
	err "manifest rebind without a trace exited $?"
[ "$(grep -c 'confidence: candidate' "$T/v2c.yaml")" -eq 3 ] || err "without a trace not candidate"
same_semantics "$M" "$T/v2c.yaml" "rbpool_v2 (no trace)"
# a trace of another build is not evidence for this one: usage error
"$P" manifest rebind "$M" --binary "$RB/rbpool_changed" --from-trace "$T/v2.trace" \
	-o "$T/x.yaml" >/dev/null 2>"$T/x.err"
rc=$?
[ $rc -eq 2 ] || err "a trace of another build exited $rc, expected 2"
grep -q "the trace recorded build-id" "$T/x.err" || err "no build-id complaint: $(cat "$T/x.err")"
[ -e "$T/x.yaml" ] && err "a refused rebind wrote its output"

# bad input: a clear message and exit 2, nothing written
"$P" manifest rebind "$M" --binary "$T/none" -o "$T/y.yaml" 2>"$T/y.err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot find or read $T/none" "$T/y.err" || err "missing binary: exit $rc, $(cat "$T/y.err")"
"$P" manifest rebind "$M" --binary "$RB/rbpool_v2" --from-trace "$M" -o "$T/y.yaml" 2>"$T/y.err"; rc=$?
[ $rc -eq 2 ] && grep -q "not a probity trace" "$T/y.err" || err "not a trace: exit $rc, $(cat "$T/y.err")"
"$P" manifest rebind "$M" --binary "$RB/rbpool_v1" -o "$T/y.yaml" 2>"$T/y.err"; rc=$?
[ $rc -eq 2 ] && grep -q "nothing to re-bind" "$T/y.err" || err "same build: exit $rc, $(cat "$T/y.err")"
[ -e "$T/y.yaml" ] && err "a failed rebind wrote its output"

# ---- fixture: semantics changed --------------------------------------------
"$P" record -m "$M" --rebind --binary "$RB/rbpool_changed" -o "$T/ch.trace" -- "$RB/rbpool_changed" 1.5 \
	>/dev/null 2>"$T/ch.err"
rc=$?
[ $rc -eq 4 ] || err "record --rebind on rbpool_changed exited $rc, expected 4 (stale)"
"$P" -j health "$T/ch.trace" >"$T/ch.health" 2>/dev/null
py "$T/ch.health" "
s = {x['id']: x for x in d['descriptors']}
assert all(x['initial'] == 'degraded' for x in s.values()), s
assert all(x['state'] != 'validated' for x in s.values()), s
assert s['conn_get']['state'] == 'stale' and s['conn_get']['violations']['acquire_active'] > 0, s['conn_get']
" || err "rbpool_changed: a descriptor was promoted or conn_get is not stale: $(cat "$T/ch.health")"
"$P" manifest rebind "$M" --binary "$RB/rbpool_changed" --from-trace "$T/ch.trace" -o "$T/ch.yaml" \
	>"$T/ch.out" 2>&1
rc=$?
[ $rc -eq 1 ] || err "manifest rebind of the stale trace exited $rc, expected 1"
grep -q "conn_get .*REFUSED.*stale" "$T/ch.out" || err "conn_get not refused as stale: $(cat "$T/ch.out")"
"$P" -j manifest rebind "$M" --binary "$RB/rbpool_changed" -o "$T/ch.yaml" >"$T/ch.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] || err "manifest rebind of the changed USDT probe exited $rc, expected 1"
py "$T/ch.json" "
e = {x['id']: x for x in d['events']}
assert not d['written'] and d['refused'] == 1, d
assert e['conn_ready']['status'] == 'refused', e
assert 'rbpool:conn_ready changed its argument shape: 2 arg(s) (8,8)' in e['conn_ready']['reason'], e
assert '3 arg(s)' in e['conn_ready']['reason'], e
" || err "USDT shape change not refused by name: $(cat "$T/ch.json")"
[ -e "$T/ch.yaml" ] && err "a refused rebind wrote $T/ch.yaml"

# ---- a real program: PostgreSQL 15, two Debian builds ----------------------
PGBIN_OLD=/usr/lib/postgresql/15/bin
pg_missing() {
	if [ "${CI:-}" = true ]; then
		err "PostgreSQL part: $* (fails under CI=true)"
	else
		echo "note: PostgreSQL part skipped: $*"
	fi
	exit $fail
}
[ -x "$PGBIN_OLD/postgres" ] || pg_missing "postgresql-15 is not installed"
installed=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null)
other=$(apt-cache madison postgresql-15 2>/dev/null | awk -v i="$installed" '$3 != i {print $3; exit}')
[ -n "$other" ] || pg_missing "apt offers no other version of postgresql-15 than $installed"
CACHE="$PROBITY_BUILD/cache/postgresql-15_$other"
PGBIN_NEW="$CACHE/root/usr/lib/postgresql/15/bin"
if [ ! -x "$PGBIN_NEW/postgres" ]; then
	mkdir -p "$CACHE" && rm -rf "$CACHE/root.tmp" &&
		(cd "$CACHE" && flock /tmp/probity-apt.lock apt-get download "postgresql-15=$other") >"$T/dl.log" 2>&1 &&
		dpkg-deb -x "$CACHE"/postgresql-15_*.deb "$CACHE/root.tmp" && mv "$CACHE/root.tmp" "$CACHE/root" ||
		pg_missing "cannot download postgresql-15=$other: $(tail -2 "$T/dl.log")"
fi
old_id=$(readelf -n "$PGBIN_OLD/postgres" | awk '/Build ID/ {print $3}')
new_id=$(readelf -n "$PGBIN_NEW/postgres" | awk '/Build ID/ {print $3}')
[ -n "$old_id" ] && [ "$old_id" != "$new_id" ] || err "postgres builds: '$old_id' vs '$new_id'"
# the shipped example, bound to the installed build
sed "s/^\( *build_id: \).*/\1$old_id/" docs/examples/postgres-lwlock.yaml >"$T/pg.yaml"
n_events=$(grep -c '^    kind:' "$T/pg.yaml")
"$P" -j plan "$T/pg.yaml" --binary "$PGBIN_NEW/postgres" --rebind >"$T/pgplan.json" 2>/dev/null ||
	err "plan --rebind on postgres $other exited $?"
py "$T/pgplan.json" "
assert len(d['descriptors']) == $n_events, d['descriptors']
assert all(x['confidence'] == 'degraded' and x['status'] == 'ok' and x['sites'] > 0 for x in d['descriptors']), d['descriptors']
" || err "postgres $other: not every site re-resolved as degraded"
"$P" manifest rebind "$T/pg.yaml" --binary "$PGBIN_NEW/postgres" -o "$T/pg-new.yaml" >"$T/pgrb.out" 2>&1 ||
	err "manifest rebind to postgres $other exited $?: $(cat "$T/pgrb.out")"
same_semantics "$T/pg.yaml" "$T/pg-new.yaml" "postgres $installed -> $other"
grep -q "build_id: $new_id" "$T/pg-new.yaml" || err "new build-id not written"
grep -q "usdt 2 arg(s) (8,4) on both builds" "$T/pgrb.out" || err "USDT shape not compared: $(cat "$T/pgrb.out")"

# a throwaway cluster of the other version; one backend under record --rebind
PGD="$T/pg"
mkdir -p "$PGD" && chown postgres: "$PGD"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
su postgres -s /bin/sh -c "'$PGBIN_NEW/initdb' -D '$PGD/data' -A trust -U postgres --no-sync" \
	>"$T/initdb.log" 2>&1 || { err "initdb $other: $(tail -3 "$T/initdb.log")"; exit $fail; }
su postgres -s /bin/sh -c "'$PGBIN_NEW/pg_ctl' -D '$PGD/data' -l '$PGD/log' -w -t 30 -o \"-p $PORT -k $PGD -c listen_addresses=127.0.0.1 -c fsync=off\" start" \
	>"$T/pgctl.log" 2>&1 || { err "pg_ctl start: $(tail -5 "$PGD/log")"; exit $fail; }
cat >"$PGD/work.sql" <<EOF
\\o $PGD/bpid
SELECT pg_backend_pid();
\\o
SELECT pg_sleep(0.5);
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
  WHILE clock_timestamp() < t0 + interval '30 s' LOOP PERFORM count(*) FROM pg_class; END LOOP;
END \$\$;
EOF
chmod 644 "$PGD/work.sql"
su postgres -s /bin/sh -c "psql -h '$PGD' -p $PORT -U postgres -At -f '$PGD/work.sql'" >"$T/psql.out" 2>&1 &
i=0
while [ ! -s "$PGD/bpid" ] && [ $i -lt 40 ]; do sleep 0.25; i=$((i + 1)); done
BPID=$(cat "$PGD/bpid" 2>/dev/null)
[ -n "$BPID" ] || { err "no backend pid: $(cat "$T/psql.out")"; exit $fail; }
"$P" record -m "$T/pg.yaml" --rebind --pid "$BPID" -d 3.5 -o "$T/pg.trace" >"$T/pgrec.out" 2>&1 ||
	err "record --rebind --pid (postgres $other backend) exited $?: $(cat "$T/pgrec.out")"
# the workload is bounded (30 s) but ends with the recording
su postgres -s /bin/sh -c "psql -h '$PGD' -p $PORT -U postgres -At -c 'SELECT pg_cancel_backend($BPID)'" >/dev/null 2>&1
wait
"$P" -j health "$T/pg.trace" >"$T/pg.health" 2>/dev/null
py "$T/pg.health" "
s = {x['id']: x for x in d['descriptors']}
assert all(x['initial'] == 'degraded' for x in s.values()), s
# (a window with a violation, e.g. a RELEASE of a lock taken while the
# probes were being attached, only restarts the clean run)
for i in ('lwlock_acquire', 'lwlock_release'):
    assert s[i]['state'] == 'validated' and s[i]['events'] >= 150, s[i]
    assert 'consecutive clean windows since the re-bind' in s[i]['reason'], s[i]
" || err "postgres $other: LWLockAcquire/Release not promoted by clean evidence: $(cat "$T/pg.health")"
"$P" -j manifest rebind "$T/pg.yaml" --binary "$PGBIN_NEW/postgres" --from-trace "$T/pg.trace" \
	-o "$T/pg-val.yaml" >"$T/pgval.json" 2>/dev/null || err "manifest rebind --from-trace (postgres) exited $?"
py "$T/pgval.json" "
e = {x['id']: x for x in d['events']}
assert e['lwlock_acquire']['confidence'] == 'validated' and e['lwlock_release']['confidence'] == 'validated', e
assert all(x['confidence'] in ('validated', 'candidate') for x in e.values()), e
" || err "postgres: rebind from the trace: $(cat "$T/pgval.json")"
same_semantics "$T/pg.yaml" "$T/pg-val.yaml" "postgres $installed -> $other (from trace)"
exit $fail
