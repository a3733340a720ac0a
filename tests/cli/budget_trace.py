#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# budget_trace.py TRACE: the window marks (PB_REC_WINDOW, docs/trace-format.md)
# and violation samples of a trace, as JSON on stdout:
# {"windows": [[ts, resource, open, n_desc, duty_ppm], ...],
#  "violations": [[ts, descriptor, invariant], ...], "notes": [...]}
import json, struct, sys

def main(path):
    data = open(path, 'rb').read()
    if data[:8] != b'PBTRACE\0':
        sys.exit('not a trace')
    hlen = struct.unpack_from('<I', data, 12)[0]
    off = hlen
    out = {'windows': [], 'violations': [], 'notes': []}
    while off + 16 <= len(data):
        magic, typ, ln, _crc = struct.unpack_from('<IIII', data, off)
        if magic != 0x4b434250 or off + 16 + ln > len(data):
            break
        p = data[off + 16:off + 16 + ln]
        if typ == 5:
            out['notes'].append(p.rstrip(b'\0').decode('utf-8', 'replace'))
        if typ == 3:
            o = 0
            while o + 32 <= len(p):
                rt, ver, sz, ts = struct.unpack_from('<HHIQ', p, o)
                if sz < 32:
                    break
                if rt == 9:
                    res, op, nd, duty = struct.unpack_from('<IIII', p, o + 32)
                    out['windows'].append([ts, res, op, nd, duty])
                elif rt == 7:
                    desc, = struct.unpack_from('<I', p, o + 32)
                    inv = p[o + 32 + 6] if o + 39 <= len(p) else -1
                    out['violations'].append([ts, desc, inv])
                o += sz
        off += 16 + ln
    json.dump(out, sys.stdout)

main(sys.argv[1])
