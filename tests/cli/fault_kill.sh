#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fault_kill.sh: SIGKILL at random points of a receipts write (issue 19).
# A clean `probity rejit` run counts its write/fsync/rename calls under
# the store (tests/fault/faultinj.c, FAULT_LOG_ALL); then KILLS runs are
# each killed at a random one of those calls (FAULT_KILL: the process
# SIGKILLs itself right before the call). After each:
#   - `receipts verify` exits 0 and is clean, or exits 1 naming every
#     problem with a where and a what (exactly what is missing);
#   - an interrupted object write is a note (tmp/), never an object, and
#     `receipts gc --min-age 0` removes it, after which verify has no
#     such note;
#   - `receipts log` still reads.
# The points are printed with their seed; PB_FAULT_SEED=N replays a run.
# rejit's network namespace (pbrejit<pid>) cannot be removed by a killed
# process: this script removes it.
set -u
. tests/cli/lib.sh
need_root
ip netns list >/dev/null 2>&1 || { echo "no 'ip netns'"; exit 77; }
SHIM="$FIX/faultinj.so"
[ -f "$SHIM" ] || { echo "FAIL: $SHIM not built (make test builds it)"; exit 1; }
KILLS=${PB_FAULT_KILLS:-3}
SEED=${PB_FAULT_SEED:-$(date +%s)}
T=$(mktemp -d /tmp/pbkill.XXXXXX)
trap 'rm -rf "$T"' EXIT
OPS=write,pwrite,writev,fsync,rename

rejit() {	# rejit NAME [VAR=VALUE...]
	n=$1
	shift
	env LD_PRELOAD="$SHIM" FAULT_OPS=$OPS FAULT_PATH="$T/$n/" FAULT_LOG="$T/$n.flog" "$@" \
		"$P" -j rejit --store "$T/$n" --duration 2.5 --traffic 2000 --profile-interval 0.7 \
		>"$T/$n.out" 2>"$T/$n.err" &
	pid=$!
	wait $pid
	rc=$?
	# a killed rejit leaves its namespace (and the veth in it) behind
	ip netns del "pbrejit$pid" 2>/dev/null
	return $rc
}

rejit clean FAULT_NTH=999999999 FAULT_LOG_ALL=1 ||
	{ err "clean rejit exited $?: $(tail -3 "$T/clean.err")"; exit 1; }
calls=$(wc -l <"$T/clean.flog")
[ "$calls" -ge 20 ] || { err "clean run made only $calls store calls"; exit 1; }
points=$(python3 -c "import random, sys
r = random.Random(int(sys.argv[1])); print(' '.join(str(r.randint(1, int(sys.argv[2]))) for _ in range(int(sys.argv[3]))))" \
	"$SEED" "$calls" "$KILLS")
# call 1 always: the lifecycle log's creation (a kill there once left a
# torn header that read as a damaged log)
case " $points " in *" 1 "*) ;; *) points="1 $points" ;; esac
echo "clean run: $calls store calls; seed $SEED kills at: $points"

# A run's call count varies with its timing (generations, profile
# windows): a run that ends before its call k was not killed through no
# fault of the store. Such a run is retried at a call it did make (drawn
# from the seed), up to 3 times; a run that made k calls and was not
# killed is a failure at once.
for k in $points; do
	try=0
	while :; do
		n=k$k
		rm -rf "$T/$n" "$T/$n.flog"
		rejit $n FAULT_NTH=$k FAULT_KILL=1 FAULT_LOG_ALL=1; rc=$?
		made=$(wc -l <"$T/$n.flog" 2>/dev/null || echo 0)
		[ $rc -ne 137 ] && [ "$made" -lt "$k" ] && [ "$made" -gt 0 ] && [ $try -lt 3 ] || break
		try=$((try + 1))
		k2=$(python3 -c "import random, sys
print(random.Random(int(sys.argv[1]) * 1009 + int(sys.argv[2])).randint(1, int(sys.argv[3])))" \
			"$SEED" "$k" "$made")
		echo "run for call $k ended after $made calls (exit $rc): retried at call $k2"
		k=$k2
	done
	at=$(sed -n "${k}s|$T/$n/||p" "$T/$n.flog" 2>/dev/null)
	[ $rc -eq 137 ] || { err "kill at call $k: rejit exited $rc after $made calls, not killed"; continue; }
	"$P" -j receipts verify --store "$T/$n" >"$T/$n.v" 2>&1; vrc=$?
	echo "killed at call $k ($at): verify exit $vrc: $(head -c 300 "$T/$n.v")"
	case $vrc in
	0) py "$T/$n.v" "assert d['ok'] and not d['problems'], d" ||
		err "kill at $k ($at): verify exit 0 but not clean" ;;
	1) py "$T/$n.v" "assert not d['ok'] and d['problems'], d
for p in d['problems']: assert p.get('where') and p.get('what'), p" ||
		err "kill at $k ($at): verify exit 1 without naming what is missing" ;;
	*) err "kill at $k ($at): verify exited $vrc: $(cat "$T/$n.v")" ;;
	esac
	"$P" -j receipts log --store "$T/$n" >/dev/null 2>"$T/$n.le" ||
		err "kill at $k ($at): receipts log failed: $(cat "$T/$n.le")"
	"$P" -j receipts gc --min-age 0 --store "$T/$n" >"$T/$n.gc" 2>&1 ||
		err "kill at $k ($at): receipts gc exited $?: $(cat "$T/$n.gc")"
	"$P" -j receipts verify --store "$T/$n" >"$T/$n.v2" 2>&1
	py "$T/$n.v2" "assert not any('interrupted' in x['what'] for x in d['notes']), d['notes']" ||
		err "kill at $k ($at): gc left interrupted writes"
done
ip netns list | grep -q "^pbrejit" && ip netns list | grep "^pbrejit" | while read -r ns _; do
	[ -d "/proc/${ns#pbrejit}" ] || err "namespace $ns left behind"
done
exit $fail
