#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# metrics.sh: `probity metrics` on a real recording of the demo service.
# The output passes Prometheus' own `promtool check metrics`; its numbers
# agree with `probity health` (events, states) and with themselves
# (cumulative buckets, +Inf == _count == WAIT events of the resource);
# --textfile-dir leaves exactly probity.prom (same bytes, no temporary);
# --listen serves the same bytes on GET /metrics, 404 elsewhere, and
# stops cleanly on SIGINT; bad input gets exit 2.
set -u
. tests/cli/lib.sh
need_root
command -v promtool >/dev/null 2>&1 || { echo "FAIL: promtool missing (scripts/install-deps.sh)"; exit 1; }
T=$(mktemp -d /tmp/pbmetrics.XXXXXX)
SPID=""
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

"$P" record -m "$DEMO_M" -o "$T/demo.trace" -- "$DEMO" -q --json --pathology pool-contention \
	--duration 2 --clients 4 >"$T/rec.out" 2>"$T/rec.err" ||
	{ err "record exited $?: $(tail -3 "$T/rec.err")"; exit 1; }

"$P" metrics "$T/demo.trace" >"$T/m.prom" 2>"$T/m.err" || err "metrics exited $?: $(cat "$T/m.err")"
promtool check metrics <"$T/m.prom" >"$T/promtool.out" 2>&1 ||
	err "promtool check metrics failed: $(head -20 "$T/promtool.out")"
for fam in probity_events_total probity_wait_seconds probity_hold_seconds probity_live_instances \
	probity_outstanding_units probity_descriptor_state probity_violations_total \
	probity_finding_score probity_lost_evidence_total; do
	grep -q "^# TYPE $fam " "$T/m.prom" || err "no TYPE line for $fam"
done

"$P" -j health "$T/demo.trace" >"$T/health.json"
python3 - "$T/m.prom" "$T/health.json" <<'PY' || err "metrics disagree (above)"
import json, re, sys
series = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r'^([a-z_]+)(\{(.*)\})? (\S+)$', line.strip())
    assert m, line
    labels = tuple(sorted(re.findall(r'([a-z]+)="((?:[^"\\]|\\.)*)"', m.group(3) or "")))
    assert (m.group(1), labels) not in series, "duplicate series: " + line
    series[(m.group(1), labels)] = float(m.group(4))
def get(name, **kw):
    return series[(name, tuple(sorted(kw.items())))]
health = json.load(open(sys.argv[2]))
kinds = {}
for d in health["descriptors"]:
    ev = [v for (n, l), v in series.items() if n == "probity_events_total" and ("descriptor", d["id"]) in l]
    # health also counts the events the leak model inferred (happened
    # unobserved); the metric counts the observed ones
    assert ev == [d["events"] - d["inferred_events"]], (d["id"], ev, d["events"], d["inferred_events"])
    for st in ("candidate", "validated", "suspect", "stale", "degraded"):
        assert get("probity_descriptor_state", descriptor=d["id"], state=st) == (st == d["state"]), (d, st)
for (n, l), v in series.items():
    if n == "probity_events_total":
        kinds.setdefault(dict(l)["resource"], {}).setdefault(dict(l)["kind"], 0)
        kinds[dict(l)["resource"]][dict(l)["kind"]] += v
checked = 0
for fam, kind in (("probity_wait_seconds", "WAIT"), ("probity_hold_seconds", "RELEASE")):
    for res in sorted({dict(l)["resource"] for (n, l) in series if n == fam + "_count"}):
        b = sorted(((float(dict(l)["le"]), v) for (n, l), v in series.items()
                    if n == fam + "_bucket" and dict(l)["resource"] == res))
        assert b[-1][0] == float("inf") and len(b) == 40, (res, len(b))
        assert all(b[i][1] <= b[i + 1][1] for i in range(len(b) - 1)), (res, "not cumulative")
        count = get(fam + "_count", resource=res)
        assert b[-1][1] == count, (res, b[-1], count)
        # every WAIT span is observed; a RELEASE only when it ends a live
        # lifetime (not one observed before its ACQUIRE, not a shared partial)
        if kind == "WAIT":
            assert count == kinds[res][kind], (fam, res, count, kinds[res])
        else:
            assert count <= kinds[res][kind], (fam, res, count, kinds[res])
        checked += count
assert checked > 0, "no histogram observations at all"
assert get("probity_lost_evidence_total", what="trace_cut") == 0
print("ok   metrics agree with health; %d histogram observations checked" % checked)
PY

# textfile: the same bytes, no temporary left behind
mkdir "$T/tf"
"$P" metrics "$T/demo.trace" --textfile-dir "$T/tf" 2>/dev/null || err "--textfile-dir exited $?"
cmp -s "$T/m.prom" "$T/tf/probity.prom" || err "textfile differs from stdout"
[ "$(ls -A "$T/tf")" = "probity.prom" ] || err "textfile dir holds: $(ls -A "$T/tf")"
"$P" metrics "$T/demo.trace" --textfile-dir "$T/nonexistent" 2>/dev/null; rc=$?
[ $rc -eq 3 ] || err "missing textfile dir exited $rc, expected 3"

# HTTP: serve until SIGINT
"$P" -j metrics "$T/demo.trace" --listen 127.0.0.1:0 >"$T/srv.json" 2>"$T/srv.err" &
SPID=$!
i=0
while ! grep -q serving "$T/srv.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(grep -o 'http://[0-9.:]*/metrics' "$T/srv.err")
[ -n "$url" ] || err "--listen did not say where: $(cat "$T/srv.err")"
python3 - "$url" "$T/m.prom" <<'PY' || err "HTTP exposition (above)"
import sys, urllib.request, urllib.error
r = urllib.request.urlopen(sys.argv[1], timeout=10)
assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
assert r.read() == open(sys.argv[2], "rb").read(), "served bytes differ"
try:
    urllib.request.urlopen(sys.argv[1].replace("/metrics", "/other"), timeout=10)
    raise SystemExit("no 404")
except urllib.error.HTTPError as e:
    assert e.code == 404, e.code
PY
curl_ok=$(python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1]).status)" "$url" 2>/dev/null)
[ "$curl_ok" = 200 ] || err "second scrape: $curl_ok"
kill -INT "$SPID"
wait "$SPID"; rc=$?
SPID=""
[ $rc -eq 0 ] || err "--listen exited $rc after SIGINT, expected 0"
py "$T/srv.json" 'assert d["requests"] == 2 and d["port"] > 0, d' || err "--listen -j summary: $(cat "$T/srv.json")"

# bad input
"$P" metrics "$T/m.prom" >/dev/null 2>"$T/bad.err"; rc=$?
[ $rc -eq 2 ] || err "a non-trace exited $rc, expected 2"
grep -q "not a probity trace" "$T/bad.err" || err "non-trace error: $(cat "$T/bad.err")"
"$P" metrics "$T/demo.trace" --listen localhost >/dev/null 2>"$T/bad.err"; rc=$?
[ $rc -eq 2 ] || err "--listen localhost exited $rc, expected 2"
"$P" -j metrics "$T/demo.trace" | py /dev/stdin 'assert d["text"].startswith("# HELP probity_events_total")' ||
	err "-j without a target is not one JSON document"
exit $fail
