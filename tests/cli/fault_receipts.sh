#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fault_receipts.sh: a full or failing disk while `probity rejit` stores
# receipts and appends to the lifecycle log (issue 19; the LD_PRELOAD shim
# tests/fault/faultinj.c fails the Nth write/fsync/rename under the store).
# Judged only by what users see (`receipts verify`, `receipts log`, exit
# codes), so it holds across changes to how the store commits.
# Required:
#   - never a visible torn object: `receipts verify` is clean after every
#     fault (interrupted writes under tmp/ are notes, never objects);
#   - a generation whose receipt cannot be stored is not activated: rejit
#     refuses it (generation 0: exit 3 naming the errno; a candidate:
#     counted in rejected_candidates), so no running code lacks a receipt;
#   - a lifecycle-log append that fails leaves the hash chain intact:
#     verify is clean and `receipts log` reads every entry that was
#     written; the failure is reported, not silent.
set -u
. tests/cli/lib.sh
need_root
ip netns list >/dev/null 2>&1 || { echo "no 'ip netns'"; exit 77; }
SHIM="$FIX/faultinj.so"
[ -f "$SHIM" ] || { echo "FAIL: $SHIM not built (make test builds it)"; exit 1; }
T=$(mktemp -d /tmp/pbfault.XXXXXX)
trap 'rm -rf "$T"' EXIT

rejit() {	# rejit NAME [VAR=VALUE...]: a short rejit run into store $T/NAME
	n=$1
	shift
	env LD_PRELOAD="$SHIM" FAULT_LOG="$T/$n.flog" "$@" "$P" -j rejit --store "$T/$n" \
		--duration 2.5 --traffic 2000 --profile-interval 0.7 >"$T/$n.out" 2>"$T/$n.err"
}
verify_clean() {	# verify_clean NAME WHAT
	"$P" -j receipts verify --store "$T/$1" >"$T/$1.verify" 2>&1; vrc=$?
	[ $vrc -eq 0 ] && py "$T/$1.verify" "assert d['ok'] and not d['problems'], d" ||
		err "$2: receipts verify not clean (exit $vrc): $(head -c 800 "$T/$1.verify")"
}
injected() {	# injected NAME WHAT: the fault happened; say what rejit did
	[ -s "$T/$1.flog" ] || err "$2: no fault was injected"
	echo "$2: rejit exit $rc; $(grep -h 'cannot\|warning' "$T/$1.err" "$T/$1.out" | head -2)"
}

# 1. the disk is full from the first receipt object on: generation 0 is
#    refused, nothing half-stored is visible
rejit full0 FAULT_PATH="$T/full0/tmp/" FAULT_NTH=1 FAULT_ERRNO=ENOSPC; rc=$?
injected full0 "ENOSPC at gen 0"
[ $rc -eq 3 ] || err "ENOSPC at gen 0: rejit exited $rc, expected 3"
grep -q "No space left on device" "$T/full0.out" ||
	err "ENOSPC at gen 0: error lacks the errno: $(cat "$T/full0.out")"
verify_clean full0 "ENOSPC at gen 0"

# 2. the disk fills after generation 0 was stored: candidates are refused
#    (or the run stops with an error), generation 0 stays accounted for
rejit fullmid FAULT_PATH="$T/fullmid/tmp/" FAULT_NTH=13 FAULT_ERRNO=ENOSPC; rc=$?
injected fullmid "ENOSPC mid-run"
if [ $rc -eq 0 ]; then
	py "$T/fullmid.out" "assert d['rejected_candidates'] >= 1, d" ||
		err "ENOSPC mid-run: exit 0 without a refused candidate: $(head -c 600 "$T/fullmid.out")"
elif [ $rc -ne 3 ]; then
	err "ENOSPC mid-run: rejit exited $rc"
fi
verify_clean fullmid "ENOSPC mid-run"

# 3. one rename fails with EIO (a metadata write error)
rejit ren FAULT_OPS=rename FAULT_PATH="$T/ren/" FAULT_NTH=2 FAULT_COUNT=1 FAULT_ERRNO=EIO; rc=$?
injected ren "EIO on rename"
[ $rc -eq 0 ] || [ $rc -eq 3 ] || err "EIO on rename: rejit exited $rc"
verify_clean ren "EIO on rename"

# 4. the lifecycle log's disk fills after 3 appends (fsync each): the
#    failure is reported, the chain stays intact, the log still reads
rejit log FAULT_OPS=write,fsync FAULT_PATH="$T/log/lifecycle.log" FAULT_NTH=6 \
	FAULT_ERRNO=ENOSPC; rc=$?
injected log "ENOSPC on the lifecycle log"
[ $rc -eq 0 ] || [ $rc -eq 3 ] || err "ENOSPC on the log: rejit exited $rc"
grep -q "No space left on device" "$T/log.err" "$T/log.out" ||
	err "ENOSPC on the log: not reported: $(tail -3 "$T/log.err")"
verify_clean log "ENOSPC on the lifecycle log"
"$P" -j receipts log --store "$T/log" >"$T/log.log" 2>"$T/log.logerr" ||
	err "ENOSPC on the log: receipts log failed: $(cat "$T/log.logerr")"
py "$T/log.verify" "assert d['log_entries'] >= 1, d" ||
	err "ENOSPC on the log: entries written before the fault are gone"

# 5. the same with EIO on one fsync of the log (a write error the kernel
#    reports once): still intact
rejit logeio FAULT_OPS=fsync FAULT_PATH="$T/logeio/lifecycle.log" FAULT_NTH=4 FAULT_COUNT=1 \
	FAULT_ERRNO=EIO; rc=$?
injected logeio "EIO on a log fsync"
[ $rc -eq 0 ] || [ $rc -eq 3 ] || err "EIO on a log fsync: rejit exited $rc"
verify_clean logeio "EIO on a log fsync"
exit $fail
