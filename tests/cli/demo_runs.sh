#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# demo_runs.sh: the demo service runs every pathology and reports its ground
# truth, and every symbol its manifest names is a probe-able global function.
#
# For `none` and each pathology: `probity-demo --duration 2 --clients 4
# --json` exits 0, prints one JSON object, had buffer-pool misses (real
# reads), no unexpected error, and each ground-truth counter is > 0 exactly
# when its pathology is planted. Needs python3 and nm (binutils).
set -u

ROOT=${PROBITY_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${PROBITY_BUILD:-$ROOT/build}
DEMO=$BUILD/demo/probity-demo
MANIFEST=$ROOT/demo/demo.manifest.yaml
FILLED=$BUILD/demo/demo.manifest.yaml
TMP=$(mktemp -d "${TMPDIR:-/tmp}/demo_runs.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

[ -x "$DEMO" ] || { echo "FAIL: $DEMO not built"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 missing"; exit 1; }
command -v nm >/dev/null 2>&1 || { echo "FAIL: nm missing (binutils)"; exit 1; }

# 1. Every manifest symbol is a global text symbol of the binary: not
#    inlined away, not renamed to a .constprop/.isra clone, not static.
syms=$(sed -n 's/^[[:space:]]*symbol:[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*$/\1/p' "$MANIFEST" | sort -u)
[ -n "$syms" ] || fail "no symbol: lines in $MANIFEST"
nm --defined-only "$DEMO" >"$TMP/nm" || fail "nm $DEMO"
n=0
for s in $syms; do
	n=$((n + 1))
	grep -q "^[0-9a-f]* T $s\$" "$TMP/nm" || fail "manifest symbol $s is not a global text symbol of $DEMO"
done
echo "ok: $n manifest symbols are global text symbols"

# 2. The filled manifest (if built) carries this binary's build-id.
if [ -f "$FILLED" ]; then
	want=$(LC_ALL=C readelf -n "$DEMO" | sed -n 's/^[[:space:]]*Build ID:[[:space:]]*\([0-9a-f]*\).*/\1/p')
	if grep -q "build_id: \"$want\"" "$FILLED" && ! grep -q '^[[:space:]]*build_id:.*@BUILD_ID@' "$FILLED"; then
		echo "ok: $FILLED has build-id $want"
	else
		fail "$FILLED does not carry build-id $want"
	fi
fi

# 2b. ... and the project's own linter accepts it (when probity is built).
if [ -f "$FILLED" ] && [ -x "$BUILD/probity" ]; then
	if "$BUILD/probity" manifest lint "$FILLED" >"$TMP/lint" 2>&1; then
		echo "ok: $(cat "$TMP/lint")"
	else
		fail "probity manifest lint $FILLED:"
		sed 's/^/    /' "$TMP/lint"
	fi
fi

# 3. --help documents every flag, and demo/README.md mentions each.
"$DEMO" --help >"$TMP/help" || fail "--help exited $?"
for f in $(grep -o -- '--[a-z][a-z-]*' "$TMP/help" | sort -u); do
	grep -qw -- "$f" "$ROOT/demo/README.md" || fail "flag $f is not in demo/README.md"
done

# 4. Each pathology: exit 0, JSON, misses, and its ground truth.
for p in none pool-contention leak churn long-hold; do
	out=$TMP/$p.json
	"$DEMO" --duration 2 --clients 4 --data-mib 64 --json --pathology "$p" \
		>"$out" 2>"$TMP/$p.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$p: exit status $rc"
		sed 's/^/    /' "$TMP/$p.err"
		continue
	fi
	python3 - "$p" "$out" <<'PY' || fails=$((fails + 1))
import json, sys

pathology, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    text = f.read()
try:
    d = json.loads(text)
except ValueError as e:
    print(f"FAIL: {pathology}: summary is not JSON ({e}): {text[:200]!r}")
    sys.exit(1)

# Which pathology makes each ground-truth counter non-zero. With 4 clients,
# 64 frames and 8 connections nothing else can make them move.
owner = {
    "frame_waits": "pool-contention",
    "leaked_pins": "leak",
    "churn_cycles": "churn",
    "long_holds": "long-hold",
    "conn_waits": "long-hold",
}
bad = []
t = d["truth"]
for key, who in owner.items():
    if who == pathology and not t[key] > 0:
        bad.append(f"truth.{key} = {t[key]}, want > 0")
    if who != pathology and t[key] != 0:
        bad.append(f"truth.{key} = {t[key]}, want 0")
if d["requests"] <= 0:
    bad.append("no requests")
if d["unexpected_errors"] != 0:
    bad.append(f"unexpected_errors = {d['unexpected_errors']}")
if d["bufpool"]["misses"] <= 0:
    bad.append("no buffer pool misses (no real I/O)")
if pathology == "leak":
    if t["leaked_pins"] != d["bufpool"]["pins_at_exit"]:
        bad.append(f"leaked_pins {t['leaked_pins']} != pins_at_exit {d['bufpool']['pins_at_exit']}")
    if t["leaked_pins"] != d["failed"]:
        bad.append(f"leaked_pins {t['leaked_pins']} != failed requests {d['failed']}")
elif d["failed"] != 0 or d["bufpool"]["pins_at_exit"] != 0:
    bad.append(f"failed = {d['failed']}, pins_at_exit = {d['bufpool']['pins_at_exit']}, want 0")
if d["workq"]["pushes"] != d["workq"]["done"]:
    bad.append(f"work items pushed {d['workq']['pushes']} != done {d['workq']['done']}")
for b in bad:
    print(f"FAIL: {pathology}: {b}")
io = d["io"]
print(f"{'ok' if not bad else '--'}: {pathology}: {d['requests']} requests, "
      f"p50 {d['latency_us']['p50']} us p99 {d['latency_us']['p99']} us, "
      f"misses {d['bufpool']['misses']} ({io['mode']} on {io['fs']}), truth {t}")
sys.exit(1 if bad else 0)
PY
done

# 5. A request limit stops the run by itself, and the leak count is exact.
"$DEMO" --requests 500 --pathology leak --data-mib 16 --json >"$TMP/n.json" 2>"$TMP/n.err" ||
	fail "--requests 500: exit status $?"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["requests"] == 500 and d["truth"]["leaked_pins"] == 10
print(("ok" if ok else "FAIL") + ": --requests 500 --pathology leak: %d requests, %d leaked pins (want 500, 10)"
      % (d["requests"], d["truth"]["leaked_pins"]))
sys.exit(0 if ok else 1)' "$TMP/n.json" || fails=$((fails + 1))

if [ $fails -ne 0 ]; then
	echo "demo_runs: $fails failure(s)"
	exit 1
fi
echo "demo_runs: all passed"
