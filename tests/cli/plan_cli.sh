#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# plan_cli.sh: `probity plan` end to end: the demo plan, the PostgreSQL
# LWLock example (on the installed postgres, or on the stand-in), refusals
# of a wrong build-id and of a mid-instruction offset, exit codes, JSON.
set -u
. tests/cli/lib.sh
FAKE="$PROBITY_BUILD/fixtures/fake_lwlock"
PG=/usr/lib/postgresql/15/bin/postgres
PG_M=docs/examples/postgres-lwlock.yaml
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
json() { python3 -c "import json,sys; d=json.load(open('$1')); $2"; }

# 1. demo: every descriptor planned, exit 0, JSON well-formed
"$P" plan "$DEMO_M" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] || err "demo plan exited $rc: $(cat "$T/err")"
grep -q "0 refused" "$T/out" || err "demo plan text lacks '0 refused'"
"$P" plan -j "$DEMO_M" >"$T/demo.json" || err "demo plan -j failed"
json "$T/demo.json" "
assert d['refused'] == 0
assert all(x['status'] == 'ok' for x in d['descriptors'])
assert {l['type'] for l in d['links']} == {'uprobe_multi', 'uretprobe_multi'}
assert all(int(s['cookie'], 16) & 0xffffffff == s['descriptor'] for s in d['sites'])
" || err "demo plan JSON content"

# 2. the PostgreSQL example lints clean and plans on the real binary when
# it is installed with the example's build-id
"$P" manifest lint "$PG_M" >/dev/null || err "$PG_M does not lint clean"
if [ -x "$PG" ] && readelf -n "$PG" 2>/dev/null | grep -q 44c007cfee140e4c25e8a434008096828e70a92c; then
	"$P" plan -j "$PG_M" >"$T/pg.json"; rc=$?
	[ $rc -eq 0 ] || err "postgres plan exited $rc"
	json "$T/pg.json" "
assert d['refused'] == 0, d['refused']
syms = {s.get('symbol') for s in d['sites']}
assert {'LWLockAcquire', 'LWLockRelease', 'LWLockConditionalAcquire'} <= syms, syms
assert any(l['type'] == 'usdt' and l['name'] == 'lwlock__wait__start' for l in d['links'])
" || err "postgres plan content"
	echo "ok: example planned against $PG"
else
	echo "note: $PG with the example's build-id is not installed; using the stand-in only"
fi

# 3. the same example on the stand-in: refused for its build-id ...
"$P" plan "$PG_M" --binary "$FAKE" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || err "wrong build-id: exit $rc, expected 1"
grep -q "build-id mismatch" "$T/out" || err "wrong build-id: no 'build-id mismatch' note"
grep -q "REFUSED" "$T/out" || err "wrong build-id: descriptors not marked REFUSED"
# ... and re-bound by name under --rebind, every descriptor degraded
"$P" plan -j "$PG_M" --binary "$FAKE" --rebind >"$T/rebind.json"; rc=$?
[ $rc -eq 0 ] || err "--rebind exited $rc"
json "$T/rebind.json" "
assert d['targets'][0]['rebound'] and not d['targets'][0]['build_id_match']
assert all(x['confidence'] == 'degraded' for x in d['descriptors'])
" || err "--rebind did not mark every descriptor degraded"

# 4. a mid-instruction offset is refused with the disassembly around it
site=$(json "$T/demo.json" "
entry_kinds = {x['index'] for x in d['descriptors'] if x['kind'] in ('USE', 'RELEASE')}
s = [s for s in d['sites'] if s['descriptor'] in entry_kinds and s.get('insn_len', 0) >= 2][0]
print(s['symbol'])")
[ -n "$site" ] || err "no entry site with a multi-byte first instruction"
mkdir -p "$T/m"
cp "$PROBITY_BUILD/demo/probity-demo" "$T/m/"
sed "s/symbol: $site\$/symbol: $site\n      offset: 1/" "$DEMO_M" >"$T/m/mid.yaml"
"$P" plan "$T/m/mid.yaml" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || err "mid-instruction: exit $rc, expected 1"
grep -q "not an instruction boundary" "$T/out" || err "mid-instruction: no refusal"
grep -q "=>" "$T/out" || err "mid-instruction: no disassembly listing"

# 5. exit codes: unreadable manifest 2, invalid manifest 2, usage 2,
# a process that does not exist 1
"$P" plan /nonexistent.yaml >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "unreadable manifest: exit $rc, expected 2"
printf 'manifest: 2\n' >"$T/bad.yaml"
"$P" plan "$T/bad.yaml" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || err "invalid manifest: exit $rc, expected 2"
grep -q "bad.yaml:1:" "$T/err" || err "invalid manifest: no file:line in $(cat "$T/err")"
"$P" plan >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "no argument: exit $rc, expected 2"
for bad in 0 -3 abc 12x; do
	"$P" plan --pid "$bad" "$DEMO_M" >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] || err "--pid $bad: exit $rc, expected 2"
done
"$P" plan --pid 4194000 "$DEMO_M" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || err "--pid of no process: exit $rc, expected 1"
"$P" -j plan /nonexistent.yaml >"$T/out" 2>/dev/null
json "$T/out" "assert 'error' in d" || err "-j error is not JSON"
exit $fail
