#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# realmut.sh: the seed's four-arm benchmark on a real buffer pool
# (issue 15 part A): PostgreSQL 15's buffer manager built from Debian
# source (bench/realmut/build.sh), the clean build and one variant per
# seed mutation (bench/realmut/patches, ground truth in
# bench/realmut/mutations.json), four instrumentation arms, scored by
# bench/realmut/score.py into bench/results/realmut.json. docs/benchmark.md
# ("Real-code mutation benchmark (issue 15)") reads the result.
#
#   bench/realmut.sh            (root; BUILD=DIR, default build)
#
# Run time on the 2-vCPU test VM: the first PostgreSQL build 5-30 min
# (cached afterwards under $REALMUT_CACHE), each variant build seconds to
# a few minutes (cached by patch hash; rename_release recompiles every
# backend file naming ReleaseBuffer), then 35-50 s per variant and arm
# (6 variants, 4 arms), ~30 s per overhead mode and round, and the
# scoring: 15 min with a warm cache on an idle machine, 25 min at load
# average 15-29 (2026-12-02).
# Not in CI (it builds PostgreSQL); tests/cli/realmut_smoke.sh checks the
# scorer instead.
#
# One template cluster (initdb + pgbench -i -s SCALE by the clean
# install) is copied for every run, so every run starts alike: its own
# temp copy, a free loopback port, user postgres, shared_buffers
# SHARED_BUFFERS (small, so buffers are evicted), its own cgroup, stopped
# by the trap on every path; the load is `pgbench -n -c CLIENTS -T RUN_S`
# (tpcb-like: updates, so victims are dirty; REALMUT_MODE=select adds -S;
# 127.0.0.1 socket dir only, bounded in time). Cross-layer evidence needs
# real block I/O: the copy's files are evicted from the page cache before
# the load and every 0.2 s during it (bench/realmut/evict.py, that
# directory's files only), so buffer misses read from disk; fsync=on with
# backend_flush_after=1 and bgwriter_flush_after=1 makes whoever writes a
# dirty buffer also issue its block write (sync_file_range), and
# synchronous_commit=off keeps commit-time WAL flushes out of the backends.
# Per variant, three runs of the variant's instr binary with the
# compiled-in recorder on (DATADIR/realmut_rec: the ground truth of that
# very run), each under one probity arm (`record --cgroup --rebind
# --events`): usdt (bench/realmut/usdt.yaml.in, bound to the clean instr
# build), manifest (manifests/postgresql-15/buffer.yaml, written for the
# Debian binary, re-bound by hand to the clean instr build: build-id and
# path), manifest_sym (the same without its two offset sites) and sysonly (bench/realmut/sysonly.yaml.in: no buffer
# descriptor). Per variant also `plan` of buffer.yaml on the plain build,
# as written (build-id refusal) and with --rebind (what resolves).
# Overhead (clean variant, ROUNDS interleaved rounds, one run each):
# bare (plain build, nothing attached), compiled (instr, recorder on),
# usdt (instr, recorder off, usdt arm attached without --events), manifest
# (plain, buffer.yaml --rebind, no --events), sysonly (plain).
# Knobs: REALMUT_VARIANTS, REALMUT_RUN_S (10), REALMUT_CLIENTS (4),
# REALMUT_SCALE (10), REALMUT_ROUNDS (2), REALMUT_SHARED_BUFFERS (16MB),
# REALMUT_MODE (tpcb | select), REALMUT_EVICT (1; 0 = warm page cache),
# REALMUT_OUT (bench/results/realmut.json), REALMUT_CACHE, REALMUT_CELLS,
# REALMUT_ARMS (usdt manifest manifest_sym sysonly).
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# background workers at their defaults (the bgwriter's 200 ms rounds
# matter here: flush_handoff leaves writes to it), no autovacuum, no timed
# checkpoint; the I/O settings above
PG_OPTS=${PG_OPTS:--c autovacuum=off -c checkpoint_timeout=3600 -c fsync=on -c synchronous_commit=off -c backend_flush_after=1 -c bgwriter_flush_after=1}
. bench/real/lib.sh
VARIANTS=${REALMUT_VARIANTS:-clean move_release inline_read reuse_handle flush_handoff rename_release}
RUN_S=${REALMUT_RUN_S:-10}
CLIENTS=${REALMUT_CLIENTS:-4}
SCALE=${REALMUT_SCALE:-10}
ROUNDS=${REALMUT_ROUNDS:-2}
ARMS=${REALMUT_ARMS:-usdt manifest manifest_sym sysonly}
SB=${REALMUT_SHARED_BUFFERS:-16MB}
MODE=${REALMUT_MODE:-tpcb}
EVICT=${REALMUT_EVICT:-1}
case $MODE in tpcb) MODE_ARG="" ;; select) MODE_ARG="-S" ;; *) say "REALMUT_MODE: tpcb or select, not $MODE"; exit 2 ;; esac
OUT=${REALMUT_OUT:-bench/results/realmut.json}
CACHE=${REALMUT_CACHE:-/var/cache/probity-realmut}
export REALMUT_CACHE=$CACHE
P="$ROOT/$BUILD/probity"
MAN=manifests/postgresql-15/buffer.yaml
say() { printf 'bench/realmut: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (BPF, builds); nothing measured"; exit 1; }
[ -x "$P" ] || { say "missing $P (make)"; exit 1; }
T0=$(date +%s)
LA0=$(cat /proc/loadavg)

# 1. builds (cached)
say "building variants: $VARIANTS"
VLIST=""
for v in $VARIANTS; do
	vd=$(bench/realmut/build.sh variant "$v") || { say "variant $v failed to build"; exit 1; }
	VLIST="$VLIST $v=$vd"
done

trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
real_tmpdir postgres; W=$REAL_DIR
PORT=$(real_free_port)
# REALMUT_CELLS=DIR keeps the runs' outputs (default: the temp dir); a
# later run with other REALMUT_VARIANTS (and REALMUT_ROUNDS=0) adds to it,
# and the score covers every variant DIR holds
CELLS=${REALMUT_CELLS:-$W/cells}
mkdir -p "$CELLS"

# rm_start BINDIR DATADIR: start that build's server binary on DATADIR in
# a new cgroup (CG; PM = the postmaster), itself: initdb and pg_ctl are
# the installed package's, which refuse a server of another version string
rm_start() {
	real_cgroup; CG=$REAL_CGROUP
	rm -f "$2/postmaster.pid"
	# shellcheck disable=SC2016,SC2086
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
		runuser -u postgres -- "$1/postgres" -D "$2" -p "$PORT" -k "$W" \
		-c listen_addresses=127.0.0.1 -c max_connections=40 \
		-c shared_buffers="$SB" $PG_OPTS ${RM_EXTRA:-} >"$2.log" 2>&1 &
	i=0 PM=""
	while [ $i -lt 1200 ]; do
		if [ -f "$2/postmaster.pid" ] && [ "$(sed -n 8p "$2/postmaster.pid" | tr -d ' ')" = ready ]; then
			PM=$(head -1 "$2/postmaster.pid"); break
		fi
		sleep 0.1; i=$((i + 1))
	done
	[ -n "$PM" ] || { tail -20 "$2.log" >&2; return 1; }
	real_on_exit "kill -QUIT $PM"
}
# rm_stop BINDIR DATADIR: fast shutdown (backends exit normally, so the
# recorder flushes), waited for (at most 120 s)
rm_stop() {
	kill -INT "$PM" 2>/dev/null || true
	i=0
	while kill -0 "$PM" 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
}
rm_bench() { # OUT: the bounded load (cold page cache unless EVICT=0)
	ev=""
	if [ "$EVICT" = 1 ]; then
		python3 bench/realmut/evict.py "$W/d/base" --every 0.2 --for "$RUN_S" 2>/dev/null &
		ev=$!
	fi
	# shellcheck disable=SC2086
	runuser -u postgres -- "$PG_BIN/pgbench" -h "$W" -p "$PORT" -n $MODE_ARG -c "$CLIENTS" -j 2 \
		-T "$RUN_S" postgres >"$1" 2>&1 || true
	[ -z "$ev" ] || wait "$ev" || true
}

# rec_start DIR MANIFEST BIN [--events]: probity record in the background
# (REC_PID); returns 0 once attached, 1 when record exited first (a
# refusal is a result: DIR/rec.rc holds its exit status)
rec_start() {
	d=$1 m=$2 b=$3; shift 3
	"$P" -j record -m "$m" --cgroup "$CG" --rebind --binary "$b" --no-calibrate "$@" \
		-o "$d/trace" >"$d/rec.json" 2>"$d/rec.err" &
	REC_PID=$!
	real_on_exit "kill -INT $REC_PID"
	i=0
	while [ ! -s "$d/trace" ]; do
		if ! kill -0 $REC_PID 2>/dev/null; then
			wait $REC_PID && echo 0 >"$d/rec.rc" || echo $? >"$d/rec.rc"
			return 1
		fi
		[ $i -lt 1200 ] || { say "record did not attach in 120 s"; exit 1; }
		sleep 0.1; i=$((i + 1))
	done
	return 0
}
rec_stop() { # DIR
	kill -INT "$REC_PID" 2>/dev/null || true
	if wait "$REC_PID"; then echo 0 >"$1/rec.rc"; else echo $? >"$1/rec.rc"; fi
}

# 2. the template cluster, made by the installed package (same version)
say "template: initdb + pgbench -i -s $SCALE"
real_as postgres "$PG_BIN/initdb" -D "$W/template" -A trust -U postgres --no-sync \
	>"$W/initdb.log" 2>&1 || { cat "$W/initdb.log" >&2; exit 1; }
# (fsync off while loading it: the runs copy it, fsync=on applies to them)
RM_EXTRA="-c fsync=off"
rm_start "$PG_BIN" "$W/template"
RM_EXTRA=""
runuser -u postgres -- "$PG_BIN/pgbench" -h "$W" -p "$PORT" -i -s "$SCALE" -q postgres \
	>"$W/init.log" 2>&1 || { cat "$W/init.log" >&2; exit 1; }
rm_stop "$PG_BIN" "$W/template"
fresh() {
	rm -rf "$W/d" "$W/d.log"; cp -a "$W/template" "$W/d"
	# the copy starts out of the page cache (its own files only)
	[ "$EVICT" = 0 ] || { sync -f "$W/d" && python3 bench/realmut/evict.py "$W/d"; } 2>/dev/null || true
}

bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p' | head -1; }
# the USDT arm's manifest is bound to the clean instr build (cached)
CLEAN_VD=$(bench/realmut/build.sh variant clean)
sed "s|@BINARY@|$CLEAN_VD/instr/bin/postgres|; s|@BUILD_ID@|$(bid "$CLEAN_VD/instr/bin/postgres")|" \
	bench/realmut/usdt.yaml.in >"$W/usdt.yaml"
sed "s|@BINARY@|$CLEAN_VD/plain/bin/postgres|; s|@BUILD_ID@|$(bid "$CLEAN_VD/plain/bin/postgres")|" \
	bench/realmut/sysonly.yaml.in >"$W/sysonly.yaml"
# the manifest arm: the shipped buffer.yaml as an operator re-binds it to
# the clean build: build-id and path replaced, every site kept (the two
# offset sites, ReleaseAndReadBuffer+0x39 / +0x88, were checked in the
# clean build's disassembly: same call and instruction as in Debian's)
DEB_BID=$(sed -n 's/^ *build_id: *//p' "$MAN" | head -1)
sed "s|$DEB_BID|$(bid "$CLEAN_VD/instr/bin/postgres")|; s|binary: /usr/lib/postgresql/15/bin/postgres|binary: $CLEAN_VD/instr/bin/postgres|" \
	"$MAN" >"$W/buffer-clean.yaml"
# manifest_sym: the same without its two offset events, which no re-bind
# can carry to a build whose ReleaseAndReadBuffer differs (what an
# operator is left with after the refusal: symbol sites only)
awk '/^  - id: /{ skip = ($3 == "unpin_reread" || $3 == "unpin_reread_local") } !skip' \
	"$W/buffer-clean.yaml" >"$W/buffer-sym.yaml"
arm_manifest() {
	case $1 in
	usdt) echo "$W/usdt.yaml" ;;
	manifest) echo "$W/buffer-clean.yaml" ;;
	manifest_sym) echo "$W/buffer-sym.yaml" ;;
	*) echo "$W/sysonly.yaml" ;;
	esac
}

# cell V VD ARM: one run of V's instr build, recorder on, under ARM
cell() {
	c="$CELLS/$1.$3"; mkdir -p "$c"
	fresh
	cat /proc/loadavg >"$c/loadavg"
	mkdir "$W/d/realmut_rec"; chown postgres: "$W/d/realmut_rec"
	b="$2/instr/bin"
	rm_start "$b" "$W/d"
	if rec_start "$c" "$(arm_manifest "$3")" "$b/postgres" --events; then
		rm_bench "$c/pgbench.out"
		pg_wait_backends "$PM" || true
		rec_stop "$c"
	else
		say "  $1/$3: record exited $(cat "$c/rec.rc"): $(grep -m1 -i 'error\|refus' "$c/rec.err" || true)"
		rm_bench "$c/pgbench.out"
		pg_wait_backends "$PM" || true
	fi
	rm_stop "$b" "$W/d"
	mkdir -p "$c/rec"; cp "$W/d"/realmut_rec/*.bin "$c/rec/" 2>/dev/null || true
	if [ -s "$c/trace" ]; then
		"$P" -j script "$c/trace" >"$c/script.jsonl" 2>"$c/script.err" || true
		"$P" -j report "$c/trace" >"$c/report.json" 2>"$c/report.err" || true
		"$P" -j health "$c/trace" >"$c/health.json" 2>/dev/null || true
		rm -f "$c/trace"
	fi
}

# 3. per variant: plan (as written, --rebind) and the three recorded arms
for vv in $VLIST; do
	v=${vv%%=*} vd=${vv#*=}
	c="$CELLS/$v.plan"; mkdir -p "$c"
	"$P" -j plan "$MAN" --binary "$vd/plain/bin/postgres" >"$c/as_written.json" 2>"$c/as_written.err" &&
		echo 0 >"$c/as_written.rc" || echo $? >"$c/as_written.rc"
	"$P" -j plan "$MAN" --rebind --binary "$vd/plain/bin/postgres" >"$c/rebind.json" 2>"$c/rebind.err" &&
		echo 0 >"$c/rebind.rc" || echo $? >"$c/rebind.rc"
	"$P" -j plan "$W/buffer-clean.yaml" --rebind --binary "$vd/instr/bin/postgres" >"$c/clean_rebind.json" \
		2>"$c/clean_rebind.err" && echo 0 >"$c/clean_rebind.rc" || echo $? >"$c/clean_rebind.rc"
	echo "$vd" >"$c/variant_dir"
	bid "$vd/plain/bin/postgres" >"$c/build_id_plain"
	bid "$vd/instr/bin/postgres" >"$c/build_id_instr"
	for arm in $ARMS; do
		say "[$(($(date +%s) - T0)) s] $v: $arm arm (+ compiled-in truth)"
		cell "$v" "$vd" "$arm"
	done
done

# 4. overhead, clean variant, interleaved
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for mode in bare compiled usdt manifest sysonly; do
		say "[$(($(date +%s) - T0)) s] overhead round $r/$ROUNDS: $mode"
		c="$CELLS/overhead.$mode.$r"; mkdir -p "$c"
		fresh
		cat /proc/loadavg >"$c/loadavg"
		case $mode in compiled | usdt) b="$CLEAN_VD/instr/bin" ;; *) b="$CLEAN_VD/plain/bin" ;; esac
		if [ $mode = compiled ]; then
			mkdir "$W/d/realmut_rec"; chown postgres: "$W/d/realmut_rec"
		fi
		rm_start "$b" "$W/d"
		case $mode in
		bare | compiled) rm_bench "$c/pgbench.out" ;;
		*)
			if rec_start "$c" "$(arm_manifest $mode)" "$b/postgres"; then
				rm_bench "$c/pgbench.out"; rec_stop "$c"
			else
				rm_bench "$c/pgbench.out"
			fi
			rm -f "$c/trace" ;;
		esac
		pg_wait_backends "$PM" || true
		rm_stop "$b" "$W/d"
	done
	r=$((r + 1))
done

# REALMUT_SCORE=0: runs only (a later invocation scores every cell)
[ "${REALMUT_SCORE:-1}" = 1 ] || { say "runs kept in $CELLS, not scored"; exit 0; }
say "[$(($(date +%s) - T0)) s] scoring"
ALLV=$(python3 -c 'import json, os, sys
names = [m["name"] for m in json.load(open(sys.argv[1]))["mutations"]]
print(" ".join(n for n in names if os.path.isdir(os.path.join(sys.argv[2], n + ".plan"))))' \
	bench/realmut/mutations.json "$CELLS")
python3 bench/realmut/score.py --cells "$CELLS" --mutations bench/realmut/mutations.json \
	--variants "$ALLV" --run-s "$RUN_S" --clients "$CLIENTS" --scale "$SCALE" \
	--shared-buffers "$SB" --rounds "$ROUNDS" --mode "$MODE" --loadavg-start "$LA0" \
	--elapsed "$(($(date +%s) - T0))" -o "$OUT"
say "wrote $OUT in $(($(date +%s) - T0)) s"
