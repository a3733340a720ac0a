#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# validation.sh: runtime semantic validation with real BPF
# (docs/validation.md). The seed's example: one object pool built twice
# from one source (tests/fixtures/validation/objpool.c), the owned build and
# the "owned return turned borrowed" build, each recorded under the same
# manifest (build-id filled per binary):
#   - owned: exit 0, every descriptor validated, 0 violations, no finding;
#   - borrowed: record exits 4, obj_get goes stale for acquire_active
#     (ACQUIRE of an instance still active), the growth reads model_stale
#     (diagnosis leak), never leak; also with --events.
# And no false alarm on the demo: --pathology none and leak keep every
# descriptor at its confidence (violations, if any, below 1 % of its
# events), and the planted leak is still the #1 finding, a leak, on
# validated descriptors.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root
for b in objpool objpool_borrowed; do
	[ -x "$FIX/$b" ] || { echo "FAIL: $FIX/$b not built (make test-unit)"; exit 1; }
	sed "s|@BINARY@|$FIX/$b|" tests/fixtures/validation/objpool.manifest.yaml >"$T/$b.tmpl"
	scripts/fill-build-id.sh "$T/$b.tmpl" "$FIX/$b" "$T/$b.yaml" || exit 1
done


# 1. owned build: clean
"$P" -j record -m "$T/objpool.yaml" -o "$T/own.trace" -- "$FIX/objpool" 1.5 >"$T/own.out" 2>"$T/own.err"
rc=$?
[ $rc -eq 0 ] || err "owned: record exited $rc, expected 0: $(tail -3 "$T/own.err")"
"$P" -j health "$T/own.trace" >"$T/own.health" || err "owned: health exited $?, expected 0"
py "$T/own.health" '
bad = [x for x in d["descriptors"] if x["state"] != "validated" or any(x["violations"].values())]
assert not bad and not d["changes"], bad or d["changes"]
assert d["descriptors"][0]["events"] > 1000, d
' || err "owned: a descriptor moved or broke an invariant"
"$P" -j report "$T/own.trace" >"$T/own.report" || err "owned: report failed"
py "$T/own.report" 'assert not d["findings"], d["findings"]' || err "owned: findings on a clean pool"

# 2. borrowed build, aggregate mode and --events
for mode in agg events; do
	ev=""; [ $mode = events ] && ev=--events
	"$P" -j record -m "$T/objpool_borrowed.yaml" $ev -o "$T/b$mode.trace" -- \
		"$FIX/objpool_borrowed" 1.5 >"$T/b$mode.out" 2>"$T/b$mode.err"
	rc=$?
	[ $rc -eq 4 ] || err "borrowed $mode: record exited $rc, expected 4 (stale): $(tail -3 "$T/b$mode.err")"
	tail -1 "$T/b$mode.out" >"$T/b$mode.sum"
	py "$T/b$mode.sum" 'assert d["confidence"]["obj_get"]["state"] == "stale", d["confidence"]' ||
		err "borrowed $mode: record summary does not name obj_get stale"
	"$P" -j health "$T/b$mode.trace" >"$T/b$mode.health"
	rc=$?
	[ $rc -eq 1 ] || err "borrowed $mode: health exited $rc, expected 1"
	py "$T/b$mode.health" '
g = [x for x in d["descriptors"] if x["id"] == "obj_get"][0]
assert g["state"] == "stale", g
assert g["violations"]["acquire_active"] > 1000, g
assert "acquire_active" in g["reason"] and "first sample" in g["reason"], g
assert [c for c in d["changes"] if c["id"] == "obj_get" and c["to"] == "stale" and c["invariant"] == "acquire_active"], d["changes"]
others = [x for x in d["descriptors"] if x["id"] != "obj_get" and x["state"] != "validated"]
assert not others, others
print("ok   borrowed '$mode': obj_get stale, %d acquire_active of %d events" % (g["violations"]["acquire_active"], g["events"]))
' || err "borrowed $mode: obj_get not stale for acquire_active"
	"$P" -j report "$T/b$mode.trace" >"$T/b$mode.report" || err "borrowed $mode: report failed"
	py "$T/b$mode.report" '
fs = d["findings"]
assert not [f for f in fs if f["kind"] == "leak"], [f["kind"] for f in fs]
st = [f for f in fs if f["kind"] == "model_stale"]
assert st and st[0]["diagnosis"] == "leak", [(f["kind"], f["diagnosis"]) for f in fs]
c = [x for x in d["confidence"] if x["id"] == "obj_get"][0]
assert c["state"] == "stale" and c["violations"] > 1000, c
' || err "borrowed $mode: report reads a leak, or no model_stale"
done

# 3. the demo: no false alarm; a real leak is still a leak
for path in none leak; do
	"$P" record -m "$DEMO_M" -o "$T/d$path.trace" -- "$DEMO" -q --json --pathology $path \
		--duration 2 --clients 4 >"$T/d$path.out" 2>"$T/d$path.err"
	rc=$?
	[ $rc -eq 0 ] || err "demo $path: record exited $rc, expected 0: $(tail -3 "$T/d$path.err")"
	"$P" -j health "$T/d$path.trace" >"$T/d$path.health" || err "demo $path: health exited $?"
	# No state change, and violations under 1 % of each
	# descriptor's events: a producer delayed past PB_REORDER_NS (50 ms) between
	# publishing an item and its return probe is counted, rarely
	# (docs/validation.md); the controller's 5 % threshold ignores it.
	py "$T/d$path.health" '
bad = [(x["id"], x["state"], {k: v for k, v in x["violations"].items() if v}) for x in d["descriptors"]
       if x["state"] != x["initial"] or sum(x["violations"].values()) * 100 >= max(x["events"], 1)]
assert not bad and not d["changes"], bad or d["changes"]
v = sum(sum(x["violations"].values()) for x in d["descriptors"])
print("ok   demo '$path': no confidence change, %d violation(s) in %d events" % (v, sum(x["events"] for x in d["descriptors"])))
' || err "demo $path: false violations"
done
"$P" -j report "$T/dleak.trace" >"$T/dleak.report" || err "demo leak: report failed"
py "$T/dleak.report" '
f = d["findings"][0]
assert f["kind"] == "leak" and f["resource"] == "demo.pool.page", (f["kind"], f["resource"])
assert all(x["confidence"] == "validated" for x in f["descriptors"]), f["descriptors"]
' || err "demo leak: the planted leak is not the #1 finding on validated descriptors"
[ $fail -eq 0 ] && echo "ok   validation: owned clean, borrowed stale (not leak), demo none/leak clean"
exit $fail
