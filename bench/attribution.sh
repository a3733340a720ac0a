#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# attribution.sh: attribution throughput -> bench/results/attribution.json
#   bench/attribution.sh [BUILD_DIR]   (default build; no BPF needed)
# A synthetic store (N_GENS generations swapped on one link, JIT addresses
# reused after unregistration under the same symbol name) and a synthetic
# sample file (N samples, half in the running generation's JIT image,
# plus 16 unrelated programs) on tmpfs; then:
# - in process (build/bench/attribution_bench): table build and one
#   lookup per sample, as `probity attribute` does it; wrong attributions
#   against the known ground truth must be 0;
# - end to end: `probity -j attribute FILE --store STORE` wall time.
# Knobs: ATTR_BENCH_SAMPLES (2000000), ATTR_BENCH_GENS (64).
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make --no-print-directory BUILD="$BUILD" "$BUILD/bench/attribution_bench" "$BUILD/probity" >/dev/null
N=${ATTR_BENCH_SAMPLES:-2000000}
G=${ATTR_BENCH_GENS:-64}
D=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && D=/dev/shm
W=$(mktemp -d "$D/pbabench.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$BUILD/bench/attribution_bench" "$W/store" "$W/s.pbs" "$N" "$G" >"$W/inproc.json"
t0=$(date +%s%N)
"$BUILD/probity" -j attribute "$W/s.pbs" --store "$W/store" >"$W/cli.json"
t1=$(date +%s%N)
mkdir -p bench/results
python3 - "$W" "$t0" "$t1" "$D" >bench/results/attribution.json <<'PY'
import json, os, platform, sys
w, t0, t1, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
inproc = json.load(open(f"{w}/inproc.json"))
cli = json.load(open(f"{w}/cli.json"))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
wall = (t1 - t0) / 1e9
print(json.dumps({
    "benchmark": "attribution",
    "method": "synthetic store + sample file on %s; in-process table build + one lookup per sample "
              "(attribution_bench), then `probity -j attribute` end to end (process start, store read, "
              "two passes over the file, JSON output)" % d,
    "machine": {"kernel": platform.release(), "cpu": cpu, "cpus": os.cpu_count(),
                "loadavg_1m": os.getloadavg()[0], "python": platform.python_version()},
    "inputs": {"samples": inproc["samples"], "generations": inproc["generations"],
               "sample_file_bytes": os.path.getsize(f"{w}/s.pbs")},
    "in_process": inproc,
    "cli": {"wall_s": round(wall, 3), "samples_per_s": round(cli["summary"]["samples"] / wall),
            "summary": cli["summary"],
            "generations_attributed": len(cli["generations"]),
            "unknown": {k: v["samples"] for k, v in cli["unknown"].items()}},
}, indent=2))
PY
python3 -c "
import json; d = json.load(open('bench/results/attribution.json'))
print('attribution: %d samples, %d generations: lookup pass %.0f samples/s in process, %.0f samples/s end to end (probity attribute), %d wrong' % (
    d['inputs']['samples'], d['inputs']['generations'], d['in_process']['samples_per_s_lookup_pass'],
    d['cli']['samples_per_s'], d['in_process']['attributed_wrong']))"
