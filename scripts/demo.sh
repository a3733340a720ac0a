#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# demo.sh PROBITY DEMO_BIN DEMO_MANIFEST: the main job on the built-in demo.
#
# Lints the demo's manifest, shows the attach plan it compiles to for the
# demo binary and for a running demo process found by build-id through
# /proc/PID/maps, then records the demo with one planted pathology
# (long-hold, aggregate mode) and prints `probity report` with the demo's
# own ground truth next to it. Recording needs root and BPF: without them
# the last step says so and is skipped.
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

echo
pathology=long-hold
echo "== probity record: the demo with a planted pathology: $pathology"
echo "   (a holder thread keeps one of the 4 connections 300 ms at a time; clients wait in connpool_wait)"
if [ "$(id -u)" -ne 0 ]; then
	echo "skipped: recording needs root (BPF)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if ! "$probity" record -m "$manifest" -o "$tmp/demo.trace" -- \
	"$demo_bin" -q --json --pathology "$pathology" --duration 3 --clients 4 >"$tmp/out" 2>"$tmp/err"; then
	echo "record failed:"; cat "$tmp/err"
	exit 1
fi
grep -v '^{' "$tmp/out" || true
echo
echo "== probity report (top 3)"
"$probity" report --top 3 "$tmp/demo.trace"
echo
echo "== ground truth (the demo's own counters, from its --json summary)"
grep '^{' "$tmp/out" | tail -1 | sed 's/.*"truth":/truth: /; s/}}$/}/'
