#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mk-attribute-seeds.py: seed corpora for fuzz_samples, fuzz_perfscript
and fuzz_timespec (tests/fuzz/corpus/<target>/). Sample files follow
docs/attribution.md "Sample file format"; broken variants cut a chunk,
give a record a bad size, an unterminated name, time_max before time."""
import json, os, struct, sys, zlib

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')

def chunk(t, payload):
    crc = zlib.crc32(struct.pack('<II', t, len(payload)) + payload) & 0xffffffff
    return struct.pack('<IIII', 0x4b434250, t, len(payload), crc) + payload

def jchunk(t, obj):
    return chunk(t, json.dumps(obj, sort_keys=True, separators=(',', ':')).encode())

def sample(cpu, t, ip, pid=7, tid=7, mode=1):
    return struct.pack('<HHIQQIIB7x', 1, 40, cpu, t, ip, pid, tid, mode)

def ksym(cpu, t, addr, ln, unreg, name, tmax=None):
    n = name.encode() + b'\0'
    size = (40 + len(n) + 7) & ~7
    return struct.pack('<HHIQQIHHQ', 2, size, cpu, t, addr, ln, 1, 1 if unreg else 0,
                       t if tmax is None else tmax) + n + b'\0' * (size - 40 - len(n))

def bpfev(cpu, t, ev, pid, tag=b'\x01\x23\x45\x67\x89\xab\xcd\xef', tmax=None):
    return struct.pack('<HHIQHHI8sQ', 3, 40, cpu, t, ev, 0, pid, tag, t if tmax is None else tmax)

def lost(cpu, t, n, since):
    return struct.pack('<HHIQQQ', 4, 32, cpu, t, n, since)

HDR = b'PBSAMPL\0' + struct.pack('<II', 1, 16)
header = jchunk(1, {'clock': 'CLOCK_MONOTONIC', 'clockid': 1, 'format': 'probity-samples', 'freq': 997})
snap = jchunk(2, {'mono_ns': 100, 'progs': [{'id': 10, 'tag': '0123456789abcdef', 'name': 'x',
          'jit_ranges': [{'addr': '0xffffffffa0001000', 'len': 256}]}]})
recs = (sample(0, 150, 0xffffffffa0001010) + ksym(1, 200, 0xffffffffa0002000, 128, False,
        'bpf_prog_0123456789abcdef_y') + bpfev(1, 201, 1, 11) + sample(1, 250, 0xffffffffa0002010) +
        lost(0, 300, 5, 260) + sample(0, 350, 0xffffffffa0001020) +
        ksym(1, 400, 0xffffffffa0002000, 128, True, 'bpf_prog_0123456789abcdef_y') + bpfev(1, 401, 2, 11) +
        ksym(0, 0, 0xffffffffa0002000, 128, False, 'bpf_prog_0123456789abcdef_y', tmax=450) +
        bpfev(0, 0, 1, 12, tmax=451) + sample(0, 500, 0xffffffffa0002010))
end = jchunk(4, {'stopped_by': 'SIGINT', 'stats': {'samples': 4}})
good = HDR + header + snap + chunk(3, recs) + end

out = {}
out['fuzz_samples'] = {
    'clean.pbs': good,
    'torn-tail.pbs': good[:-7],
    'no-header.pbs': HDR + snap,
    'bad-record-size.pbs': HDR + header + chunk(3, struct.pack('<HHIQ', 1, 12, 0, 5)),
    'short-sample.pbs': HDR + header + chunk(3, struct.pack('<HHIQ', 1, 16, 0, 5)),
    'name-unterminated.pbs': HDR + header + chunk(3, struct.pack('<HHIQQIHHQ', 2, 48, 0, 1, 2, 3, 1, 0, 1) + b'A' * 8),
    'tmax-before-time.pbs': HDR + header + chunk(3, bpfev(0, 100, 1, 3, tmax=50)),
    'unknown-record.pbs': HDR + header + chunk(3, struct.pack('<HHIQ', 99, 24, 0, 5) + b'\0' * 8 + recs),
    'bad-json.pbs': HDR + chunk(1, b'{not json'),
    'header-nonzero.pbs': b'PBSAMPL\0' + struct.pack('<II', 1, 20) + b'\1\0\0\0' + header,
    'crcfix.C': b'C' + HDR + header + snap + chunk(3, recs)[:16] + recs + end,
    'lifelog.J': b'J' + json.dumps([
        {'kind': 'loaded', 'generation_id': 'a' * 64, 'prog_id': 10, 'prog_tag': '0123456789abcdef',
         'jit_ranges': [{'addr': '0x1000', 'len': 256}], 'mono_ns': 50, 'realtime_ns': 1050,
         'source': 'library', 'timing': {'load_ns': 5, 'capture_ns': 5}},
        {'kind': 'activated', 'generation_id': 'a' * 64, 'prog_id': 10, 'link': {'id': 1},
         'swap_begin_mono_ns': 100, 'swap_end_mono_ns': 110, 'replaces': None},
        {'kind': 'activated', 'generation_id': 'c' * 64, 'prog_id': 12, 'link': {'id': 1},
         'swap_begin_mono_ns': 400, 'swap_end_mono_ns': 410, 'replaces': 'b' * 64},
        {'kind': 'link-updated', 'op': 'update', 'link_id': 1, 'old_prog_id': 12, 'new_prog_id': 13,
         'syscall_enter_mono_ns': 600, 'syscall_exit_mono_ns': 601},
        {'kind': 'retired', 'generation_id': 'a' * 64, 'prog_id': 10, 'mono_ns': 300, 'reason': 'x'},
        {'kind': 'unloaded', 'generation_id': 'a' * 64, 'prog_id': 10, 'mono_ns': 700,
         'ksymbols_unregistered': [{'addr': '0x1000', 'mono_ns': 650}]},
        {'kind': 'observer', 'event': 'start', 'pid': 5, 'mono_ns': 1},
        {'kind': 'observer', 'event': 'stop', 'pid': 5, 'mono_ns': 900,
         'stats': {'missed': {'perf_records_lost': 2, 'ringbuf_dropped': 1}}}]).encode(),
}
out['fuzz_perfscript'] = {
    'fields.txt': b'   6483/6484    [001]  9653.028154:  ffffffffa0001010 bpf_prog_0123456789abcdef_x\n'
                  b'      0/0       [000]  9653.030053123:  ffffffff8225fd65 pvm_safe_halt_hc\n',
    'default.txt': b'# ========\n# captured on: x\n'
                   b'       perf-exec    6483 [001]  9653.028154:    2004008 cpu-clock:ppp:  ffffffff813c84b5 sched_balance_softirq+0x5 ([kernel.kallsyms])\n'
                   b'\t    7fa318d94a60 __x86_cacheinfo_ifunc+0x0 (/usr/lib/libc.so.6)\n'
                   b'           sleep    6483 [001]  9653.030160:    2004008 cpu-clock:ppp:      7fa318d94a60 [unknown] (/usr/lib/libc.so.6)\n',
    'bad-ip.txt': b'x 1 [0] 12.5: zzzz sym\n',
    'huge-time.txt': b'1/1 [0] 99999999999999999999999.1: ffff sym\n',
    'nul.txt': b'1/1 [0] 1.1: ff\0 sym\n',
    'crlf.txt': b'1/1 [0] 1.000001: ffffffffa0001000 bpf_prog_0123456789abcdef_x\r\n',
    'offset-only-sym.txt': b'1/1 [0] 1.5: ffffffffa0001000 +0x5e\n',	# once reported as symbol ""
}
out['fuzz_timespec'] = {
    'ns': b'123456789', 'mono-ns': b'mono:123', 'mono-s': b'mono:9653.028154', 'epoch': b'@1700000000.5',
    'iso': b'2023-11-14T22:13:20.25Z', 'iso-offset': b'2023-11-14T22:13:20+02:00',
    'window': b'100..200', 'window-mixed': b'@1700000000..2023-11-14T22:13:21Z', 'window-bad': b'..5',
    'overflow': b'99999999999999999999999', 'empty': b'',
}
for target, seeds in out.items():
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data)
print('seeds written under', root)
