#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""load.py REJIT_ERR CPU PKT[,PKT...] [--hold-planted REPEAT]: the CPU load of
bench/forensics.sh. The veth traffic of `probity rejit` costs ~100 ns per
packet (a few samples a second in XDP code); this actor executes, pinned to
CPU, the generation named in the specializer's latest progress line
("gen N (prog P ...) active", "deopt: ... -> gen 0") through
BPF_PROG_TEST_RUN (the generation's own JIT image; the bpf() syscall made
here through ctypes, as `bpftool prog run id P data_in PKT repeat R`
would, without a process per run), chunk after chunk, cycling through the
packets (a TCP frame fails a specialized generation's guards: its tail call
runs generation 0's image). It follows the log with a lag, so a chunk
started before a swap keeps running the old image after it: in-flight
executions. With --hold-planted REPEAT, the first chunk of the planted
generation (the line naming hash-unroll) is REPEAT runs long (seconds).
Runs until REJIT_ERR.done exists.
"""
import ctypes, os, re, struct, sys, time

libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF, PROG_TEST_RUN, PROG_GET_FD_BY_ID = 321, 10, 13


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    return r, buf


def test_run(prog_id, data, repeat):
    fd, _ = bpf(PROG_GET_FD_BY_ID, struct.pack('<III', prog_id, 0, 0))
    if fd < 0:
        return False
    din = ctypes.create_string_buffer(data, len(data))
    dout = ctypes.create_string_buffer(256)
    attr = struct.pack('<IIIIQQII', fd, 0, len(data), 256, ctypes.addressof(din), ctypes.addressof(dout),
                       repeat, 0)
    r, _ = bpf(PROG_TEST_RUN, attr)
    os.close(fd)
    return r == 0


err, cpu = sys.argv[1], int(sys.argv[2])
pkts = [open(p, 'rb').read() for p in sys.argv[3].split(',')]
hold = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == '--hold-planted' else 0
os.sched_setaffinity(0, {cpu})
gen0 = cur = None
planted = set()
held = False
REPEAT = 20000   # ~2 ms of a ~100 ns generation; ~1.8 s of the ~90 us planted one
pos, k, runs, fails = 0, 0, 0, 0
print('load.py cpu %d: ready' % cpu, file=sys.stderr, flush=True)
while not os.path.exists(err + '.done'):
    try:
        with open(err) as f:
            f.seek(pos)
            data = f.read()
            pos = f.tell()
    except OSError:
        data = ''
    for line in data.splitlines():
        m = re.search(r'gen (\d+) \(prog (\d+)[,)].*(attached|active)', line)
        if m:
            cur = int(m.group(2))
            if m.group(1) == '0':
                gen0 = cur
            if 'hash-unroll' in line:
                planted.add(cur)
        elif 'deopt:' in line and '-> gen 0' in line and gen0:
            cur = gen0
    if cur is None:
        time.sleep(0.01)
        continue
    rep = REPEAT
    if cur in planted and hold and not held:
        rep, held = hold, True
    if test_run(cur, pkts[k % len(pkts)], rep):
        runs += 1
    else:
        fails += 1       # not (yet, or no longer) loaded
    k += 1
    # a duty cycle: the specializer needs the CPUs too (a ~2 ms chunk of
    # an ordinary generation, then 8 ms off)
    time.sleep(0.008)
print('load.py cpu %d: %d test runs, %d refused' % (cpu, runs, fails), file=sys.stderr)
