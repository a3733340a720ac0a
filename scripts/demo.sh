#!/bin/sh
# demo.sh PROBITY DEMO_BIN DEMO_MANIFEST: the main job on the built-in demo.
#
# Lints the demo's manifest, then shows the attach plan it compiles to for
# the demo binary (and, when BPF is available, for a running demo process
# found by build-id through /proc/PID/maps).
set -eu
probity=$1
demo_bin=$2
manifest=$3

echo "== probity manifest lint $manifest"
"$probity" manifest lint "$manifest"
echo
echo "== probity plan $manifest"
"$probity" plan "$manifest"
echo
echo "== probity plan --pid (a running demo, resolved by build-id)"
"$demo_bin" --clients 2 --duration 5 >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT INT TERM
sleep 0.3
"$probity" plan --pid "$pid" "$manifest" | sed -n '1,12p'
kill -INT "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
trap - EXIT INT TERM
