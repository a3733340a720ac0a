#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# manifest_schema.sh: `probity manifest schema` checked by an independent
# validator (Debian's python3-jsonschema, Draft 2020-12): the schema is a
# valid schema; every shipped manifest that lints clean (docs/examples,
# the demo's, the test fixtures', tests/lint/ok-*, manifests/**) is valid
# under it; and manifests lint refuses for a per-field reason (unknown
# field, bad enum, missing field, wrong version, bad build-id, symbol and
# usdt together, a TODO left by `manifest init`) are invalid under it too.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3	# Debian's python, with Debian's python3-jsonschema
if ! "$PY" -c 'import jsonschema, yaml' 2>/dev/null; then
	[ "${CI:-}" = true ] && { echo "FAIL: python3-jsonschema/python3-yaml missing"; exit 1; }
	echo "skip: python3-jsonschema or python3-yaml missing (scripts/install-deps.sh)"; exit 77
fi

"$P" manifest schema >"$T/schema.json" || err "manifest schema failed"
"$P" -j manifest schema >"$T/schema1.json" || err "-j manifest schema failed"
[ "$(wc -l <"$T/schema1.json")" -eq 1 ] || err "-j schema is not one line"
"$P" manifest schema extra >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "manifest schema with an argument exited $rc, expected 2"

# FILE... -> one line per file: "valid FILE" or "invalid FILE: reason"
validate() {
	"$PY" - "$T/schema.json" "$@" <<'EOF'
import json, sys, yaml
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
# YAML as an editor's language server reads it: dates stay strings
class Loader(yaml.SafeLoader):
    pass
Loader.yaml_implicit_resolvers = {k: [r for r in rs if r[0] != 'tag:yaml.org,2002:timestamp']
                                  for k, rs in yaml.SafeLoader.yaml_implicit_resolvers.items()}
for path in sys.argv[2:]:
    text = open(path, errors='replace').read().replace('@BUILD_ID@', '00' * 20)
    try:
        doc = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as e:
        print('invalid %s: not YAML: %s' % (path, str(e).splitlines()[0]))
        continue
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    print(('invalid %s: %s at %s' % (path, errs[0].message, list(errs[0].path))) if errs
          else 'valid ' + path)
EOF
}

# 1. every shipped manifest that lints clean is valid
good=""
for f in docs/examples/*.yaml "$DEMO_M" tests/fixtures/*/*.manifest.yaml tests/lint/ok-*.yaml \
	tests/lint/warn-*.yaml $(find manifests -name '*.yaml' 2>/dev/null); do
	[ -f "$f" ] || continue
	sed 's/@BUILD_ID@/0000000000000000000000000000000000000000/' "$f" >"$T/lint.yaml"
	"$P" manifest lint "$T/lint.yaml" >/dev/null 2>&1 && good="$good $f"
done
# shellcheck disable=SC2086
validate $good >"$T/v.txt" || err "validator failed"
grep '^invalid ' "$T/v.txt" | while read -r line; do echo "FAIL: $line"; done
grep -q '^invalid ' "$T/v.txt" && fail=1
n=$(grep -c '^valid ' "$T/v.txt")
[ "$n" -ge 6 ] || err "only $n shipped manifests were checked"
echo "schema: $n shipped manifests valid"

# 2. per-field mistakes lint refuses are invalid under the schema
bad=""
for f in 02-wrong-version 03-missing-required 04-unknown-field 08-bad-kind 09-bad-class \
	10-bad-build-id 20-symbol-and-usdt 21-no-symbol-no-usdt 25-bad-duration 50-left-to-fill; do
	"$P" manifest lint "tests/lint/$f.yaml" >/dev/null 2>&1 && err "lint accepts tests/lint/$f.yaml"
	bad="$bad tests/lint/$f.yaml"
done
# shellcheck disable=SC2086
validate $bad >"$T/bad.txt"
grep '^valid ' "$T/bad.txt" | while read -r line; do echo "FAIL: schema accepts what lint refuses: $line"; done
grep -q '^valid ' "$T/bad.txt" && fail=1
[ "$(grep -c '^invalid ' "$T/bad.txt")" -eq 10 ] || err "expected 10 invalid: $(cat "$T/bad.txt")"
# and a manifest init skeleton (TODO left) is invalid until filled
"$P" manifest init "$FIX/probes/probes_fixture" --symbol 'pb_*' -o "$T/init.yaml" >/dev/null ||
	err "manifest init failed"
validate "$T/init.yaml" | grep -q "^invalid .*TODO" || err "schema accepts a skeleton with TODO left"

# 3. how much of lint's broken corpus the schema also catches (the rest are
# cross-field rules only lint knows): reported, and never a valid file
validate tests/lint/[0-9]*.yaml >"$T/corpus.txt" 2>/dev/null
total=$(ls tests/lint/[0-9]*.yaml | wc -l)
caught=$(grep -c '^invalid ' "$T/corpus.txt")
echo "schema: rejects $caught of the $total manifests lint rejects (the others break cross-field rules)"

exit $fail
