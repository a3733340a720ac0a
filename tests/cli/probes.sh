#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# probes.sh: `probity probes` on the fixture (mk/probes-fixtures.mk), the
# demo and real software: PostgreSQL 15's USDT probes (counted against
# readelf -n), libstdc++'s C++ names (demangled, the mangled name kept),
# a running process (--pid), struct layouts from DWARF checked against
# the compiler's own offsetof, and a stripped binary's debug file.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
bgpid=""
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; rm -rf "$T"' EXIT
FX="$FIX/probes/probes_fixture"
FXS="$FIX/probes/stripped/probes_fixture"
PG=/usr/lib/postgresql/15/bin/postgres
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# usage errors, and errors as JSON under -j
"$P" probes >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "probes without BINARY exited $rc, expected 2"
"$P" -j probes "$T/nope" >"$T/e.json" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || err "probes of a missing file exited $rc, expected 2"
json "$T/e.json" "assert 'nope' in d['error'], d" || err "missing file: error is not JSON: $(cat "$T/e.json")"
"$P" probes "$FX" --usdt --functions >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--usdt --functions exited $rc, expected 2"

# 1. the fixture: one site per class, exactly as the bytes say
"$P" -j probes "$FX" >"$T/fx.json" || err "probes fixture failed"
json "$T/fx.json" "
f = {s['name']: s for s in d['functions']}
assert f['pb_nop5_fn']['exec'] == 'optimizable', f['pb_nop5_fn']
assert f['pb_push_fn']['exec'] == 'emulated' and f['pb_push_fn']['insn'] == 'push rbp', f['pb_push_fn']
assert f['pb_riprel_fn']['exec'] == 'single-step', f['pb_riprel_fn']
assert f['pb_static_fn']['bind'] == 'local' and f['pb_static_fn']['table'] == 'symtab'
u = d['usdt']
assert len(u) == 1 and u[0]['provider'] == 'probity_fx' and u[0]['name'] == 'tick', u
assert u[0]['n_args'] == 2 and u[0]['function'] == 'pb_static_fn', u
c = d['counts']
assert c['usdt'] + c['functions'] == len(d['usdt']) + len(d['functions'])
assert c['optimizable'] + c['emulated'] + c['single_step'] + c['unknown'] == c['usdt'] + c['functions'], c
" || err "fixture listing wrong"
want=$(readelf -n "$FX" | sed -n 's/.*Build ID: //p')
json "$T/fx.json" "assert d['build_id'] == '$want', d['build_id']" || err "build-id differs from readelf's ($want)"
"$P" probes "$FX" 'pb_*5*' >"$T/glob.txt" || err "probes with a glob failed"
grep -q 'pb_nop5_fn .*optimizable' "$T/glob.txt" || err "glob listing lacks pb_nop5_fn optimizable: $(cat "$T/glob.txt")"
grep -q 'pb_push_fn' "$T/glob.txt" && err "glob 'pb_*5*' listed pb_push_fn"
"$P" probes "$FX" 'zzz*' >/dev/null 2>"$T/none.err"; rc=$?
[ $rc -eq 1 ] || err "a glob matching nothing exited $rc, expected 1"
grep -q "no probe site matches 'zzz\*'" "$T/none.err" || err "no-match message: $(cat "$T/none.err")"

# 2. struct layouts: DWARF's offsets are the compiler's (the fixture prints offsetof)
"$P" -j probes "$FX" --struct pb_layout_t >"$T/st.json" || err "--struct failed"
"$FX" --layout >"$T/layout.txt"
json "$T/st.json" "
m = {x['name']: x['offset'] for x in d['members']}
for line in open('$T/layout.txt'):
    k, v = line.split()
    if k == 'size':
        assert d['size'] == int(v), (d['size'], v)
    else:
        assert m[k] == int(v), (k, m[k], v)
" || err "DWARF offsets differ from offsetof: $(cat "$T/layout.txt")"
"$P" probes "$DEMO" --struct bufpool_frame | grep -Eq '^ *8 +4 +epoch +uint32_t' ||
	err "demo: bufpool_frame.epoch is not at +8 (the manifest reads *u32(retval + 8))"
"$P" probes "$FX" --struct no_such >/dev/null 2>"$T/ns.err"; rc=$?
[ $rc -eq 1 ] || err "--struct of an unknown name exited $rc, expected 1"

# 3. stripped + .gnu_debuglink: static functions and DWARF from the debug file
"$P" -j probes "$FXS" >"$T/s.json" || err "probes of the stripped fixture failed"
json "$T/s.json" "
assert d['debug_file'].endswith('probes_fixture.debug'), d['debug_file']
f = {s['name']: s for s in d['functions']}
assert f['pb_static_fn']['table'] == 'debug-file', f['pb_static_fn']
assert f['pb_nop5_fn']['exec'] == 'optimizable'
assert d['counts']['debug_file_only'] >= 4, d['counts']
" || err "stripped fixture: debug file not used"
"$P" probes "$FXS" --struct pb_layout_t | grep -Eq '^ *8 +4 +epoch' || err "--struct through the debug file failed"

# 4. PostgreSQL 15: every USDT note readelf sees, with args and semaphores
if [ -x "$PG" ]; then
	"$P" -j probes "$PG" --usdt >"$T/pg.json" || err "probes postgres failed"
	n=$(readelf -n "$PG" | grep -c 'NT_STAPSDT')
	json "$T/pg.json" "
assert len(d['usdt']) == $n, (len(d['usdt']), $n)
assert d['functions'] == []
w = [u for u in d['usdt'] if u['name'] == 'lwlock__wait__start']
assert w and all(u['semaphore'] for u in w), w
assert all(u['args'].startswith('8@') for u in w), w
assert all(u['exec'] != 'unknown' for u in d['usdt']), [u for u in d['usdt'] if u['exec'] == 'unknown']
" || err "postgres: USDT listing differs from readelf -n ($n notes)"
	"$P" probes "$PG" --struct LWLock >/dev/null 2>"$T/pgd.err"; rc=$?
	[ $rc -eq 1 ] || err "postgres --struct without DWARF exited $rc, expected 1"
	grep -q '/usr/lib/debug/.build-id/' "$T/pgd.err" || err "no-DWARF message does not say where it looked: $(cat "$T/pgd.err")"
elif [ "${CI:-}" = true ]; then
	err "postgresql-15 is not installed ($PG)"
fi

# 5. C++: demangled names, with the mangled one a manifest uses
CXX=$(ls /usr/lib/x86_64-linux-gnu/libstdc++.so.6 2>/dev/null)
if [ -n "$CXX" ]; then
	"$P" -j probes "$CXX" 'std::*basic_string*swap*' --functions >"$T/cxx.json" || err "probes libstdc++ failed"
	json "$T/cxx.json" "
assert d['functions'], 'nothing matched'
for s in d['functions']:
    assert s['name'].startswith('_Z') and s['demangled'].startswith('std::'), s
" || err "libstdc++: names not demangled"
fi

# 6. --pid: the executable a running process maps
"$DEMO" --duration 5 -q >/dev/null 2>&1 &
bgpid=$!
sleep 0.3
"$P" -j probes --pid "$bgpid" 'bufpool_get' >"$T/pid.json" || err "probes --pid failed"
want=$(readelf -n "$DEMO" | sed -n 's/.*Build ID: //p')
json "$T/pid.json" "
assert d['build_id'] == '$want', d['build_id']
assert [s['name'] for s in d['functions']] == ['bufpool_get'], d['functions']
" || err "--pid: not the demo's listing"
kill "$bgpid" 2>/dev/null; wait "$bgpid" 2>/dev/null; bgpid=""
"$P" probes --pid 999999999 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--pid of no process exited $rc, expected 2"

exit $fail
