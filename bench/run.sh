#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# run.sh: every benchmark (`make bench` runs it). Needs root (BPF).
#   bench/run.sh            (BUILD=DIR in the environment; default build)
# Writes bench/results/engine.json (one JSON document: machine details and
# every number with its unit and method) and prints a summary; then runs
# bench/receipts.sh (bench/results/receipts.json) and bench/group_commit.sh
# (bench/results/group_commit.json) unless BENCH_SKIP_RECEIPTS=1,
# bench/rejit.sh (bench/results/rejit.json) unless BENCH_SKIP_REJIT=1,
# bench/attribution.sh (bench/results/attribution.json) unless
# BENCH_SKIP_ATTRIBUTION=1, and bench/forensics.sh
# (bench/results/forensics.json, ~2.5 min) unless BENCH_SKIP_FORENSICS=1.
# bench/README.md says what each number means. Knobs (environment):
#   BENCH_COST_CALLS  ACQUIRE/RELEASE pairs per function per round (20000)
#   BENCH_COST_ROUNDS interleaved rounds of none/empty/aggregate/events (9)
#   BENCH_DEMO_ROUNDS interleaved rounds of the demo without/with record (3)
#   BENCH_ATTACH_ROUNDS rounds for the uprobe_multi link (5); the 1,000 single
#                     links are attached and detached once (detach ~70 s)
#   BENCH_TRACE_PAIRS pairs called for the report-throughput trace (500000)
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
COST_CALLS=${BENCH_COST_CALLS:-20000}
COST_ROUNDS=${BENCH_COST_ROUNDS:-9}
DEMO_ROUNDS=${BENCH_DEMO_ROUNDS:-3}
ATTACH_ROUNDS=${BENCH_ATTACH_ROUNDS:-5}
TRACE_PAIRS=${BENCH_TRACE_PAIRS:-500000}

if [ "$(id -u)" -ne 0 ]; then
	echo "bench/run.sh: needs root (BPF); nothing measured" >&2
	exit 1
fi
make --no-print-directory BUILD="$BUILD" bench-bins "$BUILD/probity" \
	"$BUILD/demo/probity-demo" "$BUILD/demo/demo.manifest.yaml" >/dev/null
P="$BUILD/probity"
EB="$BUILD/bench/engine_bench"
DEMO="$BUILD/demo/probity-demo"
DM="$BUILD/demo/demo.manifest.yaml"
W=$(mktemp -d /var/tmp/pbbench.XXXXXX)
trap 'rm -rf "$W"' EXIT
t_start=$(date +%s)
say() { printf 'bench: %s\n' "$*" >&2; }

# 1. engine cost per event (interleaved none/empty/aggregate/events)
say "engine cost per event: $COST_ROUNDS rounds x 4 modes x 4 sites, $COST_CALLS pairs each"
"$EB" cost "$BUILD/bench/bench.manifest.yaml" "$COST_CALLS" "$COST_ROUNDS" >"$W/cost.json"

# 2. demo throughput: alone, under record (aggregate), under record --events,
#    interleaved
DEMO_ARGS="--duration 3 --clients 4 --json -q"
r=1
while [ $r -le "$DEMO_ROUNDS" ]; do
	say "demo throughput round $r/$DEMO_ROUNDS"
	# shellcheck disable=SC2086
	"$DEMO" $DEMO_ARGS >"$W/demo_none_$r.json"
	# shellcheck disable=SC2086
	"$P" -j record -m "$DM" -o "$W/agg_$r.trace" -- "$DEMO" $DEMO_ARGS \
		>"$W/demo_agg_$r.json" 2>"$W/demo_agg_$r.err"
	# shellcheck disable=SC2086
	"$P" -j record -m "$DM" -o "$W/ev_$r.trace" --events -- "$DEMO" $DEMO_ARGS \
		>"$W/demo_ev_$r.json" 2>"$W/demo_ev_$r.err"
	[ $r -lt "$DEMO_ROUNDS" ] && rm -f "$W/ev_$r.trace"
	rm -f "$W/agg_$r.trace"
	r=$((r + 1))
done
DEMO_TRACE="$W/ev_$DEMO_ROUNDS.trace"

# 3. attach time for 1,000 sites
say "attach 1000 sites: uprobe_multi x $ATTACH_ROUNDS, single links x 1 (detach takes ~1 min)"
"$EB" attach "$BUILD/bench/sites1000" "$ATTACH_ROUNDS" 1 >"$W/attach.json"

# 4. offline report throughput: the last demo --events trace, and a large
#    synthetic one (engine_bench loop under record --events)
say "report throughput: recording $((2 * TRACE_PAIRS)) events"
"$P" -j record -m "$BUILD/bench/bench.manifest.yaml" -o "$W/loop.trace" --events \
	--ringbuf-kib 65536 -- "$EB" loop "$TRACE_PAIRS" >"$W/loop_rec.json" 2>"$W/loop_rec.err"
for t in demo loop; do
	if [ $t = demo ]; then tf=$DEMO_TRACE; else tf=$W/loop.trace; fi
	i=1
	: >"$W/report_$t.times"
	while [ $i -le 3 ]; do
		t0=$(date +%s.%N)
		"$P" -j report "$tf" >"$W/report_$t.json"
		t1=$(date +%s.%N)
		echo "$t0 $t1" >>"$W/report_$t.times"
		i=$((i + 1))
	done
	stat -c %s "$tf" >"$W/report_$t.bytes"
done

mkdir -p bench/results
python3 bench/summarize.py "$W" "$ROOT" "$(date +%s)" "$t_start" \
	"$COST_CALLS" "$COST_ROUNDS" "$DEMO_ROUNDS" "$ATTACH_ROUNDS" \
	>bench/results/engine.json.tmp
mv bench/results/engine.json.tmp bench/results/engine.json
python3 bench/summarize.py --summary bench/results/engine.json

if [ "${BENCH_SKIP_RECEIPTS:-0}" != 1 ] && [ -f bench/receipts.sh ]; then
	say "receipts benchmarks (bench/receipts.sh)"
	sh bench/receipts.sh "$BUILD" || say "bench/receipts.sh failed (engine.json is still written)"
	say "group commit (bench/group_commit.sh)"
	sh bench/group_commit.sh "$BUILD" || say "bench/group_commit.sh failed"
fi
if [ "${BENCH_SKIP_REJIT:-0}" != 1 ] && [ -f bench/rejit.sh ]; then
	say "rejit benchmark (bench/rejit.sh)"
	sh bench/rejit.sh "$BUILD" || say "bench/rejit.sh failed (engine.json is still written)"
fi
if [ "${BENCH_SKIP_ATTRIBUTION:-0}" != 1 ] && [ -f bench/attribution.sh ]; then
	say "attribution benchmark (bench/attribution.sh)"
	sh bench/attribution.sh "$BUILD" || say "bench/attribution.sh failed (engine.json is still written)"
fi
if [ "${BENCH_SKIP_FORENSICS:-0}" != 1 ] && [ -f bench/forensics.sh ]; then
	say "forensic comparison (bench/forensics.sh)"
	sh bench/forensics.sh "$BUILD" || say "bench/forensics.sh failed (engine.json is still written)"
fi
