#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mk-frame-seeds.sh: seeds for the framed-format fuzz targets from files
# written by the real writers (needs root and BPF; run by hand, the
# results are committed):
#   fuzz_trace     `probity record --events` on the demo, with a tiny ring
#                  buffer so the trace has drop notes: header, manifest,
#                  plan, records, snapshot, note and end chunks
#   fuzz_samples   `probity sample` while `probity rejit` swaps generations:
#                  header, snapshot, records (samples, ksymbol, bpf_event)
#                  and end chunks
#   fuzz_lifelog   the lifecycle log of that rejit store
# Each file is cut to a few chunks of every type (tests/fuzz/frame-trim.py)
# and committed twice: raw (the CRC path) and 'C'-prefixed (the fix-up
# mode, fuzz_frame.h).
#   tests/fuzz/mk-frame-seeds.sh [BUILD]
set -eu
B=${1:-build}
P=$B/probity
C=tests/fuzz/corpus
W=$(mktemp -d /tmp/pbseeds.XXXXXX)
SPID=""
cleanup() {
	[ -n "$SPID" ] && kill -INT "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

"$P" record -m "$B/demo/demo.manifest.yaml" -o "$W/ev.trace" --events --ringbuf-kib 4 \
	--interval 100 -- "$B/demo/probity-demo" --clients 2 --requests 200 -q >/dev/null 2>&1
"$P" record -m "$B/demo/demo.manifest.yaml" -o "$W/agg.trace" --interval 100 \
	-- "$B/demo/probity-demo" --clients 1 --requests 50 -q >/dev/null 2>&1

"$P" sample -o "$W/s.pbs" -F 199 >/dev/null 2>"$W/sample.err" &
SPID=$!
i=0
while ! grep -q sampling "$W/sample.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$P" rejit --store "$W/store" --duration 3 --traffic 2000 --profile-interval 0.9 >/dev/null 2>&1
kill -INT "$SPID"
wait "$SPID" || true
SPID=""

python3 tests/fuzz/frame-trim.py "$W/ev.trace" "$C/fuzz_trace/real-events"
python3 tests/fuzz/frame-trim.py "$W/agg.trace" "$C/fuzz_trace/real-aggregate"
python3 tests/fuzz/frame-trim.py "$W/s.pbs" "$C/fuzz_samples/real-sample"
python3 tests/fuzz/frame-trim.py "$W/store/lifecycle.log" "$C/fuzz_lifelog/real-rejit" --all
ls -l "$C"/fuzz_trace/real-* "$C"/fuzz_samples/real-* "$C"/fuzz_lifelog/real-*
