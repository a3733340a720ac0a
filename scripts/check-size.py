#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check-size: print functions and files in src/ over the size limits.

A function body over 80 lines needs a comment directly above it saying why
("Over 80 lines because ..."); none may exceed 150 lines. A source file over
800 lines is an offender. Exit 1 when anything is printed, 0 otherwise.
"""
import os, re, sys

FN_SOFT, FN_HARD, FILE_MAX = 80, 150, 800
REASON = re.compile(r'over 80 lines because', re.I)
START = re.compile(r'^[A-Za-z_].*\b([A-Za-z_][A-Za-z0-9_]*)\s*\(')

def scan(path):
    out = []
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    if len(lines) > FILE_MAX:
        out.append(f'{path}: {len(lines)} lines (file limit {FILE_MAX})')
    i = 0
    while i < len(lines):
        if lines[i] == '{' and i > 0:
            # walk back to the line that names the function
            j = i - 1
            while j > 0 and not START.match(lines[j]) and lines[j].strip():
                j -= 1
            m = START.match(lines[j])
            k = i + 1
            while k < len(lines) and lines[k] != '}':
                k += 1
            n = k - i - 1
            if m and n > FN_SOFT:
                name = m.group(1)
                above = '\n'.join(lines[max(0, j - 15):j])
                reason = REASON.search(above)
                if n > FN_HARD:
                    out.append(f'{path}:{j+1}: {name}: {n} lines (hard limit {FN_HARD})')
                elif not reason:
                    out.append(f'{path}:{j+1}: {name}: {n} lines over {FN_SOFT} with no '
                               '"Over 80 lines because" comment above it')
            i = k
        i += 1
    return out

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else 'src'
    bad = []
    for d, _, files in sorted(os.walk(root)):
        for fn in sorted(files):
            if fn.endswith(('.c', '.h')):
                bad += scan(os.path.join(d, fn))
    for b in bad:
        print(b)
    return 1 if bad else 0

if __name__ == '__main__':
    sys.exit(main())
