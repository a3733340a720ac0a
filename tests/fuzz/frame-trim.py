#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""frame-trim.py IN OUT [--all]: cut a framed file (common/framing.h) to a
small seed that keeps every chunk type: the header, then of each type the
first two chunks (records chunks cut to their first ~1.5 KiB at a record
boundary: u16 type, u16 size heads every record of a sample file; a trace
records chunk on struct pb_rec_hdr's u32 size), and the last
chunk (END). With --all every chunk is kept. CRCs are recomputed. Writes
OUT (raw) and OUT.C ('C' + file, the fix-up mode of the fuzz targets)."""
import struct, sys, zlib

MAX_REC_BYTES = 1536


def chunk(t, payload):
    crc = zlib.crc32(struct.pack('<II', t, len(payload)) + payload) & 0xffffffff
    return struct.pack('<IIII', 0x4b434250, t, len(payload), crc) + payload


def cut_records(p, size_at):
    """Cut p after whole records (size_at(p, off) = that record's size)."""
    off = 0
    while off < len(p) and off < MAX_REC_BYTES:
        n = size_at(p, off)
        if n <= 0 or off + n > len(p):
            break
        off += n
    return p[:off] if off else p[:MAX_REC_BYTES]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    keep_all = '--all' in sys.argv[3:]
    b = open(src, 'rb').read()
    magic = b[:8]
    hl = struct.unpack_from('<I', b, 12)[0]
    out = bytearray(b[:hl])
    chunks, off = [], hl
    while off + 16 <= len(b):
        _, t, ln, _ = struct.unpack_from('<IIII', b, off)
        chunks.append((t, b[off + 16:off + 16 + ln]))
        off += 16 + ln
    seen = {}
    for i, (t, p) in enumerate(chunks):
        seen[t] = seen.get(t, 0) + 1
        if not keep_all and seen[t] > 2 and i != len(chunks) - 1:
            continue
        if not keep_all and len(p) > MAX_REC_BYTES:
            if magic == b'PBSAMPL\0':
                p = cut_records(p, lambda q, o: struct.unpack_from('<H', q, o + 2)[0]
                                if o + 4 <= len(q) else 0)
            elif magic == b'PBTRACE\0' and t == 3:
                # engine/events.h: struct pb_rec_hdr is u16 type, u16 version, u32 size
                p = cut_records(p, lambda q, o: struct.unpack_from('<I', q, o + 4)[0]
                                if o + 8 <= len(q) else 0)
        out += chunk(t, p)
    open(dst, 'wb').write(out)
    open(dst + '.C', 'wb').write(b'C' + out)


if __name__ == '__main__':
    main()
