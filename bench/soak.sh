#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# soak.sh: long runs that must stay flat (issue 19; docs/testing.md). Two
# soaks run side by side for --minutes N (default 30):
#   record   `probity record --events` on the demo (rate-limited load):
#            the recorder's RSS and open fds sampled every minute, the
#            trace size against the records in it (bytes per record per
#            tenth of the file: linear growth), ring-buffer drops counted,
#            and at the end `probity report` reads the trace completely;
#   rejit    `probity watch` + `probity sample` machine-wide while a loop
#            of `probity rejit` runs swap generations (a config change and
#            a traffic shift in each run); watch's and sample's RSS and fds
#            each minute; at the end both stores verify clean, their logs
#            read, and `probity attribute` reads the sample file.
# Results: bench/results/soak.json (or --out FILE), with the duration
# actually run and the machine's load. Needs root (BPF). Not in CI.
#   bench/soak.sh [--minutes N] [--build DIR] [--out FILE] [--keep]
set -eu
MINUTES=30
BUILD=${BUILD:-build}
OUT=""
KEEP=0
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) MINUTES=$2; shift 2 ;;
	--build) BUILD=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	-h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
case "$MINUTES" in ''|*[!0-9]*) echo "soak.sh: --minutes wants a whole number, got '$MINUTES'" >&2; exit 2 ;; esac
[ "$MINUTES" -ge 1 ] || { echo "soak.sh: --minutes must be >= 1" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "soak.sh: needs root (BPF); nothing measured" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=$(cd "$BUILD" && pwd)
OUT=${OUT:-$ROOT/bench/results/soak.json}
P=$BUILD/probity
SECS=$((MINUTES * 60))
W=$(mktemp -d /tmp/pbsoak.XXXXXX)
RPID="" WPID="" SPID="" LPID=""
cleanup() {
	for p in $LPID $RPID $SPID $WPID; do kill -INT "$p" 2>/dev/null || true; done
	for p in $LPID $RPID $SPID $WPID; do wait "$p" 2>/dev/null || true; done
	[ $KEEP -eq 1 ] && echo "soak.sh: kept $W" >&2 || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "soak.sh: $*" >&2; }

sample_proc() {	# sample_proc NAME PID: one line "t name rss_kib fds" into $W/samples
	[ -d "/proc/$2" ] || return 0
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$2/status" 2>/dev/null || echo -1)
	fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
	echo "$(($(date +%s) - START)) $1 ${rss:--1} $fds" >>"$W/samples"
}

START=$(date +%s)
say "$MINUTES min, work dir $W"
# --- record soak: the demo rate-limited to ~100 requests/s
"$P" -j record -m "$BUILD/demo/demo.manifest.yaml" -o "$W/soak.trace" --events --interval 1000 \
	-d "$SECS" -- "$BUILD/demo/probity-demo" --duration 0 --clients 1 --rate 100 --burst 8 -q \
	>"$W/record.json" 2>"$W/record.err" &
RPID=$!
# --- rejit soak: watch + sample machine-wide, rejit in a loop
"$P" -j watch --store "$W/watch" >"$W/watch.json" 2>"$W/watch.err" &
WPID=$!
"$P" -j sample -o "$W/s.pbs" -F 99 >"$W/sample.json" 2>"$W/sample.err" &
SPID=$!
cat >"$W/script" <<'EOS'
t=15 config feature_acl=0
t=30 traffic shift
t=45 traffic normal
EOS
(
	i=0
	while [ $(($(date +%s) - START)) -lt $((SECS - 70)) ]; do
		i=$((i + 1))
		"$P" -j rejit --store "$W/rejit" --duration 60 --traffic 1000 --profile-interval 1 \
			--script "$W/script" >"$W/rejit.$i.json" 2>"$W/rejit.$i.err" ||
			echo "$i $?" >>"$W/rejit.failures"
	done
	echo "$i" >"$W/rejit.runs"
) &
LPID=$!

m=0
while [ $m -lt "$MINUTES" ]; do
	sleep 60 &
	wait $! || true
	m=$((m + 1))
	sample_proc record "$RPID"
	sample_proc watch "$WPID"
	sample_proc sample "$SPID"
	sz=$(stat -c %s "$W/soak.trace" 2>/dev/null || echo 0)
	echo "$(($(date +%s) - START)) trace_bytes $sz 0" >>"$W/samples"
	say "minute $m: $(tail -4 "$W/samples" | awk '{printf "%s %s/%s  ", $2, $3, $4}')"
done
wait "$RPID" || echo "record exited $?" >>"$W/errors"
RPID=""
wait "$LPID" || true
LPID=""
kill -INT "$SPID"; wait "$SPID" || echo "sample exited $?" >>"$W/errors"
SPID=""
kill -INT "$WPID"; wait "$WPID" || echo "watch exited $?" >>"$W/errors"
WPID=""
END=$(date +%s)

"$P" -j report "$W/soak.trace" >"$W/report.json" 2>"$W/report.err" || echo "report exited $?" >>"$W/errors"
for s in rejit watch; do
	"$P" -j receipts verify --store "$W/$s" >"$W/$s.verify" 2>&1 || echo "$s verify exited $?" >>"$W/errors"
	"$P" -j receipts log --store "$W/$s" >"$W/$s.log.json" 2>"$W/$s.log.err" || echo "$s log exited $?" >>"$W/errors"
done
"$P" -j attribute "$W/s.pbs" --store "$W/rejit" >"$W/attribute.json" 2>"$W/attribute.err" ||
	echo "attribute exited $?" >>"$W/errors"

python3 bench/soak_summary.py "$W" "$START" "$END" "$MINUTES" "$OUT"
