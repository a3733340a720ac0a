#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# multiproc.sh: `probity record` over many processes of one build, on the
# process-tree fixture (tests/fixtures/multiproc/forker.c, real BPF):
# -- CMD follows forked workers with exact per-process counts and names;
# --all sees a process running before attach and one started after;
# --cgroup (a cgroup v2 child made here, removed by the trap) includes one
# process and excludes another; `scope: shared` makes a cross-process
# RELEASE legal while the default scope makes it a violation; exits end
# per-process holdings (not leaks) but count shared ones that outlive
# their process; a small --max-instances counts lost identities; --pid on
# a process that forks workers hints at --all.
set -u
. tests/cli/lib.sh
need_root
T=$(mktemp -d)
CG=""
BG=""
cleanup() {
	for p in $BG; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG"
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
cp "$FIX/multiproc/forker" "$T/forker"
cp "$FIX/multiproc/forker.yaml" "$T/shared.yaml"
sed '/^ *scope: shared/d' "$FIX/multiproc/forker.yaml" >"$T/process.yaml"
grep -q "^ *scope: shared" "$T/process.yaml" && err "sed left the scope line"
# warnings under -j are JSON lines too: the summary is the last line
pyl() { tail -n 1 "$1" >"$1.last" && py "$1.last" "$2"; }

# wait until record has attached (the trace exists after attach), up to 30 s
attached() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$1" ] || err "record never attached ($1)"
}

# 1. -- CMD: the parent and its two forked workers; process k does
#    (k + 1) * 100 iterations of 4 events
"$P" -j record -m "$T/shared.yaml" -o "$T/f.trace" -- "$T/forker" -c 2 -n 100 \
	>"$T/f.json" 2>"$T/f.err"; rc=$?
[ $rc -eq 0 ] || err "record -- forker exited $rc: $(cat "$T/f.err")"
pyl "$T/f.json" "
ev = sorted(p['events'] for p in d['processes'])
assert ev == [400, 800, 1200], ev
assert d['events'] == 2400, d['events']
assert all(p['comm'] == 'forker' and p['exited'] for p in d['processes']), d['processes']
assert sum(1 for p in d['processes'] if p['ppid']) == 2, d['processes']
assert d['lost']['instance_map_full'] == 0, d['lost']
assert d['memory']['bytes_per_instance'] > 0, d['memory']" ||
	err "-- CMD did not follow the forked workers exactly: $(cat "$T/f.json")"
"$P" report "$T/f.trace" >"$T/f.rep" 2>&1 || err "report of the forked trace failed: $(cat "$T/f.rep")"
grep -q "forker" "$T/f.rep" || err "report does not name the processes: $(head -20 "$T/f.rep")"

# 2. --all: A runs before attach (waiting for a file), B starts after
"$T/forker" -c 0 -n 50 -w "$T/go" & A=$!
BG="$A"
"$P" -j record -m "$T/shared.yaml" --all -o "$T/a.trace" -d 60 >"$T/a.json" 2>"$T/a.err" &
R=$!
BG="$BG $R"
attached "$T/a.trace"
touch "$T/go"
"$T/forker" -c 1 -n 30 & B=$!
wait "$A" "$B"
kill -INT "$R"
wait "$R"; rc=$?
[ $rc -eq 0 ] || err "record --all exited $rc: $(cat "$T/a.err")"
pyl "$T/a.json" "
ev = {p['pid']: p['events'] for p in d['processes']}
assert ev.get($A) == 200, ('A', ev)
assert ev.get($B) == 120, ('B', ev)
assert sorted(ev.values()) == [120, 200, 240], ev
assert d['stopped_by'] == 'signal', d['stopped_by']" ||
	err "--all missed a process or miscounted: $(cat "$T/a.json")"

# 3. --cgroup: A inside a new cgroup v2 child, B outside
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$CG2" ]; then
	err "no cgroup2 mount in /proc/mounts"
else
	CG="$CG2/probity-multiproc-$$"
	mkdir "$CG" || err "cannot create $CG"
	rm -f "$T/go"
	sh -c "echo \$\$ >'$CG/cgroup.procs' && exec '$T/forker' -c 0 -n 50 -w '$T/go'" & A=$!
	"$T/forker" -c 0 -n 70 -w "$T/go" & B=$!
	BG="$A $B"
	"$P" -j record -m "$T/shared.yaml" --cgroup "$CG" -o "$T/c.trace" -d 60 \
		>"$T/c.json" 2>"$T/c.err" &
	R=$!
	BG="$BG $R"
	attached "$T/c.trace"
	touch "$T/go"
	wait "$A" "$B"
	kill -INT "$R"
	wait "$R"; rc=$?
	[ $rc -eq 0 ] || err "record --cgroup exited $rc: $(cat "$T/c.err")"
	pyl "$T/c.json" "
ev = {p['pid']: p['events'] for p in d['processes']}
assert ev == {$A: 200}, ev
assert d['lost']['processes_outside_cgroup'] >= 1, d['lost']" ||
		err "--cgroup did not include exactly the process inside: $(cat "$T/c.json")"
	rmdir "$CG" && CG=""
fi
"$P" record -m "$T/shared.yaml" --cgroup "$T" -o "$T/x.trace" -d 1 >/dev/null 2>"$T/x.err"
grep -q "not a cgroup v2 directory" "$T/x.err" || err "a non-cgroup path is not refused clearly: $(cat "$T/x.err")"

# 4. scope: the parent takes lock 7, a forked child gives it back
for s in shared process; do
	"$P" -j record -m "$T/$s.yaml" -o "$T/x$s.trace" -- "$T/forker" -m cross -e 300 \
		>"$T/x$s.json" 2>"$T/x$s.err" || err "record (cross, $s) failed: $(cat "$T/x$s.err")"
	"$P" -j health "$T/x$s.trace" >"$T/h$s.json" 2>"$T/h$s.err"
done
rna() { py "$1" "
v = {x['id']: x['violations']['release_not_active'] for x in d['descriptors']}
assert v['lock_give'] == $2 and v['lock_take'] == 0, v"; }
rna "$T/hshared.json" 0 ||
	err "scope: shared: a cross-process RELEASE was judged a violation: $(cat "$T/hshared.json")"
rna "$T/hprocess.json" 1 ||
	err "default scope: a cross-process RELEASE was not a violation: $(cat "$T/hprocess.json")"

# 5. exits: a child exits holding object 5 (scope process) and lock 9
"$P" -j record -m "$T/shared.yaml" -o "$T/l.trace" -- "$T/forker" -m leak -e 300 \
	>"$T/l.json" 2>"$T/l.err" || err "record (leak) failed: $(cat "$T/l.err")"
pyl "$T/l.json" "
x = d['exits']
assert x['instances_ended_by_exit'] == 1 and x['shared_outlived_process'] == 1, x
assert sum(p['held_at_exit'] for p in d['processes']) == 1, d['processes']" ||
	err "exit accounting (shared lock) wrong: $(cat "$T/l.json")"
"$P" -j record -m "$T/process.yaml" -o "$T/l2.trace" -- "$T/forker" -m leak -e 300 \
	>"$T/l2.json" 2>"$T/l2.err" || err "record (leak, process scope) failed: $(cat "$T/l2.err")"
pyl "$T/l2.json" "
x = d['exits']
assert x['instances_ended_by_exit'] == 2 and x['shared_outlived_process'] == 0, x" ||
	err "exit accounting (process scope) wrong: $(cat "$T/l2.json")"

# 6. a small instance map: lost identities counted and warned about
"$P" -j record -m "$T/shared.yaml" --max-instances 16 -o "$T/m.trace" -- "$T/forker" -m hold -n 200 \
	>"$T/m.json" 2>"$T/m.err" || err "record --max-instances failed: $(cat "$T/m.err")"
pyl "$T/m.json" "
assert d['memory']['max_instances'] == 16, d['memory']
assert d['lost']['instance_map_full'] > 0, d['lost']
assert d['lost']['not_active_unjudged'] > 0, d['lost']
assert not d['confidence'], d['confidence']" ||
	err "a full instance map was not counted: $(cat "$T/m.json")"
"$P" record -m "$T/shared.yaml" --max-instances 16 -o "$T/m2.trace" -- "$T/forker" -m hold -n 200 \
	>/dev/null 2>"$T/m2.err"
grep -q "lost identities" "$T/m2.err" || err "no lost-identities warning: $(cat "$T/m2.err")"

# 7. --pid on a process that forked workers: a hint to use --all
"$T/forker" -c 2 -n 1 -e 30000 & A=$!
BG="$A"
i=0
while [ -z "$(cat /proc/$A/task/$A/children 2>/dev/null)" ] && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
"$P" record -m "$T/shared.yaml" --pid "$A" -o "$T/p.trace" -d 0.3 >/dev/null 2>"$T/p.err"
grep -q -- "--all" "$T/p.err" || err "--pid on a forking process gave no --all hint: $(cat "$T/p.err")"
kill "$A" $(cat /proc/$A/task/$A/children 2>/dev/null) 2>/dev/null

exit $fail
