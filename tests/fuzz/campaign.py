#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""campaign.py: the long fuzz campaigns and their coverage numbers.

  campaign.py coverage   (make fuzz-coverage)
      Builds every tests/fuzz/fuzz_*.c target with clang source-based
      coverage (-fprofile-instr-generate -fcoverage-mapping, no sanitizer),
      runs it over its corpus (tests/fuzz/corpus/NAME, plus the campaign
      corpus build/fuzz/corpus-NAME when present), and writes per target
      the line/branch coverage of the files the target exists for, and of
      the reader's chunk decoders for the framed formats, into
      bench/results/fuzz.json ("coverage"), with an HTML report under
      BUILD/fuzz-cov/html/NAME/index.html.

  campaign.py long [NAME...]   (make fuzz-long; not in CI)
      Runs each target (ASan+UBSan, built as BUILD/fuzz-long/NAME from one
      set of library objects) one at a time
      under nice -n 19 until FUZZ_LONG_RUNS executions (default 10 M) or
      FUZZ_LONG_SECONDS (default 3600) per target, whichever comes first,
      into the campaign corpus BUILD/fuzz/corpus-NAME; then merges what
      adds coverage into tests/fuzz/corpus/NAME (-merge=1: minimized, only
      inputs with new features). Crashes land in tests/fuzz/ as
      crash-*/leak-*/timeout-* (libFuzzer's artifact prefix): commit each
      as a seed and fix it. The numbers (executions, seconds, crashes,
      corpus growth) go into bench/results/fuzz.json ("campaigns").
      Each target runs with -max_len from MAX_LEN (the format's realistic
      input sizes); FUZZ_LONG_PREBUILT=1 runs the Makefile's binaries
      (BUILD/fuzz/NAME, the same ASan+UBSan flags) instead of building.
      FUZZ_LONG_TOPUP=1 runs each target only for the executions it
      still lacks to 10 M summed over its runs (executions_total).

  campaign.py rates [NAME...]   (make fuzz-rates; not in CI)
      Executions per second of each target, wall and CPU: BUILD/fuzz/NAME
      (and FUZZ_RATES_BEFORE/NAME when set, interleaved, for a before/after
      comparison) for FUZZ_RATES_SECONDS (default 20) each from a copy of
      its corpus, fixed seed, nice -n 19, as fuzz-long runs it. Executions
      per CPU second estimate one idle core on a loaded machine; they go
      into bench/results/fuzz.json ("rates") with hours to 10 M.
      FUZZ_RATES_STEADY=K instead measures the marginal CPU of K
      executions past the corpus load (FUZZ_RATES_ROUNDS rounds, median;
      "rates"."steady_3", or FUZZ_RATES_KEY): start-up and corpus load
      left out.

Environment (set by mk/fuzz.mk): CLANG, COV_CFLAGS, ASAN_CFLAGS, LIB_SRCS, REJIT_SRCS,
LDLIBS, BUILD, LLVM_PROFDATA, LLVM_COV.
"""
import glob, json, os, platform, re, resource, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, 'bench', 'results', 'fuzz.json')

# target -> (files it exists for, reader functions {file: [functions]}).
# The chunk decoders (DECODERS) are the functions that decode a chunk's
# payload once framing has passed it: the bar of issue 19 (>= 80 % of their
# lines). The openers and framing's reader are reported beside them.
FRAMING_READER = ['frame_reader__open', 'frame_reader__next']
DECODERS = {'reader_start', 'read_snapshot', 'trace_reader__next',
            'decode_record', 'parse_records', 'json_chunk',
            'check_entry', 'read_log'}
TARGETS = {
    'fuzz_trace': (['src/trace/trace.c', 'src/common/framing.c'],
                   {'src/trace/trace.c': ['reader_start', 'trace_reader__open', 'read_snapshot',
                                          'trace_reader__next'],
                    'src/common/framing.c': FRAMING_READER}),
    'fuzz_samples': (['src/attribute/samples.c', 'src/common/framing.c', 'src/attribute/itable.c',
                      'src/attribute/itable_build.c', 'src/attribute/itable_load.c',
                      'src/attribute/itable_links.c'],
                     {'src/attribute/samples.c': ['decode_record', 'parse_records', 'open_samples',
                                                  'json_chunk', 'samples__read'],
                      'src/common/framing.c': FRAMING_READER}),
    'fuzz_lifelog': (['src/receipts/lifelog.c', 'src/common/framing.c'],
                     {'src/receipts/lifelog.c': ['open_log', 'check_entry', 'read_log',
                                                 'lifelog__read'],
                      'src/common/framing.c': FRAMING_READER}),
    'fuzz_manifest': (['src/contract/manifest.c', 'src/contract/manifest_parse.c',
                       'src/contract/manifest_fields.c', 'src/contract/manifest_check.c',
                       'src/contract/yaml_tree.c', 'src/contract/value.c'], {}),
    'fuzz_elf': (['src/elf/elf_image.c', 'src/elf/insn.c', 'src/elf/usdt.c', 'src/elf/symbols.c'], {}),
    'fuzz_envelope': (['src/validate/envelope.c', 'src/validate/envelope_json.c',
                       'src/validate/envelope_check.c'], {}),
    'fuzz_perfscript': (['src/attribute/perfscript.c'], {}),
    'fuzz_receipt': (['src/receipts/canon.c', 'src/receipts/normalize.c',
                      'src/receipts/generation.c'], {}),
    'fuzz_records': (['src/analyze/analyze.c', 'src/analyze/diagnose.c',
                      'src/analyze/diagnose_joins.c', 'src/analyze/diagnose_findings.c'], {}),
    'fuzz_rejit_script': (['src/specializer/script.c'], {}),
    'fuzz_store': (['src/receipts/verify.c', 'src/receipts/store.c'], {}),
    'fuzz_timespec': (['src/attribute/timespec.c'], {}),
    'fuzz_rebind_edit': (['src/contract/rebind_edit.c'], {}),
    'fuzz_probes': (['src/elf/probes.c', 'src/elf/dwarf.c', 'src/contract/manifest_init.c'], {}),
    'fuzz_signing': (['src/receipts/dsse.c', 'src/metrics/metrics_http.c'], {}),
}


# -max_len per target (libFuzzer's default is the largest seed, up to
# 38-93 KB here): bytes enough for the structures each format has in real
# use, from the seed corpora's sizes (p90 / max in tests/fuzz/corpus).
# Framed files need several chunks of every type; record streams a few
# hundred records; the text formats a screenful.
MAX_LEN = {
    'fuzz_trace': 65536,        # p90 38 KB: every chunk type + records
    'fuzz_samples': 8192,       # p90 3 KB, max 4 KB
    'fuzz_lifelog': 8192,       # p90 2.7 KB, max 4 KB (~30 entries)
    'fuzz_records': 16384,      # p90 11.7 KB: a few hundred records
    'fuzz_elf': 16384,          # seeds are small ELF files up to 15 KB
    'fuzz_probes': 20480,       # max seed 20 KB
    'fuzz_manifest': 4096,      # p90 2 KB (8192 let inputs grow: 1199 -> 862 execs/CPU s)
    'fuzz_rebind_edit': 4096,   # manifests, as fuzz_manifest
    'fuzz_envelope': 16384,     # max seed 12.6 KB
    'fuzz_store': 4096,         # max seed 1 KB (receipt + artifacts)
    'fuzz_receipt': 4096,       # max seed 1.2 KB
    'fuzz_perfscript': 4096,    # perf script lines, max seed 1.1 KB
    'fuzz_rejit_script': 4096,  # max seed 1.2 KB
    'fuzz_signing': 4096,
    'fuzz_timespec': 256,       # a time spec, max seed 131 B
}


# ASan's quarantine (freed memory held back to catch use-after-free) is
# 256 MB by default: every execution then allocates from memory not touched
# for hundreds of executions (page faults, cold caches, the allocator
# refilling), which was 40-97 % of the steady CPU time of the
# allocation-heavy targets (fuzz_elf 3000 executions: 2.17 -> 0.09 CPU s
# with 8 MB). One execution allocates far less than 16 MB, so a
# use-after-free within an input is still caught (each input is
# independent); alloc/free stacks stay full. FUZZ_ASAN_OPTIONS overrides.
FUZZ_ASAN_OPTIONS = 'quarantine_size_mb=16'


# libFuzzer's -timeout is wall-clock time (SIGALRM): a campaign at nice 19 on
# a 2-core VM with load 10-20 gets ~1-2 % of a core at times, so 10 s cut
# inputs that rerun in 0.1-0.5 s (fuzz_rejit_script, 2026-12-02: 13 s in
# ASan's allocator, 0.49 s on rerun). 60 s still stops a real hang.
LONG_TIMEOUT = 60


def fuzz_env():
    """The environment the fuzz binaries run in (FUZZ_ASAN_OPTIONS)."""
    return dict(os.environ, ASAN_OPTIONS=os.environ.get('FUZZ_ASAN_OPTIONS', FUZZ_ASAN_OPTIONS))


def env(k, d=None):
    v = os.environ.get(k, d)
    if v is None:
        sys.exit(f'campaign.py: {k} is not set (run through make fuzz-coverage / fuzz-long)')
    return v


def targets(names):
    have = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(ROOT, 'tests/fuzz/fuzz_*.c')))
    for n in names:
        if n not in have:
            sys.exit(f'campaign.py: no target {n} (have: {" ".join(have)})')
    return names or have


def run(cmd, **kw):
    r = subprocess.run(cmd, cwd=ROOT, **kw)
    if r.returncode:
        sys.exit(f'campaign.py: failed ({r.returncode}): {" ".join(cmd)[:300]}')
    return r


def load_results():
    try:
        with open(RESULTS) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save_results(res):
    res['benchmark'] = 'fuzz'
    la = os.getloadavg()[0]
    res['machine'] = {'kernel': platform.release(), 'cpus': os.cpu_count(),
                      'loadavg_1m_at_write': round(la, 2),
                      'clang': subprocess.run([env('CLANG', 'clang'), '--version'], capture_output=True,
                                              text=True).stdout.splitlines()[0]}
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS + '.tmp', 'w') as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(RESULTS + '.tmp', RESULTS)


def cov_objs(build):
    """The library objects, compiled once with coverage instrumentation."""
    cc, cflags = env('CLANG'), env('COV_CFLAGS').split()
    objs = {}
    srcs = sorted(set(env('LIB_SRCS').split() + env('REJIT_SRCS').split()))
    for s in srcs:
        o = os.path.join(build, 'fuzz-cov', 'obj', s[:-2] + '.o')
        os.makedirs(os.path.dirname(o), exist_ok=True)
        if not os.path.exists(o) or os.path.getmtime(o) < os.path.getmtime(os.path.join(ROOT, s)):
            run(['nice', '-n', '10', cc] + cflags + ['-fsanitize=fuzzer-no-link', '-c', s, '-o', o])
        objs[s] = o
    return objs


def asan_bins(build, names):
    """ASan+UBSan libFuzzer binaries for the long campaign, linked from one
    set of library objects (BUILD/fuzz-long/obj) instead of compiling the
    whole library once per target as the Makefile rule does."""
    cc, cflags = env('CLANG'), env('ASAN_CFLAGS').split()
    srcs = sorted(set(env('LIB_SRCS').split() + env('REJIT_SRCS').split()))
    objs, jobs = {}, []
    for s in srcs:
        o = os.path.join(build, 'fuzz-long', 'obj', s[:-2] + '.o')
        os.makedirs(os.path.dirname(o), exist_ok=True)
        objs[s] = o
        if not os.path.exists(o) or os.path.getmtime(o) < os.path.getmtime(os.path.join(ROOT, s)):
            jobs.append(subprocess.Popen(['nice', '-n', '19', cc] + cflags +
                                         ['-fsanitize=fuzzer-no-link', '-c', s, '-o', o], cwd=ROOT))
        while len(jobs) >= 2:
            if jobs[0].wait():
                sys.exit('campaign.py: compile failed')
            jobs.pop(0)
    for j in jobs:
        if j.wait():
            sys.exit('campaign.py: compile failed')
    bins = {}
    for n in names:
        b = os.path.join(build, 'fuzz-long', n)
        libs = [objs[s] for s in env('REJIT_SRCS').split()] if n == 'fuzz_rejit_script' else \
            [objs[s] for s in env('LIB_SRCS').split()]
        run(['nice', '-n', '19', cc] + cflags + ['-fsanitize=fuzzer', '-o', b, f'tests/fuzz/{n}.c'] +
            libs + env('LDLIBS').split())
        bins[n] = b
    return bins


def func_lines(report_text, wanted):
    """Per-function lines/covered from `llvm-cov report -show-functions`."""
    out = {}
    for line in report_text.splitlines():
        f = line.split()
        if len(f) < 10 or not re.fullmatch(r'\d+', f[1] or ''):
            continue
        name = f[0].split(':')[-1]
        if name in wanted:
            # Name Regions Miss Cover Lines Miss Cover Branches Miss Cover
            out[name] = (int(f[4]), int(f[4]) - int(f[5]))
    return out


def coverage_one(name, objs, build):
    cc, cflags = env('CLANG'), env('COV_CFLAGS').split()
    files, decoders = TARGETS.get(name, ([], {}))
    d = os.path.join(build, 'fuzz-cov')
    binp = os.path.join(d, name)
    libs = [objs[s] for s in env('REJIT_SRCS').split()] if name == 'fuzz_rejit_script' else \
        [objs[s] for s in env('LIB_SRCS').split()]
    run(['nice', '-n', '10', cc] + cflags + ['-fsanitize=fuzzer', '-o', binp,
         f'tests/fuzz/{name}.c'] + libs + env('LDLIBS').split())
    corpora = [c for c in (f'tests/fuzz/corpus/{name}', os.path.join(build, 'fuzz', f'corpus-{name}'))
               if os.path.isdir(os.path.join(ROOT, c))]
    n_inputs = sum(len(os.listdir(os.path.join(ROOT, c))) for c in corpora)
    raw = os.path.join(d, f'{name}.profraw')
    prof = os.path.join(d, f'{name}.profdata')
    t0 = time.time()
    r = subprocess.run(['nice', '-n', '10', binp, '-runs=0', '-timeout=20', '-rss_limit_mb=4096'] + corpora,
                       cwd=ROOT, env=dict(os.environ, LLVM_PROFILE_FILE=raw),
                       capture_output=True, text=True)
    secs = time.time() - t0
    if r.returncode:
        sys.stderr.write(r.stderr[-3000:])
        sys.exit(f'campaign.py: {name} crashed while replaying its corpus for coverage')
    run([env('LLVM_PROFDATA'), 'merge', '-sparse', raw, '-o', prof])
    cov = [env('LLVM_COV'), 'export', '-summary-only', binp, f'-instr-profile={prof}']
    ex = json.loads(run(cov, capture_output=True, text=True).stdout)
    per_file = {}
    for f in ex['data'][0]['files']:
        rel = os.path.relpath(f['filename'], ROOT)
        if rel in files:
            s = f['summary']
            per_file[rel] = {'lines': s['lines']['count'], 'lines_covered': s['lines']['covered'],
                             'lines_pct': round(s['lines']['percent'], 1),
                             'branches': s['branches']['count'],
                             'branches_covered': s['branches']['covered'],
                             'branches_pct': round(s['branches']['percent'], 1)}
    lines = sum(v['lines'] for v in per_file.values())
    lcov = sum(v['lines_covered'] for v in per_file.values())
    br = sum(v['branches'] for v in per_file.values())
    bcov = sum(v['branches_covered'] for v in per_file.values())
    res = {'corpus_inputs': n_inputs, 'replay_s': round(secs, 2), 'files': per_file,
           'lines_pct': round(100.0 * lcov / lines, 1) if lines else None,
           'branches_pct': round(100.0 * bcov / br, 1) if br else None,
           'html': os.path.relpath(os.path.join(d, 'html', name, 'index.html'), ROOT)}
    if decoders:
        dec = {}
        for fname, funcs in decoders.items():
            rep = run([env('LLVM_COV'), 'report', '-show-functions', binp, f'-instr-profile={prof}',
                       os.path.join(ROOT, fname)], capture_output=True, text=True).stdout
            got = func_lines(rep, set(funcs))
            for fn in funcs:
                if fn not in got:
                    sys.exit(f'campaign.py: {name}: decoder {fname}:{fn} not in the coverage report')
                dec[f'{os.path.basename(fname)}:{fn}'] = {'lines': got[fn][0], 'lines_covered': got[fn][1]}
        chunk = [v for k, v in dec.items() if k.split(':')[1] in DECODERS]
        dl = sum(v['lines'] for v in chunk)
        dc = sum(v['lines_covered'] for v in chunk)
        rl = sum(v['lines'] for v in dec.values())
        rc = sum(v['lines_covered'] for v in dec.values())
        res['reader_functions'] = dec
        res['decoders'] = sorted(k for k in dec if k.split(':')[1] in DECODERS)
        res['decoders_lines_pct'] = round(100.0 * dc / dl, 1) if dl else None
        res['reader_lines_pct'] = round(100.0 * rc / rl, 1) if rl else None
    run([env('LLVM_COV'), 'show', binp, f'-instr-profile={prof}', '-format=html',
         '-show-branches=count', f'-output-dir={os.path.join(d, "html", name)}'] +
        [os.path.join(ROOT, f) for f in files], capture_output=True)
    os.unlink(raw)
    return res


def cmd_coverage(names):
    build = os.path.join(ROOT, env('BUILD'))
    objs = cov_objs(build)
    res = load_results()
    cov = res.setdefault('coverage', {})
    res['coverage_method'] = ('clang source-based coverage (-fprofile-instr-generate -fcoverage-mapping), '
                              'each target replays tests/fuzz/corpus/NAME (+ build/fuzz/corpus-NAME when '
                              'present) once; line/branch coverage of the files the target exists for; '
                              'decoders_lines_pct = lines of the chunk-decoder functions (decoders); '
                              'reader_lines_pct adds the openers and framing.c\'s reader')
    for n in targets(names):
        print(f'fuzz-coverage: {n}', flush=True)
        cov[n] = coverage_one(n, objs, build)
        res['campaigns'] = load_results().get('campaigns', res.get('campaigns', {}))
        c = cov[n]
        extra = (f', chunk decoders {c["decoders_lines_pct"]}% lines, whole reader '
                 f'{c["reader_lines_pct"]}%') if 'decoders' in c else ''
        print(f'  {c["corpus_inputs"]} inputs: {c["lines_pct"]}% lines, {c["branches_pct"]}% branches'
              f'{extra} -> {c["html"]}', flush=True)
    save_results(res)


def parse_stats(log):
    """Executions and seconds from a libFuzzer log (the last '#N ... exec/s')."""
    execs = 0
    for m in re.finditer(r'^#(\d+):?\s', log, re.M):     # '#N:' in -fork mode
        execs = max(execs, int(m.group(1)))
    m = re.search(r'Done (\d+) runs in (\d+) second', log)
    if m:
        execs = max(execs, int(m.group(1)))
    return execs


def cmd_long(names):
    build = os.path.join(ROOT, env('BUILD'))
    runs = int(env('FUZZ_LONG_RUNS', '10000000'))
    secs = int(env('FUZZ_LONG_SECONDS', '3600'))
    # FUZZ_LONG_UNTIL (Unix time): no target runs past it, so a list of
    # targets shares a fixed window (each to 10 M or the deadline)
    until = int(os.environ.get('FUZZ_LONG_UNTIL') or 0)
    # FUZZ_LONG_FORK=N: libFuzzer -fork=N, N workers (each at nice 19)
    # sharing one corpus; executions are counted over all of them
    fork = int(os.environ.get('FUZZ_LONG_FORK') or 0)
    res = load_results()
    camp = res.setdefault('campaigns', {})
    names = targets(names)
    pre = os.environ.get('FUZZ_LONG_PREBUILT')
    if pre:
        # '1': the Makefile's BUILD/fuzz; a directory: a frozen copy of
        # them, so rebuilding BUILD/fuzz mid-campaign does not swap the
        # binary under -fork (which re-executes it for every job)
        bdir = os.path.join(build, 'fuzz') if pre == '1' else os.path.abspath(pre)
        bins = {n: os.path.join(bdir, n) for n in names}
        for b in bins.values():
            if not os.access(b, os.X_OK):
                sys.exit(f'campaign.py: {b} not built (make {os.path.relpath(b, ROOT)})')
    else:
        bins = asan_bins(build, names)
    for n in names:
        binp = bins[n]
        work = os.path.join(build, 'fuzz', f'corpus-{n}')
        seeds = os.path.join(ROOT, 'tests', 'fuzz', 'corpus', n)
        os.makedirs(work, exist_ok=True)
        dictf = os.path.join(ROOT, 'tests', 'fuzz', f'{n}.dict')
        # artifacts as tests/fuzz/NAME.crash-*: campaigns of several targets
        # may run side by side, each credited only with its own findings
        art = os.path.join(ROOT, 'tests', 'fuzz', f'{n}.')
        before = set(glob.glob(art + '*-*'))
        n_seeds = len(os.listdir(seeds))
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu0 = cpu0.ru_utime + cpu0.ru_stime
        t0 = time.time()
        left = secs if not until else min(secs, int(until - t0))
        if left < 30:
            print(f'fuzz-long: {n}: FUZZ_LONG_UNTIL reached, not run', flush=True)
            continue
        # FUZZ_LONG_TOPUP=1: only the executions still missing to 10 M
        # summed over the target's runs (cumulate), for a short window
        want = runs
        if os.environ.get('FUZZ_LONG_TOPUP') == '1':
            old = load_results().get('campaigns', {}).get(n) or {}
            done = old.get('executions_total') or old.get('executions') or 0
            want = min(runs, 10_000_000 - done)
            if want <= 0:
                print(f'fuzz-long: {n}: {done} executions summed already, not run', flush=True)
                continue
        print(f'fuzz-long: {n} to {want} runs or {left}s', flush=True)
        log = os.path.join(build, 'fuzz', f'{n}.long.log')
        with open(log, 'w') as lf:
            r = subprocess.run(['nice', '-n', '19', binp, f'-runs={want}', f'-max_total_time={left}',
                                f'-timeout={LONG_TIMEOUT}', '-rss_limit_mb=2048', '-print_final_stats=1',
                                f'-max_len={MAX_LEN.get(n, 4096)}',
                                f'-artifact_prefix={art}'] + ([f'-fork={fork}'] if fork > 1 else []) +
                               ([f'-dict={dictf}'] if os.path.exists(dictf) else []) + [work, seeds],
                               cwd=ROOT, stdout=lf, stderr=subprocess.STDOUT, env=fuzz_env())
        elapsed = time.time() - t0
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = cpu.ru_utime + cpu.ru_stime - cpu0
        text = open(log, errors='replace').read()
        crashes = sorted(os.path.basename(p) for p in
                         set(glob.glob(art + '*-*')) - before
                         if re.match(r'(crash|leak|timeout|oom|slow-unit)-', os.path.basename(p)[len(n) + 1:]))
        # minimize into the committed corpus: only inputs that add coverage
        subprocess.run(['nice', '-n', '19', binp, '-merge=1', '-timeout=10', '-rss_limit_mb=2048',
                        seeds, work], cwd=ROOT, capture_output=True, env=fuzz_env())
        m = (re.findall(r'cov: (\d+) ft: (\d+)', text) or [None])[-1]
        camp[n] = {'executions': parse_stats(text), 'seconds': round(elapsed), 'exit': r.returncode,
                   'crashes': crashes, 'stopped_by': 'runs' if parse_stats(text) >= want else 'time',
                   'edges': int(m[0]) if m else None, 'features': int(m[1]) if m else None,
                   'seeds_before': n_seeds, 'seeds_after': len(os.listdir(seeds)),
                   'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                   'nice': 19, 'max_len': MAX_LEN.get(n, 4096), 'asan_options': fuzz_env()['ASAN_OPTIONS'],
                   'cpu_s': round(cpu, 1), 'fork': fork if fork > 1 else 1,
                   'loadavg_1m_at_end': round(os.getloadavg()[0], 2)}
        if want != runs:
            camp[n]['runs_asked'] = want     # FUZZ_LONG_TOPUP
        print(f'  {camp[n]["executions"]} execs in {camp[n]["seconds"]}s, {len(crashes)} crashes, '
              f'corpus {n_seeds} -> {camp[n]["seeds_after"]}', flush=True)
        cur = load_results()    # another campaign may have written meanwhile
        # a time-boxed run does not erase what an earlier one reached
        old = cur.setdefault('campaigns', {}).get(n)
        if old:
            hist = old.pop('previous', [])
            camp[n]['previous'] = hist + [{k: old.get(k) for k in ('date', 'executions', 'seconds', 'crashes',
                                                                     'stopped_by', 'edges')}]
        cumulate(camp[n])
        cur['campaigns'][n] = camp[n]
        save_results(cur)


def cumulate(c, goal=10_000_000):
    """executions_total: this run plus every earlier one ('previous').
    Each run resumes from the saved corpus (BUILD/fuzz/corpus-NAME and
    tests/fuzz/corpus/NAME), which is all the state libFuzzer keeps between
    runs, so a sum is one campaign in several sittings; but earlier runs
    may have fuzzed older code. reached_10M says which: 'one run' (this or
    an earlier single run) or 'sum of N runs'."""
    hist = c.get('previous', [])
    total = c['executions'] + sum(p.get('executions') or 0 for p in hist)
    c['executions_total'] = total
    c['runs_total'] = len(hist) + 1
    if max([c['executions']] + [p.get('executions') or 0 for p in hist]) >= goal:
        c['reached_10M'] = 'one run'
    elif total >= goal:
        c['reached_10M'] = f'sum of {len(hist) + 1} runs'
    else:
        c['reached_10M'] = None


def rate_one(binp, n, secs, max_len):
    """One timed run from a fresh copy of the corpus: (execs, wall, cpu)."""
    import shutil
    import tempfile
    seeds = os.path.join(ROOT, 'tests', 'fuzz', 'corpus', n)
    dictf = os.path.join(ROOT, 'tests', 'fuzz', f'{n}.dict')
    with tempfile.TemporaryDirectory(prefix=f'rate-{n}.') as tmp:
        work = os.path.join(tmp, 'corpus')
        shutil.copytree(seeds, work)
        cmd = ['nice', '-n', '19', binp, '-seed=1', f'-max_total_time={secs}', '-timeout=10',
               '-rss_limit_mb=2048', f'-artifact_prefix={tmp}/'] + \
            ([f'-max_len={max_len}'] if max_len else []) + \
            ([f'-dict={dictf}'] if os.path.exists(dictf) else []) + [work]
        t0 = time.time()
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=fuzz_env())
        out, _ = p.communicate()
        wall = time.time() - t0
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return parse_stats(out), wall, ru, p.returncode


def steady_one(binp, n, k, max_len):
    """Marginal CPU seconds of k executions past the corpus load: two runs
    from fresh corpus copies, -runs=S+10 and -runs=S+10+k (S = seeds)."""
    import shutil
    import tempfile
    seeds = os.path.join(ROOT, 'tests', 'fuzz', 'corpus', n)
    dictf = os.path.join(ROOT, 'tests', 'fuzz', f'{n}.dict')
    base = len(os.listdir(seeds)) + 10
    cpu = []
    for runs in (base, base + k):
        with tempfile.TemporaryDirectory(prefix=f'steady-{n}.') as tmp:
            work = os.path.join(tmp, 'corpus')
            shutil.copytree(seeds, work)
            prev = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(['nice', '-n', '19', binp, '-seed=1', f'-runs={runs}', '-timeout=60',
                            '-rss_limit_mb=2048', f'-artifact_prefix={tmp}/', f'-max_len={max_len}'] +
                           ([f'-dict={dictf}'] if os.path.exists(dictf) else []) + [work],
                           cwd=ROOT, capture_output=True, env=fuzz_env())
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append((ru.ru_utime - prev.ru_utime) + (ru.ru_stime - prev.ru_stime))
    d = cpu[1] - cpu[0]
    return {'cpu_s_load': round(cpu[0], 2), 'cpu_s_load_plus_runs': round(cpu[1], 2),
            'execs_per_cpu_s': round(k / d) if d > 0 else None}


def cmd_steady(names):
    """FUZZ_RATES_STEADY=K: steady executions per CPU second (steady_one),
    before/after interleaved, FUZZ_RATES_ROUNDS rounds (median)."""
    build = os.path.join(ROOT, env('BUILD'))
    k = int(os.environ['FUZZ_RATES_STEADY'])
    rounds = int(os.environ.get('FUZZ_RATES_ROUNDS', '3'))
    before = os.environ.get('FUZZ_RATES_BEFORE')
    for n in targets(names):
        bins = ([('before', os.path.join(before, n))] if before else []) + \
            [('after', os.path.join(build, 'fuzz', n))]
        got = {label: [] for label, _ in bins}
        for _ in range(rounds):
            for label, binp in bins:
                got[label].append(steady_one(binp, n, k, MAX_LEN.get(n, 4096)))
        row = {'loadavg_1m': round(os.getloadavg()[0], 2)}
        for label, rs in got.items():
            v = sorted(r['execs_per_cpu_s'] or 0 for r in rs)
            row[label] = {'execs_per_cpu_s': v[len(v) // 2], 'rounds': rs}
        if before and row['before']['execs_per_cpu_s']:
            row['speedup'] = round(row['after']['execs_per_cpu_s'] / row['before']['execs_per_cpu_s'], 2)
        print(f'fuzz-rates steady: {n}: ' + ', '.join(f'{lb} {row[lb]["execs_per_cpu_s"]}/cpu-s'
                                                    for lb in got) +
              (f', x{row["speedup"]}' if 'speedup' in row else ''), flush=True)
        cur = load_results()
        # FUZZ_RATES_KEY: the "rates" entry written (steady_3 by default),
        # so a new measurement does not mix with an earlier one's note
        st = cur.setdefault('rates', {}).setdefault(os.environ.get('FUZZ_RATES_KEY') or 'steady_3', {})
        st.setdefault('targets', {})[n] = row
        st['method'] = (f'marginal CPU (user+sys) of {k} executions past the corpus load: the same '
                        'binary from a fresh corpus copy with -runs=S+10 and -runs=S+10+K (S = seeds), '
                        '-seed=1, its -max_len and dictionary, nice -n 19, ASAN_OPTIONS as campaign.py; '
                        f'before/after interleaved, {rounds} rounds, median. before = '
                        f'{before or "-"}, after = {os.path.join(env("BUILD"), "fuzz")}')
        st['date'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        save_results(cur)


def cmd_rates(names):
    """Before/after executions per second, interleaved (rate_one)."""
    if os.environ.get('FUZZ_RATES_STEADY'):
        return cmd_steady(names)
    build = os.path.join(ROOT, env('BUILD'))
    secs = int(os.environ.get('FUZZ_RATES_SECONDS', '20'))
    before = os.environ.get('FUZZ_RATES_BEFORE')
    res = load_results()
    rates = res.setdefault('rates', {})
    tg = rates.setdefault('targets', {})
    la0 = os.getloadavg()
    for n in targets(names):
        row = {}
        runs = ([('before', os.path.join(before, n), None)] if before else []) + \
            [('after', os.path.join(build, 'fuzz', n), MAX_LEN.get(n, 4096))]
        for label, binp, ml in runs:
            prev = resource.getrusage(resource.RUSAGE_CHILDREN)
            execs, wall, ru, rc = rate_one(binp, n, secs, ml)
            cpu = (ru.ru_utime - prev.ru_utime) + (ru.ru_stime - prev.ru_stime)
            row[label] = {'executions': execs, 'wall_s': round(wall, 1), 'cpu_s': round(cpu, 1),
                          'execs_per_wall_s': round(execs / wall) if wall else None,
                          'execs_per_cpu_s': round(execs / cpu) if cpu else None,
                          'max_len': ml or 'default (largest seed)', 'exit': rc,
                          'loadavg_1m': round(os.getloadavg()[0], 2)}
        a = row['after']
        a['hours_to_10M_one_idle_core'] = round(1e7 / a['execs_per_cpu_s'] / 3600, 1) \
            if a['execs_per_cpu_s'] else None
        if before and row['before']['execs_per_cpu_s'] and a['execs_per_cpu_s']:
            row['speedup_cpu'] = round(a['execs_per_cpu_s'] / row['before']['execs_per_cpu_s'], 1)
        tg[n] = row
        print(f'fuzz-rates: {n}: ' + ', '.join(f'{k} {v["executions"]} execs, {v["execs_per_cpu_s"]}/cpu-s '
                                              f'{v["execs_per_wall_s"]}/wall-s'
                                              for k, v in row.items() if isinstance(v, dict)), flush=True)
        cur = load_results()
        cur.setdefault('rates', {}).setdefault('targets', {})[n] = row
        cur['rates']['method'] = (
            f'each binary {secs} s (-max_total_time) from a fresh copy of tests/fuzz/corpus/NAME, '
            '-seed=1, the target dictionary, nice -n 19, ASan+UBSan (the Makefile fuzz build); '
            'before/after interleaved per target. execs_per_cpu_s = executions / (user+sys CPU '
            's of the run): what one idle core gives, since wall rates on this shared machine '
            'are set by the load; it includes libFuzzer start-up and the corpus load, so it '
            'understates the steady rate of a long run. hours_to_10M_one_idle_core = '
            '10 M / execs_per_cpu_s.')
        cur['rates']['loadavg_at_start'] = [round(x, 2) for x in la0]
        cur['rates']['date'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        save_results(cur)


def main():
    cmds = {'coverage': cmd_coverage, 'long': cmd_long, 'rates': cmd_rates}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])


if __name__ == '__main__':
    main()
