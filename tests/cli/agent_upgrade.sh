#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# agent_upgrade.sh: a package upgrade under `probity agent` (needs root and
# BPF): the demo is copied to a temporary path and run from there under
# the agent; the file is then replaced (renamed over, as dpkg does) by a
# variant whose GNU build-id differs (the same code, the note's last byte
# changed with objcopy --update-section) and the demo restarted from it.
#   1. default policy: the new build is refused: logged with both
#      build-ids, state `refused`, counted in the state file and in
#      probity_agent_refusals_total; no window records the new process
#   2. --rebind: the new build is recorded rebound, state `degraded`,
#      counted in probity_agent_rebinds_total; its window's descriptors
#      start degraded, and one is validated only by a logged promotion on
#      the evidence recorded since the re-bind (the confidence controller)
#   3. the agent starts after the upgrade, the manifest naming the path:
#      refused the same way, also a build without any build-id ("none")
# Every run's metrics pass `promtool check metrics`.
set -u
. tests/cli/lib.sh
T=$(mktemp -d /tmp/pbagentu.XXXXXX)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
need_root
for t in objcopy promtool; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh)"; exit 1; }
done

# the new build: the same code, another build-id
objcopy -O binary --only-section=.note.gnu.build-id "$DEMO" "$T/note" || err "objcopy: no build-id note"
python3 -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[-1] ^= 0xff
open(sys.argv[1], 'wb').write(b)" "$T/note"
objcopy --update-section .note.gnu.build-id="$T/note" "$DEMO" "$T/demo-new" || err "objcopy --update-section"
OLD=$(sed -n 's/^ *build_id: "\([0-9a-f]*\)".*/\1/p' "$DEMO_M" | head -1)
NEW=$(readelf -n "$T/demo-new" | sed -n 's/.*Build ID: *//p')
[ -n "$NEW" ] && [ "$NEW" != "$OLD" ] || err "the variant's build-id '$NEW' is not new (old $OLD)"

# state FILE STEM KEY: the value of manifests[STEM][KEY] ('' when absent)
mstate() {
	python3 -c "
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
for m in d['manifests']:
    if m['stem'] == sys.argv[2]:
        print(m.get(sys.argv[3]) or '')" "$@"
}
# wait_state FILE STATE: up to 120 s for manifest demo to reach STATE
wait_state() {
	i=0
	while [ "$(mstate "$1" demo state)" != "$2" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(mstate "$1" demo state)" = "$2" ]
}

# run POLICY [AGENT OPTIONS]: old build under the agent, upgrade, restart
run() {
	R="$T/$1"
	shift
	mkdir -p "$R/m" "$R/bin"
	cp "$DEMO_M" "$R/m/demo.yaml"
	cp "$DEMO" "$R/bin/probity-demo"
	"$R/bin/probity-demo" --clients 1 --duration 0 -q >/dev/null 2>&1 &
	old=$!
	pids="$pids $old"
	"$P" -j agent -m "$R/m" --trace-dir "$R/traces" --state-file "$R/state.json" \
		--metrics-dir "$R" --rotate 60s --duty always --interval 500ms "$@" \
		>"$R/out.json" 2>"$R/err" &
	ag=$!
	pids="$pids $ag"
	wait_state "$R/state.json" recording || err "$R: the old build is not recorded: $(tail -3 "$R/err")"
	kill $old
	wait $old 2>/dev/null
	cp "$T/demo-new" "$R/bin/.probity-demo.new"
	mv "$R/bin/.probity-demo.new" "$R/bin/probity-demo"	# rename over: dpkg's way
	"$R/bin/probity-demo" --clients 1 --duration 0 -q >/dev/null 2>&1 &
	new=$!
	pids="$pids $new"
}

# stop: SIGTERM the agent and the new process; the agent must exit 0
stop() {
	kill -TERM $ag
	wait $ag; rc=$?
	[ $rc -eq 0 ] || err "$R: agent exited $rc: $(tail -3 "$R/err")"
	kill $new
	wait $new 2>/dev/null
	promtool check metrics <"$R/probity.prom" >"$R/prom.out" 2>&1 ||
		err "$R: promtool check metrics: $(cat "$R/prom.out")"
}

# 1. refused
run refuse
wait_state "$R/state.json" refused || err "refuse: state $(mstate "$R/state.json" demo state), not refused"
sleep 3	# a window would have started by now
[ "$(mstate "$R/state.json" demo state)" = refused ] || err "refuse: a refused build's state changed"
stop
grep -q "was replaced: build-id $NEW, manifest expects $OLD: refused" "$R/err" ||
	err "refuse: not logged with both build-ids: $(cat "$R/err")"
py "$R/out.json" "
m = d['manifests'][0]
assert m['state'] == 'refused' and m['new_build_id'] == '$NEW', m
assert m['counts']['refusals'] == 1 and m['counts']['rebinds'] == 0, m
assert $new not in m['targets'], m
assert m['counts']['windows'] >= 1, m	# the old build's only (no trace has the new pid: below)
" || err "refuse: state: $(cat "$R/out.json")"
grep -q '^probity_agent_refusals_total{manifest="demo"} 1$' "$R/probity.prom" ||
	err "refuse: metrics: $(grep refusals "$R/probity.prom")"
grep -q '^probity_agent_manifests{state="refused"} 1$' "$R/probity.prom" ||
	err "refuse: metrics lack the refused manifest"
for t in "$R"/traces/demo/*.trace; do
	"$P" script "$t" | grep -q "^process pid=$new " && err "refuse: the new build was recorded in $t"
done

# 2. rebound, degraded
run rebind --rebind
wait_state "$R/state.json" degraded || err "rebind: state $(mstate "$R/state.json" demo state), not degraded"
sleep 4	# the rebound window records
stop
py "$R/out.json" "
m = d['manifests'][0]
assert m['new_build_id'] == '$NEW' and m['counts']['rebinds'] == 1, m
assert m['counts']['refusals'] == 0 and m['counts']['windows'] >= 2, m
assert m['counts']['windows_failed'] == 0 and 'rebound' in m['error'], m
" || err "rebind: state: $(cat "$R/out.json")"
grep -q "was replaced: build-id $NEW, manifest expects $OLD: rebound" "$R/err" ||
	err "rebind: not logged: $(cat "$R/err")"
grep -q '^probity_agent_rebinds_total{manifest="demo"} 1$' "$R/probity.prom" ||
	err "rebind: metrics: $(grep rebinds "$R/probity.prom")"
# the last window is the rebound one: it starts degraded; a descriptor
# is validated only by the confidence controller's evidence since the
# re-bind, logged as a promotion (docs/validation.md), never silently
grep -Eq '^probity_descriptor_state\{manifest="demo",descriptor="[^"]*",state="degraded"\} 1$' "$R/probity.prom" ||
	err "rebind: no degraded descriptor in the metrics: $(grep descriptor_state "$R/probity.prom" | head)"
for dsc in $(sed -n 's/^probity_descriptor_state{manifest="demo",descriptor="\([^"]*\)",state="validated"} 1$/\1/p' "$R/probity.prom"); do
	grep -q "confidence: $dsc degraded -> validated: .* since the re-bind" "$R/err" ||
		err "rebind: $dsc is validated without a logged promotion since the re-bind"
done
last=$(ls "$R"/traces/demo/*.trace | sort | tail -1)
"$P" script "$last" | grep -Eq "^process pid=$new .* events=[1-9]" ||
	err "rebind: the new build has no events in $last"
"$P" report "$last" >"$R/rep.txt" 2>"$R/rep.err" || err "rebind: report $last: $(cat "$R/rep.err")"

# 3. the agent starts after the upgrade: the manifest names the path
#    (as the shipped ones do: /usr/sbin/mariadbd), the new build runs there;
#    a build without any build-id is another build too
late() {
	R="$T/late-$2"
	mkdir -p "$R/m" "$R/bin"
	sed "s|^\( *binary:\).*|\1 $R/bin/probity-demo|" "$DEMO_M" >"$R/m/demo.yaml"
	grep -q "binary: $R/bin/probity-demo" "$R/m/demo.yaml" || err "late: sed did not set the binary path"
	cp "$1" "$R/bin/probity-demo"
	"$R/bin/probity-demo" --clients 1 --duration 0 -q >/dev/null 2>&1 &
	new=$!
	pids="$pids $new"
	"$P" -j agent -m "$R/m" --trace-dir "$R/traces" --state-file "$R/state.json" \
		--metrics-dir "$R" --rotate 60s --duty always >"$R/out.json" 2>"$R/err" &
	ag=$!
	pids="$pids $ag"
	wait_state "$R/state.json" refused || err "late $2: state $(mstate "$R/state.json" demo state), not refused"
	stop
	py "$R/out.json" "
m = d['manifests'][0]
assert m['state'] == 'refused' and m['new_build_id'] == '$2', m
assert m['counts']['refusals'] == 1 and m['counts']['windows'] == 0, m
" || err "late $2: state: $(cat "$R/out.json")"
}
late "$T/demo-new" "$NEW"
objcopy --remove-section .note.gnu.build-id "$DEMO" "$T/demo-noid" || err "objcopy --remove-section"
late "$T/demo-noid" none
exit $fail
