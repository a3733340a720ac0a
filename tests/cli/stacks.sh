#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# stacks.sh: user stacks for real (BPF, root) on the demo's planted pool
# contention: record (default --stacks) writes PB_REC_STACK records and
# the demo's mappings; report --folded names the demo's own functions
# (bufpool_get, client_main) with WAIT time as the value, the -j form
# adds up; --folded=holds with --events ties ACQUIRE stacks to their
# RELEASE; --stacks 1 counts the stacks it did not take; --stacks 0
# records none. Under CI=true a missing capability fails.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
need_root

rec() {	# rec NAME [record options...]: 2 s of pool contention
	name=$1; shift
	"$P" record -m "$DEMO_M" -o "$T/$name.trace" "$@" -- \
		"$DEMO" -q --pathology pool-contention --duration 2 --clients 4 \
		>"$T/$name.out" 2>"$T/$name.err" ||
		{ echo "FAIL: record $*: $(tail -3 "$T/$name.err")"; exit 1; }
}

# default: stacks on
rec def
grep -q '^stacks: [1-9][0-9]* recorded' "$T/def.out" || err "record summary has no stacks line: $(grep stacks "$T/def.out")"
"$P" report "$T/def.trace" --folded >"$T/def.folded" 2>"$T/def.ferr" || err "report --folded failed"
[ -s "$T/def.folded" ] || err "report --folded printed nothing"
grep -Eq '^[^ ].* [0-9]+$' "$T/def.folded" || err "folded lines are not 'frames value'"
grep -Eq '(^|;)bufpool_get;\[wait:page_wait_free\] [0-9]+$' "$T/def.folded" ||
	err "no bufpool_get -> [wait:page_wait_free] stack (the planted contention): $(head -3 "$T/def.folded")"
grep -q 'client_main' "$T/def.folded" || err "the demo's client_main is in no stack"
grep -q '^stacks: [1-9][0-9]* folded' "$T/def.ferr" || err "no folding summary on stderr"
"$P" -j report "$T/def.trace" --folded >"$T/def.json" || err "report -j --folded failed"
py "$T/def.json" "
tot = sum(f['value_ns'] for f in d['folded'])
assert d['folded'] and tot == d['total_ns'], 'values do not add up to total_ns'
assert d['stacks'] == sum(f['count'] for f in d['folded']), 'counts do not add up'
assert d['frames_unknown'] + d['frames_module'] < d['frames'], 'no frame was named'
print('ok   %d stacks, %d distinct, %.1f ms of WAIT' % (d['stacks'], len(d['folded']), tot / 1e6))
" || fail=1
"$P" -j report "$T/def.trace" >"$T/def.r.json" || err "report -j failed"
py "$T/def.r.json" "
s = d['counts']['stacks']
assert s['recorded'] > 0, 'report counts no stacks: %s' % s
" || fail=1
"$P" -j script "$T/def.trace" 2>/dev/null | grep -q '"type": *"stack"' ||
	"$P" script "$T/def.trace" 2>/dev/null | grep -q 'stack' || err "script shows no stack record"

# holds need the RELEASE records: --events
rec hold --events --stacks 200
"$P" report "$T/hold.trace" --folded=holds >"$T/hold.folded" 2>/dev/null || err "--folded=holds failed"
grep -q '\[hold:' "$T/hold.folded" || err "--folded=holds has no [hold:EVENT] leaf"
# --long-hold keeps only the long holds: none lasts an hour
"$P" -j report "$T/hold.trace" --folded=holds --long-hold 3600000 >"$T/hold.json" ||
	err "--folded=holds --long-hold failed"
py "$T/hold.json" "assert d['folded'] == [] and d['holds_short'] > 0, 'holds not filtered: %s' % {k: v for k, v in d.items() if k != 'folded'}" || fail=1
"$P" report "$T/hold.trace" --folded=bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--folded=bogus exited $rc, not 2"

# a tiny rate limit: the stacks not taken are counted, none lost silently
rec tiny --stacks 1
"$P" -j report "$T/tiny.trace" >"$T/tiny.json" || err "report -j (tiny) failed"
py "$T/tiny.json" "
s = d['counts']['stacks']
assert s['rate_limited'] > 0, 'no stack counted over the rate limit: %s' % s
assert 1 <= s['recorded'] <= 8, 'rate limit 1/s not kept: %s' % s
print('ok   --stacks 1: %d recorded, %d over the rate limit' % (s['recorded'], s['rate_limited']))
" || fail=1
grep -q 'over the rate limit' "$T/tiny.out" || "$P" report "$T/tiny.trace" | grep -q 'over the rate limit' ||
	err "report does not show the stacks over the rate limit"

# off
rec off --stacks 0
"$P" -j report "$T/off.trace" --folded >"$T/off.json" || err "report --folded (off) failed"
py "$T/off.json" "assert d['stacks'] == 0 and d['folded'] == [], 'stacks recorded with --stacks 0'" || fail=1
[ $fail -eq 0 ] && echo "ok   cli.stacks"
exit $fail
