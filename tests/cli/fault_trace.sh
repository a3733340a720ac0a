#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fault_trace.sh: a full disk and a failing disk while `probity record
# --events` writes its trace (issue 19; the LD_PRELOAD shim
# tests/fault/faultinj.c fails the Nth write(2) on the trace file).
# Required, whatever the fault:
#   - record exits 3 with one error naming the file and the errno; a fault
#     in mid-recording also counts the trace writes that failed (the loss
#     is counted, not silent);
#   - what is on disk is never corrupt: either no trace at all (a fault
#     before any evidence was written: the file is removed) or a trace
#     `probity report` reads, marked incomplete (no end chunk) and, after
#     a torn write, naming the chunk where it was cut;
#   - the evidence written before the fault is all there (records > 0).
# The fault point is half the chunks of a clean recording of the same
# run, so it lands after the header, manifest and plan chunks.
set -u
. tests/cli/lib.sh
need_root
SHIM="$FIX/faultinj.so"
[ -f "$SHIM" ] || { echo "FAIL: $SHIM not built (make test builds it)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

rec() {	# rec NAME [VAR=VALUE...]: record the demo into $T/NAME.trace
	n=$1
	shift
	env "$@" "$P" -j record -m "$DEMO_M" -o "$T/$n.trace" --events --interval 100 \
		-- "$DEMO" --clients 2 --requests 400 -q >"$T/$n.out" 2>"$T/$n.err"
}
chunks() {
	python3 -c "
import struct, sys
b = open(sys.argv[1], 'rb').read(); off = struct.unpack_from('<I', b, 12)[0]; n = 0
while off + 16 <= len(b):
    off += 16 + struct.unpack_from('<I', b, off + 8)[0]; n += 1
print(n)" "$1"
}
lastjson() { tail -1 "$1"; }

# a clean run: the number of chunk writes to aim at
rec clean; rc=$?
[ $rc -eq 0 ] || { err "clean record exited $rc: $(cat "$T/clean.err")"; exit 1; }
n=$(chunks "$T/clean.trace")
[ "$n" -ge 6 ] || { err "clean trace has only $n chunks"; exit 1; }
mid=$((n / 2))
echo "clean trace: $n chunks; faults at write $mid"

# 1. ENOSPC from the middle on (the disk fills and stays full)
rec full LD_PRELOAD="$SHIM" FAULT_PATH=full.trace FAULT_NTH=$mid FAULT_ERRNO=ENOSPC \
	FAULT_LOG="$T/full.flog"; rc=$?
[ $rc -eq 3 ] || err "ENOSPC: record exited $rc, expected 3"
[ -s "$T/full.flog" ] || err "ENOSPC: no fault was injected"
lastjson "$T/full.out" | python3 -c "import json,sys,re
d = json.loads(sys.stdin.read()); e = d['error']
assert 'full.trace' in e and 'No space left on device' in e, e
m = re.search(r'(\d+) trace writes failed', e); assert m and int(m.group(1)) > 0, e" ||
	err "ENOSPC: error does not name the file, errno and lost writes: $(cat "$T/full.out")"
"$P" -j report "$T/full.trace" >"$T/full.rep" 2>"$T/full.reperr" ||
	err "ENOSPC: the trace left behind does not read: $(cat "$T/full.reperr")"
py "$T/full.rep" "t = d['trace']; assert t['complete'] is False, t; assert t['records'] > 0, t" ||
	err "ENOSPC: trace not marked incomplete or empty: $(head -c 600 "$T/full.rep")"

# 2. EIO on a torn write: half a chunk reaches the disk, then EIO
rec torn LD_PRELOAD="$SHIM" FAULT_PATH=torn.trace FAULT_NTH=$mid FAULT_ERRNO=EIO \
	FAULT_PARTIAL=1 FAULT_LOG="$T/torn.flog"; rc=$?
[ $rc -eq 3 ] || err "EIO: record exited $rc, expected 3"
[ -s "$T/torn.flog" ] || err "EIO: no fault was injected"
grep -q "Input/output error" "$T/torn.out" || err "EIO: error lacks the errno: $(cat "$T/torn.out")"
"$P" -j report "$T/torn.trace" >"$T/torn.rep" 2>"$T/torn.reperr" ||
	err "EIO: the torn trace does not read: $(cat "$T/torn.reperr")"
py "$T/torn.rep" "t = d['trace']; assert t['complete'] is False, t
assert 'torn' in (t['cut_reason'] or ''), t; assert t['records'] > 0, t" ||
	err "EIO: torn chunk not reported as a cut: $(head -c 600 "$T/torn.rep")"
"$P" report "$T/torn.trace" >"$T/torn.txt" 2>&1 || err "EIO: text report failed"

# 3. ENOSPC on the manifest chunk: no evidence yet, so no trace file
rec early LD_PRELOAD="$SHIM" FAULT_PATH=early.trace FAULT_NTH=2 FAULT_ERRNO=ENOSPC; rc=$?
[ $rc -eq 3 ] || err "early ENOSPC: record exited $rc, expected 3"
lastjson "$T/early.out" | grep -q "No space left on device" ||
	err "early ENOSPC: error lacks the errno: $(cat "$T/early.out")"
[ -e "$T/early.trace" ] && err "early ENOSPC: a trace without evidence was left behind"

# 4. the shim itself: a run with the fault past the end changes nothing
rec late LD_PRELOAD="$SHIM" FAULT_PATH=late.trace FAULT_NTH=100000; rc=$?
[ $rc -eq 0 ] || err "no fault reached: record exited $rc: $(cat "$T/late.err")"
"$P" -j report "$T/late.trace" >"$T/late.rep" && py "$T/late.rep" "assert d['trace']['complete'], d['trace']" ||
	err "no fault reached: trace not complete"
exit $fail
