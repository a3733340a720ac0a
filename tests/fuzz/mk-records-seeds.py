#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mk-records-seeds.py: write the seed corpus of fuzz_records
(tests/fuzz/corpus/fuzz_records/): well-formed record streams for each
pathology of the fuzz manifest, plus broken ones (short, oversized, unknown
type). Layouts follow src/engine/events.h."""
import os, struct, sys

out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/fuzz_records"
os.makedirs(out, exist_ok=True)
V = 1

def hdr(t, size, ts, tid, pid=42):
    return struct.pack("<HHIQIIII", t, V, size, ts, pid, tid, 0, 0)

# descriptors of the fuzz manifest: 0 w (WAIT), 1 a (ACQUIRE), 2 u (USE), 3 r (RELEASE), 4 ta, 5 tr
KIND = {0: 0, 1: 1, 2: 2, 3: 3, 4: 1, 5: 3}
RES = {0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 5: 1}

def res(ts, tid, d, inst, gen=1, dur=0, flags=0, owner=0):
    body = struct.pack("<IHBBII", d, RES[d], KIND[d], 0, flags, 0)
    body += struct.pack("<QQQQQII", inst, gen, 1, 0, dur, owner, 0)
    return hdr(1, 96, ts, tid) + body

def sched(ts, tid, off, inn):
    return hdr(2, 48, ts, tid) + struct.pack("<QII", off, 1, inn)

def wake(ts, waker, wakee):
    return hdr(3, 40, ts, waker) + struct.pack("<II", 42, wakee)

def block(ts, tid, complete):
    return hdr(4, 64, ts, tid) + struct.pack("<QIIQII", 8, 4096, 1, 100000, complete, 0)

def fault(ts, tid):
    return hdr(5, 56, ts, tid) + struct.pack("<QQII", 0x1000, 0x2000, 4, 0)

def exit_(ts, tid):
    return hdr(6, 40, ts, tid) + struct.pack("<II", 0, 1)

T = 10**12
MS = 10**6
seeds = {}
s = b""
for i in range(40):          # contention with wakeups and off-CPU
    t = T + i * 10 * MS
    s += res(t, 1, 1, 0x100 + i, 1, 0, 1)
    s += res(t + MS, 1, 2, 0x100 + i)
    s += block(t + 2 * MS, 1, 0) + fault(t + 3 * MS, 1)
    s += res(t + 9 * MS, 1, 3, 0x100 + i, 1, 9 * MS)
    s += wake(t + 9 * MS + 100, 1, 2)
    s += sched(t + 9 * MS + 200, 2, 8 * MS, 1)
    s += res(t + 9 * MS + 300, 2, 0, 0xaaa, 0, 8 * MS, 2)
seeds["contention"] = b"\x00" + s
s = b"".join(res(T + i * MS, 3, 1, 0x2000 + i, 1, 0, 1) for i in range(30))
seeds["leak"] = b"\x00" + s
s = b""
for i in range(30):          # address reuse: one address, many generations
    s += res(T + i * MS, 4, 1, 0x1000, i + 1, 0, 1) + res(T + i * MS + 10, 4, 3, 0x1000, i + 1, 10)
seeds["reuse"] = b"\x00" + s
s = b""
for i in range(200):         # churn
    s += res(T + i * 1000, 5, 1, 0xc0, i + 1, 0, 1) + res(T + i * 1000 + 10, 5, 3, 0xc0, i + 1, 10)
seeds["churn"] = b"\x04" + s
s = res(T, 6, 1, 0xc0, 1, 0, 1) + res(T + 300 * MS, 6, 3, 0xc0, 1, 300 * MS) + \
    res(T + 300 * MS + 5, 7, 0, 0xf, 0, 290 * MS, 2) + exit_(T + 301 * MS, 6)
seeds["long-hold"] = b"\x02" + s
s = b"".join(res(T + i, 8, 4, 0x77, 1, 0, 4 if i else 1) + res(T + i + 1, 8, 5, 0x77, 1, 1) for i in range(20))
seeds["shared-tokens"] = b"\x00" + s
seeds["short"] = b"\x00" + res(T, 1, 1, 1)[:50]
big = bytearray(res(T, 1, 1, 1)); big[4:8] = struct.pack("<I", 4096)
seeds["oversize"] = b"\x00" + bytes(big)
unk = bytearray(res(T, 1, 1, 1)); unk[0:2] = struct.pack("<H", 99)
seeds["unknown-type"] = b"\x00" + bytes(unk) + res(T, 1, 1, 2)
bad = bytearray(res(T, 1, 1, 1)); bad[32:36] = struct.pack("<I", 1000)
seeds["bad-descriptor"] = b"\x00" + bytes(bad)
snap = bytearray(hdr(1, 0xffff, T, 0)); snap[0] = 6; snap[1] = 2
snap += bytes(6 * 384 + 2 * 72 + 40 - len(snap))
seeds["snapshot"] = b"\x01" + bytes(snap) + seeds["leak"][1:]
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to {out}")
