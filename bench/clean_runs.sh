#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# clean_runs.sh: the false-alarm check of runtime semantic validation
# (docs/validation.md, issue 14: "clean builds of every fixture and the
# demo: 0 state changes in >= 40 runs") -> bench/results/clean_runs.json
#   bench/clean_runs.sh [BUILD_DIR]   (default build; root, BPF)
# Records the clean build of every validation fixture under its manifest,
# as tests/cli/validation*.sh, tests/cli/mutations.sh and bench/mutations.sh
# run them (objpool, mutants_clean, connpool_clean, connpool_HANDOFF: a
# correct program, ioshift_clean, sharedpin: the manifest of
# tests/unit/test_engine.c), and the demo (build/demo/probity-demo
# --pathology none under build/demo/demo.manifest.yaml, as `make demo`),
# RUNS times each (default 40), DUR seconds per run (default 1.5; the demo
# 2, sharedpin is bounded by its rounds). Every run: `probity -j record`,
# `-j health`, `-j report`; collected per target: confidence state
# changes (with their reasons), violations by invariant, lost evidence,
# report findings (a leak or model_* finding on a clean build is false).
# One progress line per target; each record is bounded by `timeout`.
# About 25-40 minutes at the defaults on 2 loaded CPUs. Not run by
# `make test` or `make bench`.
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=$(cd "$BUILD" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "clean_runs.sh: needs root (BPF)" >&2; exit 1; }
make --no-print-directory BUILD="$BUILD" "$BUILD/probity" test-unit >/dev/null
W=$(mktemp -d /tmp/pbclean.XXXXXX)
trap 'rm -rf "$W"' EXIT
RUNS=${RUNS:-40}
DUR=${DUR:-1.5}
DEMO_DUR=${DEMO_DUR:-2}
ONLY=${ONLY:-}
P="$BUILD/probity"
FIX="$BUILD/fixtures"
DATA=/var/tmp
T0=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# one run -> $W/NAME.N.{rc,rec,health,report}
one() { # NAME N MANIFEST -- CMD...
	name=$1 n=$2 m=$3
	shift 4
	set +e
	timeout -s INT -k 30 300 "$P" -j record -m "$m" -o "$W/t.trace" -- "$@" </dev/null \
		>"$W/$name.$n.rec" 2>"$W/$name.$n.err"
	echo $? >"$W/$name.$n.rc"
	"$P" -j health "$W/t.trace" >"$W/$name.$n.health" 2>/dev/null
	"$P" -j report "$W/t.trace" >"$W/$name.$n.report" 2>/dev/null
	set -e
	cut -d' ' -f1 /proc/loadavg >"$W/$name.$n.load"
	rm -f "$W/t.trace"
}

fill() { # TEMPLATE BINARY OUT
	sed "s|@BINARY@|$2|" "$1" >"$3.tmpl"
	scripts/fill-build-id.sh "$3.tmpl" "$2" "$3"
}

want() { [ -z "$ONLY" ] || echo " $ONLY " | grep -q " $1 "; }

target() { # NAME MANIFEST -- CMD...
	tname=$1 tm=$2
	shift 3
	want "$tname" || return 0
	echo "$tname" >>"$W/targets"
	i=0
	while [ $i -lt "$RUNS" ]; do
		one "$tname" $i "$tm" -- "$@"
		i=$((i + 1))
	done
	python3 - "$W" "$tname" "$RUNS" <<'PY' >&2
import json, sys, time
w, name, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
ch = v = 0
for n in range(runs):
    try:
        h = json.load(open("%s/%s.%d.health" % (w, name, n)))
        ch += len(h["changes"])
        v += sum(sum(x["violations"].values()) for x in h["descriptors"])
    except Exception:
        ch += 1
print("clean_runs: %-16s %d runs, %d state changes, %d violations (load %s, %s)" % (
    name, runs, ch, v, open("/proc/loadavg").read().split()[0], time.strftime("%H:%M:%S")))
PY
}

for b in objpool mutants_clean connpool_clean connpool_HANDOFF ioshift_clean; do
	want "$b" || continue
	case $b in
	mutants_*) tpl=mutants ;;
	connpool_*) tpl=connpool ;;
	ioshift_*) tpl=ioshift ;;
	*) tpl=$b ;;
	esac
	fill "tests/fixtures/validation/$tpl.manifest.yaml" "$FIX/$b" "$W/$b.yaml"
done
if want sharedpin; then
	hex=$(LC_ALL=C readelf -n "$FIX/sharedpin" | sed -n 's/^[[:space:]]*Build ID:[[:space:]]*\([0-9a-f]*\).*/\1/p')
	# the manifest of tests/unit/test_engine.c engine_shared_pins_race_exactly
	cat >"$W/sharedpin.yaml" <<EOF
manifest: 1
name: sharedpin
targets:
  - id: main
    binary: $FIX/sharedpin
    build_id: "$hex"
resources:
  - { name: fx.frame, class: pool, units: pins, capacity: 1, shared: true }
events:
  - id: pin
    resource: fx.frame
    kind: ACQUIRE
    site: { symbol: frame_pin, at: return }
    instance: retval
    returns: value
    confidence: validated
  - id: unpin
    resource: fx.frame
    kind: RELEASE
    site: { symbol: frame_unpin, at: entry }
    instance: arg0
    returns: void
    confidence: validated
EOF
fi

echo "clean_runs: $RUNS runs per target, ${DUR}s per run (demo ${DEMO_DUR}s), load $LOAD0" >&2
target objpool "$W/objpool.yaml" -- "$FIX/objpool" "$DUR"
target mutants_clean "$W/mutants_clean.yaml" -- "$FIX/mutants_clean" "$DUR"
target connpool_clean "$W/connpool_clean.yaml" -- "$FIX/connpool_clean" "$DUR"
target connpool_HANDOFF "$W/connpool_HANDOFF.yaml" -- "$FIX/connpool_HANDOFF" "$DUR"
target ioshift_clean "$W/ioshift_clean.yaml" -- "$FIX/ioshift_clean" "$DUR" "$DATA"
target sharedpin "$W/sharedpin.yaml" -- "$FIX/sharedpin" 20000
target demo "$BUILD/demo/demo.manifest.yaml" -- "$BUILD/demo/probity-demo" \
	-q --json --pathology none --clients 4 --duration "$DEMO_DUR"

python3 - "$W" "$RUNS" "$DUR" "$DEMO_DUR" "$(($(date +%s) - T0))" "$ROOT" "$LOAD0" <<'PY'
import json, os, sys, statistics
sys.path.insert(0, os.path.join(sys.argv[6], "bench"))
from summarize import machine
W, runs, dur, demo_dur, wall, root, load0 = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], \
    int(sys.argv[5]), sys.argv[6], sys.argv[7]
FALSE = ("leak", "model_suspect", "model_stale")

def j(p):
    try:
        return json.load(open(p))
    except Exception:
        return None

def rec_doc(p):
    """record -j's document: its last line (the target's own stdout comes first)"""
    try:
        return json.loads([l for l in open(p) if l.startswith('{"file"')][-1])
    except Exception:
        return None

def add(d, k, c=1):
    d[k] = d.get(k, 0) + c

out = {"benchmark": "clean_runs", "machine": machine(root), "wall_s": wall,
       "load_average_at_start": load0,
       "method": ("bench/clean_runs.sh: the clean build of every validation fixture (and "
                  "connpool_HANDOFF, a correct program) under its manifest, and the demo "
                  "(--pathology none --clients 4) under build/demo/demo.manifest.yaml, each "
                  "recorded %d times with `probity -j record` (fixtures %s s, demo %s s, sharedpin "
                  "20000 rounds per thread); per run `-j health` (state changes, violations) and "
                  "`-j report` (findings; a leak or model_* finding on a clean build is false)"
                  % (runs, dur, demo_dur)),
       "targets": {}}
tot = {"runs": 0, "state_changes": 0, "violations": 0, "false_findings": 0, "failed_runs": 0}
for name in open(os.path.join(W, "targets")).read().split():
    t = {"runs": runs, "record_exit_codes": {}, "failed_runs": 0, "state_changes": 0,
         "runs_with_state_change": 0, "changes": [], "violations": {}, "violations_by_descriptor": {},
         "findings": {}, "false_findings": 0, "false_finding_samples": [], "lost_evidence": {}}
    ev_all, la = [], []
    for n in range(runs):
        p = os.path.join(W, "%s.%d" % (name, n))
        rc = open(p + ".rc").read().strip()
        add(t["record_exit_codes"], rc)
        try:
            la.append(float(open(p + ".load").read()))
        except Exception:
            pass
        h, rep, rec = j(p + ".health"), j(p + ".report"), rec_doc(p + ".rec")
        if h is None or rep is None:
            t["failed_runs"] += 1
            t["changes"].append({"run": n, "error": "no health/report (record exit %s): %s" % (
                rc, open(p + ".err").read()[-300:])})
            continue
        t["state_changes"] += len(h["changes"])
        t["runs_with_state_change"] += bool(h["changes"])
        for c in h["changes"]:
            t["changes"].append({"run": n, "id": c["id"], "from": c["from"], "to": c["to"],
                                 "reason": c["reason"]})
        ev = 0
        for x in h["descriptors"]:
            ev += x["events"]
            for k, c in x["violations"].items():
                if c:
                    add(t["violations"], k, c)
                    add(t["violations_by_descriptor"], "%s.%s" % (x["id"], k), c)
        ev_all.append(ev)
        for f in rep.get("findings", []):
            add(t["findings"], f["kind"])
            if f["kind"] in FALSE:
                t["false_findings"] += 1
                if len(t["false_finding_samples"]) < 5:
                    t["false_finding_samples"].append({"run": n, "kind": f["kind"],
                                                       "resource": f.get("resource"),
                                                       "diagnosis": f.get("diagnosis")})
        le = dict((rec or {}).get("lost") or {})
        le["drops"] = (rec or {}).get("drops", 0)
        for k, c in le.items():
            if isinstance(c, (int, float)) and c:
                add(t["lost_evidence"], k, c)
    t["events_per_run"] = {"median": statistics.median(ev_all) if ev_all else None,
                           "min": min(ev_all) if ev_all else None}
    t["load_average_1min"] = {"median": statistics.median(la) if la else None,
                              "max": max(la) if la else None}
    tot["runs"] += runs
    tot["state_changes"] += t["state_changes"]
    tot["failed_runs"] += t["failed_runs"]
    tot["violations"] += sum(t["violations"].values())
    tot["false_findings"] += t["false_findings"]
    out["targets"][name] = t
out["total"] = tot
json.dump(out, open(os.path.join(root, "bench/results/clean_runs.json"), "w"), indent=2)
print("clean_runs: wrote bench/results/clean_runs.json (%d s): %s" % (wall, tot))
for name, t in out["targets"].items():
    print("  %-16s %d runs: %d state changes, %d failed, violations %s, findings %s" % (
        name, t["runs"], t["state_changes"], t["failed_runs"], t["violations"] or "none",
        t["findings"] or "none"))
PY
