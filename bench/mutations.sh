#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mutations.sh: the mutation benchmark of runtime semantic validation
# (docs/validation.md) -> bench/results/mutations.json
#   bench/mutations.sh [BUILD_DIR]   (default build; needs root for BPF)
# - each build of tests/fixtures/validation/mutants.c (clean and one
#   mutation per invariant) recorded MUT_RUNS times (default 5) under the
#   clean build's contract: confusion matrix expected vs observed outcome
#   (none / suspect / stale / leak finding / other finding), whether the
#   change named the mutated invariant, detection latency (trace start ->
#   first confidence change, from the trace's change records), and the
#   attach-only baseline: what `report` says with each model_suspect /
#   model_stale finding read as its diagnosis (no controller);
# - issue 14's cases the same way: tests/fixtures/validation/connpool.c
#   (clean, STALE_USE, LEAK, WIDE, FASTPATH, HANDOFF) and ioshift.c (clean,
#   MOVED), each under its clean build's contract;
# - calibration (docs/validation.md "Calibrated confidence"): every
#   descriptor of every run is one finding (its end state, its events);
#   right = a stale/suspect state on the mutated descriptor, the initial
#   state elsewhere; per (state, evidence bucket) the observed fraction
#   right, predicted vs observed and the Brier score ->
#   bench/results/calibration.json (the table src/validate/calibration.c
#   ships is fitted from it);
# - false alarms: the demo (build/demo/probity-demo under its manifest,
#   --duration 2) with --pathology none and leak, DEMO_RUNS times each
#   (default 20): runs with any confidence change.
# About 11 minutes with the defaults idle, 25 at load average 12-24. Not run
# by `make test` or `make bench`. The >= 40-run false-alarm check of every
# fixture and the demo is bench/clean_runs.sh.
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=$(cd "$BUILD" && pwd)
make --no-print-directory BUILD="$BUILD" "$BUILD/probity" test-unit >/dev/null
W=$(mktemp -d /tmp/pbmbench.XXXXXX)
trap 'rm -rf "$W"' EXIT
MUT_RUNS=${MUT_RUNS:-5}
DEMO_RUNS=${DEMO_RUNS:-20}
P="$BUILD/probity"
T0=$(date +%s)

# one run: record, health, report -> $W/NAME.N.{rc,health,report}
one() { # NAME N MANIFEST -- CMD...
	name=$1 n=$2 m=$3
	shift 4
	set +e
	"$P" record -m "$m" -o "$W/t.trace" -- "$@" </dev/null >/dev/null 2>"$W/$name.$n.err"
	echo $? >"$W/$name.$n.rc"
	"$P" -j health "$W/t.trace" >"$W/$name.$n.health" 2>/dev/null
	"$P" -j report "$W/t.trace" >"$W/$name.$n.report" 2>/dev/null
	python3 -c "import struct, sys
b = open(sys.argv[1], 'rb').read(64)
assert b[:8] == b'PBTRACE\0', 'not a trace'
print(struct.unpack_from('<Q', b, 56)[0])" "$W/t.trace" >"$W/$name.$n.start"
	set -e
	rm -f "$W/t.trace"
}

for v in clean BORROWED DOUBLE_PUT STALE_HANDLE RECYCLE LATE_CLOSE BYTES; do
	b="$BUILD/fixtures/mutants_$v"
	sed "s|@BINARY@|$b|" tests/fixtures/validation/mutants.manifest.yaml >"$W/$v.tmpl"
	scripts/fill-build-id.sh "$W/$v.tmpl" "$b" "$W/$v.yaml"
	i=0
	while [ $i -lt "$MUT_RUNS" ]; do
		one "$v" $i "$W/$v.yaml" -- "$b" 1.5
		i=$((i + 1))
	done
	echo "mutations: $v done" >&2
done
DATA=/var/tmp
for v in clean STALE_USE LEAK WIDE FASTPATH HANDOFF; do
	b="$BUILD/fixtures/connpool_$v"
	sed "s|@BINARY@|$b|" tests/fixtures/validation/connpool.manifest.yaml >"$W/cp$v.tmpl"
	scripts/fill-build-id.sh "$W/cp$v.tmpl" "$b" "$W/cp$v.yaml"
	i=0
	while [ $i -lt "$MUT_RUNS" ]; do
		one "connpool_$v" $i "$W/cp$v.yaml" -- "$b" 1.5
		i=$((i + 1))
	done
	echo "mutations: connpool $v done" >&2
done
for v in clean MOVED; do
	b="$BUILD/fixtures/ioshift_$v"
	sed "s|@BINARY@|$b|" tests/fixtures/validation/ioshift.manifest.yaml >"$W/io$v.tmpl"
	scripts/fill-build-id.sh "$W/io$v.tmpl" "$b" "$W/io$v.yaml"
	i=0
	while [ $i -lt "$MUT_RUNS" ]; do
		one "ioshift_$v" $i "$W/io$v.yaml" -- "$b" 2 "$DATA"
		i=$((i + 1))
	done
	echo "mutations: ioshift $v done" >&2
done
for path in none leak; do
	i=0
	while [ $i -lt "$DEMO_RUNS" ]; do
		one "demo_$path" $i "$BUILD/demo/demo.manifest.yaml" -- "$BUILD/demo/probity-demo" \
			-q --json --pathology $path --duration 2
		i=$((i + 1))
	done
	echo "mutations: demo $path done" >&2
done

python3 - "$W" "$MUT_RUNS" "$DEMO_RUNS" "$(($(date +%s) - T0))" "$ROOT" <<'PY'
import json, os, sys, statistics
sys.path.insert(0, os.path.join(sys.argv[5], "bench"))
from summarize import machine
W, mut_runs, demo_runs, wall, root = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
OUT = ["none", "suspect", "stale", "leak finding", "other finding"]
# mutation -> (descriptor, invariant, what changed)
MUT = {
    "clean": (None, None, "the contract's own build"),
    "BORROWED": ("obj_get", "acquire_active", "owned return turned borrowed"),
    "DOUBLE_PUT": ("obj_put", "release_not_active", "double release (tolerated by the pool)"),
    "STALE_HANDLE": ("obj_use", "use_not_acquired", "handle used after its release"),
    "RECYCLE": ("obj_get", "generation_overlap", "release path moved: objects recycled with a new epoch"),
    "LATE_CLOSE": ("lease_open", "expect_timeout", "close path moved to a 200 ms reaper"),
    "BYTES": ("q_push", "over_capacity", "queue units changed from objects to bytes"),
    "connpool_clean": (None, None, "issue 14's connection pool, the contract's own build"),
    "connpool_STALE_USE": ("conn_use", "use_not_acquired", "use after release on a LIFO free list"),
    "connpool_LEAK": (None, None, "1 in 50 connections leaked, the pool replenishes (a leak, not a model change)"),
    "connpool_WIDE": ("conn_get", "over_capacity", "12 busy workers on a pool of 16 under capacity 8"),
    "connpool_FASTPATH": ("conn_get", "acquire_bypassed", "probed pool_get inlined on the common path"),
    "connpool_HANDOFF": (None, None, "async handoff before USE (a correct program)"),
    "ioshift_clean": (None, None, "a cache miss preads its page, the contract's own build"),
    "ioshift_MOVED": ("read_miss", "prediction_failed", "the I/O moved to another thread"),
}
EXPECT = {"connpool_LEAK": "leak finding"}

def load(name, n):
    p = os.path.join(W, "%s.%d" % (name, n))
    def j(ext):
        try:
            return json.load(open(p + "." + ext))
        except Exception:
            return None
    return {"rc": int(open(p + ".rc").read()), "health": j("health"), "report": j("report"),
            "start": int(open(p + ".start").read() or 0)}

# calibration: every descriptor of every run is one finding
BUCKETS = [(0, 1000, "<1e3"), (1000, 10000, "1e3-1e4"), (10000, 1 << 62, ">=1e4")]
CAL = {}

def bucket(ev):
    for lo, hi, name in BUCKETS:
        if lo <= ev < hi:
            return name
    return BUCKETS[-1][2]

def calib_add(v, want, h):
    if h is None:
        return
    for x in h["descriptors"]:
        broken = x["id"] == want
        flagged = x["state"] in ("suspect", "stale")
        right = flagged == broken and (broken or x["state"] == x["initial"])
        k = (x["state"], bucket(x["events"]))
        c = CAL.setdefault(k, [0, 0])
        c[0] += 1
        c[1] += right

def calibration_write():
    """fit per (state, bucket): observed fraction right (add-one smoothed
    toward 1/2 so a cell of a few runs is not 0 or 1); the uncalibrated
    prediction is the fixed certainty 1.0 of a state; Brier of both"""
    cells, b_raw, b_cal, n_all = [], 0.0, 0.0, 0
    for (st, bk), (n, right) in sorted(CAL.items()):
        p = (right + 1) / (n + 2)
        cells.append({"state": st, "events": bk, "findings": n, "right": right,
                      "observed": round(right / n, 4), "calibrated": round(p, 4),
                      "predicted_uncalibrated": 1.0})
        b_raw += (1 - 1.0) ** 2 * right + (0 - 1.0) ** 2 * (n - right)
        b_cal += (1 - p) ** 2 * right + (0 - p) ** 2 * (n - right)
        n_all += n
    out = {"benchmark": "calibration", "machine": machine(root),
           "method": ("bench/mutations.sh: every descriptor of every mutation/connpool/ioshift run "
                      "is one finding (its end state after the run, its events); right = stale or "
                      "suspect on the mutated descriptor, its initial state on every other "
                      "descriptor; calibrated = (right + 1) / (findings + 2) per (state, events "
                      "bucket); Brier over all findings, in-sample"),
           "buckets": [b[2] for b in BUCKETS], "cells": cells, "findings": n_all,
           "brier_uncalibrated": round(b_raw / n_all, 4) if n_all else None,
           "brier_calibrated": round(b_cal / n_all, 4) if n_all else None}
    json.dump(out, open(os.path.join(root, "bench/results/calibration.json"), "w"), indent=2)
    # the table src/validate/calibration.c ships
    ST = {"candidate": "PB_CONF_CANDIDATE", "validated": "PB_CONF_VALIDATED",
          "suspect": "PB_CONF_SUSPECT", "stale": "PB_CONF_STALE", "degraded": "PB_CONF_DEGRADED"}
    lo_hi = {name: (lo, hi) for lo, hi, name in BUCKETS}
    with open(os.path.join(root, "src/validate/calibration_table.h"), "w") as h:
        h.write("/* SPDX-License-Identifier: BSD-2-Clause */\n"
                "/* calibration_table.h: written by bench/mutations.sh from its runs\n"
                " * (bench/results/calibration.json); included by calibration.c only.\n"
                " * state, events [lo, hi), findings, right */\n")
        for c in cells:
            lo, hi = lo_hi[c["events"]]
            h.write("{ %s, %dull, %dull, %d, %d },\n" % (ST[c["state"]], lo, hi, c["findings"], c["right"]))
    print("calibration: %d findings, Brier %.4f uncalibrated -> %.4f calibrated" % (
        n_all, out["brier_uncalibrated"] or 0, out["brier_calibrated"] or 0))
    for c in cells:
        print("  %-10s %-8s %4d findings, %4d right: %.3f" % (c["state"], c["events"], c["findings"],
                                                           c["right"], c["calibrated"]))

def finding_kind(k):
    return "leak finding" if k == "leak" else "other finding"

def observe(r):
    """outcome with the controller, and the attach-only one"""
    h, rep = r["health"], r["report"]
    if h is None or rep is None:
        return "error", "error", None, None
    states = [x["state"] for x in h["descriptors"]]
    fs = rep.get("findings", [])
    if "stale" in states:
        obs = "stale"
    elif "suspect" in states:
        obs = "suspect"
    elif fs:
        obs = finding_kind(fs[0]["kind"])
    else:
        obs = "none"
    # attach-only: no controller, a model_* finding is read as its diagnosis
    kinds = [f["diagnosis"] if f["kind"] in ("model_stale", "model_suspect") else f["kind"] for f in fs]
    base = finding_kind(kinds[0]) if kinds else "none"
    lat = [None, None]
    if h["changes"] and r["start"]:
        lat[0] = (min(c["ts_ns"] for c in h["changes"]) - r["start"]) / 1e6
        st = [c["ts_ns"] for c in h["changes"] if c["to"] == "stale"]
        if st:
            lat[1] = (min(st) - r["start"]) / 1e6
    return obs, base, lat, h

res = {"benchmark": "mutations", "machine": machine(root), "wall_s": wall,
       "method": ("tests/fixtures/validation/mutants.c built clean and with one -D switch per "
                  "mutation (mk/validation-fixtures.mk), each recorded %d times for 1.5 s with "
                  "`probity record` under the clean build's contract "
                  "(tests/fixtures/validation/mutants.manifest.yaml, the variant's build-id filled "
                  "in); outcome per run = stale if any descriptor ended stale, else suspect if any "
                  "suspect, else the kind of report's #1 finding, else none; 'attach_only' = the "
                  "same report with every model_suspect/model_stale finding read as its diagnosis "
                  "(what a profiler without the controller would have said); latency = first "
                  "confidence change ts - trace start (CLOCK_MONOTONIC, header start_mono_ns)" % mut_runs),
       "outcomes": OUT, "mutations": {}}
for v, (want, inv, what) in MUT.items():
    expected = EXPECT.get(v, "stale" if want else "none")
    cm = {o: 0 for o in OUT + ["error"]}
    base = {o: 0 for o in OUT + ["error"]}
    lats, slats, named, others, rcs, kinds = [], [], 0, 0, [], {}
    for n in range(mut_runs):
        r = load(v, n)
        obs, b, lat, h = observe(r)
        calib_add(v, want, h)
        cm[obs] += 1
        base[b] += 1
        rcs.append(r["rc"])
        for f in (r["report"] or {}).get("findings", [])[:1]:
            k = "%s (%s, %s)" % (f["kind"], f.get("diagnosis"), f.get("resource"))
            kinds[k] = kinds.get(k, 0) + 1
        if lat and lat[0] is not None:
            lats.append(lat[0])
        if lat and lat[1] is not None:
            slats.append(lat[1])
        if h and want:
            ch = [c for c in h["changes"] if c["id"] == want]
            named += bool(ch) and all(c["invariant"] == inv for c in ch)
            others += any(x["id"] != want and x["state"] != x["initial"] for x in h["descriptors"])
    e = {"what": what, "descriptor": want, "invariant": inv, "expected": expected, "runs": mut_runs,
         "observed": {k: c for k, c in cm.items() if c or k in OUT},
         "correct": cm[expected],
         "record_exit_codes": rcs,
         "first_findings": kinds,
         "attach_only": {k: c for k, c in base.items() if c or k in OUT}}
    if want:
        e["changes_named_the_invariant"] = named
        e["runs_with_other_descriptors_changed"] = others
        e["detection_latency_ms"] = {"unit": "ms", "n": len(lats),
                                     "median": round(statistics.median(lats), 1) if lats else None,
                                     "max": round(max(lats), 1) if lats else None}
        e["stale_latency_ms"] = {"unit": "ms", "n": len(slats),
                                 "median": round(statistics.median(slats), 1) if slats else None,
                                 "max": round(max(slats), 1) if slats else None}
        # a finding the baseline would report on a broken model = a wrong diagnosis
        e["wrong_diagnoses_avoided"] = base["leak finding"] + base["other finding"]
    res["mutations"][v] = e
demo = {"what": "clean demo (build/demo/probity-demo, demo.manifest.yaml, --duration 2), runs with any confidence change",
        "runs_per_pathology": demo_runs, "pathologies": {}}
for path in ("none", "leak"):
    changed, viol, events, lead, by = 0, [], [], 0, {}
    for n in range(demo_runs):
        r = load("demo_" + path, n)
        h = r["health"]
        if h is None:
            changed += 1
            continue
        changed += bool(h["changes"]) or any(x["state"] != x["initial"] for x in h["descriptors"])
        viol.append(sum(sum(x["violations"].values()) for x in h["descriptors"]))
        for x in h["descriptors"]:
            for k, c in x["violations"].items():
                if c:
                    by["%s.%s" % (x["id"], k)] = by.get("%s.%s" % (x["id"], k), 0) + c
        events.append(sum(x["events"] for x in h["descriptors"]))
        fs = (r["report"] or {}).get("findings", [])
        lead += bool(fs) and fs[0]["kind"] == "leak"
    demo["pathologies"][path] = {"runs": demo_runs, "runs_with_confidence_change": changed,
                                 "violations_per_run": {"median": statistics.median(viol) if viol else None,
                                                        "max": max(viol) if viol else None},
                                 "events_per_run_median": statistics.median(events) if events else None,
                                 "runs_with_leak_as_first_finding": lead,
                                 "violations_by_descriptor_all_runs": by}
res["false_alarms_demo"] = demo
calibration_write()
json.dump(res, open(os.path.join(root, "bench/results/mutations.json"), "w"), indent=2)
print("mutations: wrote bench/results/mutations.json (%d s)" % wall)
for v, e in res["mutations"].items():
    print("  %-12s expected %-5s observed %s; attach-only %s; latency %s" % (
        v, e["expected"], {k: c for k, c in e["observed"].items() if c},
        {k: c for k, c in e["attach_only"].items() if c}, e.get("detection_latency_ms", {}).get("median")))
for p, d in demo["pathologies"].items():
    print("  demo %-4s: %d of %d runs with a confidence change" % (p, d["runs_with_confidence_change"], d["runs"]))
PY
