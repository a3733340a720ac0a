#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# help_docs.sh: --help, the command table and docs/probity.md agree.
# Every command in `probity help` has a section in docs/probity.md and a
# working --help; every long option a --help prints is documented there.
set -u
. tests/cli/lib.sh
DOC=$(mktemp)
cat docs/*.md >"$DOC"
trap 'rm -f "$DOC"' EXIT

[ -f "$DOC" ] || { echo "FAIL: $DOC missing"; exit 1; }
cmds=$("$P" help | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" && $1 != "help" {print $1}')
[ -n "$cmds" ] || err "no commands listed by 'probity help'"
for c in $cmds; do
	grep -q "^## probity $c" "$DOC" || err "command '$c' has no "## probity $c" section in docs/*.md"
	out=$("$P" $c --help 2>&1) || err "'probity $c --help' exited non-zero"
	for opt in $(echo "$out" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -q -- "$opt" "$DOC" || err "'probity $c --help' shows $opt, $DOC does not"
	done
done
# subcommands of nouns with a command table (e.g. manifest lint/show)
for sub in "manifest lint" "manifest show" "receipts export" "receipts checkpoint"; do
	grep -q "^### probity $sub" "$DOC" || err "no '### probity $sub' section in $DOC"
	out=$("$P" $sub --help 2>&1) || err "'probity $sub --help' exited non-zero"
	for opt in $(echo "$out" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -q -- "$opt" "$DOC" || err "'probity $sub --help' shows $opt, $DOC does not"
	done
done
# manifest init / schema: a section each, every long option documented
for sub in "manifest init" "manifest schema"; do
	grep -q "^### probity $sub" "$DOC" || err "no '### probity $sub' section in $DOC"
	out=$("$P" $sub --help 2>&1) || err "'probity $sub --help' exited non-zero"
	for opt in $(echo "$out" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -q -- "$opt" "$DOC" || err "'probity $sub --help' shows $opt, $DOC does not"
	done
done
# global flags
for opt in --json --pretty --verbose --help --version; do
	"$P" --help | grep -q -- "$opt" || err "global --help lacks $opt"
	grep -q -- "$opt" "$DOC" || err "$DOC lacks global $opt"
done
# unknown command: usage error, exit 2
"$P" no-such-command >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "unknown command exited $rc, expected 2"
# -j errors are JSON
out=$("$P" -j no-such-command 2>/dev/null)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "error" in d' ||
	err "-j error is not JSON: $out"
exit $fail
