#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# json_one_doc.sh: under -j every command prints exactly one JSON document
# on stdout -- when it succeeds, when it warns, and when it fails (usage
# errors, missing files, getopt's own complaints) -- and diagnostics go to
# stderr, so `probity -j ... | jq` never sees two documents or stray text.
# `script -j` is JSON Lines by design: each of its lines is checked to be
# one document instead. Needs root for the one short recording the
# trace-reading commands use (skips, or fails under CI=true, without it).
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
need_root

"$P" record -m "$DEMO_M" -o "$T/t.trace" -- "$DEMO" -q --pathology none --duration 1 --clients 2 \
	>/dev/null 2>"$T/rec.err" || { echo "FAIL: record: $(tail -3 "$T/rec.err")"; exit 1; }
# an aggregate-only trace makes export warn (no spans): a warning must not
# become a second document
printf 'not: [a manifest\n' >"$T/bad.yaml"
mkdir -p "$T/store"

n=0
# one_doc WANT_RC ARGS...: stdout of probity -j ARGS is one JSON document
one_doc() {
	want=$1; shift
	n=$((n + 1))
	"$P" -j "$@" >"$T/o.$n" 2>"$T/e.$n" </dev/null
	rc=$?
	if [ "$want" != any ] && [ $rc -ne "$want" ]; then
		err "probity -j $*: exit $rc, expected $want ($(head -c 300 "$T/e.$n"))"
	fi
	python3 - "$T/o.$n" "$*" "$rc" <<'PY' || fail=1
import json, sys
s, what, rc = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3])
try:
    doc, end = json.JSONDecoder().raw_decode(s.lstrip())
    rest = s.lstrip()[end:].strip()
except ValueError as e:
    print('FAIL: probity -j %s: stdout is not JSON (%s): %r' % (what, e, s[:200])); sys.exit(1)
if rest:
    print('FAIL: probity -j %s: more than one document on stdout: %r' % (what, rest[:200])); sys.exit(1)
# a failure says so in the document: "error", or (lint) "ok": false
if rc >= 2 and not (isinstance(doc, dict) and ('error' in doc or doc.get('ok') is False)):
    print('FAIL: probity -j %s: exit %d without an "error" in its document' % (what, rc)); sys.exit(1)
print('ok   probity -j %s (exit %d)' % (what, rc))
PY
}

one_doc 0 version
one_doc 2 nosuchcommand
one_doc 2 report
one_doc 2 report "$T/missing.trace"
one_doc 2 report --no-such-option "$T/t.trace"
one_doc 0 report "$T/t.trace"
one_doc any report "$T/t.trace" --fail-on 0
one_doc 2 report "$T/t.trace" --fail-on x
one_doc 0 report "$T/t.trace" --html "$T/t.html"
one_doc 3 report "$T/t.trace" --html "$T/nodir/t.html"
one_doc 0 export --perfetto "$T/t.trace" -o "$T/t.json"
one_doc 2 export "$T/t.trace"
one_doc 0 health "$T/t.trace"
one_doc 2 health "$T/missing.trace"
one_doc 0 manifest lint "$DEMO_M"
one_doc any manifest lint "$T/bad.yaml"
one_doc 2 manifest lint "$T/missing.yaml"
one_doc 0 manifest show "$DEMO_M"
one_doc 2 manifest
one_doc 0 plan "$DEMO_M" --binary "$DEMO"
one_doc 2 plan "$T/missing.yaml"
one_doc 2 record -m "$T/missing.yaml" -- /bin/true
one_doc 2 record
one_doc 2 train
one_doc 2 sample
one_doc 2 attribute
one_doc 2 watch --no-such-option
one_doc 2 rejit --no-such-option
one_doc any receipts --store "$T/store" log
one_doc any receipts --store "$T/store" verify
one_doc 2 receipts --store "$T/store" show
one_doc 2 receipts nosuch
one_doc 2 script "$T/missing.trace"
one_doc 0 probes "$DEMO"
one_doc 2 probes
one_doc 2 probes "$T/missing.bin"
one_doc 0 manifest schema
one_doc any manifest init "$DEMO" --usdt "*" -o "$T/init.yaml"
one_doc any manifest init "$DEMO" -o "$T/init2.yaml"
one_doc any metrics "$T/t.trace"
one_doc 2 metrics "$T/missing.trace"

# script -j: JSON Lines, each line one document
"$P" -j script "$T/t.trace" >"$T/s.jsonl" 2>/dev/null || err "script -j failed"
python3 -c "
import json, sys
n = 0
for l in open(sys.argv[1]):
    json.loads(l); n += 1
assert n > 10, n
print('ok   probity -j script: %d JSON lines' % n)" "$T/s.jsonl" || err "script -j is not JSON Lines"
exit $fail
