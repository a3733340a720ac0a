#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# connpool.sh: validation a program cannot fool (docs/validation.md,
# "Observation order", "Leak or broken model"), with real BPF, on the
# connection-pool service of tests/fixtures/validation/connpool.c (a LIFO
# free list, 4 workers, capacity 8) built clean and per variant, each
# recorded under the clean build's contract (connpool.manifest.yaml, the
# variant's build-id filled in):
#   clean       record exits 0, no confidence change, no violation;
#   STALE_USE   query right after put while another worker re-takes the
#               connection within microseconds: conn_use stale for
#               use_not_acquired (the ACQUIRE that follows began after
#               the stale use, so it does not excuse it); conn_get and
#               conn_put keep their state;
#   LEAK        1 request in 50 forgets to put its connection back and the
#               pool replaces the lost ones: units held exceed the
#               capacity, but the leaked holdings explain it (the leak
#               hypothesis): record exits 0, every descriptor stays
#               validated, report has a `leak` finding saying "units held
#               exceed declared capacity 8 because N leaked holdings are
#               still counted";
#   WIDE        12 busy workers on a pool of 16 under the contract's
#               capacity 8: no idle holding explains the excess, so it is
#               model evidence: conn_get stale for over_capacity;
#   FASTPATH    pool_get's common case inlined into the worker: most
#               acquisitions bypass the probed symbol; the RELEASEs and
#               USEs of connections never seen acquired are charged to the
#               coupled ACQUIRE: conn_get stale for acquire_bypassed,
#               conn_use and conn_put keep their state;
#   HANDOFF     async handoff before USE: an executor thread queries and
#               puts back the connections the workers took; ownership is
#               per process (docs/validation.md "Mutation classes"), so
#               no change and no violation.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root

# variant  descriptor  invariant
cases="clean - -
STALE_USE conn_use use_not_acquired
LEAK - -
WIDE conn_get over_capacity
FASTPATH conn_get acquire_bypassed
HANDOFF - -"

echo "$cases" >"$T/cases"
while read -r v id inv; do
	b="$FIX/connpool_$v"
	[ -x "$b" ] || { echo "FAIL: $b not built (make test-unit)"; exit 1; }
	sed "s|@BINARY@|$b|" tests/fixtures/validation/connpool.manifest.yaml >"$T/$v.tmpl"
	scripts/fill-build-id.sh "$T/$v.tmpl" "$b" "$T/$v.yaml" || exit 1
	"$P" -j record -m "$T/$v.yaml" -o "$T/$v.trace" -- "$b" 1.5 </dev/null >"$T/$v.out" 2>"$T/$v.err"
	rc=$?
	"$P" -j health "$T/$v.trace" </dev/null >"$T/$v.health"
	hrc=$?
	"$P" -j report "$T/$v.trace" </dev/null >"$T/$v.report" || err "$v: report failed"
	if [ "$v" = clean ] || [ "$v" = LEAK ] || [ "$v" = HANDOFF ]; then
		[ $rc -eq 0 ] || err "clean: record exited $rc, expected 0: $(tail -3 "$T/$v.err")"
		[ $hrc -eq 0 ] || err "clean: health exited $hrc, expected 0"
	else
		[ $rc -eq 4 ] || err "$v: record exited $rc, expected 4 (stale)"
		[ $hrc -eq 1 ] || err "$v: health exited $hrc, expected 1"
	fi
	python3 - "$T/$v.health" "$v" "$id" "$inv" <<'PY' || err "$v: expected $id stale for $inv"
import json, sys
import re
d = json.load(open(sys.argv[1]))
v, want, inv = sys.argv[2], sys.argv[3], sys.argv[4]
rep = json.load(open(sys.argv[1][:-len(".health")] + ".report"))
by = {x["id"]: x for x in d["descriptors"]}
assert by["conn_use"]["events"] > 1000, by["conn_use"]
# events inferred (happened unobserved) are the charged acquisitions and RELEASEs
for x in d["descriptors"]:
    assert x["inferred_events"] == (x["violations"]["acquire_bypassed"]
                                    + x["violations"]["release_missing"]), x
if v == "FASTPATH":
    assert by["conn_get"]["inferred_events"] > 0, by["conn_get"]
if v in ("clean", "HANDOFF"):
    bad = [(x["id"], x["state"], x["violations"]) for x in d["descriptors"]
           if x["state"] != x["initial"] or any(x["violations"].values())]
    assert not bad and not d["changes"], bad or d["changes"]
    print("ok   connpool %s: no confidence change, no violation (%d requests)"
          % (v, by["conn_get"]["events"]))
    sys.exit(0)
if v == "LEAK":
    bad = [(x["id"], x["state"]) for x in d["descriptors"] if x["state"] != "validated"]
    assert not bad and not d["changes"], bad or d["changes"]
    assert by["conn_get"]["violations"]["over_capacity"] > 0, by["conn_get"]
    leaks = [f for f in rep["findings"] if f["kind"] == "leak" and f["resource"] == "svc.conn"]
    assert leaks, [f["kind"] for f in rep["findings"]]
    ex = [e["text"] for e in leaks[0]["evidence"] if e["key"] == "capacity_explained"]
    assert ex and re.match(r"units held exceed declared capacity 8 because [1-9][0-9]* leaked "
                           r"holdings are still counted", ex[0]), leaks[0]["evidence"]
    print("ok   connpool LEAK: every descriptor validated (%d over_capacity not model evidence); "
          "leak: %s" % (by["conn_get"]["violations"]["over_capacity"], ex[0]))
    sys.exit(0)
x = by[want]
assert x["state"] == "stale", x
ch = [c for c in d["changes"] if c["id"] == want]
assert ch and all(c["invariant"] == inv for c in ch), ch
others = [(y["id"], y["state"]) for y in d["descriptors"] if y["id"] != want and y["state"] != y["initial"]]
assert not others, others
print("ok   connpool %s: %s stale for %s (%d of %d events)" %
      (v, want, inv, x["violations"][inv], x["events"]))
PY
done <"$T/cases"
[ $fail -eq 0 ] && echo "ok   connpool: clean build unchanged, each variant caught as intended"
exit $fail
