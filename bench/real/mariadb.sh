#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mariadb.sh: the shipped MariaDB 10.11 manifests measured on a real
# server (root; BPF, mariadb-server, mariadb-client). Merges a "mariadb"
# key into bench/results/servers.json (other keys are kept) and prints it.
# docs/servers.md ("MariaDB 10.11") says what each number means.
#
#   bench/real/mariadb.sh        (BUILD=DIR; default build)
#
#  1. Ground truth: tests/cli/mariadb.sh with MD_JSON (probity's counts vs
#     SHOW GLOBAL STATUS deltas of the same run, planted pathology).
#  2. Overhead: ROUNDS interleaved rounds of a bounded mariadb-slap
#     (QUERIES point selects, 4 clients, 127.0.0.1) on a throwaway server
#     (bench/real/lib.sh md_start): alone, under `record --cgroup -m
#     mdl.yaml`, under `record --cgroup -m table_cache.yaml`; queries/s.
# Knobs: MD_BENCH_ROUNDS (3), MD_BENCH_QUERIES (4000).
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. bench/real/lib.sh
ROUNDS=${MD_BENCH_ROUNDS:-3}
QUERIES=${MD_BENCH_QUERIES:-4000}
P="$BUILD/probity"
M=manifests/mariadb-10.11
OUT=bench/results/servers.json

trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
real_tmpdir mysql; W=$REAL_DIR
MD_JSON="$W/counts.json" PROBITY_BUILD=$(cd "$BUILD" && pwd) sh tests/cli/mariadb.sh >"$W/counts.log" 2>&1 ||
	{ cat "$W/counts.log"; echo "mariadb.sh: the counts test failed" >&2; exit 1; }
PORT=$(real_free_port)
md_start "$W" "$PORT"
md_sql "$W" "CREATE DATABASE bench; USE bench; CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO t SELECT seq, seq FROM seq_1_to_1000"

# slap: seconds for QUERIES point selects from 4 clients
slap() {
	mariadb-slap --no-defaults -uroot -h 127.0.0.1 -P "$PORT" --create-schema=bench \
		--concurrency=4 --iterations=1 --number-of-queries="$QUERIES" \
		--query="SELECT v FROM t WHERE id = 17" |
		awk '/Average number of seconds/ { print $(NF - 1) }'
}
: >"$W/rates"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	echo "alone $(slap)" >>"$W/rates"
	for m in mdl table_cache; do
		"$P" -j record -o "$W/$m.trace" -m "$M/$m.yaml" --cgroup "$REAL_CGROUP" >/dev/null 2>"$W/rec.err" &
		rp=$!
		while [ ! -s "$W/$m.trace" ]; do kill -0 $rp || exit 1; sleep 0.1; done
		echo "$m $(slap)" >>"$W/rates"
		kill -INT $rp; wait $rp || true
		rm -f "$W/$m.trace"
	done
	r=$((r + 1))
done
python3 - "$OUT" "$W/counts.json" "$W/rates" "$QUERIES" <<'EOF'
import json, os, statistics, subprocess, sys
out, counts, rates, q = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
sec = {}
for l in open(rates):
    k, v = l.split()
    sec.setdefault(k, []).append(float(v))
qps = {k: q / statistics.median(v) for k, v in sec.items()}
ver = subprocess.run(['dpkg-query', '-W', '-f', '${Version}', 'mariadb-server'],
                     capture_output=True, text=True).stdout
res = {
    'server': 'MariaDB ' + ver, 'binary': '/usr/sbin/mariadbd',
    'mapping': {
        'table_cache_hit': 'Table_open_cache_hits (table_cache.cc:893, after a non-NULL tc_acquire_table)',
        'table_cache_add': 'Table_open_cache_misses (table_cache.cc:874/896; every miss opens a TABLE and tc_add_table registers it)',
        'table_release': 'hits + misses (every TABLE taken is given back by tc_release_table)',
        'mdl_ticket_destroy': 'mdl_ticket_create (no server counter counts MDL tickets; balance over a quiesced run)',
        'conn_login': 'Connections delta + 1 (Connections is the thread-id counter taken at accept; the first status read connected before it was read, logged in while recorded)',
    },
    'counts': counts,
    'overhead': {'queries': q, 'rounds': len(sec.get('alone', [])),
                 'qps': qps, 'ratio': {k: qps[k] / qps['alone'] for k in qps if k != 'alone'}},
    'machine': '2 vCPU shared VM, kernel ' + os.uname().release,
}
d = json.load(open(out)) if os.path.exists(out) else {}
d['mariadb'] = res
tmp = out + '.tmp'
json.dump(d, open(tmp, 'w'), indent=1, sort_keys=True)
os.replace(tmp, out)
print(json.dumps(res, indent=1))
EOF
