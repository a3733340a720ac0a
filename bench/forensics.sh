#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# forensics.sh: the adversarial re-JIT forensic benchmark (seed 004 section 3,
# issue 16) -> bench/results/forensics.json; docs/benchmark.md "Forensics".
#   bench/forensics.sh [BUILD_DIR]      (root: BPF, perf_event, netns, bpffs)
# Each scenario: `probity sample` records cpu-clock samples and the kernel's
# ksymbol/bpf_event records machine-wide, bench/forensics/poll.py polls
# bpftool, `probity rejit` re-specializes lb_xdp with a planted slow
# generation (all its generations are unloaded when it stops, so the bad one
# is gone before analysis starts), other actors per scenario; then every
# baseline answers, per sample in BPF JIT code, which generation ran, and
# bench/forensics/score.py grades them against the oracle (the complete
# kernel record stream; see score.py). Baselines: bpftool at analysis time,
# bpftool polled, perf-style ksymbol attribution, optimizer log + full
# snapshots, probity (sample + attribute).
# Scenarios (FX_SCENARIOS, default all, in this order):
#   rapid_deopt    >= 100 generations, a config toggle every 150 ms (each a
#                  deopt + a new generation), JIT images freed and reused
#   inflight_tail  a long invocation of the planted generation (a
#                  BPF_PROG_TEST_RUN loop started while it is attached) keeps
#                  running after the link moved on; a traffic shift makes the
#                  guards tail-call into generation 0 while generation N is
#                  attached
#   evidence_loss  the handoff to the planted generation is not logged
#                  (--inject-drop-handoff) and the sample file loses that
#                  program's ksymbol/bpf_event records (a LOST record instead)
#   foreign        a foreign loader (bpftool, own bpffs) runs identical copies
#                  of lb_xdp under the same name during the run
# Knobs: FX_SCENARIOS, FX_POLL_MS (100), FX_FREQ (1999), FX_QUICK=1 (short
# runs, for tests/cli/forensics_smoke.sh), FX_OUT (bench/results/forensics.json),
# FX_KEEP=1 (keep the work directory).
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "$(id -u)" -ne 0 ]; then echo "bench/forensics.sh: needs root (BPF)" >&2; exit 1; fi
case $BUILD in /*) B=$BUILD ;; *) B="$ROOT/$BUILD" ;; esac
P="$B/probity"
OBJ="$B/bpf/lb_xdp.bpf.o"
[ -x "$P" ] && [ -f "$OBJ" ] || { echo "bench/forensics.sh: build first ($P, $OBJ)" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "bench/forensics.sh: needs bpftool" >&2; exit 1; }
SCEN=${FX_SCENARIOS:-rapid_deopt inflight_tail evidence_loss foreign}
POLL_MS=${FX_POLL_MS:-100}
FREQ=${FX_FREQ:-1999}
QUICK=${FX_QUICK:-0}
OUT=${FX_OUT:-bench/results/forensics.json}
FXD="$ROOT/bench/forensics"
# the interpreter itself: a pyenv shim costs seconds per start on a loaded machine
PY=$(python3 -c 'import sys; print(sys.executable)')
W=$(mktemp -d /var/tmp/pbforensics.XXXXXX)
# the receipt stores on tmpfs when there is one: the specializer syncs its
# store every loop turn, and a loaded disk stretches its turns past the
# script steps (this bench measures attribution, not durability)
S=$W
[ -d /dev/shm ] && S=$(mktemp -d /dev/shm/pbforensics.XXXXXX)
SPID="" PPID_="" FPID="" LPIDS="" RPID=""
stopall() {
	[ -n "$RPID" ] && kill -INT "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	for p in $LPIDS $FPID $PPID_; do kill -TERM "$p" 2>/dev/null; done
	[ -n "$SPID" ] && kill -INT "$SPID" 2>/dev/null
	for p in $LPIDS $FPID $PPID_ $SPID; do wait "$p" 2>/dev/null; done
	SPID="" PPID_="" FPID="" LPIDS=""
}
cleanup() {
	stopall
	if [ -n "${FX_KEEP:-}" ]; then echo "bench/forensics: kept $W $S" >&2
	else rm -rf "$W"; [ "$S" = "$W" ] || rm -rf "$S"; fi
}
trap cleanup EXIT INT TERM
say() { printf 'bench/forensics: %s\n' "$*" >&2; }
t_start=$(date +%s)

# a UDP frame to the service port and a TCP frame (which fails the guards), for test runs
"$PY" -c "
import struct, sys
eth = bytes.fromhex('020000000001020000000002') + b'\x08\x00'
ip = bytes([0x45, 0, 0, 36, 0, 0, 0, 0, 64, 17, 0, 0, 10, 1, 2, 3, 10, 0, 0, 1])
open(sys.argv[1], 'wb').write(eth + ip + struct.pack('!HHHH', 5555, 4242, 16, 0) + b'x' * 8)
tcp = bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 1, 2, 3, 10, 0, 0, 1])
open(sys.argv[2], 'wb').write(eth + tcp + struct.pack('!HHIIHHHH', 5555, 80, 1, 0, 0x5002, 512, 0, 0))
" "$W/pkt.bin" "$W/tcp.bin"

wait_line() {	# FILE TEXT: wait up to 10 s for TEXT in FILE
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	grep -q "$2" "$1"
}
cpu_s() {	# PID: user+system CPU seconds so far (with waited-for children)
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

scenario() {	# NAME DESCRIPTION DURATION -- rejit options...
	name=$1 desc=$2 dur=$3
	shift 4
	D="$W/$name"
	mkdir -p "$D" "$S/$name"
	ln -s "$S/$name/A" "$D/A"
	say "scenario $name: $desc"
	"$P" -j sample -o "$D/s.pbs" -F "$FREQ" --pages 512 >"$D/sample.json" 2>"$D/sample.err" &
	SPID=$!
	wait_line "$D/sample.err" sampling || { cat "$D/sample.err" >&2; return 1; }
	# the operator's poller runs at niceness 0 even when the bench is niced
	nice -n "-$(nice)" "$PY" "$FXD/poll.py" "$D/poll.jsonl" "$POLL_MS" "$D/dumps" 2>"$D/poll.err" &
	PPID_=$!
	wait_line "$D/poll.err" polling || return 1
	case $name in
	foreign*)
		"$FXD/foreign.sh" "$D/foreign.json" "$dur" "$OBJ" "$W/pkt.bin" >"$D/foreign.err" 2>&1 &
		FPID=$! ;;
	esac
	: >"$D/rejit.err"
	hold="" pkts="$W/pkt.bin"
	case $name in
	inflight*)	# a long first run of the planted generation; TCP frames too
		hold="--hold-planted ${FX_HOLD_REPEAT:-40000}" pkts="$W/pkt.bin,$W/tcp.bin" ;;
	esac
	c=0
	while [ $c -lt "$(nproc)" ]; do	# the CPU load: one test-run loop per CPU
		# shellcheck disable=SC2086
		"$PY" "$FXD/load.py" "$D/rejit.err" $c "$pkts" $hold 2>"$D/load$c.err" &
		LPIDS="$LPIDS $!"
		wait_line "$D/load$c.err" ready || return 1
		hold="" c=$((c + 1))
	done
	t0=$(date +%s.%N)
	"$P" -j rejit --store "$S/$name/A" --duration "$dur" --traffic 8000 "$@" >"$D/rejit.json" 2>"$D/rejit.err" &
	RPID=$!
	if [ "${GEN_TARGET:-0}" -gt 0 ]; then
		# stop (SIGINT: a clean stop) once GEN_TARGET generations exist;
		# --duration is the upper bound on a slow machine
		while kill -0 "$RPID" 2>/dev/null &&
			[ "$(grep -c ') active' "$D/rejit.err")" -lt "$GEN_TARGET" ]; do
			sleep 0.2
		done
		kill -INT "$RPID" 2>/dev/null || true
	fi
	wait "$RPID" || { RPID=""; cat "$D/rejit.err" >&2; return 1; }
	RPID=""
	t1=$(date +%s.%N)
	touch "$D/rejit.err.done"
	for p in $LPIDS; do wait "$p" || true; done
	LPIDS=""
	cat "$D"/load[0-9]*.err >"$D/load.err"
	[ -n "$FPID" ] && { wait "$FPID" || { cat "$D/foreign.err" >&2; return 1; }; FPID=""; }
	sleep 0.3
	scpu=$(cpu_s "$SPID")
	kill -TERM "$PPID_"; wait "$PPID_" || true; PPID_=""
	kill -INT "$SPID"; wait "$SPID" || { cat "$D/sample.err" >&2; return 1; }; SPID=""

	# analysis starts: every generation is unloaded by now
	"$PY" - "$D" <<'PY'
import json, subprocess, sys
d = sys.argv[1]
show = subprocess.run(['bpftool', '-j', 'prog', 'show'], stdout=subprocess.PIPE).stdout
ks = open('/proc/kallsyms', 'rb').read()
progs = [{'id': p['id'], 'tag': p.get('tag'), 'name': p.get('name', ''), 'bytes_jited': p.get('bytes_jited', 0),
          'type': p.get('type')} for p in json.loads(show or b'[]')]
k = [[int(l.split()[0], 16), l.split()[2].decode()] for l in ks.split(b'\n') if b' bpf_prog_' in l]
json.dump({'progs': progs, 'ksyms': k}, open(d + '/final_poll.json', 'w'))
json.dump({'bytes': len(show) + len(ks)}, open(d + '/final_poll_bytes.json', 'w'))
PY
	dropped=0
	if [ "${name#evidence_loss}" != "$name" ]; then
		# the injected collector loss: the sample file loses the kernel
		# records of the programs whose handoff the specializer did not log
		dropped=$("$PY" -c "
import json, sys
sys.path.insert(0, '$FXD')
import pbsample
ids = set(g['prog_id'] for g in json.load(open('$D/rejit.json'))['generations'] if not g['logged'])
print(pbsample.drop('$D/s.pbs', '$D/s_scored.pbs', ids))")
		sf="$D/s_scored.pbs"
	else
		sf="$D/s.pbs"
	fi
	"$P" -j attribute "$sf" --store "$D/A" --list >"$D/attr.json" || { say "attribute failed"; return 1; }
	"$P" -j receipts log --store "$D/A" >"$D/lifelog.json"
	hot=$("$PY" -c "
import json, collections
a = json.load(open('$D/attr.json'))
c = collections.Counter(s['generation_id'] for s in a['samples'] if s['status'] == 'generation')
rj = json.load(open('$D/rejit.json'))
g0 = rj['generations'][0]['generation_id']
c.pop(g0, None)
print(c.most_common(1)[0][0] if c else '')")
	if [ -n "$hot" ]; then
		"$P" -j receipts show --store "$D/A" "$hot" >"$D/show_hot.json" || echo '{}' >"$D/show_hot.json"
	fi
	"$PY" - "$D" "$desc" "$t0" "$t1" "$scpu" "$dropped" <<'PY'
import json, os, statistics, sys
d, desc, t0, t1, scpu, dropped = sys.argv[1:]
rj = json.load(open(d + '/rejit.json'))
sw = sorted(s['t_ms'] for s in rj['swaps'])
life = [b - a for a, b in zip(sw, sw[1:])]
# the optimizer-log baseline keeps every object of the store except the
# receipts themselves (raw artifacts: submitted/xlated insns, JIT image,
# verifier log, line mapping, BTF; evidence records), plus its text log
art = 0
for a, _, fs in os.walk(d + '/A/objects'):
    for f in fs:
        p = os.path.join(a, f)
        b = open(p, 'rb').read(4096)
        if b'"_type"' in b or b'"generation_id"' in b or b'"parent_generation_id"' in b:
            continue
        art += os.path.getsize(p)
meta = {'description': desc, 'duration_s': round(float(t1) - float(t0), 2),
        'median_life_ms': statistics.median(life) if life else None,
        'sampler_cpu_s': float(scpu), 'dropped_records': int(dropped), 'artifact_bytes': art,
        'final_poll_bytes': json.load(open(d + '/final_poll_bytes.json'))['bytes']}
json.dump(meta, open(d + '/meta.json', 'w'))
PY
	"$PY" "$FXD/score.py" "$D" "$name" >"$D/score.json" || { say "score failed"; return 1; }
}

Q() { if [ "$QUICK" = 1 ]; then echo "$1"; else echo "$2"; fi; }
toggles() {	# FILE COUNT PERIOD_S: feature_acl toggled COUNT times
	"$PY" -c "
import sys
for i in range(1, int(sys.argv[2]) + 1):
    print('t=%.2f config feature_acl=%d' % (0.3 + i * float(sys.argv[3]), i % 2))" "$@" >"$1"
}
for s in $SCEN; do
	case $s in
	rapid_deopt)
		toggles "$W/rapid.script" "$(Q 40 300)" 0.15
		GEN_TARGET=$(Q 12 110)
		scenario rapid_deopt "feature_acl toggled every 150 ms: a deoptimization and a new generation each time, JIT images freed and reused; generation $(Q 4 50) planted; stopped at $GEN_TARGET specialized generations" \
			"$(Q 6.5 45.5)" -- --profile-interval 0.05 --min-samples 20 --script "$W/rapid.script" \
			--plant-spike "$(Q 4 50)"
		GEN_TARGET=0 ;;
	inflight_tail)
		toggles "$W/tail.script" 8 0.6
		scenario inflight_tail "a long test run of the planted generation 2 (started while attached) keeps running after the link moved on; TCP test frames fail the guards: tail calls into generation 0 while generation N is attached" \
			"$(Q 3 5.5)" -- --profile-interval 0.2 --min-samples 20 --script "$W/tail.script" --guard-threshold 100000000 \
			--plant-spike 2  ;;
	evidence_loss)
		toggles "$W/loss.script" 8 0.6
		scenario evidence_loss "the handoff to generation 2 is not logged (a swapper that crashed) and the sample file lost that program's ksymbol/bpf_event records" \
			"$(Q 3 5.5)" -- --profile-interval 0.2 --min-samples 20 --script "$W/loss.script" \
			--plant-spike 3 --inject-drop-handoff 2  ;;
	foreign)
		toggles "$W/foreign.script" 8 0.6
		scenario foreign "a foreign loader (bpftool, its own bpffs) runs identical copies of lb_xdp, same name and tag as generation 0, during the run" \
			"$(Q 3 5.5)" -- --profile-interval 0.2 --min-samples 20 --script "$W/foreign.script" \
			--plant-spike 2  ;;
	*) say "unknown scenario $s"; exit 2 ;;
	esac
done

"$PY" - "$W" "$t_start" "$POLL_MS" "$FREQ" "$QUICK" $SCEN >"$W/out.json" <<'PY'
import json, os, platform, subprocess, sys, time
w, t0, poll, freq, quick = sys.argv[1:6]
scen = sys.argv[6:]
def sh(c):
    try:
        return subprocess.run(c, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    except OSError:
        return ''
cpu = [l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')]
machine = {'kernel': platform.release(), 'cpu': cpu[0] if cpu else '', 'cores': os.cpu_count(),
           'bpftool': sh('bpftool version | head -1'), 'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
           'git_commit': sh('git rev-parse HEAD'), 'dirty': bool(sh('git status --porcelain')),
           'loadavg_end': open('/proc/loadavg').read().split()[:3]}
out = {'benchmark': 'forensics', 'machine': machine, 'run_time_s': int(time.time()) - int(t0),
       'quick': quick == '1', 'poll_interval_ms': int(poll), 'sample_freq_hz': int(freq),
       'method': 'bench/forensics.sh; oracle and baselines in bench/forensics/score.py; docs/benchmark.md',
       'scenarios': [json.load(open(os.path.join(w, s, 'score.json'))) for s in scen]}
print(json.dumps(out, indent=1))
PY
mkdir -p "$(dirname "$OUT")"
mv "$W/out.json" "$OUT"
"$PY" - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print('%-14s %-17s %8s %8s %8s %7s %7s %9s %5s' % ('scenario', 'baseline', 'correct', 'wrong', 'unknown',
      'prec', 'recall', 'lost->unk', 'root'))
for s in d['scenarios']:
    for b, r in s['baselines'].items():
        print('%-14s %-17s %8d %8d %8d %7s %7s %9s %5s' % (s['scenario'], b, r['correct'], r['wrong_confident'],
              r['unknown'], r['precision'], r['recall'],
              '%s/%s' % (r['evidence_lost_kept_unknown'], r['evidence_lost_samples']), r['root_cause_generation_found']))
PY
say "done in $(( $(date +%s) - t_start )) s -> $OUT"
