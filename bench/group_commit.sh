#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# group_commit.sh: durable capture cost per generation, fsync per write vs
# group commit (docs/receipts.md "Group commit"), on ext4 and tmpfs
#   -> bench/results/group_commit.json
#   bench/group_commit.sh [BUILD_DIR]   (root: loads BPF)
# Rounds interleave the modes so both see the same machine load. The cost
# counted per generation: capture + objects (timing.capture_ns), the log
# appends, and the syncs spread over the generations; as a ratio of the
# load's own verifier+JIT time (timing.load_ns).
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make --no-print-directory BUILD="$BUILD" "$BUILD/bench/receipts_bench" >/dev/null
B="$BUILD/bench/receipts_bench"
N=${GROUP_BENCH_GENERATIONS:-20}
ROUNDS=${GROUP_BENCH_ROUNDS:-3}
BATCH=${GROUP_BENCH_BATCH:-10}
EXT=${GROUP_BENCH_EXT4_DIR:-/var/tmp}
W=$(mktemp -d /tmp/pbgroup.XXXXXX)
D1=""; D2=""
trap 'rm -rf "$W" "$D1" "$D2"' EXIT
r=0
while [ $r -lt $ROUNDS ]; do
	for b in 0 "$BATCH"; do
		D1=$(mktemp -d "$EXT/pbgroup.XXXXXX")
		"$B" chain "$D1/store" "$N" "$b" >"$W/ext4.$b.$r.json"
		rm -rf "$D1"
		D2=$(mktemp -d /dev/shm/pbgroup.XXXXXX)
		"$B" chain "$D2/store" "$N" "$b" >"$W/tmpfs.$b.$r.json"
		rm -rf "$D2"
	done
	r=$((r + 1))
done
mkdir -p bench/results
python3 - "$W" "$EXT" "$BATCH" >bench/results/group_commit.json <<'PY'
import glob, json, os, platform, statistics, subprocess, sys
w, ext, batch = sys.argv[1], sys.argv[2], sys.argv[3]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
def mode(fs, b):
    runs = [json.load(open(f)) for f in sorted(glob.glob(f"{w}/{fs}.{b}.*.json"))]
    keys = ("median_load_ns", "median_capture_and_store_ns", "median_log_append_ns",
            "sync_ns_per_generation", "durable_capture_ns_per_generation", "durable_capture_to_load_ratio")
    return {"rounds": [{k: x[k] for k in keys} for x in runs],
            "median_ratio": statistics.median(x["durable_capture_to_load_ratio"] for x in runs)}
out = {"benchmark": "group_commit",
       "machine": {"kernel": platform.release(), "arch": platform.machine(), "cpu": cpu,
                   "cpus": os.cpu_count(), "loadavg_at_end": open("/proc/loadavg").read().split()[:3],
                   "ext4_dir": ext,
                   "ext4_dir_filesystem": subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", ext],
                                                         capture_output=True, text=True).stdout.strip()},
       "program": "tests/bpf/rcpt_xdp.bpf.c, 20 derived generations + 20 reloads per run",
       "target": "durable capture <= 0.25x the load's own time on ext4",
       "ext4": {"fsync_per_write": mode("ext4", 0), f"group_commit_batch_{batch}": mode("ext4", batch)},
       "tmpfs": {"fsync_per_write": mode("tmpfs", 0), f"group_commit_batch_{batch}": mode("tmpfs", batch)}}
print(json.dumps(out, indent=2))
PY
cat bench/results/group_commit.json
