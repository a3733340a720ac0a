#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lint_corpus.sh: `probity manifest lint` on the tests/lint/ corpus.
#
#   NN-name.yaml    broken: exit 1, stderr equal to NN-name.expected
#   warn-name.yaml  clean with warnings: exit 0, stderr equal to .expected
#   ok-name.yaml    clean: exit 0, nothing on stderr, "FILE: ok (...)"
#
# Each file is also linted with -j: the output must be JSON whose error
# and warning counts match the text output. Run from the repository root
# (tests/run.sh does). UPDATE=1 rewrites the .expected files instead of
# comparing (review the diff before committing it).
set -u
. tests/cli/lib.sh
DIR=tests/lint
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n_broken=0

# json_counts FILE.json -> "ok errors warnings n_findings" (or nothing)
json_counts() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and isinstance(d["findings"], list), "bad shape"
for f in d["findings"]:
    for k in ("file", "line", "col", "severity", "field", "message"):
        assert k in f, "finding lacks " + k
print(str(d["ok"]).lower(), d["errors"], d["warnings"], len(d["findings"]))
' "$1" 2>"$TMP/json.err"
}

check_json() { # FILE WANT_OK WANT_ERRORS WANT_WARNINGS
	"$P" -j manifest lint "$1" >"$TMP/out.json" 2>"$TMP/json.stderr"
	got=$(json_counts "$TMP/out.json") || { err "$1: -j output is not the expected JSON: $(cat "$TMP/json.err")"; return; }
	want="$2 $3 $4 $(($3 + $4))"
	[ "$got" = "$want" ] || err "$1: -j gave (ok errors warnings findings) '$got', expected '$want'"
	[ -s "$TMP/json.stderr" ] && err "$1: -j wrote to stderr: $(cat "$TMP/json.stderr")"
}

for f in "$DIR"/*.yaml; do
	base=${f%.yaml}
	name=$(basename "$base")
	"$P" manifest lint "$f" >"$TMP/stdout" 2>"$TMP/stderr"
	rc=$?
	case "$name" in
	ok-*)
		[ $rc -eq 0 ] || err "$f: exit $rc, expected 0; stderr:$(sed 's/^/ | /' "$TMP/stderr")"
		[ -s "$TMP/stderr" ] && err "$f: clean file printed on stderr: $(cat "$TMP/stderr")"
		grep -qE "^$f: ok \([0-9]+ resources?, [0-9]+ events?\)$" "$TMP/stdout" ||
			err "$f: no 'ok' summary on stdout: $(cat "$TMP/stdout")"
		check_json "$f" true 0 0
		continue
		;;
	warn-*) want_rc=0 ;;
	[0-9]*) want_rc=1; n_broken=$((n_broken + 1)) ;;
	*) err "$f: name must start with NN-, ok- or warn-"; continue ;;
	esac
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$TMP/stderr" "$base.expected"
		continue
	fi
	[ -f "$base.expected" ] || { err "$f: $base.expected is missing"; continue; }
	[ $rc -eq $want_rc ] || err "$f: exit $rc, expected $want_rc"
	if ! cmp -s "$TMP/stderr" "$base.expected"; then
		err "$f: diagnostics differ from $base.expected:"
		diff -u "$base.expected" "$TMP/stderr" | sed 's/^/    /'
	fi
	[ -s "$base.expected" ] || err "$base.expected is empty"
	grep -qvE "^$f(:[0-9]+:[0-9]+)?: (error|warning|note): " "$base.expected" &&
		err "$base.expected: a line is not 'FILE:LINE:COL: severity: ...'"
	n_err=$(grep -c ': error: ' "$base.expected")
	n_warn=$(grep -c ': warning: ' "$base.expected")
	if [ $want_rc -eq 1 ]; then
		[ "$n_err" -gt 0 ] || err "$base.expected has no error line"
		check_json "$f" false "$n_err" "$n_warn"
	else
		check_json "$f" true 0 "$n_warn"
	fi
done
[ $n_broken -ge 35 ] || err "only $n_broken broken manifests in $DIR (want >= 35)"
for e in "$DIR"/*.expected; do
	[ -f "${e%.expected}.yaml" ] || err "$e has no .yaml"
done

# unreadable input: exit 2, the file and the OS error named
"$P" manifest lint "$DIR/no-such-file.yaml" >/dev/null 2>"$TMP/stderr"; rc=$?
[ $rc -eq 2 ] || err "missing file: exit $rc, expected 2"
grep -qx "$DIR/no-such-file.yaml: error: cannot read file: No such file or directory" "$TMP/stderr" ||
	err "missing file: unexpected message: $(cat "$TMP/stderr")"
"$P" manifest lint "$DIR" >/dev/null 2>"$TMP/stderr"; rc=$?
[ $rc -eq 2 ] || err "directory: exit $rc, expected 2"
grep -q "Is a directory" "$TMP/stderr" || err "directory: unexpected message: $(cat "$TMP/stderr")"
"$P" -j manifest lint "$DIR/no-such-file.yaml" >"$TMP/out.json" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || err "missing file with -j: exit $rc, expected 2"
[ "$(json_counts "$TMP/out.json")" = "false 1 0 1" ] || err "missing file with -j: $(cat "$TMP/out.json")"

# several files: the worst exit code wins; -j prints one array
"$P" manifest lint "$DIR/ok-minimal.yaml" "$DIR/02-wrong-version.yaml" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || err "ok + broken: exit $rc, expected 1"
"$P" manifest lint "$DIR/02-wrong-version.yaml" "$DIR/no-such-file.yaml" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "broken + missing: exit $rc, expected 2"
"$P" -j manifest lint "$DIR/ok-minimal.yaml" "$DIR/02-wrong-version.yaml" >"$TMP/out.json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x["ok"] for x in d] == [True, False]' \
	"$TMP/out.json" || err "-j with two files: $(cat "$TMP/out.json")"

# usage errors
"$P" manifest lint >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "lint without FILE: exit $rc, expected 2"
"$P" manifest frobnicate >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "unknown manifest command: exit $rc, expected 2"
for sub in lint show; do
	"$P" manifest $sub --help | grep -q "Exit status" || err "manifest $sub --help lacks the exit codes"
done

# show: a table, or the model as JSON
"$P" manifest show "$DIR/ok-full.yaml" >"$TMP/show.txt" 2>&1 || err "show ok-full.yaml failed"
grep -q "^events:" "$TMP/show.txt" || err "show: no events table"
"$P" -j manifest show "$DIR/ok-full.yaml" >"$TMP/show.json" ||
	err "show -j ok-full.yaml failed"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["manifest"] == 1 and m["name"] == "full-example"
assert [t["id"] for t in m["targets"]] == ["app", "libc"]
ev = {e["id"]: e for e in m["events"]}
assert ev["page_wait"]["site"]["at"] == "span"
assert ev["page_get"]["units"]["text"] == "*u32(arg0 + 8)"
assert ev["page_get"]["expect"][0] == {"next": ["USE", "RELEASE"], "within_ns": 500000000}
assert ev["mutex_lock"]["when"]["text"] == "s32(retval) == 0"
assert ev["mutex_lock"]["site"]["target_idx"] == 1
assert len(m["digest"]) == 64
' "$TMP/show.json" || err "show -j: unexpected model"
"$P" manifest show "$DIR/02-wrong-version.yaml" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || err "show of a broken manifest: exit $rc, expected 1"

# plan refuses every broken manifest with the same positioned findings
# (exit 2: an invalid manifest is unusable input, not a plan refusal)
for f in "$DIR"/[0-9]*.yaml; do
	"$P" plan "$f" >/dev/null 2>"$TMP/plan.stderr"; rc=$?
	[ $rc -eq 2 ] || err "plan $f: exit $rc, expected 2"
	cmp -s "$TMP/plan.stderr" "${f%.yaml}.expected" ||
		err "plan $f: findings differ from lint's: $(head -3 "$TMP/plan.stderr")"
done

# the PostgreSQL example in the reference lints clean
"$P" manifest lint docs/examples/postgres-lwlock.yaml >/dev/null 2>"$TMP/stderr" ||
	err "docs/examples/postgres-lwlock.yaml does not lint clean: $(cat "$TMP/stderr")"
exit $fail
