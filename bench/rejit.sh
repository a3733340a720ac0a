#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# rejit.sh: the reference specializer's costs -> bench/results/rejit.json
#   bench/rejit.sh [BUILD_DIR]   (default build; needs root: BPF, netns)
# - activation overhead: bpf_link_update alone vs. pb_generation__activate
#   around the same update (receipt-side work: link query, clocks,
#   'activated' + 'retired' entries, fsynced), interleaved in one run, as a
#   ratio (overhead / raw swap); on the default store directory and on tmpfs
# - bytes per generation of a real `probity rejit` store (a scripted run
#   with deoptimizations): objects (receipts, artifacts, evidence, BTF),
#   lifecycle log, total, divided by the generations the log records
# Knobs: REJIT_BENCH_SWAPS (200 per mode per round), REJIT_BENCH_ROUNDS (5),
#        REJIT_BENCH_DURATION (rejit run, 8 s)
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "$(id -u)" -ne 0 ]; then echo "bench/rejit.sh: needs root (BPF)" >&2; exit 1; fi
make --no-print-directory BUILD="$BUILD" "$BUILD/bench/rejit_bench" "$BUILD/probity" >/dev/null
B="$ROOT/$BUILD/bench/rejit_bench"
P="$ROOT/$BUILD/probity"
N=${REJIT_BENCH_SWAPS:-200}
R=${REJIT_BENCH_ROUNDS:-5}
D=${REJIT_BENCH_DURATION:-8}
W=$(mktemp -d /var/tmp/pbrjbench.XXXXXX)
NS=pbrjb$$
S2=""
cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	rm -rf "$W"
	[ -n "$S2" ] && rm -rf "$S2"
}
trap cleanup EXIT INT TERM
say() { printf 'bench/rejit: %s\n' "$*" >&2; }

ip netns add "$NS"
ip -n "$NS" link add rjb0 type veth peer name rjb1
ip -n "$NS" link set rjb0 up
ip -n "$NS" link set rjb1 up
say "activation overhead: $R rounds x $N swaps per mode (store on $(stat -f -c %T "$W"))"
ip netns exec "$NS" "$B" swap "$W/swapstore" rjb0 "$N" "$R" >"$W/swap.json"
if [ -d /dev/shm ]; then
	S2=$(mktemp -d /dev/shm/pbrjbench.XXXXXX)
	say "activation overhead on tmpfs (fsync nearly free)"
	ip netns exec "$NS" "$B" swap "$S2/store" rjb0 "$N" "$R" >"$W/swap_tmpfs.json"
else
	echo '{}' >"$W/swap_tmpfs.json"
fi

say "bytes per generation: probity rejit for ${D} s"
printf 't=2.5 config feature_acl=0\nt=4.5 traffic shift\nt=6 traffic normal\nt=6 config feature_stats=0\n' >"$W/script"
"$P" -j rejit --store "$W/rjstore" --duration "$D" --profile-interval 0.9 --guard-threshold 150 \
	--script "$W/script" >"$W/rejit.json" 2>"$W/rejit.err" || { cat "$W/rejit.err" >&2; exit 1; }
"$P" -j receipts log --store "$W/rjstore" >"$W/log.json"
mkdir -p bench/results
python3 - "$W" >"$W/rejit.json.out" <<'PY'
import json, os, platform, subprocess, sys, time
w = sys.argv[1]
swap = json.load(open(f"{w}/swap.json")); swap_t = json.load(open(f"{w}/swap_tmpfs.json"))
rj = json.load(open(f"{w}/rejit.json")); log = json.load(open(f"{w}/log.json"))["entries"]
store = f"{w}/rjstore"
objs = 0; nobj = 0
for d, _, fs in os.walk(os.path.join(store, "objects")):
    for f in fs:
        objs += os.path.getsize(os.path.join(d, f)); nobj += 1
total = 0
for d, _, fs in os.walk(store):
    for f in fs:
        total += os.path.getsize(os.path.join(d, f))
logb = total - objs
gens = len({e["generation_id"] for e in log if e["kind"] == "loaded"})
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
def sysctl(n):
    try: return int(open(f"/proc/sys/net/core/{n}").read())
    except OSError: return None
def git(*a):
    r = subprocess.run(["git", *a], capture_output=True, text=True)
    return r.stdout.strip()
print(json.dumps({
  "benchmark": "rejit",
  "machine": {"kernel": platform.release(), "arch": platform.machine(), "cpu": cpu,
              "cpus": os.cpu_count(), "bpf_jit_enable": sysctl("bpf_jit_enable"),
              "loadavg_at_end": open("/proc/loadavg").read().split()[:3],
              "store_filesystem": subprocess.run(["stat", "-f", "-c", "%T", w], capture_output=True,
                                                 text=True).stdout.strip(),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain"))},
  "activation_overhead": {
     "unit": "ns", "method": "interleaved rounds on one XDP link (veth in a private netns): "
        "bpf_link_update alone vs pb_generation__activate around it; overhead = activate total - "
        "the swap inside it; ratio = overhead / raw swap (medians over every swap)",
     "store": swap, "store_on_tmpfs": swap_t},
  "bytes_per_generation": {
     "unit": "bytes", "method": "one probity rejit run (scripted: config change, traffic shift, "
        "config change); store files summed, divided by the generations with a 'loaded' entry",
     "run_seconds": float(os.environ.get("REJIT_BENCH_DURATION", "8")),
     "generations": gens, "deopts": rj["deopts"], "lifecycle_entries": len(log),
     "objects": nobj, "objects_bytes": objs, "log_and_other_bytes": logb, "total_bytes": total,
     "objects_per_generation": round(objs / max(1, gens)),
     "log_per_generation": round(logb / max(1, gens)),
     "total_per_generation": round(total / max(1, gens))},
}, indent=1))
PY
mv "$W/rejit.json.out" bench/results/rejit.json
python3 -c "
import json; d = json.load(open('bench/results/rejit.json'))
a = d['activation_overhead']; b = d['bytes_per_generation']
for k in ('store', 'store_on_tmpfs'):
    x = a[k]
    if x: print('activation (%s): raw swap %d ns, receipt+log around it %d ns: ratio %.2f' % (k, x['raw_swap_ns_median'], x['overhead_ns_median'], x['overhead_to_swap_ratio']))
print('bytes per generation: %d total (%d objects, %d log) over %d generations' % (b['total_per_generation'], b['objects_per_generation'], b['log_per_generation'], b['generations']))
"
