#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""score.py DIR SCENARIO: one scenario of bench/forensics.sh scored for
every baseline; prints one JSON object.

Ground truth (the oracle) is the kernel's COMPLETE ksymbol + bpf_event
record stream of the sampling session (DIR/s.pbs, decoded here, not by
probity), with the specializer's own summary (DIR/rejit.json: prog id of
each generation) and the foreign loader's list (DIR/foreign.json): a
sample whose ip lies in prog P's JIT range between P's registration and
unregistration ran P's code (JIT memory is exclusive while allocated).
The baselines see a degraded view where the scenario injects a loss
(DIR/s_scored.pbs) and never the prog ids the oracle pairs by.

Baselines (each answers, per sample in BPF JIT code, a program or
nothing):
  bpftool_analysis  `bpftool prog show` + /proc/kallsyms once, after the run
  bpftool_polled    the same every N ms during the run (poll.py)
  perf_ksymbol      ksymbol records replayed in time order, ip -> symbol
                    `bpf_prog_<tag>_<name>` as perf report does, name ->
                    generation (lb_xdp = 0, lb_xdp_gN = N)
  optimizer_log     the optimizer's log of the generations it logged, with a
                    full snapshot of each (tag, bytes, transforms), matched
                    by the perf symbol's tag and name; no interval table
  probity           `probity attribute` (its -j --list output)
"""
import bisect, collections, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsample  # noqa: E402

D, NAME = sys.argv[1], sys.argv[2]
BASELINES = ['bpftool_analysis', 'bpftool_polled', 'perf_ksymbol', 'optimizer_log', 'probity']


def load(name, default=None):
    p = os.path.join(D, name)
    if not os.path.exists(p):
        return default
    with open(p) as f:
        return json.load(f)


def fsize(p):
    p = os.path.join(D, p)
    if os.path.isdir(p):
        return sum(os.path.getsize(os.path.join(a, f)) for a, _, fs in os.walk(p) for f in fs)
    return os.path.getsize(p) if os.path.exists(p) else 0


meta = load('meta.json', {})
rj = load('rejit.json')
foreign = load('foreign.json', {'prog_ids': []})
gens = {g['ordinal']: g for g in rj['generations']}
gen_of_prog = {g['prog_id']: g for g in rj['generations']}
prog_of_gid = {g['generation_id']: g['prog_id'] for g in rj['generations'] if g['generation_id']}
planted = [g['prog_id'] for g in rj['generations'] if g['planted_spike']]
dropped = set(g['prog_id'] for g in rj['generations'] if not g['logged'])
foreign_ids = set(foreign['prog_ids'])

def addr_of(a):
    return int(a, 16) if isinstance(a, str) else a


# ---- the oracle: complete kernel records ------------------------------------
hdr, snap, recs, end = pbsample.read(os.path.join(D, 's.pbs'))
assert end and end['stats']['lost'] == 0, 'the oracle session lost records: raise --pages'
ranges = []          # [addr, len, t_reg, t_unreg, prog_id, tag, name]
pending, by_addr_open = {}, {}
for p in (snap or {}).get('progs', []):
    for r in p.get('jit_ranges', []):
        ranges.append([addr_of(r['addr']), r['len'], 0, None, p['id'], p['tag'], p['name']])
tag_of = {}
for r in recs:
    if r[0] == 'K' and r[5] == 1:
        pending.setdefault(r[2], []).append(r)
    elif r[0] == 'E':
        ks, pending[r[2]] = pending.get(r[2], []), []
        tag_of[r[4]] = r[5]
        if r[3] == 1:
            for k in ks:
                if not k[6] & 1:
                    ranges.append([k[3], k[4], k[1], None, r[4], r[5], k[8]])
        elif r[3] == 2:
            for k in ks:
                for iv in ranges:
                    if k[6] & 1 and iv[0] == k[3] and iv[4] == r[4] and iv[3] is None:
                        iv[3] = k[1]
ranges.sort(key=lambda r: (r[0], r[2]))
starts = [r[0] for r in ranges]
maxlen = max([r[1] for r in ranges] or [0])


def truth(t, ip):
    i = bisect.bisect_right(starts, ip) - 1
    while i >= 0 and ranges[i][0] + maxlen > ip:
        a, ln, t0, t1, pid = ranges[i][:5]
        if a <= ip < a + ln and t0 <= t and (t1 is None or t <= t1):
            return pid
        i -= 1
    return None


samples = [(r[1], r[2], r[3]) for r in recs if r[0] == 'S']
samples.sort()
evald = []           # (t, cpu, ip, truth prog id)
for t, cpu, ip in samples:
    p = truth(t, ip)
    if p is not None and (p in gen_of_prog or p in foreign_ids):
        evald.append((t, cpu, ip, p))

# address reuse: a sample in an image whose address an earlier program held
first_at = {}
for r in sorted(ranges, key=lambda r: r[2]):
    first_at.setdefault(r[0], r[4])
reused = collections.Counter()
for t, cpu, ip, p in evald:
    for r in ranges:
        if r[4] == p and r[0] <= ip < r[0] + r[1]:
            if first_at.get(r[0]) != p:
                reused['samples'] += 1
            break

# in flight: samples in a generation's image after the swap that replaced it
lifelog = load('lifelog.json', {'entries': []})['entries']
replaced_at = {}
for e in lifelog:
    if e.get('kind') == 'activated' and e.get('replaces'):
        pg = prog_of_gid.get(e['replaces'])
        if pg is not None:
            replaced_at.setdefault(pg, []).append((e.get('swap_end_mono_ns', 0), e['swap_begin_mono_ns']))
act_at = {}
for e in lifelog:
    if e.get('kind') == 'activated':
        pg = prog_of_gid.get(e['generation_id'])
        if pg is not None:
            act_at.setdefault(pg, []).append(e['swap_begin_mono_ns'])


def in_flight(t, p):
    """after a swap away from p and before any later activation of p"""
    last_off = max([se for se, _ in replaced_at.get(p, []) if se < t] or [0])
    last_on = max([sb for sb in act_at.get(p, []) if sb < t] or [0])
    return last_off > last_on and last_off > 0


# ---- the scored view (possibly with the injected loss) ----------------------
sv = os.path.join(D, 's_scored.pbs')
_, ssnap, srecs, send = pbsample.read(sv if os.path.exists(sv) else os.path.join(D, 's.pbs'))


def perf_symbols():
    """perf report's view: the ksymbol map replayed in time order; yields
    the symbol name at each evaluated sample."""
    ev = []
    for p in (ssnap or {}).get('progs', []):
        for r in p.get('jit_ranges', []):
            ev.append((0, 0, addr_of(r['addr']), r['len'], 'bpf_prog_%s_%s' % (p['tag'], p['name'])))
    for r in srecs:
        if r[0] == 'K' and r[5] == 1:
            ev.append((r[1], 1 if r[6] & 1 else 0, r[3], r[4], r[8]))
    ev.sort(key=lambda x: x[0])
    live = {}
    out, j = [], 0
    for t, cpu, ip, p in evald:
        while j < len(ev) and ev[j][0] <= t:
            _, unreg, a, ln, nm = ev[j]
            if unreg:
                live.pop(a, None)
            else:
                live[a] = (ln, nm)
            j += 1
        sym = None
        for a, (ln, nm) in live.items():
            if a <= ip < a + ln:
                sym = nm
                break
        out.append(sym)
    return out


def split_sym(sym):
    # bpf_prog_<16 hex tag>_<name>
    if not sym or not sym.startswith('bpf_prog_') or len(sym) < 26:
        return None, None
    return sym[9:25], sym[26:]


def gen_by_name(name):
    if name == 'lb_xdp':
        return gens[0]
    if name and name.startswith('lb_xdp_g') and name[8:].isdigit():
        return gens.get(int(name[8:]))
    return None


def ans_perf(syms):
    out = []
    for s in syms:
        tag, nm = split_sym(s)
        g = gen_by_name(nm)
        out.append(g['prog_id'] if g else ('foreign-symbol' if s else None))
    return out


def ans_optlog(syms):
    log = [g for g in rj['generations'] if g['logged']]
    out = []
    for s in syms:
        tag, nm = split_sym(s)
        c = [g for g in log if g['ordinal'] == (0 if nm == 'lb_xdp' else -1) or
             (nm and nm == 'lb_xdp_g%d' % g['ordinal'])]
        c = [g for g in c if tag_of.get(g['prog_id']) == tag]
        out.append(c[0]['prog_id'] if len(c) == 1 else ('foreign-symbol' if s and not c else None))
    return out


def resolve_poll(poll, ip):
    """one bpftool poll: kallsyms address + prog show (joined by tag and
    name; bytes_jited gives the length). prog id, 'ambiguous' or None."""
    byname = collections.defaultdict(list)
    for p in poll['progs']:
        byname['bpf_prog_%s_%s' % (p['tag'], p['name'])].append(p)
    for a, nm in poll['ksyms']:
        ps = byname.get(nm, [])
        ln = max([p['bytes_jited'] for p in ps] or [0])
        if a <= ip < a + ln:
            return ps[0]['id'] if len(ps) == 1 else 'ambiguous'
    return None


def ans_polled(polls):
    ts = [p['t_show'][0] for p in polls]
    out = []
    for t, cpu, ip, p in evald:
        i = bisect.bisect_right(ts, t) - 1
        a = resolve_poll(polls[i], ip) if i >= 0 else None
        b = resolve_poll(polls[i + 1], ip) if i + 1 < len(polls) else None
        if a == 'ambiguous' or b == 'ambiguous' or (a and b and a != b):
            out.append(None)
        else:
            out.append(a or b)
    return out


def ans_probity(attr):
    by = {}
    for s in attr['samples']:
        by[(s['time_mono_ns'], s['cpu'], int(s['ip'], 16))] = s
    out, reasons = [], []
    for t, cpu, ip, p in evald:
        s = by.get((t, cpu, ip))
        if s is None:
            out.append(None)
            reasons.append('not listed (outside every known JIT range)')
        elif s['status'] == 'generation':
            out.append(prog_of_gid.get(s['generation_id'], -1))
            reasons.append(None)
        else:
            out.append(None)
            reasons.append(s.get('reason') or 'unknown without a reason')
    return out, reasons


polls = []
poll_end = {}
if os.path.exists(os.path.join(D, 'poll.jsonl')):
    for line in open(os.path.join(D, 'poll.jsonl')):
        r = json.loads(line)
        if 'end' in r:
            poll_end = r['end']
        else:
            polls.append(r)
final = load('final_poll.json')
syms = perf_symbols()
answers = {
    'bpftool_analysis': [resolve_poll(final, ip) if final else None for t, c, ip, p in evald],
    'bpftool_polled': ans_polled(polls),
    'perf_ksymbol': ans_perf(syms),
    'optimizer_log': ans_optlog(syms),
}
answers['bpftool_analysis'] = [None if a == 'ambiguous' else a for a in answers['bpftool_analysis']]
answers['probity'], preasons = ans_probity(load('attr.json'))

# ---- metrics -----------------------------------------------------------------
n_gens = len(rj['generations'])
store_b = fsize('A')
art_b = fsize('artifacts_bytes') if False else meta.get('artifact_bytes', 0)
log_b = fsize('rejit.err')
per_cpu = collections.Counter(c for t, c, ip, p in evald if p in gen_of_prog)
cost = {
    'bpftool_analysis': dict(commands=2, bytes_read=meta.get('final_poll_bytes', 0), bytes_kept_per_generation=0,
                             collector_cpu_s=0.0),
    'bpftool_polled': dict(commands=poll_end.get('commands', 0), bytes_read=poll_end.get('bytes_read', 0),
                           bytes_kept_per_generation=round(poll_end.get('bytes_kept', 0) / n_gens),
                           collector_cpu_s=poll_end.get('cpu_s')),
    'perf_ksymbol': dict(commands=1, bytes_read=fsize('s_scored.pbs') or fsize('s.pbs'),
                         bytes_kept_per_generation=0, collector_cpu_s=meta.get('sampler_cpu_s')),
    'optimizer_log': dict(commands=3, bytes_read=(fsize('s_scored.pbs') or fsize('s.pbs')) + log_b + art_b,
                          bytes_kept_per_generation=round((log_b + art_b) / n_gens),
                          collector_cpu_s=meta.get('sampler_cpu_s')),
    'probity': dict(commands=2, bytes_read=(fsize('s_scored.pbs') or fsize('s.pbs')) + store_b,
                    bytes_kept_per_generation=round(store_b / n_gens), collector_cpu_s=meta.get('sampler_cpu_s')),
}
# what each baseline holds about a generation besides attribution
has_rewrite = {'bpftool_analysis': False, 'bpftool_polled': False, 'perf_ksymbol': False,
               'optimizer_log': True, 'probity': True}
show = load('show_hot.json', {})
probity_chain = bool(show.get('statement', {}).get('predicate', {}).get('artifacts', {}).get('jit_image')) and \
    bool(show.get('statement', {}).get('predicate', {}).get('artifacts', {}).get('verifier_log'))
out = {'scenario': NAME, 'description': meta.get('description', ''),
       'ground_truth': {
           'generations': n_gens, 'swaps': len(rj['swaps']), 'deopts': rj['deopts'],
           'duration_s': meta.get('duration_s'),
           'median_generation_life_ms': meta.get('median_life_ms'),
           'samples_total': len(samples), 'samples_in_rejit_code': sum(per_cpu.values()),
           'samples_in_foreign_code': sum(1 for e in evald if e[3] in foreign_ids),
           'samples_per_cpu': {str(k): v for k, v in sorted(per_cpu.items())},
           'samples_at_reused_jit_addresses': reused['samples'],
           'samples_in_flight_after_replacement': sum(1 for t, c, ip, p in evald if p in gen_of_prog and in_flight(t, p)),
           'samples_in_gen0_while_specialized_attached': sum(1 for t, c, ip, p in evald if gen_of_prog.get(p, {}).get('ordinal') == 0 and in_flight(t, p)),
           'samples_in_evidence_lost_generations': sum(1 for e in evald if e[3] in dropped),
           'planted_generation': [gen_of_prog[p]['ordinal'] for p in planted],
           'samples_in_planted': sum(1 for e in evald if e[3] in planted),
           'injected_loss_records': meta.get('dropped_records', 0)},
       'baselines': {}}
for b in BASELINES:
    a = answers[b]
    c = collections.Counter()
    hot = collections.Counter()
    for (t, cpu, ip, p), x in zip(evald, a):
        conf = isinstance(x, int)
        if p in foreign_ids:
            c['foreign'] += 1
            if conf and x != p:
                c['foreign_wrong'] += 1
            continue
        c['rejit'] += 1
        if conf and gen_of_prog.get(x, {}).get('ordinal'):
            hot[x] += 1     # the spike's generation: a specialized one (0 is the generic baseline)
        if p in dropped:
            c['lost'] += 1
            c['lost_unknown'] += not conf
            c['lost_wrong'] += conf and x != p
        if conf and x == p:
            c['correct'] += 1
        elif conf or x == 'foreign-symbol':
            c['wrong'] += 1
        else:
            c['unknown'] += 1
    wrong = c['wrong'] + c['foreign_wrong']
    top = hot.most_common(1)[0][0] if hot else None
    found = bool(planted) and top in planted
    r = {'samples_scored': c['rejit'] + c['foreign'], 'correct': c['correct'],
         'wrong_confident': wrong, 'unknown': c['unknown'],
         'precision': round(c['correct'] / (c['correct'] + wrong), 4) if c['correct'] + wrong else None,
         'recall': round(c['correct'] / c['rejit'], 4) if c['rejit'] else None,
         'foreign_samples_misattributed': c['foreign_wrong'],
         'evidence_lost_samples': c['lost'],
         'evidence_lost_kept_unknown': c['lost_unknown'],
         'evidence_lost_kept_unknown_fraction': round(c['lost_unknown'] / c['lost'], 4) if c['lost'] else None,
         'evidence_lost_wrong_confident': c['lost_wrong'],
         'hot_generation': gen_of_prog[top]['ordinal'] if top in gen_of_prog else None,
         'root_cause_generation_found': found,
         'responsible_decision_named': found and has_rewrite[b],
         'chain_rebuilt': found and has_rewrite[b] and (b != 'probity' or probity_chain)}
    if b == 'bpftool_polled':
        sp = sorted(q['t_show'][0] for q in polls)
        gaps = sorted(y - x for x, y in zip(sp, sp[1:]))
        r['poll_interval_asked_ms'] = poll_end.get('interval_ms')
        r['poll_interval_median_ms'] = round(gaps[len(gaps) // 2] / 1e6) if gaps else None
        seen = set(q['id'] for pl in polls for q in pl['progs'])
        r['generations_seen'] = sum(1 for g in rj['generations'] if g['prog_id'] in seen)
    if b == 'probity':
        rs = collections.Counter(x for (e, x) in zip(evald, preasons) if x and e[3] in dropped)
        r['evidence_lost_reasons'] = dict(rs)
        r['unknown_reasons'] = dict(collections.Counter(x for x in preasons if x))
    r.update(cost[b])
    out['baselines'][b] = r
print(json.dumps(out, indent=1))
