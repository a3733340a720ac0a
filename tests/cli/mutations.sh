#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mutations.sh: one real-BPF mutation per runtime invariant
# (docs/validation.md). tests/fixtures/validation/mutants.c built clean and
# with one -D switch per mutation (mk/validation-fixtures.mk), each
# recorded under the clean build's contract (mutants.manifest.yaml, the
# variant's build-id filled in, so it attaches): the clean build must end
# with no confidence change and no violation; each mutation must end with
# its descriptor suspect or stale, the change naming that invariant
# (health -j changes[].invariant), and record exiting 4 when stale.
# The seed's "the I/O moved to another thread" mutation
# (tests/fixtures/validation/ioshift.c, -DMOVED): read_miss stale for
# prediction_failed with the reason saying the effect moved (a model
# change, not "no I/O"); its clean build keeps block_io. The other two
# classes (acquire bypassed, async handoff before USE) are in
# tests/cli/connpool.sh (FASTPATH, HANDOFF).
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

need_root

# variant  descriptor  invariant
cases="clean - -
BORROWED obj_get acquire_active
DOUBLE_PUT obj_put release_not_active
STALE_HANDLE obj_use use_not_acquired
RECYCLE obj_get generation_overlap
LATE_CLOSE lease_open expect_timeout
BYTES q_push over_capacity"

echo "$cases" >"$T/cases"
while read -r v id inv; do
	b="$FIX/mutants_$v"
	[ -x "$b" ] || { echo "FAIL: $b not built (make test-unit)"; exit 1; }
	sed "s|@BINARY@|$b|" tests/fixtures/validation/mutants.manifest.yaml >"$T/$v.tmpl"
	scripts/fill-build-id.sh "$T/$v.tmpl" "$b" "$T/$v.yaml" || exit 1
	"$P" -j record -m "$T/$v.yaml" -o "$T/$v.trace" -- "$b" 1.5 </dev/null >"$T/$v.out" 2>"$T/$v.err"
	rc=$?
	"$P" -j health "$T/$v.trace" </dev/null >"$T/$v.health"
	hrc=$?
	if [ "$v" = clean ]; then
		[ $rc -eq 0 ] || err "clean: record exited $rc, expected 0: $(tail -3 "$T/$v.err")"
		[ $hrc -eq 0 ] || err "clean: health exited $hrc, expected 0"
	else
		[ $hrc -eq 1 ] || err "$v: health exited $hrc, expected 1 (some descriptor suspect or stale)"
	fi
	python3 - "$T/$v.health" "$v" "$id" "$inv" "$rc" <<'PY' || err "$v: expected $id suspect/stale for $inv"
import json, sys
d = json.load(open(sys.argv[1]))
v, want, inv, rc = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
by = {x["id"]: x for x in d["descriptors"]}
assert by["obj_get"]["events"] > 500, by["obj_get"]
if v == "clean":
    # no change; the 50 ms lease bound may be missed by a thread
    # descheduled that long between open and close: rare, far below 5 %
    bad = [(x["id"], x["state"], x["violations"]) for x in d["descriptors"]
           if x["state"] != x["initial"] or sum(x["violations"].values()) * 100 >= max(x["events"], 1)]
    assert not bad and not d["changes"], bad or d["changes"]
    print("ok   mutation clean: no confidence change, %d violation(s)" %
          sum(sum(x["violations"].values()) for x in d["descriptors"]))
    sys.exit(0)
x = by[want]
assert x["state"] in ("suspect", "stale"), x
ch = [c for c in d["changes"] if c["id"] == want]
assert ch and all(c["invariant"] == inv for c in ch), ch
assert inv in x["reason"], x["reason"]
assert (rc == 4) == (x["state"] == "stale" or any(y["state"] == "stale" for y in d["descriptors"])), rc
others = [(y["id"], y["state"]) for y in d["descriptors"] if y["id"] != want and y["state"] != y["initial"]]
assert not others, others
print("ok   mutation %s: %s %s for %s (%d of %d events)" %
      (v, want, x["state"], inv, x["violations"][inv], x["events"]))
PY
done <"$T/cases"

# RECYCLE shows only from an object's second obj_get (after POOL_SIZE 512
# rounds of >= 200 us): a run bounded by time alone ended before that on a
# loaded machine (bench/mutations.sh missed it at load average 13-23).
# mutants.c runs until its pool turned over and 1 s more, so even 0.05 s
# (less than any turnover) must end stale.
b="$FIX/mutants_RECYCLE"
"$P" -j record -m "$T/RECYCLE.yaml" -o "$T/short.trace" -- "$b" 0.05 </dev/null >"$T/short.out" 2>"$T/short.err"
rc=$?
"$P" -j health "$T/short.trace" </dev/null >"$T/short.health"
python3 - "$T/short.health" "$rc" <<'PY' || err "RECYCLE 0.05 s: expected obj_get stale for generation_overlap"
import json, sys
d = json.load(open(sys.argv[1]))
x = {y["id"]: y for y in d["descriptors"]}["obj_get"]
assert int(sys.argv[2]) == 4 and x["state"] == "stale", (sys.argv[2], x)
assert x["violations"]["generation_overlap"] >= 512, x
print("ok   mutation RECYCLE, 0.05 s asked: obj_get stale, %d generation_overlap of %d events" %
      (x["violations"]["generation_overlap"], x["events"]))
PY

# the I/O moved to another thread: O_DIRECT needs a block device
DATA=/var/tmp
case $(stat -f -c %T "$DATA" 2>/dev/null) in
tmpfs|ramfs|"")
	[ "${CI:-}" = true ] && err "ioshift: no block-device filesystem for O_DIRECT under CI=true"
	echo "skip: ioshift: $DATA is not on a block device" ;;
*)
	for v in clean MOVED; do
		b="$FIX/ioshift_$v"
		[ -x "$b" ] || { echo "FAIL: $b not built (make test-unit)"; exit 1; }
		sed "s|@BINARY@|$b|" tests/fixtures/validation/ioshift.manifest.yaml >"$T/io$v.tmpl"
		scripts/fill-build-id.sh "$T/io$v.tmpl" "$b" "$T/io$v.yaml" || exit 1
		"$P" -j record -m "$T/io$v.yaml" -o "$T/io$v.trace" -- "$b" 2 "$DATA" </dev/null \
			>"$T/io$v.out" 2>"$T/io$v.err"
		rc=$?
		"$P" -j health "$T/io$v.trace" </dev/null >"$T/io$v.health"
		python3 - "$T/io$v.health" "$v" "$rc" <<'PY' || err "ioshift $v: $(tail -2 "$T/io$v.err")"
import json, sys
d = json.load(open(sys.argv[1]))
v, rc = sys.argv[2], int(sys.argv[3])
x = {y["id"]: y for y in d["descriptors"]}["read_miss"]
p = x["predictions"]["block_io"]
assert p["checked"] >= 100, p
if v == "clean":
    assert rc == 0 and x["state"] == "validated" and not d["changes"], (rc, x, d["changes"])
    assert p["failed"] * 100 <= p["checked"], p
    print("ok   ioshift clean: block_io %d checked, %d failed" % (p["checked"], p["failed"]))
    sys.exit(0)
assert rc == 4 and x["state"] == "stale", (rc, x)
ch = [c for c in d["changes"] if c["id"] == "read_miss"]
assert ch and all(c["invariant"] == "prediction_failed" for c in ch), ch
assert "moved: in" in x["reason"] and "a model change" in x["reason"], x["reason"]
print("ok   ioshift MOVED: read_miss stale, %d of %d block_io failed; %s" %
      (p["failed"], p["checked"], x["reason"][x["reason"].index("moved"):]))
PY
	done ;;
esac
[ $fail -eq 0 ] && echo "ok   mutations: clean build unchanged, each mutation caught by its invariant"
exit $fail
