#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# rejit.sh: `probity rejit` on real BPF (root). Run 1 follows a scripted
# afternoon (config change, traffic shift, config change) and must give
# >= 5 generations with deoptimizations; the store must verify; the
# lifecycle log must match the -j summary entry for entry; every
# specialized receipt must name its transforms and assumptions with
# evidence artifacts that exist and say what they claim; the generic and
# specialized programs must give the same verdicts (the verifier-backed
# unit tests replay that independently with BPF_PROG_TEST_RUN). Run 2
# stops at SIGINT, with a dropped handoff (--inject-drop-handoff) and a
# planted slow transform (--plant-spike): clean stop, the dropped handoff
# leaves no record (but `probity watch`, running alongside, saw its load
# and link update), the slow generation is named and measurably slow.
set -u
. tests/cli/lib.sh
T="$PROBITY_BUILD/tests/test_rejit"
need_root
ip netns list >/dev/null 2>&1 || { echo "no 'ip netns'"; exit 77; }
W=$(mktemp -d /tmp/pbrejit.XXXXXX)
RPID=""
WPID=""
cleanup() {
	[ -n "$RPID" ] && kill -INT "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	[ -n "$WPID" ] && kill -INT "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# ---- run 1: the scripted afternoon ----
cat >"$W/afternoon" <<'EOS'
# a config change, a traffic shift (guards fail), another config change
t=2.5 config feature_acl=0
t=4.5 traffic shift
t=6.5 traffic normal
t=6.5 config feature_stats=0
EOS
S="$W/store"
"$P" -j rejit --store "$S" --duration 9.2 --traffic 3000 --profile-interval 0.9 \
	--guard-threshold 150 --script "$W/afternoon" >"$W/sum.json" 2>"$W/err" ||
	{ cat "$W/err"; err "rejit exited $?"; exit 1; }
grep -q "probity rejit: t=.* epoch 1:" "$W/err" || err "no progress lines on stderr"
json "$W/sum.json" "
g = d['generations']
assert len(g) >= 5, [x['ordinal'] for x in g]
assert g[0]['kind'] == 'generic' and all(x['kind'] == 'specialized' for x in g[1:])
assert all(x['logged'] and x['generation_id'] and x['prog_id'] for x in g)
assert d['deopts'] >= 2, d['deopts']
r = [y for x in g for y in x['retired']]
assert any(y.startswith('deopt: config changed: feature_acl 1 -> 0') for y in r), r
assert any(y.startswith('deopt: guard failures ') for y in r), r
assert all(x['unloaded'] for x in g)
assert d['rejected_candidates'] == 0
assert d['guards']['fallback_failed'] == 0 and d['guards']['failures']['udp'] > 150, d['guards']
assert d['traffic']['sent'] > 10000, d['traffic']
for x in g[1:]:
    e = x['equivalence']
    assert e['mismatches'] == 0 and e['packets'] >= len(e['verdicts']) >= 8, e
    assert all(v['same_frame_out'] for v in e['verdicts']), e
    assert {v['packet'] for v in e['verdicts']} >= {'vip', 'blocked', 'tcp', 'udp-other', 'arp'}
    assert 'const-inline/cfg' in x['transforms'] and 'verdicts/test-run' in x['assumptions'], x
assert any('branch-spec/udp' in x['transforms'] for x in g), 'udp never specialized'
# after the shift the udp branch is no longer biased: not specialized
sh = [x for x in g[1:] if x['loaded_t_ms'] > 4500 and x['loaded_t_ms'] < 6500]
assert sh and all('branch-spec/udp' not in x['transforms'] for x in sh), sh
# once feature_acl=0, its branch is gone
assert all('branch-spec/acl' not in x['transforms'] for x in g[1:] if x['loaded_t_ms'] > 2500)
" || err "summary"
NS=$(sed -n 's/.*in netns \(pbrejit[0-9]*\).*/\1/p' "$W/err" | head -1)
[ -n "$NS" ] || err "no netns named in progress"
ip netns list | grep -qw "$NS" && err "netns $NS left behind"
"$P" receipts verify --store "$S" >"$W/v.out" || { cat "$W/v.out"; err "receipts verify"; }

# the log against the summary, generation by generation
"$P" -j receipts log --store "$S" >"$W/log.json" || err "receipts log"
python3 - "$W/sum.json" "$W/log.json" <<'EOPY' || err "log and summary disagree"
import json, sys
s = json.load(open(sys.argv[1])); l = json.load(open(sys.argv[2]))
assert l['log_intact']
E = l['entries']
for g in s['generations']:
    gid = g['generation_id']
    mine = [e for e in E if e.get('generation_id') == gid]
    kinds = [e['kind'] for e in mine]
    assert kinds.count('loaded') == 1, (g['ordinal'], kinds)
    assert kinds.count('activated') == g['activations'], (g['ordinal'], kinds, g['activations'])
    assert [e['reason'] for e in mine if e['kind'] == 'retired'] == g['retired'], (g['ordinal'], mine)
    assert kinds.count('unloaded') == 1 and kinds[-1] == 'unloaded', (g['ordinal'], kinds)
    assert all(e['prog_id'] == g['prog_id'] for e in mine)
    ld = [e for e in mine if e['kind'] == 'loaded'][0]
    assert ld['receipt'] == g['receipt'] and ld['jit_ranges'], ld
    for a in (e for e in mine if e['kind'] == 'activated'):
        assert a['link']['type'] == 6 and a['link']['ifindex'] == s['ifindex'], a
        assert a['swap_begin_mono_ns'] <= a['swap_end_mono_ns']
# every swap of the summary is one 'activated' entry, in order
act = [(e['generation_id'], e['replaces']) for e in E if e['kind'] == 'activated']
ids = {g['ordinal']: g['generation_id'] for g in s['generations']}
want = [(ids[w['to']], ids[w['from']] if w['from'] >= 0 else None) for w in s['swaps']]
assert act == want, (act, want)
# one interval at a time: every activation (but the first) retires the one before
seq = [e['kind'] for e in E if e['kind'] in ('activated', 'retired')]
assert seq.count('retired') == seq.count('activated'), seq
EOPY

# receipts: transforms and assumptions with evidence that exists and says so
for G in $(json "$W/sum.json" "print(' '.join(x['generation_id'] for x in d['generations'][1:]))"); do
	"$P" -j receipts show --store "$S" "$G" >"$W/show.json" || err "show $G"
	python3 - "$W/show.json" "$S" <<'EOPY' || err "receipt of $G"
import json, sys, os
d = json.load(open(sys.argv[1])); store = sys.argv[2]
p = d['statement']['predicate']; body = p['generation']
def obj(h):
    return json.load(open(os.path.join(store, 'objects', h[:2], h[2:])))
t = {x['id']: x for x in body['transforms']}; a = {x['id']: x for x in body['assumptions']}
assert p['transform_ids'] == [x['id'] for x in body['transforms']] and p['assumption_ids'] == [x['id'] for x in body['assumptions']]
assert body['optimizer']['name'] == 'probity-rejit' and body['provenance'] == 'recorded'
assert p['submitted_insns_digest'] and body['specialized_insns_source'] == 'submitted'
assert all(x['evidence'] for x in body['transforms'] + body['assumptions']), 'missing evidence'
ci = obj(t['const-inline/cfg']['evidence'])
assert ci['transform'] == 'const-inline/cfg' and len(ci['loads']) >= 4, ci
cfg = [k for k in a if k.startswith('config/epoch-')]
assert len(cfg) == 1 and obj(a[cfg[0]]['evidence'])['config'] == ci['config']
for k in t:
    if k.startswith('branch-spec/'):
        site = k.split('/')[1]
        ev = obj(t[k]['evidence'])
        assert ev['site'] == site and ev['bias_permille'] >= 950, ev
        prof = [x for x in a if x.startswith('profile/epoch-%d/%s' % (ev['profile_epoch'], site))]
        assert prof, (k, list(a))
        pr = obj(a[prof[0]]['evidence'])
        assert pr['epoch'] == ev['profile_epoch'] and pr['schema'] == 'probity.rejit.profile/v1'
        s_ = pr['sites'][site]
        assert (s_['taken'], s_['not_taken']) == (ev['taken'], ev['not_taken']), (s_, ev)
v = obj(a['verdicts/test-run']['evidence'])
assert v['mismatches'] == 0 and v['method'] == 'BPF_PROG_TEST_RUN'
assert d['lineage'][0]['generation_id'] != d['generation_id'] and len(d['lineage']) == 2
assert d['intervals'] and all(i['source'] == 'swapper' for i in d['intervals'])
EOPY
done

# the same verdicts, replayed independently on both programs
for t in test_specialized_same_verdicts test_specialized_acl_disabled_same_verdicts; do
	"$T" $t >"$W/t.out" 2>&1 || { cat "$W/t.out"; err "verdict replay $t (BPF_PROG_TEST_RUN)"; }
	grep -q "1 passed, 0 failed, 0 skipped" "$W/t.out" || { cat "$W/t.out"; err "$t did not run"; }
done

# ---- run 2: SIGINT, a dropped handoff, a planted slow generation ----
S2="$W/store2"
printf 't=2 config feature_stats=0\n' >"$W/s2"
# the independent observer alongside: it must see the handoff the
# specializer did not record
"$P" -j watch --store "$W/watch" -d 40 >"$W/watch.out" 2>"$W/watch.err" &
WPID=$!
i=0
while ! grep -q observing "$W/watch.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
grep -q observing "$W/watch.err" || { cat "$W/watch.err"; err "watch did not become ready"; }
"$P" -j rejit --store "$S2" --traffic 3000 --profile-interval 0.8 --script "$W/s2" \
	--inject-drop-handoff 1 --plant-spike 2 --spike-rounds 4000 >"$W/sum2.json" 2>"$W/err2" &
RPID=$!
i=0
while ! grep -q "hash-unroll" "$W/err2" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
NS=$(sed -n 's/.*in netns \(pbrejit[0-9]*\).*/\1/p' "$W/err2" | head -1)
kill -INT "$RPID"; wait "$RPID"; rc=$?; RPID=""
[ $rc -eq 0 ] || { cat "$W/err2"; err "rejit after SIGINT exited $rc"; }
[ -n "$NS" ] || err "no netns named in progress"
ip netns list | grep -qw "$NS" && err "netns $NS left behind"
"$P" receipts verify --store "$S2" >/dev/null || err "verify after SIGINT"
"$P" -j receipts log --store "$S2" >"$W/log2.json"
python3 - "$W/sum2.json" "$W/log2.json" <<'EOPY' || { cat "$W/err2"; err "run 2"; }
import json, sys
s = json.load(open(sys.argv[1])); E = json.load(open(sys.argv[2]))['entries']
g = s['generations']
assert len(g) >= 3, g
d = g[1]
assert not d['logged'] and d['generation_id'] is None and d['prog_id'], d
assert not [e for e in E if e.get('prog_id') == d['prog_id']], 'dropped handoff was logged'
sp = [x for x in g if x['planted_spike']]
assert len(sp) == 1 and sp[0]['logged'], sp
sp = sp[0]
assert any(t.startswith('hash-unroll/') for t in sp['transforms']), sp
assert any(a.endswith('/hash-cost') for a in sp['assumptions']), sp
# measurably slow: per-run time well above the generic generation's
g0 = g[0]
assert sp['run_cnt'] > 0 and g0['run_cnt'] > 0
assert sp['run_time_ns'] / sp['run_cnt'] > 5 * g0['run_time_ns'] / g0['run_cnt'], (sp, g0)
# clean stop: the active one retired 'stopped', everything unloaded
assert [x for x in g if 'stopped' in x['retired']], g
logged = [x for x in g if x['logged']]
for x in logged:
    assert [e for e in E if e['kind'] == 'unloaded' and e['generation_id'] == x['generation_id']], x
# group commit: the log ends with the final watermark, right after the unloads
assert E[-1]['kind'] == 'durable' and E[-1]['state'] == 'final', E[-1]
assert [e for e in E if e['kind'] != 'durable'][-1]['kind'] == 'unloaded'
assert E[0]['kind'] == 'durable' and E[0]['state'] == 'open', E[0]
EOPY

kill -INT "$WPID"; wait "$WPID"; rc=$?; WPID=""
[ $rc -eq 0 ] || { cat "$W/watch.err"; err "watch exited $rc"; }
"$P" -j receipts log --store "$W/watch" >"$W/wlog.json" || err "observer log"
python3 - "$W/sum2.json" "$W/wlog.json" <<'EOPY' || err "observer vs dropped handoff"
import json, sys
s = json.load(open(sys.argv[1])); E = json.load(open(sys.argv[2]))['entries']
d = s['generations'][1]
ups = [e for e in E if e['kind'] == 'link-updated' and e['new_prog_id'] == d['prog_id']]
assert ups and ups[0]['op'] == 'update', ('observer missed the unlogged swap', d['prog_id'])
ld = [e for e in E if e['kind'] == 'loaded' and e['prog_id'] == d['prog_id']]
assert ld, 'observer missed the unlogged load'
EOPY

# usage errors
"$P" rejit --store "$W/s3" --config nope=1 >/dev/null 2>"$W/u.err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown configuration key 'nope'" "$W/u.err" || err "bad --config: exit $rc"
printf 't=1 config feature_acl=0\nt=x traffic shift\n' >"$W/bad"
"$P" rejit --store "$W/s3" --script "$W/bad" >/dev/null 2>"$W/u.err"; rc=$?
[ $rc -eq 2 ] && grep -q "$W/bad:2: expected t=SECONDS" "$W/u.err" || { cat "$W/u.err"; err "bad script: exit $rc"; }
"$P" rejit --store "$W/s3" --netns x --create-netns >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--netns with --create-netns: exit $rc"
"$P" rejit --store "$W/s3" --bias-threshold 2 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--bias-threshold 2: exit $rc"
[ -e "$W/s3" ] && err "a usage error created the store"
exit $fail
