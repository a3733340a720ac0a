#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# manifest_init.sh: from `probity probes` + `probity manifest init` to a
# manifest that lints and records on the demo, without reading its source
# (issue 17, "Done means"): list the demo's sites, write the skeleton for
# the buffer pool's functions, let lint say what is left, fill the TODOs
# with scripted edits from what `probes` printed (the struct offset of the
# frame's epoch included), lint clean, record two seconds with events seen.
# Also: init's refusals (existing file, nothing matched, too many sites) and
# a USDT skeleton of PostgreSQL 15.
set -u
. tests/cli/lib.sh
need_root
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
M="$T/pool.yaml"
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# 1. what is there: the pool's functions, and the frame's layout
"$P" -j probes "$DEMO" 'bufpool_*' >"$T/probes.json" || err "probes demo failed"
json "$T/probes.json" "
n = {s['name'] for s in d['functions'] if s['bind'] == 'global'}
assert {'bufpool_get', 'bufpool_use', 'bufpool_put'} <= n, n
" || err "probes does not list the pool's global functions"
"$P" -j probes "$DEMO" --struct bufpool_frame >"$T/frame.json" || err "probes --struct failed"
epoch=$(python3 -c "import json; print([m['offset'] for m in json.load(open('$T/frame.json'))['members'] if m['name'] == 'epoch'][0])")
[ -n "$epoch" ] || err "no epoch member in bufpool_frame"

# 2. the skeleton, and lint's list of what is left
"$P" -j manifest init "$DEMO" --symbol 'bufpool_[gpu][eus][te]' -o "$M" >"$T/init.json" || err "manifest init failed"
json "$T/init.json" "assert d['events'] == 3 and d['functions'] == 3 and d['todo'] == 12, d" ||
	err "init summary: $(cat "$T/init.json")"
grep -q "build_id: $(readelf -n "$DEMO" | sed -n 's/.*Build ID: //p')" "$M" || err "skeleton lacks the demo's build-id"
grep -q 'source: static_analysis' "$M" || err "skeleton lacks static_analysis provenance"
"$P" manifest lint "$M" >/dev/null 2>"$T/lint1.err"; rc=$?
[ $rc -eq 1 ] || err "lint of the skeleton exited $rc, expected 1"
n=$(grep -c 'left to fill (TODO)' "$T/lint1.err")
[ "$n" -eq 12 ] || err "lint found $n TODO, expected 12: $(cat "$T/lint1.err")"
[ "$(wc -l <"$T/lint1.err")" -eq 12 ] || err "lint said more than the TODOs: $(cat "$T/lint1.err")"
grep -q "^$M:[0-9]*:[0-9]*: error: events\[0\].kind: left to fill (TODO): .*WAIT, ACQUIRE, USE or RELEASE" "$T/lint1.err" ||
	err "lint does not say what events[0].kind expects: $(cat "$T/lint1.err")"
"$P" manifest init "$DEMO" --symbol 'bufpool_get' -o "$M" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "init over an existing file exited $rc, expected 2"

# 3. fill the choices as a user would, from the comments and probes' output
python3 - "$M" "$epoch" <<'EOF' || err "scripted edits failed"
import re, sys
path, epoch = sys.argv[1], sys.argv[2]
s = open(path).read()
head, events = s.split('\nevents:\n', 1)
head = head.replace('name: TODO', 'name: demo.pool.page', 1)
head = head.replace('class: TODO', 'class: pool', 1).replace('units: TODO', 'units: pages', 1)
head = head.replace('# shared: true ', 'shared: true   ', 1)
head = head.replace('    units: pages', '    units: pages\n    generation: counter', 1)
gen = '*u32(%s + ' + epoch + ')'
fill = {  # symbol: (kind, at, instance, extra lines)
    'bufpool_get': ('ACQUIRE', 'return', 'retval',
                    ['when: retval != 0', 'returns: value', 'generation: "%s"' % (gen % 'retval')]),
    'bufpool_use': ('USE', None, 'arg1', ['generation: "%s"' % (gen % 'arg1')]),
    'bufpool_put': ('RELEASE', None, 'arg1', ['generation: "%s"' % (gen % 'arg1')]),
}
out = []
for block in re.split(r'(?m)^(?=  # )', events):
    m = re.search(r'symbol: (\S+)', block)
    if m:
        kind, at, inst, extra = fill[m.group(1)]
        block = block.replace('resource: TODO', 'resource: demo.pool.page')
        block = block.replace('kind: TODO', 'kind: ' + kind)
        if at:
            block = re.sub(r'# at: \S+', 'at: ' + at, block)
        block = re.sub(r'instance: TODO[^\n]*', 'instance: ' + inst + ''.join('\n    ' + e for e in extra), block)
    out.append(block)
open(path, 'w').write(head + '\nevents:\n' + ''.join(out))
EOF
grep -v '^ *#' "$M" | grep -q TODO && err "TODO left after the edits: $(grep -n TODO "$M")"
"$P" manifest lint "$M" >"$T/lint2.out" 2>"$T/lint2.err"; rc=$?
[ $rc -eq 0 ] || err "filled skeleton does not lint clean ($rc): $(cat "$T/lint2.err")"
grep -q "ok (1 resource, 3 events)" "$T/lint2.out" || err "lint summary: $(cat "$T/lint2.out")"
"$P" plan "$M" >"$T/plan.out" 2>&1 || err "plan of the filled skeleton failed: $(cat "$T/plan.out")"

# 4. it records: two seconds of the demo, events seen
"$P" -j record -m "$M" -o "$T/pool.trace" -d 2 -- "$DEMO" --clients 2 -q \
	>"$T/rec.json" 2>"$T/rec.err"; rc=$?
[ $rc -eq 0 ] || err "record with the filled skeleton exited $rc: $(cat "$T/rec.err")"
# (the demo prints its own summary line on the shared stdout first)
tail -n 1 "$T/rec.json" >"$T/rec1.json"
json "$T/rec1.json" "assert d['events'] > 0 and d['drops'] == 0, d" || err "record saw no events: $(cat "$T/rec.json")"

# 5. refusals, and real software: a USDT skeleton of PostgreSQL 15
"$P" manifest init "$DEMO" --symbol 'zzz*' -o "$T/none.yaml" >/dev/null 2>"$T/none.err"; rc=$?
[ $rc -eq 1 ] || err "init matching nothing exited $rc, expected 1"
grep -q "probes" "$T/none.err" || err "no-match message does not point at 'probes': $(cat "$T/none.err")"
[ -e "$T/none.yaml" ] && err "init matching nothing wrote a file"
"$P" manifest init "$DEMO" --symbol '*' -o "$T/all.yaml" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] || err "init of every demo function exited $rc"
PG=/usr/lib/postgresql/15/bin/postgres
if [ -x "$PG" ]; then
	"$P" -j manifest init "$PG" --usdt 'postgresql:lwlock__*' -o "$T/pg.yaml" >"$T/pg.json" ||
		err "init postgres failed"
	# one event per probe name, though some names sit at several places
	want=$("$P" -j probes "$PG" 'postgresql:lwlock__*' --usdt |
		python3 -c "import json,sys; print(len({u['name'] for u in json.load(sys.stdin)['usdt']}))")
	json "$T/pg.json" "assert d['usdt'] == $want and d['events'] == $want, d" || err "postgres: $(cat "$T/pg.json") vs $want names"
	grep -q 'usdt: postgresql:lwlock__wait__start' "$T/pg.yaml" || err "postgres skeleton lacks lwlock__wait__start"
	"$P" manifest lint "$T/pg.yaml" 2>&1 | grep -v 'left to fill (TODO)' | grep -q 'error' &&
		err "postgres skeleton has errors besides TODO: $("$P" manifest lint "$T/pg.yaml" 2>&1 | grep -v 'left to fill')"
elif [ "${CI:-}" = true ]; then
	err "postgresql-15 is not installed ($PG)"
fi

exit $fail
