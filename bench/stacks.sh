#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# stacks.sh: the cost of user stacks (record --stacks, issue 17) on the
# demo -> bench/results/stacks.json
#   bench/stacks.sh [BUILD_DIR]   (default build; root: BPF)
# The demo with its planted pool contention (many WAIT spans: the worst
# case for stacks, which are taken at WAIT ends and ACQUIREs), its own
# requests/s over STK_SECS seconds, per round interleaved (the order
# rotates each round): alone, under `probity record --stacks 0`, under the
# default `--stacks 1000`, and under `--stacks 1000000` (every WAIT end
# and ACQUIRE). Stacks taken and not taken come from the record summary.
#   STK_ROUNDS (default 3), STK_SECS (default 5)
# On the shared 2-core VM read the ratios measured in one run, with the
# load average recorded below, not the absolute rates.
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=$(cd "$BUILD" && pwd)
make --no-print-directory BUILD="$BUILD" "$BUILD/probity" "$BUILD/demo/probity-demo" \
	"$BUILD/demo/demo.manifest.yaml" >/dev/null
ROUNDS=${STK_ROUNDS:-3}
SECS=${STK_SECS:-5}
W=$(mktemp -d /tmp/pbstk.XXXXXX)
trap 'rm -rf "$W"' EXIT
P="$BUILD/probity"
D="$BUILD/demo/probity-demo"
M="$BUILD/demo/demo.manifest.yaml"
DARGS="-q --json --pathology pool-contention --clients 4 --duration $SECS"

run_mode() {	# run_mode MODE ROUND
	case $1 in
	alone) "$D" $DARGS >"$W/$1.$2" 2>/dev/null ;;
	*) "$P" -j record -m "$M" --stacks "${1#s}" -o "$W/t.trace" -- "$D" $DARGS \
		>"$W/$1.$2" 2>"$W/$1.$2.err" || { cat "$W/$1.$2.err" >&2; exit 1; } ;;
	esac
}

load0=$(cut -d' ' -f1 /proc/loadavg)
r=0
set -- alone s0 s1000 s1000000
while [ $r -lt "$ROUNDS" ]; do
	for m in "$@"; do
		run_mode "$m" "$r"
	done
	set -- "$2" "$3" "$4" "$1"	# rotate the order
	r=$((r + 1))
done
load1=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$W" "$ROUNDS" "$SECS" "$load0" "$load1" <<'PY' >bench/results/stacks.json
import json, os, platform, subprocess, sys, datetime
w, rounds, secs, load0, load1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return None
def docs(path):
    out = []
    for line in open(path):
        line = line.strip()
        if line.startswith('{'):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out
modes = ['alone', 's0', 's1000', 's1000000']
res = {}
for m in modes:
    rps, stk = [], []
    for r in range(rounds):
        d = docs('%s/%s.%d' % (w, m, r))
        demo = [x for x in d if 'requests_per_s' in x]
        summ = [x for x in d if 'stacks' in x and 'file' in x]
        rps.append(demo[0]['requests_per_s'] if demo else None)
        if summ:
            stk.append(summ[-1]['stacks'])
    res[m] = {'requests_per_s': rps, 'stacks': stk}
def mean(v):
    v = [x for x in v if x]
    return sum(v) / len(v) if v else None
base = mean(res['s0']['requests_per_s'])
out = {
    'benchmark': 'stacks',
    'machine': {
        'kernel': platform.release(), 'arch': platform.machine(),
        'cpu_model': sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
        'cores_online': os.cpu_count(),
        'mem_total_kib': int(sh("awk '/MemTotal/ {print $2}' /proc/meminfo") or 0),
        'compiler': sh('cc --version | head -1'),
        'date_utc': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'git_commit': sh('git rev-parse HEAD'),
        'git_worktree_dirty': bool(sh('git status --porcelain --untracked-files=no')),
        'loadavg_1min_before_after': [float(load0), float(load1)],
        'note': 'shared, noisy VM (2 cores, several engineers building): compare the ratios of one run, not absolute rates',
    },
    'method': 'probity-demo --pathology pool-contention --clients 4 --duration %g (its own requests/s), per round interleaved with a rotating order: alone, under probity record --stacks 0 / 1000 (default) / 1000000 (aggregate mode, no --events); stacks taken and not taken from the record -j summary' % secs,
    'rounds': rounds,
    'modes': res,
    'mean_requests_per_s': {m: mean(res[m]['requests_per_s']) for m in modes},
    'throughput_vs_stacks_0': {m: (round(mean(res[m]['requests_per_s']) / base, 3)
                                   if base and mean(res[m]['requests_per_s']) else None)
                               for m in modes},
}
print(json.dumps(out, indent=2))
PY
cat bench/results/stacks.json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['mean_requests_per_s'], d['throughput_vs_stacks_0'])"
