# SPDX-License-Identifier: BSD-2-Clause
# lib.sh: the shared preamble of the CLI tests, sourced by tests/cli/*.sh
# (tests/run.sh runs them from the repository root with PROBITY_BUILD set).
#   P FIX DEMO DEMO_M   the probity binary, the fixtures, the demo and its manifest
#   err MSG             print "FAIL: MSG" and remember the failure in $fail
#   need_root           BPF tests run as root: skip (77) otherwise, but under
#                       CI=true a missing capability is a failure
#   py FILE CODE        run python CODE with d = the JSON document in FILE
P="$PROBITY_BUILD/probity"
FIX="$PROBITY_BUILD/fixtures"
DEMO="$PROBITY_BUILD/demo/probity-demo"
DEMO_M="$PROBITY_BUILD/demo/demo.manifest.yaml"
fail=0

err() { echo "FAIL: $*"; fail=1; }

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		[ "${CI:-}" = true ] && { echo "FAIL: BPF required under CI=true (not root)"; exit 1; }
		echo "skip: needs root for BPF"; exit 77
	fi
}

py() {
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1"
}
