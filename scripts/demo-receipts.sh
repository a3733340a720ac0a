#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# demo-receipts.sh [PROBITY]: "the 14:07 story" on this machine (root, BPF,
# ~20 s). `make demo-receipts` runs it.
#
# An XDP program is re-specialized several times in an afternoon by
# `probity rejit` (the reference specializer); one generation carries a
# planted slow transform (--plant-spike), so packets cost ~100x more CPU
# while it is active: the latency spike. `probity sample` records
# cpu-clock samples machine-wide meanwhile. When the operator looks, that
# generation is gone (bpftool no longer has it); `probity attribute` puts
# the spike's samples in it, and `probity receipts show --at <time of the
# spike> --link L` names it, the transform and the assumption that
# produced it.
# DEMO_KEEP=1 keeps the work directory (store, sample file).
set -eu
P=${1:-build/probity}
say() { printf '\n== %s\n' "$*"; }
if [ "$(id -u)" != 0 ]; then
	echo "demo-receipts: needs root (BPF, perf_event, network namespaces)" >&2
	exit 3
fi
W=$(mktemp -d /tmp/pbdemo-receipts.XXXXXX)
SPID=""
cleanup() {
	[ -n "$SPID" ] && kill -INT "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	if [ -n "${DEMO_KEEP:-}" ]; then echo "(kept $W)"; else rm -rf "$W"; fi
}
trap cleanup EXIT INT TERM
S="$W/store"

say "1. the afternoon: probity sample records while probity rejit re-specializes lb_xdp"
cat >"$W/afternoon" <<'EOS'
# the operator changes the configuration twice
t=2.5 config feature_acl=0
t=5.5 config feature_stats=0
EOS
sed 's/^/   script: /' "$W/afternoon"
"$P" sample -o "$W/samples.pbs" -F 1999 >"$W/sample.out" 2>"$W/sample.err" &
SPID=$!
i=0
while ! grep -q sampling "$W/sample.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$P" -j rejit --store "$S" --duration 8 --traffic 8000 --profile-interval 0.9 \
	--script "$W/afternoon" --plant-spike 2 >"$W/rejit.json" 2>"$W/rejit.err" ||
	{ cat "$W/rejit.err"; exit 1; }
grep -E "gen [0-9]+ .*(active|attached)|deopt:|script line" "$W/rejit.err" |
	sed -e 's/^probity rejit: /   /' -e 's/\(insns) active: \).*hash-unroll/\1... hash-unroll/'
kill -INT "$SPID"; wait "$SPID" || true; SPID=""
sed 's/^/   /' "$W/sample.out"

# the generation with the planted transform, and when the spike was:
# the second with the most samples in its code
python3 - "$W/rejit.json" >"$W/spike" <<'EOPY'
import json, sys
d = json.load(open(sys.argv[1]))
g = [x for x in d['generations'] if x['planted_spike']][0]
print(g['prog_id'], g['generation_id'], g['ordinal'])
EOPY
read -r SPROG SGEN SORD <"$W/spike"

say "2. later: the operator looks. Is generation $SORD (prog $SPROG) still loaded?"
echo "   \$ bpftool prog show id $SPROG"
if bpftool prog show id "$SPROG" >"$W/bpftool.out" 2>&1; then
	sed 's/^/   /' "$W/bpftool.out"
	echo "   (still loaded: unexpected)"
else
	sed 's/^/   /' "$W/bpftool.out"
	echo "   -> gone: generation $SORD was unloaded; its code exists nowhere but in the receipt store"
fi

say "3. probity attribute: which generation were the samples in?"
"$P" attribute "$W/samples.pbs" --store "$S" | sed 's/^/   /'
"$P" -j attribute "$W/samples.pbs" --store "$S" --list >"$W/attr.json"
python3 - "$W/attr.json" "$W/samples.pbs" "$SGEN" >"$W/at" <<'EOPY'
import json, struct, sys
from collections import Counter
d = json.load(open(sys.argv[1])); gen = sys.argv[3]
mine = [s for s in d['samples'] if s.get('generation_id') == gen]
if not mine:
    sys.exit('no sample attributed to the planted generation')
sec = Counter(s['time_mono_ns'] // 10**9 for s in mine)
peak = sec.most_common(1)[0][0]
t = sorted(s['time_mono_ns'] for s in mine if s['time_mono_ns'] // 10**9 == peak)
t = t[len(t) // 2]
# wall clock of the peak, through the sample file's clock pair (header chunk)
b = open(sys.argv[2], 'rb').read()
off = struct.unpack_from('<I', b, 12)[0]
_, typ, ln, _ = struct.unpack_from('<4sIII', b, off)
h = json.loads(b[off + 16: off + 16 + ln])
real = t - h['start_mono_ns'] + h['start_realtime_ns']
import time
iso = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(real // 10**9)) + '.%03dZ' % (real % 10**9 // 10**6)
total = sum(d['generations'][g]['samples'] for g in d['generations'])
print(iso, len(mine), total, sec[peak])
EOPY
read -r AT NSPIKE NATTR NPEAK <"$W/at"
echo "   -> $NSPIKE of $NATTR attributed samples are in generation $SORD ($SGEN)"
echo "      the spike: $NPEAK of them in the second around $AT"

LINK=$("$P" -j receipts log --store "$S" |
	python3 -c "import json,sys; print([e for e in json.load(sys.stdin)['entries'] if e['kind'] == 'activated'][0]['link']['id'])")
say "4. probity receipts show --at $AT --link $LINK: what ran on the link at the spike?"
"$P" receipts show --store "$S" --at "$AT" --link "$LINK" >"$W/show.txt" || true
grep -E "^at |^generation |lineage|optimizer|transform|assumption|program  |native image|lifecycle|loaded|activated|retired|unloaded" \
	"$W/show.txt" | grep -v "^activation" | sed 's/^/   /'
echo
if grep -q "hash-unroll/flow-r" "$W/show.txt" && grep -q "hash-cost" "$W/show.txt" &&
	grep -q "^at .*generation $SGEN" "$W/show.txt"; then
	echo "== the spike at $AT ran generation $SORD ($SGEN), unloaded since;"
	echo "   produced by transform $(grep -o 'hash-unroll/flow-r[0-9]*' "$W/show.txt" | head -1)" \
		"under assumption $(grep -o 'profile/epoch-[0-9]*/hash-cost' "$W/show.txt" | head -1)"
else
	echo "== receipts show did not name the planted generation (see above)"
	exit 1
fi
