#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# forensics_smoke.sh: bench/forensics.sh (issue 16) in quick mode on two
# scenarios, evidence_loss and foreign, through all five baseline columns
# (root, BPF; ~50 s). Checks that the JSON has every field for every
# baseline and scenario; that probity has 0 wrong-confident attributions
# and keeps every evidence-lost sample `unknown` with a reason from
# `probity attribute` itself; and that the scenarios discriminate: the
# foreign loader's identical copies of generation 0 put samples in foreign
# code that perf-style name attribution gives to generation 0 (so a scorer
# that graded everything right would fail here).
set -u
. tests/cli/lib.sh
need_root
command -v bpftool >/dev/null || { [ "${CI:-}" = true ] && { echo "FAIL: bpftool required"; exit 1; }; echo "skip: no bpftool"; exit 77; }
ip netns list >/dev/null 2>&1 || { echo "skip: no 'ip netns'"; exit 77; }
W=$(mktemp -d /tmp/pbfxsmoke.XXXXXX)
trap 'rm -rf "$W"' EXIT
FX_QUICK=1 FX_SCENARIOS="evidence_loss foreign" FX_OUT="$W/f.json" \
	sh bench/forensics.sh "$PROBITY_BUILD" >"$W/out" 2>"$W/err"
rc=$?
[ $rc -eq 0 ] || { cat "$W/err"; err "bench/forensics.sh exited $rc"; exit 1; }
cat "$W/out"
py "$W/f.json" "
need = ['samples_scored', 'correct', 'wrong_confident', 'unknown', 'precision', 'recall',
        'foreign_samples_misattributed', 'evidence_lost_samples', 'evidence_lost_kept_unknown',
        'evidence_lost_kept_unknown_fraction', 'evidence_lost_wrong_confident', 'hot_generation',
        'root_cause_generation_found', 'responsible_decision_named', 'chain_rebuilt', 'commands',
        'bytes_read', 'bytes_kept_per_generation', 'collector_cpu_s']
base = ['bpftool_analysis', 'bpftool_polled', 'perf_ksymbol', 'optimizer_log', 'probity']
assert d['machine']['kernel'] and d['quick'], d.get('machine')
sc = {s['scenario']: s for s in d['scenarios']}
assert sorted(sc) == ['evidence_loss', 'foreign'], sorted(sc)
for name, s in sc.items():
    assert sorted(s['baselines']) == sorted(base), (name, sorted(s['baselines']))
    for b in base:
        miss = [k for k in need if k not in s['baselines'][b]]
        assert not miss, (name, b, miss)
    g, p = s['ground_truth'], s['baselines']['probity']
    assert g['samples_in_rejit_code'] >= 50, (name, g)
    assert p['wrong_confident'] == 0, (name, p)
    assert p['recall'] >= 0.9, (name, p)
    print(name, {b: (r['correct'], r['wrong_confident'], r['unknown']) for b, r in s['baselines'].items()})
l, p = sc['evidence_loss']['ground_truth'], sc['evidence_loss']['baselines']['probity']
assert l['injected_loss_records'] > 0 and l['samples_in_evidence_lost_generations'] > 0, l
assert p['evidence_lost_kept_unknown'] == p['evidence_lost_samples'] == l['samples_in_evidence_lost_generations'], p
assert set(p['evidence_lost_reasons']) == {'records lost'}, p['evidence_lost_reasons']
f = sc['foreign']
assert f['ground_truth']['samples_in_foreign_code'] > 0, f['ground_truth']
assert f['baselines']['probity']['foreign_samples_misattributed'] == 0, f['baselines']['probity']
assert f['baselines']['perf_ksymbol']['foreign_samples_misattributed'] > 0, f['baselines']['perf_ksymbol']
" || err "forensics JSON (see above)"
exit $fail
