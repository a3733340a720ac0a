#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# preempt.sh: an off_cpu prediction judges the time a call ran or slept,
# not the time it queued for a CPU (docs/validation.md "Cross-layer
# checks"; real BPF, root). tests/fixtures/preempt/preempt.c pins a
# spinning WAIT and a SCHED_FIFO hog to CPU 0:
#   - short_wait (40 us of CPU, never sleeps) lasts > 200 us only when the
#     hog preempts it: the fixture must report such calls, and under a
#     tenth of their number may count as failed predictions (before the
#     engine subtracted preempted time, nearly each was one). Not zero: on
#     a VM the hypervisor steals the vCPU now and then (here ~1 ms, a few
#     dozen calls in 2 s), which no clock a probe can read shows;
#   - long_wait (1 ms of CPU, never sleeps) is a real failure: it must still
#     fail (more than half of its judged calls), so the subtraction cannot
#     hide a spinning wait.
set -u
. tests/cli/lib.sh
FIX=$(cd "$PROBITY_BUILD/fixtures" 2>/dev/null && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root
[ -x "$FIX/preempt" ] || { echo "FAIL: $FIX/preempt not built (make test-unit)"; exit 1; }
sed "s|@BINARY@|$FIX/preempt|" tests/fixtures/preempt/preempt.manifest.yaml >"$T/p.tmpl"
scripts/fill-build-id.sh "$T/p.tmpl" "$FIX/preempt" "$T/p.yaml" || exit 1

"$P" -j record -m "$T/p.yaml" -o "$T/p.trace" -- "$FIX/preempt" 2 >"$T/p.out" 2>"$T/p.err"
rc=$?
# long_wait goes stale: record exits 4
[ $rc -eq 4 ] || err "record exited $rc, expected 4 (long_wait stale): $(tail -3 "$T/p.err")"
slow=$(sed -n 's/^calls [0-9]* preempted_calls \([0-9]*\) .*/\1/p' "$T/p.out")
[ -n "$slow" ] || err "no summary line from the fixture: $(head -3 "$T/p.out")"
[ "${slow:-0}" -gt 0 ] ||
	err "no short_spin call was preempted past 200 us: the test proves nothing ($(cat "$T/p.out"))"
"$P" -j health "$T/p.trace" >"$T/p.health"
SLOW=${slow:-0} py "$T/p.health" '
import os
slow = int(os.environ["SLOW"])
x = {e["id"]: e for e in d["descriptors"]}
s = x["short_wait"]["predictions"]["off_cpu"]
l = x["long_wait"]["predictions"]["off_cpu"]
assert s["failed"] * 10 < slow, ("short_wait: preempted calls failed", s, slow)
assert l["failed"] > 0 and 2 * l["failed"] > l["checked"], ("long_wait: spinning not caught", l)
assert x["long_wait"]["state"] == "stale", x["long_wait"]
print("ok   short_wait: %d calls > 200 us by preemption, %d failed (steal); long_wait: "
      "%d failed of %d checked" % (slow, s["failed"], l["failed"], l["checked"]))
' || err "preemption counted as a failed prediction, or a spinning wait not caught"
exit $fail
