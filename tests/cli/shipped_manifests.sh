#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# shipped_manifests.sh: every manifest shipped under manifests/ lints
# clean (no errors, no warnings), names its evidence (each event's
# provenance cites a source FILE.c:LINE or an objdump offset), and plans
# against the binary installed on this machine: same build-id, every
# site resolved, nothing refused. A manifest whose binary is not installed
# is skipped, but under CI=true that is a failure (scripts/install-deps.sh
# installs what the shipped manifests describe).
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
missing=""
for m in $(find manifests -name '*.yaml' | sort); do
	n=$((n + 1))
	if ! "$P" manifest lint "$m" >"$T/lint.out" 2>"$T/lint.err"; then
		err "$m does not lint: $(cat "$T/lint.err")"
		continue
	fi
	[ -s "$T/lint.err" ] && err "$m lints with findings: $(cat "$T/lint.err")"
	"$P" -j manifest show "$m" >"$T/show.json" || { err "$m: manifest show failed"; continue; }
	py "$T/show.json" "
import re
bad = [e['id'] for e in d['events']
       if not e.get('provenance') or not re.search(r'[a-z_]+\.(?:c|h|cc|cpp|hh|hpp):[0-9]+', e['provenance'].get('evidence') or '')]
if bad:
    print('FAIL: %s: events without a source FILE:LINE in provenance.evidence: %s' % (sys.argv[1], bad))
    sys.exit(1)
" || fail=1
	bin=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['targets'][0]['binary'])" "$T/show.json")
	if [ ! -e "$bin" ]; then
		missing="$missing $m($bin)"
		continue
	fi
	if "$P" -j plan "$m" >"$T/plan.json" 2>"$T/plan.err"; then
		py "$T/plan.json" "
refused = d.get('refused', 0) if isinstance(d, dict) else 0
if refused:
    print('FAIL: %s: %s site(s) refused' % (sys.argv[1], refused)); sys.exit(1)
" || fail=1
		echo "ok   $m: lints clean, plans against $bin"
	else
		err "$m does not plan against the installed $bin: $(grep -v 'candidate' "$T/plan.err" | head -3)"
	fi
	# 'scope' is written commented out until this build knows the field
	# (then `manifest show` prints it for every resource)
	if grep -q 'PENDING-SCOPE' "$m" && grep -q '"scope"' "$T/show.json"; then
		err "$m: this build knows 'scope': enable the PENDING-SCOPE lines"
	fi
done
[ $n -gt 0 ] || err "no manifest found under manifests/"
if [ -n "$missing" ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: binaries not installed under CI=true:$missing"; exit 1; }
	[ $fail -eq 0 ] && { echo "skip: binaries not installed:$missing"; exit 77; }
fi
exit $fail
