#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# envelope.sh: distribution envelopes with real BPF (docs/validation.md,
# "probity train"). On the demo:
#   - train -- CMD: 3 clean runs (--pathology none) -> an envelope bound to
#     the manifest digest and the demo's build-id; train --from the kept
#     traces gives the same metrics; traces of another manifest, and a run
#     in which a descriptor went stale, are refused;
#   - record --envelope with another manifest: refused, exit 2, nothing run;
#   - 3 clean runs recorded with --envelope: the false-warning rate is
#     printed; at most one run of three may warn (distributions are weak
#     evidence and this machine is shared), and never on the conn ratio;
#   - --pathology churn (10 connpool acquire/release cycles without a query
#     per request): ratio/demo.conn/USE:ACQUIRE falls from 1 to ~0.09 and
#     is flagged (summary, trace note, health, report), while the exit code
#     (0) and every descriptor's confidence stay what they are without
#     the envelope.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root
[ -x "$FIX/objpool" ] || { echo "FAIL: $FIX/objpool not built (make test-unit)"; exit 1; }
sed "s|@BINARY@|$FIX/objpool|" tests/fixtures/validation/objpool.manifest.yaml >"$T/objpool.tmpl"
scripts/fill-build-id.sh "$T/objpool.tmpl" "$FIX/objpool" "$T/objpool.yaml" || exit 1

# summary FILE: record's -j summary line (the demo's own output may follow it)
summary() { grep '^{"file"' "$1" | tail -1; }

DEMO_ARGS="-q --duration 0 --clients 4"

# 1. train on three clean runs
"$P" -j train -m "$DEMO_M" -o "$T/clean.env" --runs 3 -d 3 --keep-traces "$T/runs" -- \
	"$DEMO" $DEMO_ARGS --pathology none >"$T/train.out" 2>"$T/train.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: train exited $rc: $(tail -5 "$T/train.err")"; exit 1; }
grep -q 'train: run 3/3' "$T/train.err" || err "train: no progress on stderr"
tail -1 "$T/train.out" >"$T/train.json"
py "$T/train.json" '
assert d["runs"] == 3 and d["windows"] >= 6 and d["metrics"] >= 20, d
assert d["targets"][0]["id"] == "demo" and len(d["targets"][0]["build_id"]) == 40, d
' || err "train: summary $(cat "$T/train.json")"
BID=$(grep -m1 'build_id:' "$DEMO_M" | sed 's/.*build_id: *"\{0,1\}\([0-9a-f]*\).*/\1/')
py "$T/clean.env" '
assert d["format"] == "probity-envelope" and d["version"] == 1, d["format"]
assert d["targets"] == [{"id": "demo", "build_id": "'"$BID"'"}], d["targets"]
m = {x["name"]: x for x in d["metrics"]}
r = m["ratio/demo.conn/USE:ACQUIRE"]
assert r["lo"] <= 1.0 <= r["hi"] and r["lo"] > 0.5, r
assert all(x["lo"] <= x["trained"]["min"] <= x["trained"]["max"] <= x["hi"] for x in d["metrics"])
print("ok   train: %d metrics over %d windows" % (len(m), d["training"]["windows"]))
' || err "train: envelope content"

# 2. train --from the same traces; refuse traces of another manifest
"$P" -j train -o "$T/from.env" --from "$T"/runs/run-*.trace >"$T/from.out" 2>"$T/from.err" ||
	err "train --from exited $?: $(tail -3 "$T/from.err")"
python3 -c "import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert [x['name'] for x in a['metrics']] == [x['name'] for x in b['metrics']]
assert a['manifest'] == b['manifest'] and a['targets'] == b['targets']" "$T/clean.env" "$T/from.env" ||
	err "train --from: another envelope than train -- CMD from the same runs"
"$P" record -m "$T/objpool.yaml" -o "$T/obj.trace" -- "$FIX/objpool" 0.5 >/dev/null 2>&1
"$P" train -o "$T/mixed.env" --from "$T/runs/run-1.trace" "$T/obj.trace" >/dev/null 2>"$T/mixed.err"
rc=$?
[ $rc -eq 2 ] && grep -q "another manifest" "$T/mixed.err" ||
	err "train --from mixed manifests: exit $rc, expected 2: $(cat "$T/mixed.err")"
"$P" train -m "$T/objpool.yaml" -o "$T/mixed.env" --from "$T/runs/run-1.trace" >/dev/null 2>"$T/mixed.err"
rc=$?
[ $rc -eq 2 ] || err "train -m OTHER --from: exit $rc, expected 2"
[ -e "$T/mixed.env" ] && err "train wrote an envelope for mixed inputs"
# a run in which a descriptor went stale is not clean
sed "s|@BINARY@|$FIX/objpool_borrowed|" tests/fixtures/validation/objpool.manifest.yaml >"$T/b.tmpl"
scripts/fill-build-id.sh "$T/b.tmpl" "$FIX/objpool_borrowed" "$T/b.yaml" || exit 1
"$P" record -m "$T/b.yaml" -o "$T/stale.trace" -- "$FIX/objpool_borrowed" 1.5 >/dev/null 2>&1
"$P" train -o "$T/stale.env" --from "$T/stale.trace" >/dev/null 2>"$T/stale.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not a clean run: obj_get went" "$T/stale.err" ||
	err "train on a stale run: exit $rc, expected 1: $(cat "$T/stale.err")"
[ -e "$T/stale.env" ] && err "train wrote an envelope from an unclean run"

# 3. binding: an envelope of the demo's manifest refused for another one
"$P" record -m "$T/objpool.yaml" --envelope "$T/clean.env" -o "$T/refused.trace" -- \
	"$FIX/objpool" 0.5 >/dev/null 2>"$T/refused.err"
rc=$?
[ $rc -eq 2 ] || err "record --envelope for another manifest exited $rc, expected 2"
grep -q "refused: the envelope was trained on another manifest" "$T/refused.err" ||
	err "binding refusal message: $(cat "$T/refused.err")"
[ -e "$T/refused.trace" ] && err "a refused envelope still recorded a trace"
printf '{"format": "probity-envelope",\n "version": 1,,\n}\n' >"$T/broken.env"
"$P" record -m "$DEMO_M" --envelope "$T/broken.env" -o "$T/x.trace" -- "$DEMO" $DEMO_ARGS \
	>/dev/null 2>"$T/broken.err"
rc=$?
[ $rc -eq 2 ] && grep -q "broken.env:2:" "$T/broken.err" ||
	err "broken envelope: exit $rc, expected 2 and FILE:LINE: $(cat "$T/broken.err")"

# 4. clean runs against the envelope: the false-warning rate
warned=0
for i in 1 2 3; do
	"$P" -j record -m "$DEMO_M" -d 3 --envelope "$T/clean.env" -o "$T/none$i.trace" -- \
		"$DEMO" $DEMO_ARGS --pathology none >"$T/none$i.out" 2>"$T/none$i.err"
	rc=$?
	[ $rc -eq 0 ] || err "clean run $i: record exited $rc"
	summary "$T/none$i.out" >"$T/none$i.json"
	n=$(py "$T/none$i.json" '
e = d["envelope"]
assert e["windows"] >= 2 and e["metrics_checked"] >= 20, e
assert not [w for w in e["warnings"] if w["metric"].startswith("ratio/demo.conn/")], e["warnings"]
print(len(e["warnings"]))
for w in e["warnings"]:
    print("     clean run warned: %s = %.4g not in [%.4g, %.4g]" % (w["metric"], w["value"], w["lo"], w["hi"]), file=sys.stderr)
') || { err "clean run $i: envelope summary"; n=0; }
	[ "$n" -gt 0 ] && warned=$((warned + 1))
done
echo "ok   false-warning rate: $warned of 3 clean runs warned"
[ $warned -le 1 ] || err "$warned of 3 clean runs left the envelope"

# 5. churn: the conn USE/ACQUIRE ratio leaves the envelope; exit code and
#    confidence unchanged (compared with the same run without --envelope)
"$P" -j record -m "$DEMO_M" -d 3 -o "$T/churn0.trace" -- "$DEMO" $DEMO_ARGS --pathology churn \
	>"$T/churn0.out" 2>/dev/null
rc0=$?
"$P" -j record -m "$DEMO_M" -d 3 --envelope "$T/clean.env" -o "$T/churn.trace" -- \
	"$DEMO" $DEMO_ARGS --pathology churn >"$T/churn.out" 2>"$T/churn.err"
rc=$?
[ $rc -eq $rc0 ] && [ $rc -eq 0 ] || err "churn: record exited $rc with the envelope, $rc0 without (expected 0 both)"
summary "$T/churn.out" >"$T/churn.json"
summary "$T/churn0.out" >"$T/churn0.json"
py "$T/churn.json" '
e = d["envelope"]
w = [x for x in e["warnings"] if x["metric"] == "ratio/demo.conn/USE:ACQUIRE"]
assert w and w[0]["value"] < 0.3 and w[0]["windows_outside"] >= 2, e["warnings"]
assert d["confidence"] == {}, d["confidence"]
assert d["confidence"] == json.load(open(sys.argv[1].replace("churn.json", "churn0.json")))["confidence"]
print("ok   churn: ratio/demo.conn/USE:ACQUIRE = %.3f outside [%.3f, %.3f]; %d metric(s) left; confidence unchanged" % (w[0]["value"], w[0]["lo"], w[0]["hi"], len(e["warnings"])))
' || err "churn: the conn ratio was not flagged, or confidence moved"
# under -j stdout holds the one JSON document; the warning is a diagnostic
# on stderr (docs/probity.md, -j)
grep -q 'envelope: ratio/demo.conn/USE:ACQUIRE' "$T/churn.err" || err "churn: no warning line on stderr"
grep -q '"warning"' "$T/churn.out" && err "churn: a warning document on stdout under -j"
"$P" -j health "$T/churn.trace" >"$T/churn.health"
rc=$?
[ $rc -eq 0 ] || err "churn: health exited $rc, expected 0 (envelope warnings are not states)"
py "$T/churn.health" '
assert [x for x in d["envelope"] if x.startswith("ratio/demo.conn/USE:ACQUIRE")], d["envelope"]
assert all(x["state"] == x["initial"] for x in d["descriptors"]), d["descriptors"]
assert d["complete"] and not d["in_progress"], d
' || err "churn: health does not show the envelope warning"
"$P" health "$T/churn.trace" | grep -q "^envelope (warning evidence only" || err "churn: health text lacks the envelope section"
"$P" -j report "$T/churn.trace" >"$T/churn.report" || err "churn: report failed"
py "$T/churn.report" '
assert [x for x in d["envelope"] if "ratio/demo.conn/USE:ACQUIRE" in x], d.get("envelope")
assert all(c["state"] == c["initial"] for c in d["confidence"]), d["confidence"]
' || err "churn: report does not show the envelope warning"

# 6. --events: key and transition metrics; churn turns ACQUIRE>USE into ACQUIRE>RELEASE
"$P" -j train -m "$DEMO_M" -o "$T/ev.env" --runs 2 -d 3 --events -- \
	"$DEMO" $DEMO_ARGS --pathology none >"$T/evtrain.out" 2>"$T/evtrain.err" ||
	err "train --events exited $?: $(tail -3 "$T/evtrain.err")"
py "$T/ev.env" '
assert d["training"]["key_metrics"], d["training"]
n = [x["name"] for x in d["metrics"]]
assert "transition/demo.conn/ACQUIRE>USE" in n and "key_aligned8/conn_acquire" in n, n
' || err "train --events: no key or transition metrics"
"$P" -j record -m "$DEMO_M" -d 3 --events --envelope "$T/ev.env" -o "$T/evchurn.trace" -- \
	"$DEMO" $DEMO_ARGS --pathology churn >"$T/evchurn.out" 2>"$T/evchurn.err"
rc=$?
[ $rc -eq 0 ] || err "churn --events: record exited $rc"
summary "$T/evchurn.out" >"$T/evchurn.json"
py "$T/evchurn.json" '
e = d["envelope"]
w = {x["metric"]: x for x in e["warnings"]}
t = w["transition/demo.conn/ACQUIRE>RELEASE"]
assert t["value"] > 0.7 and e["key_metrics_checked"], e
assert d["confidence"] == {}, d["confidence"]
print("ok   churn --events: transition/demo.conn/ACQUIRE>RELEASE = %.3f outside [%.3f, %.3f]" % (t["value"], t["lo"], t["hi"]))
' || err "churn --events: the transition was not flagged"
exit $fail
