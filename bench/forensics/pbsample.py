# SPDX-License-Identifier: BSD-2-Clause
"""pbsample.py: a probity sample file (docs/attribution.md "Sample file
format") read and rewritten without probity, for bench/forensics.sh.

read(path) -> (header, snapshot, records, end); records are tuples in file
order:
  ('S', time, cpu, ip)                                 a cpu-clock sample
  ('K', time, cpu, addr, len, ksym_type, flags, time_max, name)  ksymbol
  ('E', time, cpu, event, prog_id, tag_hex, time_max)  bpf_event
  ('L', time, cpu, lost, since)                        records lost
drop(src, dst, prog_ids): dst is src without the ksymbol and bpf_event
records of prog_ids, each dropped run replaced by a LOST record (what a
collector that overflowed would have written): the injected loss.
"""
import json, struct, zlib

MAGIC = b'PBSAMPL\0'


def _chunks(b):
    off = struct.unpack_from('<I', b, 12)[0]
    while off + 16 <= len(b):
        magic, typ, ln, crc = struct.unpack_from('<4sIII', b, off)
        if magic != b'PBCK' or off + 16 + ln > len(b):
            break
        yield off, typ, b[off + 16: off + 16 + ln]
        off += 16 + ln


def _records(p):
    o = 0
    while o + 16 <= len(p):
        rt, sz, cpu, t = struct.unpack_from('<HHIQ', p, o)
        if sz < 16 or o + sz > len(p):
            break
        yield rt, cpu, t, p[o: o + sz]
        o += sz


def read(path):
    b = open(path, 'rb').read()
    assert b[:8] == MAGIC, '%s: not a probity sample file' % path
    header = snapshot = end = None
    recs = []
    for _, typ, p in _chunks(b):
        if typ == 1:
            header = json.loads(p)
        elif typ == 2:
            snapshot = json.loads(p)
        elif typ == 4:
            end = json.loads(p)
        elif typ == 3:
            for rt, cpu, t, r in _records(p):
                if rt == 1:
                    ip = struct.unpack_from('<Q', r, 16)[0]
                    recs.append(('S', t, cpu, ip))
                elif rt == 2:
                    addr, ln, kt, fl, tmax = struct.unpack_from('<QIHHQ', r, 16)
                    name = r[40:].split(b'\0', 1)[0].decode(errors='replace')
                    recs.append(('K', t, cpu, addr, ln, kt, fl, tmax, name))
                elif rt == 3:
                    ev, fl, pid, tag, tmax = struct.unpack_from('<HHI8sQ', r, 16)
                    recs.append(('E', t, cpu, ev, pid, tag.hex(), tmax))
                elif rt == 4:
                    lost, since = struct.unpack_from('<QQ', r, 16)
                    recs.append(('L', t, cpu, lost, since))
    return header, snapshot, recs, end


def _chunk(typ, payload):
    crc = zlib.crc32(struct.pack('<II', typ, len(payload)) + payload) & 0xffffffff
    return struct.pack('<4sIII', b'PBCK', typ, len(payload), crc) + payload


def drop(src, dst, prog_ids):
    """Remove the ksymbol + bpf_event records of prog_ids (their ksymbol
    records are the ones the kernel emits with the bpf_event, on the same
    CPU, just before it); returns how many records were dropped."""
    b = open(src, 'rb').read()
    out = bytearray(b[:struct.unpack_from('<I', b, 12)[0]])
    dropped = 0
    for _, typ, p in _chunks(b):
        if typ != 3:
            out += _chunk(typ, p)
            continue
        recs = list(_records(p))
        kill = set()
        for i, (rt, cpu, t, r) in enumerate(recs):
            if rt != 3 or struct.unpack_from('<I', r, 20)[0] not in prog_ids:
                continue
            kill.add(i)
            j = i - 1      # its ksymbol records: same CPU, right before it
            while j >= 0 and recs[j][0] == 2 and recs[j][1] == cpu:
                kill.add(j)
                j -= 1
        np = bytearray()
        run = None
        for i, (rt, cpu, t, r) in enumerate(recs):
            if i in kill:
                dropped += 1
                run = run or [0, cpu, t]
                run[0] += 1
                continue
            if run:
                np += struct.pack('<HHIQQQ', 4, 32, run[1], t, run[0], run[2])
                run = None
            np += r
        if run:
            np += struct.pack('<HHIQQQ', 4, 32, run[1], recs[-1][2], run[0], run[2])
        out += _chunk(3, bytes(np))
    open(dst, 'wb').write(bytes(out))
    return dropped
