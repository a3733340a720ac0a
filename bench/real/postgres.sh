#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# postgres.sh: the shipped PostgreSQL 15 manifests measured on a real
# server (root; BPF, PostgreSQL 15, pgbench, bpftrace). Writes
# bench/results/postgres.json and prints a summary. docs/servers.md says
# what each number means.
#
#   bench/real/postgres.sh        (BUILD=DIR; default build)
#
# A throwaway cluster (bench/real/lib.sh: temp dir, free loopback port,
# user postgres, stopped by the trap on every path), pgbench -i -s SCALE.
#  1. Ground truth. For each manifest of manifests/postgresql-15/, one
#     pgbench run (-T COUNT_S) under `probity record --cgroup` (--all
#     limited to the cluster's own cgroup: other PostgreSQL 15 servers on
#     the machine are not counted) while bpftrace counts PostgreSQL's own
#     USDT probes in the same cgroup and run, per process.
#     Per pair (descriptor, probe marking the same point): both counts,
#     precision = matched / probity, recall = matched / USDT (matched =
#     the smaller), per-process USDT totals. Manifests are recorded one
#     at a time (each count is then one engine's alone).
#  2. Overhead. ROUNDS interleaved rounds of pgbench -S (-T TPS_S):
#     alone, under `record --all -m lwlock.yaml`, under a hand-written
#     bpftrace script on the same sites (bench/real/postgres-lwlock.bt).
# Without `record --all` in this build the same is done on one backend:
# a psql session (its pid known before it works) runs N index lookups in
# a DO loop; rates are lookups/s and tracers follow that pid only.
# Knobs: PG_BENCH_SCALE (10), PG_BENCH_CLIENTS (4), PG_BENCH_COUNT_S (5),
# PG_BENCH_TPS_S (10), PG_BENCH_ROUNDS (3), PG_BENCH_LOOKUPS (20000).
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. bench/real/lib.sh
SCALE=${PG_BENCH_SCALE:-10}
CLIENTS=${PG_BENCH_CLIENTS:-4}
COUNT_S=${PG_BENCH_COUNT_S:-5}
TPS_S=${PG_BENCH_TPS_S:-10}
ROUNDS=${PG_BENCH_ROUNDS:-3}
LOOKUPS=${PG_BENCH_LOOKUPS:-20000}
P="$BUILD/probity"
M=manifests/postgresql-15
say() { printf 'bench/postgres: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (BPF); nothing measured"; exit 1; }
for x in "$PG_BIN/postgres" "$PG_BIN/pgbench" "$P"; do
	[ -x "$x" ] || { say "missing $x (scripts/install-deps.sh; make)"; exit 1; }
done
command -v bpftrace >/dev/null || { say "missing bpftrace (scripts/install-deps.sh)"; exit 1; }

trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
real_tmpdir postgres; W=$REAL_DIR
PORT=$(real_free_port)
pg_start "$W" "$PORT"
PM=$PG_PID
say "cluster: postmaster $PM on 127.0.0.1:$PORT in $W; pgbench -i -s $SCALE"
pg_bench "$W" "$PORT" -i -s "$SCALE" -q >"$W/init.log" 2>&1
ALL=0
"$P" record --help 2>&1 | grep -q -- '--all' && ALL=1
say "record --all: $ALL"


# the single-backend workload: a session, then LOOKUPS index lookups whose
# rate the DO block reports (NOTICE "rate N" in $W/NAME.out)
one_backend_session() { # FD NAME: session whose pid is PG_SESSION_PID
	pg_session "$W" "$PORT" "$1" "$2"
}
one_backend_work() { # FD NAME
	pg_send "$1" "DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN FOR i IN 1..$LOOKUPS LOOP PERFORM abalance FROM pgbench_accounts WHERE aid = (i * 7919) % ($SCALE * 100000) + 1; END LOOP; RAISE NOTICE 'rate %', $LOOKUPS / extract(epoch FROM clock_timestamp() - t0); END \$\$;"
	pg_send "$1" '\q'
}

# 1. ground truth, one manifest at a time
for m in lwlock buffer lock; do
	say "counts: $m.yaml vs USDT"
	if [ $ALL -eq 1 ]; then
		pg_usdt_bt "$W/c_$m.bt" cgroup
		bt_start "$W/c_$m.bt" "$W/c_$m.bt.json"
		real_rec_start "c_$m" -m "$M/$m.yaml" --cgroup "$REAL_CGROUP"
		pg_bench "$W" "$PORT" -n -c "$CLIENTS" -j 2 -T "$COUNT_S" >"$W/c_$m.pgbench" 2>&1
		pg_wait_backends "$PM" || true
		real_rec_stop || true
	else
		one_backend_session 4 "c_$m"
		pg_usdt_bt "$W/c_$m.bt" "$PG_SESSION_PID"
		bt_start "$W/c_$m.bt" "$W/c_$m.bt.json"
		real_rec_start "c_$m" -m "$M/$m.yaml" --pid "$PG_SESSION_PID"
		one_backend_work 4 "c_$m"
		wait "$REC_PID" || true
	fi
	bt_stop
	"$P" -j health "$W/c_$m.trace" >"$W/c_$m.health"
	"$P" -j report "$W/c_$m.trace" >"$W/c_$m.report" 2>/dev/null || true
done

# 2. overhead: none / probity / bpftrace, interleaved
sed "s|@BIN@|$PG_BIN/postgres|g" bench/real/postgres-lwlock.bt >"$W/hand.bt"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for mode in none probity bpftrace; do
		say "overhead round $r/$ROUNDS: $mode"
		if [ $ALL -eq 1 ]; then
			case $mode in
			probity) real_rec_start "o_${mode}_$r" -m "$M/lwlock.yaml" --all ;;
			bpftrace) bt_start "$W/hand.bt" "$W/o_${mode}_$r.bt.json" ;;
			esac
			pg_bench "$W" "$PORT" -n -S -c "$CLIENTS" -j 2 -T "$TPS_S" >"$W/o_${mode}_$r.out" 2>&1
			pg_wait_backends "$PM" || true
		else
			one_backend_session 4 "o_${mode}_$r"
			case $mode in
			probity) real_rec_start "o_${mode}_$r" -m "$M/lwlock.yaml" --pid "$PG_SESSION_PID" ;;
			bpftrace)
				BT_ARGS="-p $PG_SESSION_PID" bt_start "$W/hand.bt" "$W/o_${mode}_$r.bt.json" ;;
			esac
			one_backend_work 4 "o_${mode}_$r"
			wait "$PG_SESSION_PSQL" || true
		fi
		case $mode in
		probity) real_rec_stop || true ;;
		bpftrace) bt_stop ;;
		esac
	done
	r=$((r + 1))
done

python3 bench/real/postgres_summary.py "$W" "$ROOT" "$ALL" "$ROUNDS" "$CLIENTS" "$TPS_S" \
	"$COUNT_S" "$SCALE" "$LOOKUPS" >bench/results/postgres.json
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['summary'])" bench/results/postgres.json
