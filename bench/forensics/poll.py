#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""poll.py OUT.jsonl INTERVAL_MS DUMPDIR: baseline 1 of bench/forensics.sh,
what an operator collects with bpftool by polling during the run.

Every INTERVAL_MS: `bpftool -j prog show` and `grep ' bpf_prog_'
/proc/kallsyms` (the JIT address of each program; bpftool does not print
it), one JSON line per poll with the CLOCK_MONOTONIC times before and after.
Each program id seen for the first time gets `bpftool prog dump xlated`
and `dump jited` (with BTF line info where the program has it) saved in
DUMPDIR. A program that lives between two polls is never seen: that is the
baseline's honest result. Stops at SIGTERM/SIGINT and writes a last line
{"end": ...} with the commands run, bytes read and kept, and the CPU time
of the poller and its bpftool children.
"""
import json, os, signal, subprocess, sys, time

out, interval, dumpdir = sys.argv[1], int(sys.argv[2]) / 1000.0, sys.argv[3]
os.makedirs(dumpdir, exist_ok=True)
stop = False


def on_sig(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_sig)
signal.signal(signal.SIGINT, on_sig)
cmds = bytes_read = bytes_kept = polls = 0
seen = set()


def run(argv):
    global cmds, bytes_read
    cmds += 1
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    bytes_read += len(r.stdout)
    return r.stdout


with open(out, 'w') as f:
    print('polling', file=sys.stderr, flush=True)
    while not stop:
        t0 = time.monotonic_ns()
        show = run(['bpftool', '-j', 'prog', 'show'])
        t1 = time.monotonic_ns()
        ks = []
        for line in run(['grep', ' bpf_prog_', '/proc/kallsyms']).split(b'\n'):
            p = line.split()
            if len(p) >= 3:
                ks.append([int(p[0], 16), p[2].decode()])
        t2 = time.monotonic_ns()
        try:
            progs = [{'id': p['id'], 'tag': p.get('tag'), 'name': p.get('name', ''),
                      'bytes_jited': p.get('bytes_jited', 0), 'type': p.get('type')}
                     for p in json.loads(show or b'[]')]
        except ValueError:
            progs = []
        rec = {'t_show': [t0, t1], 't_ksyms': [t1, t2], 'progs': progs, 'ksyms': ks}
        line = json.dumps(rec, separators=(',', ':')) + '\n'
        f.write(line)
        bytes_kept += len(line)
        polls += 1
        for p in progs:
            if p['id'] in seen or p.get('type') != 'xdp':
                continue
            seen.add(p['id'])
            for kind in ('xlated', 'jited'):
                d = run(['bpftool', '-j', 'prog', 'dump', kind, 'id', str(p['id'])])
                if d:
                    with open(os.path.join(dumpdir, '%d.%s.json' % (p['id'], kind)), 'wb') as o:
                        o.write(d)
                    bytes_kept += len(d)
        f.flush()
        left = interval - (time.monotonic_ns() - t0) / 1e9
        if left > 0 and not stop:
            time.sleep(left)
    c = os.times()
    f.write(json.dumps({'end': {'polls': polls, 'commands': cmds, 'bytes_read': bytes_read,
                                'bytes_kept': bytes_kept, 'dumped_progs': len(seen),
                                'cpu_s': c.user + c.system + c.children_user + c.children_system,
                                'interval_ms': int(interval * 1000)}}) + '\n')
