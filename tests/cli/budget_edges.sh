#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# budget_edges.sh: the holds a window's open cuts (record --budget;
# docs/record.md, docs/trace-format.md type 10 `open_cuts`). Real BPF,
# needs root (skips, or fails under CI=true, without it). Not timed.
# The planted long hold (probity-demo --pathology long-hold: a holder
# keeps a connection 300 ms of every 600) under --budget 10 %, 12 s:
#  - every window's open cuts are RELEASEs it saw (open_cuts <= releases),
#    their parts lie inside it (open_cut_max_ns <= detached_ns - open_ns),
#    and a resource that is not shared never has more open cuts in a
#    window than its capacity plus the demo's threads: only units held at
#    the open can be cut by it, and those a thread took in an acquiring
#    call already running at the open (an `at: return` ACQUIRE: the
#    return probe attached after the call began never fires for it; one
#    call per thread). The demo's work queue (capacity 32) is pushed by a
#    return probe that fires after a worker took the item on another CPU:
#    counted at the RELEASE alone, hundreds of such reordered items a
#    window read as open cuts; they must be taken back when the late
#    ACQUIRE comes, however late (a producer descheduled past 50 ms);
#  - once a window of demo.conn has an open cut whose part reaches the
#    long-hold threshold's bucket (>= 2^26 ns, 67 ms), report's long_hold
#    finding on demo.conn names open_cut_long_holds. The record is
#    repeated up to 5 times until that happens, each time with another
#    hold (300-430 ms, held one period in two). Where the windows fall on
#    the holds is chance, and a record has few chances: demo.conn's
#    windows open 3-4 times in 12 s at 10 % (the first at the start), and
#    one cuts a hold by >= 67 ms with odds of ~0.4, so ~1 record in 4
#    has none (3 records in a row had none in 2 runs of 7 here). The
#    bounds above hold in every record.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root

# rec NAME HOLD_MS
rec() {
	if ! "$P" -j record -m "$DEMO_M" -o "$T/$1.trace" --budget 10% -- \
		"$DEMO" -q --pathology long-hold --hold-ms "$2" --duration 12 --clients 4 \
		>"$T/$1.out" 2>"$T/$1.err"; then
		if grep -qiE "operation not permitted|bpf.*not (supported|available)" "$T/$1.err"; then
			[ "${CI:-}" = true ] && { echo "FAIL: BPF unavailable under CI=true"; exit 1; }
			echo "skip: BPF unavailable: $(head -1 "$T/$1.err")"; exit 77
		fi
		err "record $1: $(tail -3 "$T/$1.err")"; return 1
	fi
	"$P" -j report "$T/$1.trace" >"$T/$1.report" 2>"$T/$1.rerr" ||
		{ err "report $1: $(cat "$T/$1.rerr")"; return 1; }
	"$P" -j script "$T/$1.trace" 2>/dev/null | grep '"type":"window_stats"' >"$T/$1.win"
	return 0
}

# check NAME: exit 0 bounds hold and conn's long open cut is named, 3
# bounds hold but no conn window had a long open cut, 1 broken
check() {
	python3 - "$T/$1.win" "$T/$1.report" "$DEMO_M" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
cap, shared, name = {}, set(), None
for l in open(sys.argv[3]):	# the demo manifest's resources
    t = l.strip()
    if t.startswith('- name:'):
        name = t.split('name:')[1].strip()
    elif name and t.startswith('capacity:'):
        cap[name] = int(t.split(':')[1])
    elif name and t == 'shared: true':
        shared.add(name)
    elif t.startswith('events:'):
        break
THREADS = 4 + 2 + 3
bad, total, long_conn = [], 0, 0
if not recs:
    bad.append("no window_stats record: the governor opened no window")
for r in recs:
    res, oc = r['resource'], r['open_cuts']
    total += oc
    if oc > r['releases']:
        bad.append("%s: %d open cuts, %d RELEASEs in the window" % (res, oc, r['releases']))
    if oc and r['open_cut_max_ns'] > r['detached_ns'] - r['open_ns']:
        bad.append("%s: an open cut %.1f ms after the open, window on %.1f ms"
                   % (res, r['open_cut_max_ns'] / 1e6, (r['detached_ns'] - r['open_ns']) / 1e6))
    # --clients 4, 2 workers, the holder, the pool's backend, main
    if res in cap and res not in shared and oc > cap[res] + THREADS:
        bad.append("%s: %d open cuts in one window, capacity %d + %d threads "
                   "(reordered ACQUIREs counted?)" % (res, oc, cap[res], THREADS))
    if res == 'demo.conn' and r['open_cut_max_ns'] >= 1 << 26:
        long_conn += 1
for b in bad:
    print("FAIL: " + b)
if bad:
    sys.exit(1)
if not long_conn:
    print("   %s: bounds hold (%d windows, %d open cuts); no conn window had a long open cut"
          % (sys.argv[1].split('/')[-1], len(recs), total))
    sys.exit(3)
lh = [f for f in rep.get('findings', []) if f['kind'] == 'long_hold' and f['resource'] == 'demo.conn']
ev = {e['key']: e for e in lh[0]['evidence']} if lh else {}
if 'open_cut_long_holds' not in ev:
    print("FAIL: %d conn windows had a long open cut; long_hold demo.conn: %s"
          % (long_conn, sorted(ev) if lh else "no finding"))
    sys.exit(1)
print("ok   budget edges: %d windows, %d open cuts within bounds; %s"
      % (len(recs), total, ev['open_cut_long_holds']['text']))
PY
}

i=0
for hold in 300 370 430 340 400; do
	rec "r$i" "$hold" || exit 1
	check "r$i"; rc=$?
	[ $rc -eq 0 ] && exit 0
	[ $rc -eq 3 ] || exit 1
	i=$((i + 1))
done
echo "FAIL: $i records and no window of demo.conn had an open cut >= 67 ms"
exit 1
