#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""evict.py: keep a throwaway cluster's relation files out of the page
cache, so the buffer manager's misses become real block I/O (bench/realmut,
issue 15: cross-layer attribution needs I/O to attribute).

    evict.py DIR [--every S] [--for S]

Every S seconds (default 0.2), for at most --for seconds (default: once),
posix_fadvise(POSIX_FADV_DONTNEED) on every regular file under DIR. Only
the files of DIR (the benchmark's own temp copy of the cluster) are
touched: no system-wide cache drop, no cgroup. The kernel drops the clean
cached pages and starts writeback of dirty ones (WB_SYNC_NONE, issued by
this process, which is outside the traced cgroup); pages being written or
mapped stay. Why not a memory cgroup: on the test VM the memory controller
is cgroup v1 and holds the session's own limits; a cache that is simply
kept cold needs neither.
"""
import argparse
import os
import sys
import time


def evict(d):
    n = 0
    for root, _, files in os.walk(d):
        for fn in files:
            try:
                fd = os.open(os.path.join(root, fn), os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue  # removed meanwhile, or not a regular file
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            except OSError:
                pass
            finally:
                os.close(fd)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--every', type=float, default=0.2)
    ap.add_argument('--for', dest='duration', type=float, default=0.0)
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        print('evict.py: %s: not a directory' % a.dir, file=sys.stderr)
        return 1
    end = time.monotonic() + a.duration
    rounds = 0
    while True:
        evict(a.dir)
        rounds += 1
        if time.monotonic() + a.every > end:
            break
        time.sleep(a.every)
    print('evict.py: %d rounds' % rounds, file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
