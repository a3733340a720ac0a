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
# With --pg, instead, the PostgreSQL soak alone:
#   postgres `probity record --cgroup` (record --all limited to the
#            cluster's cgroup: no other server on the machine is recorded)
#            --events with manifests/postgresql-15/buffer.yaml (or
#            PG_SOAK_MANIFEST) on a throwaway PostgreSQL 15 cluster (temp
#            dir, free loopback port, user postgres; bench/real/lib.sh)
#            under pgbench -c 4 -R PG_SOAK_TPS (default 10) for the whole
#            run: the recorder's RSS and fds each minute, trace size
#            against records, drops, and `probity report` reads it all;
#            written under "postgres" in the results, the rest kept.
# Results: bench/results/soak.json (or --out FILE), with the duration
# actually run and the machine's load. Needs root (BPF). Not in CI.
#   bench/soak.sh [--minutes N] [--build DIR] [--out FILE] [--keep] [--pg]
set -eu
MINUTES=30
BUILD=${BUILD:-build}
OUT=""
KEEP=0
PG=0
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) MINUTES=$2; shift 2 ;;
	--build) BUILD=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--pg) PG=1; shift ;;
	-h|--help) sed -n '3,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# pg_soak: the --pg soak (header); exits with soak_summary.py's status
pg_soak() {
	. bench/real/lib.sh
	PM_=${PG_SOAK_MANIFEST:-manifests/postgresql-15/buffer.yaml}
	TPS=${PG_SOAK_TPS:-10}
	for x in "$PG_BIN/postgres" "$PG_BIN/pgbench"; do
		[ -x "$x" ] || { say "missing $x (scripts/install-deps.sh)"; exit 1; }
	done
	# both cleanups, ours (recorder, pgbench, work dir) first; real_cleanup
	# (cluster, cgroup, its dir) exits with the status of the script
	trap 'rc=$?; cleanup; (exit $rc); real_cleanup' EXIT
	real_tmpdir postgres
	PORT=$(real_free_port)
	pg_start "$REAL_DIR" "$PORT"
	pg_bench "$REAL_DIR" "$PORT" -i -s 10 -q >"$W/init.log" 2>&1
	say "cluster: postmaster $PG_PID on 127.0.0.1:$PORT, cgroup $REAL_CGROUP; $PM_, pgbench -R $TPS"
	START=$(date +%s)
	"$P" -j record -m "$PM_" --cgroup "$REAL_CGROUP" -o "$W/soak.trace" --events --interval 1000 \
		-d $((SECS + 30)) >"$W/record.json" 2>"$W/record.err" &
	RPID=$!
	i=0
	while [ ! -s "$W/soak.trace" ]; do	# attached: the trace's header is written
		kill -0 "$RPID" 2>/dev/null || { say "record failed: $(tail -3 "$W/record.err")"; exit 1; }
		[ $i -lt 600 ] || { say "record did not attach in 60 s"; exit 1; }
		sleep 0.1; i=$((i + 1))
	done
	# setpriv execs: LPID is pgbench itself (cleanup stops it)
	setpriv --reuid=postgres --regid=postgres --init-groups -- "$PG_BIN/pgbench" -h "$REAL_DIR" \
		-p "$PORT" -n -c 4 -j 2 -R "$TPS" -T $((SECS - 20 - ($(date +%s) - START))) -P 60 postgres \
		>"$W/pgbench.out" 2>"$W/pgbench.err" &
	LPID=$!
	soak_minutes record
	wait "$RPID" || echo "record exited $?" >>"$W/errors"
	RPID=""
	wait "$LPID" || echo "pgbench exited $?" >>"$W/errors"
	LPID=""
	END=$(date +%s)
	"$P" -j report "$W/soak.trace" >"$W/report.json" 2>"$W/report.err" || echo "report exited $?" >>"$W/errors"
	"$P" -j health "$W/soak.trace" >"$W/health.json" 2>"$W/health.err" || echo "health exited $?" >>"$W/errors"
	python3 bench/soak_summary.py --pg "$W" "$START" "$END" "$MINUTES" "$OUT" "$PM_" "$TPS"
}

# soak_minutes NAME...: each minute for MINUTES, the RSS and fds of the
# processes named (RPID: record, WPID: watch, SPID: sample) and the size
# of the trace
soak_minutes() {
	m=0
	while [ $m -lt "$MINUTES" ]; do
		sleep 60 &
		wait $! || true
		m=$((m + 1))
		for n in "$@"; do
			case $n in
			record) sample_proc record "$RPID" ;;
			watch) sample_proc watch "$WPID" ;;
			sample) sample_proc sample "$SPID" ;;
			esac
		done
		sz=$(stat -c %s "$W/soak.trace" 2>/dev/null || echo 0)
		echo "$(($(date +%s) - START)) trace_bytes $sz 0" >>"$W/samples"
		say "minute $m: $(tail -$(($# + 1)) "$W/samples" | awk '{printf "%s %s/%s  ", $2, $3, $4}')"
	done
}

if [ $PG -eq 1 ]; then
	say "postgres soak, $MINUTES min, work dir $W"
	pg_soak
	exit $?
fi
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

soak_minutes record watch sample
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
