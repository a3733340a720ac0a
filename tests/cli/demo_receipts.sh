#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# demo_receipts.sh: scripts/demo-receipts.sh (`make demo-receipts`, the
# 14:07 story) runs on real BPF and tells its story: the planted generation
# is gone from bpftool, attribute puts samples in it, receipts show --at
# the spike names it, its planted transform and assumption; exit 0.
set -u
. tests/cli/lib.sh
ROOT=${PROBITY_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
need_root
ip netns list >/dev/null 2>&1 || { echo "no 'ip netns'"; exit 77; }
command -v bpftool >/dev/null 2>&1 || { echo "no bpftool"; exit 77; }
OUT=$(mktemp /tmp/pbdemorc.XXXXXX)
trap 'rm -f "$OUT"' EXIT
sh "$ROOT/scripts/demo-receipts.sh" "$P" >"$OUT" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$OUT"; err "demo-receipts.sh exited $rc"; exit 1; }
chk() { grep -Eq -- "$1" "$OUT" || err "missing: $2"; }
chk "gen [0-9]+ \(prog [0-9]+, .*active: .*hash-unroll/flow-r" "the planted generation's activation"
chk "deopt: gen [0-9]+ -> gen 0" "a deoptimization"
chk "Error: get by id \([0-9]+\)" "bpftool no longer has the planted generation"
chk "-> gone: generation [0-9]+ was unloaded" "the 'gone' line"
chk "^   -> [0-9]+ of [0-9]+ attributed samples are in generation" "attribution summary"
chk "^   at [0-9T:.-]+Z on link:[0-9]+: generation [0-9a-f]{64} \(active for certain\)" "receipts show --at names a generation"
chk "transform +hash-unroll/flow-r[0-9]+: .*planted" "the planted transform"
chk "assumption +profile/epoch-[0-9]+/hash-cost" "the planted assumption"
chk "retired .*reason: deopt" "the retirement by deoptimization"
chk "^== the spike at .* ran generation [0-9]+ \([0-9a-f]{64}\), unloaded since;" "the conclusion"
# the generation named by --at is the one the samples are in, and holds most of them
python3 - "$OUT" <<'EOPY' || err "the spike's generation"
import re, sys
t = open(sys.argv[1]).read()
n, tot, ordn, gen = re.search(r'-> (\d+) of (\d+) attributed samples are in generation (\d+) \(([0-9a-f]{64})\)', t).groups()
assert int(n) >= 50 and int(n) >= 0.8 * int(tot), (n, tot)
at = re.search(r'^   at \S+ on link:\d+: generation ([0-9a-f]{64})', t, re.M).group(1)
assert at == gen, (at, gen)
sp = re.search(r'gen (\d+) \(prog (\d+), [^)]*\) active: .*hash-unroll', t).groups()
assert sp[0] == ordn, (sp, ordn)
assert re.search(r'bpftool prog show id %s\n.*Error: get by id \(%s\)' % (sp[1], sp[1]), t), 'bpftool line'
EOPY
[ $fail -eq 0 ] || cat "$OUT"
exit $fail
