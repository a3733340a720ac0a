#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mk-receipts-seeds.py: regenerate the seed corpora of fuzz_lifelog,
fuzz_receipt and fuzz_store (tests/fuzz/corpus/<target>/). Run from the
repository root. Lifecycle logs are framed files (src/common/framing.h,
magic "PBRCLOG\\0") of canonical-JSON entries chained by SHA-256."""
import hashlib, json, os, struct, zlib

ZERO = "0" * 64
KINDS = {1: "loaded", 2: "activated", 3: "retired", 4: "unloaded", 5: "link-updated", 6: "observer"}

def canon(o):
    return json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

def chunk(t, payload):
    crc = zlib.crc32(struct.pack("<II", t, len(payload)) + payload)
    return struct.pack("<IIII", 0x4b434250, t, len(payload), crc) + payload

def header(ver=1, extra=b""):
    return b"PBRCLOG\0" + struct.pack("<II", ver, 16 + len(extra)) + extra

def log(entries, ver=1):
    out, prev = header(ver), ZERO
    for seq, (kind, e) in enumerate(entries):
        e = dict(e, kind=KINDS.get(kind, "?"), seq=seq, prev=prev, mono_ns=1000 + seq,
                 realtime_ns=2000 + seq, pid=42)
        p = canon(e)
        out += chunk(kind, p)
        prev = hashlib.sha256(p).hexdigest()
    return out

def w(target, name, data):
    d = f"tests/fuzz/corpus/{target}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/{name}", "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

G1, R1 = "a1" * 32, "b2" * 32
G2, R2 = "c3" * 32, "d4" * 32
life = [(1, {"generation_id": G1, "receipt": R1, "prog_id": 7}),
        (2, {"generation_id": G1, "receipt": R1, "hook": "xdp"}),
        (1, {"generation_id": G2, "receipt": R2, "prog_id": 8}),
        (3, {"generation_id": G1, "receipt": R1, "reason": "replaced"}),
        (4, {"generation_id": G1, "receipt": R1}),
        (6, {"event": "start"})]
good = log(life)
T = "fuzz_lifelog"
w(T, "empty", b"")
w(T, "header-only", header())
w(T, "clean", good)
w(T, "torn-tail", good[:-7])
bad = bytearray(good); bad[40] ^= 1
w(T, "bad-crc", bytes(bad))
# entry 2 rewritten with a fresh CRC: chain broken
l2 = log(life[:2]) + chunk(1, canon({"kind": "loaded", "seq": 2, "prev": ZERO, "generation_id": G2}))
w(T, "broken-chain", l2)
w(T, "bad-version", log(life[:1], ver=9))
w(T, "long-header", header(1, b"\0" * 8) + log(life[:1])[16:])
w(T, "long-header-nonzero", header(1, b"xy") + log(life[:1])[16:])
w(T, "not-json", header() + chunk(1, b"{not json") + chunk(2, b"[1,2]") + chunk(1, b""))
w(T, "odd-fields", log([(1, {"generation_id": "x" * 200, "receipt": "y" * 300}),
                        (1, {"generation_id": 5, "receipt": [R1]}),
                        (7, {"generation_id": G1}), (0, {})]))
nokind = header() + chunk(1, canon({"seq": 0, "prev": ZERO, "generation_id": G1, "receipt": R1}))
w(T, "no-kind", nokind)
w(T, "huge-len", header() + struct.pack("<IIII", 0x4b434250, 1, 0xffffffff, 0))
w(T, "big-header-len", b"PBRCLOG\0" + struct.pack("<II", 1, 0x7fffffff))
# 'S' mode: the harness frames and chains the lines itself
def sline(kind, obj):
    return bytes([kind]) + canon(obj)
w(T, "S-lines", b"S" + b"\n".join(sline(k, e) for k, e in life))
w(T, "S-odd", b"S" + b"\n".join([sline(1, {"generation_id": G1, "receipt": R1}),
                                 sline(1, {"generation_id": G1[:10], "receipt": R1 + "00"}),
                                 bytes([1]) + b"not json", sline(0x81, {"seq": "x", "prev": 3}),
                                 sline(1, {"generation_id": G2, "receipt": R2})]))
# 'C' mode: CRCs fixed up by the harness
w(T, "C-clean", b"C" + good)

T = "fuzz_receipt"
stmt = {"_type": "https://in-toto.io/Statement/v1",
        "predicateType": "https://probity.dev/receipt/v1",
        "subject": [{"name": "bpf/xlated-insns", "digest": {"sha256": "e5" * 32}}],
        "predicate": {"generation_id": G1, "parent_generation_id": None,
                      "generation": {"provenance": "recorded", "optimizer": {"name": "none", "version": ""},
                                     "transforms": [{"id": "t1", "description": "d", "evidence": None}],
                                     "assumptions": []},
                      "artifacts": {"xlated_insns": "e5" * 32},
                      "verifier": {"accepted": True, "log_level": 4, "verified_insns": 10,
                                   "log_normalized_digest": "f6" * 32},
                      "jit": {"func_lens": [8, 4], "image_len": 12},
                      "xlated_insns_digest": "e5" * 32}}
w(T, "receipt.json", canon(stmt))
w(T, "pretty.json", json.dumps(stmt, indent=2))
w(T, "real.json", '{"a":1.5,"b":[1e3]}')
w(T, "unicode.json", '{"\u00e9":"\\u00e9\\ud83d\\ude00","z":"\\u001f\\"","a":[true,false,null,-0,9223372036854775807]}')
w(T, "deep.json", "[" * 70 + "]" * 70)
w(T, "deep-obj.json", '{"a":' * 66 + "1" + "}" * 66)
w(T, "dup.json", '{"a":1,"a":2}')
w(T, "scalar", '"just a string"')
w(T, "bigint.json", '{"n":-9223372036854775808,"m":18446744073709551616}')
w(T, "funclens.json", '{"predicate":{"jit":{"func_lens":[4294967295,-1,"x",0,1]}}}')
w(T, "vlog.txt", "func#0 @0\nverification time 12 usec\nprocessed 10 insns\nverification time")

T = "fuzz_store"
xl = bytes([0x18, 0x11, 0, 0, 5, 0, 0, 0]) + bytes(8) + bytes([0x95]) + bytes(7)
jit = bytes([0xe8, 1, 2, 3, 4, 0x48, 0xb8]) + bytes(range(8)) + bytes([0xc3])
vlog = b"processed 3 insns\nverification time 7 usec\n"
st = {"_type": "https://in-toto.io/Statement/v1",
      "predicateType": "https://probity.dev/receipt/v1",
      "subject": [{"name": "bpf/xlated-insns", "digest": {"sha256": "@1"}},
                  {"name": "jit/native-image", "digest": {"sha256": "@2"}},
                  {"name": "other", "digest": {}}],
      "predicate": {"generation_id": "@G", "parent_generation_id": G2,
                    "generation": {"provenance": "recorded",
                                   "transforms": [{"id": "t1", "evidence": "@3"},
                                                  {"id": "t2", "evidence": None},
                                                  {"id": "t3", "evidence": "nothex"}],
                                   "assumptions": [{"id": "a1", "evidence": "@4"}]},
                    "artifacts": {"xlated_insns": "@1", "jit_image": "@2", "verifier_log": "@3",
                                  "submitted_insns": "@1", "line_mapping": "@4", "btf": "ab" * 32},
                    "verifier": {"accepted": True, "log_level": 4, "verified_insns": 3,
                                 "log_normalized_digest": "@3"},
                    "jit": {"func_lens": [5, 11]},
                    "xlated_insns_digest": "@1", "native_image_digest": "@2",
                    "submitted_insns_digest": "@1", "verifier_result_digest": "00"}}
sep = b"\n--\n"
w(T, "full", bytes([1 | 2 | 4 | 8 | 16]) + canon(st) + sep + xl + sep + jit + sep + vlog + sep + b"PBLM")
w(T, "logged", b"\x01" + canon(st) + sep + xl + sep + jit + sep + vlog)
w(T, "plain", canon(stmt))
w(T, "not-json", b"\x03hello" + sep + b"artifact")
w(T, "empty", b"")
w(T, "no-funclens", b"\x11" + canon(dict(st, predicate=dict(st["predicate"], jit={"func_lens": [99999, -5, "x"]}))) + sep + xl + sep + jit)
# a FIFO as an object and as lifecycle.log: verify must not hang (fixed
# in store.c pb_store__get and framing.c frame_reader__open)
w(T, "fifos", bytes([32 | 64 | 16]) + canon(st) + sep + xl)
