#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# attribute_cli.sh: `probity sample` + `probity attribute` on real BPF.
# While `probity sample` (and, if installed, `perf record -k mono`) runs,
# build/tests/test_attribute test_burn_generations loads three
# generations of an XDP program on a veth in a private netns, swaps them
# with bpf_link_update and burns CPU inside each one with
# BPF_PROG_TEST_RUN (and inside the retired generation 0 after the swap,
# and inside a program loaded without any receipt), writing its own
# timeline. Then every sample `probity attribute` puts in a generation
# must fall in a burn window of that generation (zero wrong), each
# generation must get samples, and the program without receipts must be
# `unknown` (no receipt). `receipts show --at` and `attribute --window`
# must name the generation active on the link at a time / in a window.
set -u
. tests/cli/lib.sh
T="$PROBITY_BUILD/tests/test_attribute"
MID() {	# midpoint of the Nth (1-based) burn window of generation $1
	python3 -c "
import sys
b = [l.split() for l in open('$S.timeline') if l.startswith('burn ') and l.split()[1] == '$1']
print((int(b[0][3]) + int(b[0][4])) // 2)"
}
need_root
[ -x "$T" ] || { echo "FAIL: $T not built"; exit 1; }
W=$(mktemp -d /tmp/pbattrcli.XXXXXX)
[ -n "${PB_KEEP:-}" ] && echo "keeping $W"
SPID="" PPID_PERF="" TPID=""
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$TPID" ] && kill "$TPID" 2>/dev/null
	[ -n "$PPID_PERF" ] && kill "$PPID_PERF" 2>/dev/null
	[ -n "${PB_KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
S="$W/store"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }

# usage errors first
"$P" sample >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "sample without -o exited $rc, expected 2"
"$P" sample -o "$W/x" -F 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "sample -F 0 exited $rc, expected 2"
"$P" attribute "$W/none" -s "$W/nostore" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "attribute with a missing store exited $rc, expected 2"

# a ring far too small for the rate: the kernel drops records; they are
# counted, written where they happened, and reported by attribute
"$P" -j sample -o "$W/lost.pbs" --pages 1 -F 50000 -d 2 >"$W/lost.json" 2>/dev/null || err "sample --pages 1 exited $?"
mkdir -p "$W/empty/objects"	# an empty store
"$P" -j attribute "$W/lost.pbs" -s "$W/empty" >"$W/lost-attr.json" || err "attribute of lost.pbs exited $?"
LOSTN=$(json "print(d['lost'])" <"$W/lost.json")
if [ "${LOSTN:-0}" -gt 0 ]; then
	json "assert d['summary']['lost_records'] == $LOSTN and d['summary']['lost_events'] > 0, d['summary']" \
		<"$W/lost-attr.json" || err "attribute does not report the sampler's lost records"
else
	echo "note: no records lost with a 1-page ring at 50 kHz (fast reader); lost accounting not exercised"
fi

# generation 0 is loaded and attached before sampling starts: it must
# come from the sampler's snapshot of live programs
PB_ATTR_SYNC="$W/sync" PB_ATTR_STORE="$S" "$T" test_burn_generations >"$W/t.out" 2>&1 &
TPID=$!
i=0
while [ ! -e "$W/sync.ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$W/sync.ready" ] || { cat "$W/t.out"; err "test_burn_generations did not reach its sync point"; exit 1; }
"$P" sample -o "$W/s.pbs" -F 499 >"$W/sample.out" 2>"$W/sample.err" &
SPID=$!
i=0
while ! grep -q "sampling" "$W/sample.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
grep -q sampling "$W/sample.err" || { cat "$W/sample.err"; err "sample did not start"; exit 1; }
HAVE_PERF=0
if command -v perf >/dev/null 2>&1; then
	perf record -q -k mono -a -F 499 -o "$W/perf.data" >"$W/perf.out" 2>&1 &
	PPID_PERF=$!
	HAVE_PERF=1
	sleep 0.5
fi

touch "$W/sync.go"
wait "$TPID" || { cat "$W/t.out"; err "test_burn_generations failed"; exit 1; }
TPID=""

kill -INT "$SPID"; wait "$SPID"; rc=$?; SPID=""
[ $rc -eq 0 ] || { cat "$W/sample.err"; err "sample exited $rc"; }
# progress is for a terminal only (cli.sample_progress checks it on a pty)
grep -q "in BPF JIT" "$W/sample.err" && err "progress lines on a non-terminal stderr"
grep -q "stopped by SIGINT" "$W/sample.out" || { cat "$W/sample.out"; err "sample summary"; }
if [ -n "$PPID_PERF" ]; then
	kill -INT "$PPID_PERF"; wait "$PPID_PERF"; PPID_PERF=""
fi
cat "$W/sample.out"
python3 - "$W/s.pbs" "$S.timeline" <<'PY' || err "generation 0 is not in the sampler's snapshot"
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'PBSAMPL\0'
off = struct.unpack('<I', b[12:16])[0]
snap = None
while off + 16 <= len(b):
    t, l = struct.unpack('<II', b[off + 4:off + 12])
    if t == 2:
        snap = json.loads(b[off + 16:off + 16 + l])
    off += 16 + l
gen0 = int([l.split() for l in open(sys.argv[2]) if l.startswith('burn ')][0][2])
ids = {p['id'] for p in snap['progs']}
assert gen0 in ids, (gen0, sorted(ids))
assert all(r['addr'].startswith('0x') and r['len'] > 0 for p in snap['progs'] for r in p['jit_ranges'])
PY

LINK=$(awk '$1 == "link" {print $2}' "$S.timeline")
G0=$(awk '$1 == "burn" {print $2}' "$S.timeline" | sed -n 1p)
G1=$(awk '$1 == "burn" {print $2}' "$S.timeline" | sed -n 2p)
G2=$(awk '$1 == "burn" {print $2}' "$S.timeline" | sed -n 4p)
[ -n "$LINK" ] && [ -n "$G2" ] || { cat "$S.timeline"; err "timeline incomplete"; exit 1; }

check_attr() {	# $1: attribute -j --list output file, $2: label, $3: timeline ($S.timeline), $4: strict (1)
	python3 - "$1" "${3:-$S.timeline}" "$2" "${4:-1}" <<'PY' || err "$2: attribution does not match the timeline"
import json, sys
d = json.load(open(sys.argv[1]))
label = sys.argv[3]
strict = sys.argv[4] == '1'	# else: only "never wrong" (records were lost on purpose)
tl = [l.split() for l in open(sys.argv[2])]
burns = [(x[0], x[1], int(x[2]), int(x[3]), int(x[4])) for x in tl if x[0] in ('burn', 'norcpt')]
gens = {b[1] for b in burns if b[0] == 'burn'}
norcpt = [b for b in burns if b[0] == 'norcpt'][0]
pid = [int(x[1]) for x in tl if x[0] == 'pid'][0]
def window(t):
    # the burn window holding t; else one within 2 ms (a sample's time
    # and the test's clock reads are not taken at the same instant)
    for margin in (0, 2000000):
        for b in burns:
            if b[3] - margin <= t <= b[4] + margin:
                return b
    return None
wrong, right, nr_ok, nr_bad = 0, {}, 0, 0
for s in d['samples']:
    b = window(s['time_mono_ns'])
    if s['status'] == 'generation':
        if b is None or b[0] != 'burn' or b[1] != s['generation_id']:
            wrong += 1
            print(label, 'WRONG', s, b, file=sys.stderr)
        else:
            right[b[1]] = right.get(b[1], 0) + 1
    elif b is not None and b[0] == 'norcpt' and s['pid'] == pid:
        # (other processes' programs may run meanwhile: theirs are not checked)
        # perf script mode knows no range for it (prog 0), only the symbol
        if s['reason'] == 'no receipt' and s['prog_id'] in (0, norcpt[2]):
            nr_ok += 1
        elif not strict:	# under loss: any unknown is honest (records lost, ambiguous)
            nr_ok += 1
        else:
            nr_bad += 1
            print(label, 'norcpt sample not "no receipt"', s, file=sys.stderr)
print(label, 'attributed per generation:', {k[:12]: v for k, v in right.items()},
      'no-receipt samples:', nr_ok, 'wrong:', wrong, 'summary:', d['summary'], 'unknown:',
      {k: v['samples'] for k, v in d['unknown'].items()})
assert wrong == 0, wrong
assert nr_bad == 0, nr_bad
if not strict:
    sys.exit(0)
assert set(right) == gens, (set(right), gens)
assert all(v >= 5 for v in right.values()), right
assert nr_ok >= 5, nr_ok
assert d['summary']['in_bpf_jit'] >= sum(right.values()) + nr_ok
PY
}

"$P" -j attribute "$W/s.pbs" -s "$S" --list >"$W/attr.json"; rc=$?
[ $rc -eq 0 ] || err "attribute exited $rc"
check_attr "$W/attr.json" "probity-sample"
"$P" attribute "$W/s.pbs" -s "$S" >"$W/attr.txt" || err "attribute (text) exited $?"
grep -q "$G1" "$W/attr.txt" && grep -q "unknown (no receipt)" "$W/attr.txt" || { cat "$W/attr.txt"; err "text summary"; }

# perf's own session through `perf script`
if [ "$HAVE_PERF" = 1 ] && [ -s "$W/perf.data" ]; then
	# perf's own failures are noted, not ours: our parser is checked
	# whenever perf produced its text
	if perf script -i "$W/perf.data" -F time,cpu,pid,tid,ip,sym --ns >"$W/perf.txt" 2>"$W/perf.err" &&
	   [ -s "$W/perf.txt" ]; then
		"$P" -j attribute "$W/perf.txt" -s "$S" --list >"$W/pattr.json"; rc=$?
		[ $rc -eq 0 ] || err "attribute of perf script text exited $rc"
		check_attr "$W/pattr.json" "perf-script"
	else
		echo "note: perf script -F failed: $(head -c 300 "$W/perf.err")"
	fi
	"$P" attribute "$W/perf.data" -s "$S" 2>"$W/pd.err"; rc=$?
	[ $rc -eq 2 ] && grep -q "perf script" "$W/pd.err" || { cat "$W/pd.err"; err "perf.data given: rc $rc"; }
	if perf script -i "$W/perf.data" >"$W/perf2.txt" 2>"$W/perf2.err" && [ -s "$W/perf2.txt" ]; then
		"$P" -j attribute "$W/perf2.txt" -s "$S" | json "assert d['format'] == 'perf script text' and len(d['generations']) == 3, d" ||
			{ ls -la "$W/perf2.txt"; head -3 "$W/perf2.txt"; head -5 "$W/perf2.err"; err "attribute of default perf script layout"; }
	else
		echo "note: perf script (default layout) failed: $(head -c 300 "$W/perf2.err")"
	fi
fi
printf 'garbage 1 [0] 12.5: nothex sym\n' >"$W/bad.txt"
"$P" attribute "$W/bad.txt" -s "$S" 2>"$W/bad.err"; rc=$?
[ $rc -eq 2 ] || err "attribute of bad text exited $rc, expected 2"
grep -q "line 1" "$W/bad.err" || { cat "$W/bad.err"; err "bad text error does not name the line"; }

# --at: mid of generation 1's burn window -> generation 1
MID1=$(MID "$G1")
out=$("$P" receipts show -s "$S" --at "$MID1" --link "$LINK") || err "show --at exited $?"
echo "$out" | grep -q "generation $G1" || { echo "$out" | head -5; err "show --at did not name generation 1"; }
"$P" -j receipts show -s "$S" --at "mono:$MID1" --link "$LINK" | json "
assert d['generation_id'] == '$G1' and d['at']['definite'], d['at']" || err "show --at -j"
# wall clock time -> same generation
RT=$("$P" -j receipts log -s "$S" | json "
e = [e for e in d['entries'] if e['kind'] == 'activated'][1]
print('@%.6f' % ((e['realtime_ns'] - e['mono_ns'] + $MID1) / 1e9))")
"$P" -j receipts show -s "$S" --at "$RT" --link "$LINK" | json "assert d['generation_id'] == '$G1'" ||
	err "show --at with a wall-clock time"
"$P" receipts show -s "$S" --at "$MID1" --link 999999 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "show --at on an unknown link exited $rc, expected 2"
"$P" receipts show -s "$S" --at "yesterday" --link "$LINK" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "show --at with a bad time exited $rc, expected 2"
# before the first activation: unknown, exit 1
"$P" receipts show -s "$S" --at 1 --link "$LINK" >"$W/at0.out"; rc=$?
[ $rc -eq 1 ] && grep -q "unknown" "$W/at0.out" || { cat "$W/at0.out"; err "show --at before any activation: rc $rc"; }

# --window from generation 0 to generation 2: all three, in order
MID0=$(MID "$G0")
MID2=$(MID "$G2")
"$P" -j attribute -s "$S" --window "$MID0..$MID2" --link "$LINK" | json "
g = [s['generation_id'] for s in d['segments']]
assert g == ['$G0', '$G1', '$G2'], g
assert [s['in_window'] for s in d['segments']] == ['part'] * 3, d
assert d['segments'][1]['start']['earliest'] <= d['segments'][1]['start']['latest']
assert d['complete']
" || err "attribute --window"
"$P" attribute -s "$S" --window "$MID1..$MID1" --link "$LINK" | grep -q "whole.*$G1" || err "attribute --window (text)"
"$P" attribute -s "$S" --window "$MID2..$MID0" --link "$LINK" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "reversed window exited $rc, expected 2"
# Never wrong under loss: the same scenario again while sampling far
# faster than a 1-page ring can carry; the kernel drops records (counted),
# and whatever is attributed must still be right.
"$P" sample -o "$W/l2.pbs" --pages 1 -F 20000 >"$W/l2.out" 2>"$W/l2.err" &
SPID=$!
i=0
while ! grep -q "sampling" "$W/l2.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PB_ATTR_STORE="$W/store2" "$T" test_burn_generations >"$W/t2.out" 2>&1 ||
	{ cat "$W/t2.out"; err "test_burn_generations (second run) failed"; }
kill -INT "$SPID"; wait "$SPID"; SPID=""
"$P" -j attribute "$W/l2.pbs" -s "$W/store2" --list >"$W/l2.json" || err "attribute under loss exited $?"
check_attr "$W/l2.json" "under-loss" "$W/store2.timeline" 0
json "print('under loss: lost', d['summary']['lost_records'], 'records,', d['summary']['in_bpf_jit'], 'samples in BPF JIT,', {k: v['samples'] for k, v in d['generations'].items()})" <"$W/l2.json"
exit $fail
