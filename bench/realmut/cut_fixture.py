#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cut_fixture.py CELL OUT N [SKIP]: cut one run of bench/realmut.sh (a
cell directory: script.jsonl, rec/*.bin, report.json, rec.rc, rec.json,
pgbench.out) to N resource events after the first SKIP (default 0), for the CI fixture
tests/fixtures/realmut/ (tests/cli/realmut_smoke.sh). The trace's start
and end are moved to the first and last event kept and the compiled-in log keeps the records
of that window, so the scorer compares the same window on both sides."""
import json
import os
import shutil
import struct
import sys

REC = struct.Struct('<HHiIIQ')


def main():
    cell, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    skip = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    seen, header = 0, None
    os.makedirs(os.path.join(out, 'rec'), exist_ok=True)
    kept, events, last, start, end_item = [], 0, None, None, None
    with open(os.path.join(cell, 'script.jsonl')) as f:
        for line in f:
            it = json.loads(line)
            t = it.get('type')
            if t == 'header':
                header = it
                continue
            elif t == 'end':
                end_item = it
                continue
            elif t in ('wakeup', 'stack', 'mapping'):
                continue
            elif t == 'sched' and '"switch":"in"' not in line:
                continue  # only an "in" switch carries off-CPU time
            if t == 'resource':
                seen += 1
                if seen <= skip or events >= n:
                    continue
                events += 1
                if start is None:
                    start = it['ts_ns'] - 1
                last = it['ts_ns']
            elif 'ts_ns' in it and start is None:
                continue
            elif t in ('block_io', 'fault') and events >= n:
                continue
            kept.append(line)
    # records after the last event kept are outside the window (a record
    # between two events is inside: the trace interleaves them)
    kept = [ln for ln in kept if '"ts_ns":' not in ln or json.loads(ln).get('ts_ns', 0) <= last]
    header['start_mono_ns'] = start
    kept.insert(0, json.dumps(header, separators=(',', ':')) + '\n')
    end_item = dict(end_item or {'type': 'end'})
    end_item['end_mono_ns'] = last
    kept.append(json.dumps(end_item, separators=(',', ':')) + '\n')
    with open(os.path.join(out, 'script.jsonl'), 'w') as f:
        f.writelines(kept)
    recs = []
    rd = os.path.join(cell, 'rec')
    for fn in sorted(os.listdir(rd)):
        data = open(os.path.join(rd, fn), 'rb').read()
        data = data[:len(data) - len(data) % REC.size]
        recs += [r for r in REC.iter_unpack(data) if start <= r[5] <= last]
    recs.sort(key=lambda r: r[5])
    with open(os.path.join(out, 'rec', 'all.bin'), 'wb') as f:
        f.write(b''.join(REC.pack(*r) for r in recs))
    for fn in ('report.json', 'rec.rc', 'rec.json', 'pgbench.out'):
        if os.path.exists(os.path.join(cell, fn)):
            shutil.copy(os.path.join(cell, fn), os.path.join(out, fn))
    print('%s: %d events, %d truth records' % (out, events, len(recs)))


if __name__ == '__main__':
    main()
