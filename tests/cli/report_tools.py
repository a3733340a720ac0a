#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""report_tools.py: checks the report/export/script CLI tests share.

  ink PNG                      print the fraction of pixels that are not
                               near-white (PNG decoded here with zlib: no PIL)
  trace-events JSON FIRST LAST check a Chrome/Perfetto trace-event file
                               against the format's required fields per
                               phase, then probity's promises (absolute
                               CLOCK_MONOTONIC times within [FIRST, LAST] ns,
                               a thread_name for every thread track, slices
                               nested per thread, every flow start finished);
                               prints counts as JSON, exits 1 on a problem
  inject TRACE OUT             copy TRACE with a chunk of unknown type 99
                               and a record of unknown type 200 inserted
                               before its end chunk
"""
import json
import struct
import sys
import zlib


def png_ink(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise SystemExit('%s: not a PNG' % path)
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, typ = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise SystemExit('%s: PNG depth %d colour type %d not handled' % (path, depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif typ == b'IDAT':
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    ink = 0
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        for x in range(0, stride, bpp):
            if min(line[x], line[x + 1], line[x + 2]) < 200:
                ink += 1
        prev = line
    return ink / float(w * h)


# Required fields per phase, from the Trace Event Format document
# (ph, name, pid, tid, ts; "X" needs dur; async b/e and flows s/t/f need
# id and cat; "C" needs args of numbers; "M" needs args.name for names).
REQ = {
    'X': ('name', 'pid', 'tid', 'ts', 'dur'),
    'B': ('name', 'pid', 'tid', 'ts'), 'E': ('pid', 'tid', 'ts'),
    'i': ('name', 'pid', 'tid', 'ts'), 'I': ('name', 'pid', 'tid', 'ts'),
    'C': ('name', 'pid', 'ts', 'args'),
    'b': ('name', 'cat', 'id', 'pid', 'ts'), 'e': ('name', 'cat', 'id', 'pid', 'ts'),
    'n': ('name', 'cat', 'id', 'pid', 'ts'),
    's': ('name', 'cat', 'id', 'pid', 'tid', 'ts'), 't': ('name', 'cat', 'id', 'pid', 'tid', 'ts'),
    'f': ('name', 'cat', 'id', 'pid', 'tid', 'ts'),
    'M': ('name', 'pid', 'args'),
}
META = ('process_name', 'process_labels', 'process_sort_index', 'thread_name', 'thread_sort_index')


def check_events(path, first_ns, last_ns):
    doc = json.load(open(path))
    bad = []
    if not isinstance(doc, dict) or not isinstance(doc.get('traceEvents'), list):
        raise SystemExit('%s: no traceEvents array' % path)
    if doc.get('displayTimeUnit', 'ms') not in ('ms', 'ns'):
        bad.append('displayTimeUnit %r' % doc['displayTimeUnit'])
    counts, names, tracks, slices = {}, set(), set(), {}
    open_async, flows = {}, {}
    for k, e in enumerate(doc['traceEvents']):
        ph = e.get('ph')
        if ph not in REQ:
            bad.append('event %d: unknown phase %r' % (k, ph))
            continue
        counts[ph] = counts.get(ph, 0) + 1
        for f in REQ[ph]:
            if f not in e:
                bad.append('event %d (%s): no %s' % (k, ph, f))
        for f in ('pid', 'tid'):
            if f in e and not isinstance(e[f], int):
                bad.append('event %d: %s is not an integer' % (k, f))
        if 'ts' in e:
            if not isinstance(e['ts'], (int, float)):
                bad.append('event %d: ts not a number' % k)
            elif not first_ns - 1e6 <= e['ts'] * 1e3 <= last_ns + 1e6:
                bad.append('event %d: ts %.3f us outside the trace [%d, %d] ns (not absolute?)'
                           % (k, e['ts'], first_ns, last_ns))
        if ph == 'X':
            if not isinstance(e.get('dur'), (int, float)) or e['dur'] < 0:
                bad.append('event %d: bad dur' % k)
            else:
                tracks.add((e['pid'], e['tid']))
                slices.setdefault((e['pid'], e['tid']), []).append((e['ts'], e['ts'] + e['dur']))
        elif ph == 'C':
            if not all(isinstance(v, (int, float)) for v in e['args'].values()):
                bad.append('event %d: counter args not numbers' % k)
        elif ph == 'M':
            if e['name'] not in META:
                bad.append('event %d: metadata %r' % (k, e['name']))
            if e['name'] == 'thread_name':
                names.add((e['pid'], e.get('tid')))
            if e['name'].endswith('_name') and not isinstance(e['args'].get('name'), str):
                bad.append('event %d: %s without args.name' % (k, e['name']))
        elif ph in 'be':
            key = (e['cat'], e['id'], e['name'])
            if ph == 'b':
                open_async[key] = e['ts']
            elif key not in open_async:
                bad.append('event %d: async end without begin' % k)
            elif e['ts'] < open_async.pop(key):
                bad.append('event %d: async slice ends before it begins' % k)
        elif ph in 'sf':
            flows.setdefault(e['id'], []).append(ph)
            if ph == 'f' and e.get('bp', 'e') != 'e':
                bad.append('event %d: flow end bp %r' % (k, e.get('bp')))
    for t in sorted(tracks - names):
        bad.append('thread track pid %d tid %d has no thread_name' % t)
    for t, sl in slices.items():
        stack = []
        for s, e in sorted(sl, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and e > stack[-1] + 1e-3:
                bad.append('tid %d: slice [%.3f, %.3f] crosses its parent' % (t[1], s, e))
                break
            stack.append(e)
    if open_async:
        bad.append('%d async slices never end' % len(open_async))
    unfinished = [i for i, p in flows.items() if p != ['s', 'f']]
    if unfinished:
        bad.append('%d flows are not one s then one f (id %s)' % (len(unfinished), unfinished[0]))
    counts['threads'] = len(tracks)
    counts['flows'] = len(flows)
    print(json.dumps(counts, sort_keys=True))
    for b in bad[:20]:
        print('FAIL: %s: %s' % (path, b))
    return 1 if bad else 0


def inject(src, dst):
    data = open(src, 'rb').read()
    hlen = struct.unpack('<I', data[12:16])[0]
    pos, last = hlen, None
    while pos + 16 <= len(data):
        magic, typ, n, crc = struct.unpack('<IIII', data[pos:pos + 16])
        if magic != 0x4b434250:
            break
        if zlib.crc32(data[pos + 4:pos + 12] + data[pos + 16:pos + 16 + n]) != crc:
            raise SystemExit('%s: chunk at %d: CRC differs from crc32(type, len, payload)' % (src, pos))
        last = pos
        pos += 16 + n
    if last is None:
        raise SystemExit('%s: no chunk' % src)

    def chunk(typ, payload):
        head = struct.pack('<II', typ, len(payload))
        return struct.pack('<I', 0x4b434250) + head + struct.pack('<I', zlib.crc32(head + payload)) + payload
    rec = struct.pack('<HHIQIIII', 200, 4, 32, 1, 1, 1, 0, 0)	# unknown record type 200, 32 bytes
    extra = chunk(99, b'from a newer writer') + chunk(3, rec)	# 3 = TRACE_CHUNK_RECORDS
    open(dst, 'wb').write(data[:last] + extra + data[last:])


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'ink':
        print('%.4f' % png_ink(sys.argv[2]))
    elif len(sys.argv) == 5 and sys.argv[1] == 'trace-events':
        sys.exit(check_events(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    elif len(sys.argv) == 4 and sys.argv[1] == 'inject':
        inject(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
