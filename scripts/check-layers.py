#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check-layers: the module map in docs/HACKING.md against the tree.

  scripts/check-layers.py [--objs BUILD/obj/src/cli]

Checks, printing one line per problem (exit 1 if any):
- every folder under src/ is in HACKING.md's "who may include whom" block,
  and every folder named there exists;
- every #include "X/..." from a file in folder F names a folder F may
  include (its own, the listed ones, or "probity" = include/probity/);
- the allowed graph has no cycle (so no include circle between folders);
- no file outside folder X includes one of X's private *_int.h headers;
- with --objs: no object of a src/cli command file uses a function defined
  in another command file (only main.o, args.o and stop.o are shared; a
  command may span NAME.c and NAME_*.c, e.g. receipts.c + receipts_sign.c).
"""
import os, re, subprocess, sys

DOC = 'docs/HACKING.md'
BLOCK = re.compile(r'<!-- layers -->\n```\n(.*?)```', re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_0-9]+)/([^"]+)"', re.M)
SHARED_CLI = {'main.o', 'args.o', 'stop.o'}


def read_layers(problems):
    text = open(DOC, encoding='utf-8').read()
    m = BLOCK.search(text)
    if not m:
        problems.append(f'{DOC}: no "<!-- layers -->" block followed by a ``` fence')
        return {}
    allowed = {}
    for n, line in enumerate(m.group(1).splitlines(), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        if ':' not in line:
            problems.append(f'{DOC}: layers block line {n}: expected "folder: deps...", found "{line}"')
            continue
        k, v = line.split(':', 1)
        allowed[k.strip()] = set(v.split())
    return allowed


def check_acyclic(allowed, problems):
    state = {}

    def visit(f, path):
        if state.get(f) == 1:
            problems.append('layers block has a cycle: ' + ' -> '.join(path + [f]))
            return
        if state.get(f) == 2:
            return
        state[f] = 1
        for d in sorted(allowed.get(f, ())):
            visit(d, path + [f])
        state[f] = 2

    for f in sorted(allowed):
        visit(f, [])


def check_includes(allowed, problems):
    folders = sorted(d for d in os.listdir('src') if os.path.isdir(os.path.join('src', d)))
    for f in folders:
        if f not in allowed:
            problems.append(f'src/{f}/ is not in {DOC}\'s layers block')
    for f in allowed:
        if f not in folders:
            problems.append(f'{DOC} names src/{f}/, which does not exist')
        for d in allowed[f]:
            if d not in allowed and d != 'probity':
                problems.append(f'{DOC}: {f} may include "{d}", which is not a folder in the block')
    for f in folders:
        for dirpath, _, files in os.walk(os.path.join('src', f)):
            for name in sorted(files):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, name)
                for m in INCLUDE.finditer(open(path, encoding='utf-8', errors='replace').read()):
                    tgt, hdr = m.group(1), m.group(2)
                    if tgt != f and tgt != 'probity' and tgt not in allowed.get(f, ()):
                        problems.append(f'{path}: includes "{tgt}/{hdr}", but src/{f}/ may not include src/{tgt}/')
                    if tgt != f and hdr.endswith('_int.h'):
                        problems.append(f'{path}: includes "{tgt}/{hdr}", a header private to src/{tgt}/')


def command_of(obj):
    """receipts_sign.o is part of the receipts command (NAME.c, NAME_*.c)."""
    return obj[:-2].split('_')[0]


def check_cli_objects(objdir, problems):
    objs = sorted(o for o in os.listdir(objdir) if o.endswith('.o'))
    defined = {}
    for o in objs:
        out = subprocess.run(['nm', '--defined-only', '-g', os.path.join(objdir, o)],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TDBR':
                defined[parts[2]] = o
    for o in objs:
        if o in SHARED_CLI:
            continue
        out = subprocess.run(['nm', '-u', os.path.join(objdir, o)],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            sym = line.split()[-1]
            owner = defined.get(sym)
            if owner and command_of(owner) != command_of(o) and owner not in SHARED_CLI:
                problems.append(f'src/cli/{o[:-2]}.c calls {sym}, defined in src/cli/{owner[:-2]}.c '
                                '(move it into a library folder)')


def main():
    problems = []
    allowed = read_layers(problems)
    if allowed:
        check_acyclic(allowed, problems)
        check_includes(allowed, problems)
    if len(sys.argv) == 3 and sys.argv[1] == '--objs':
        check_cli_objects(sys.argv[2], problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
