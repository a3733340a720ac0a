#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# hacking_map.sh: docs/HACKING.md (the module map) is true of the tree.
# - scripts/check-layers.py: every src/ folder is in the layers block, every
#   #include obeys it, the block has no cycle, no folder's *_int.h is
#   included from outside, no command file calls into another;
# - the map's command table and `probity help` list the same commands;
# - every path the map names exists;
# - issue-10 guarantees stay: no re-exec of /proc/self/exe, no
#   json_object_get(x, "literal") outside the typed decoders.
# The checker itself is shown to fail on a planted violation.
set -u
. tests/cli/lib.sh
MAP=docs/HACKING.md
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

out=$(python3 scripts/check-layers.py --objs "$PROBITY_BUILD/obj/src/cli" 2>&1) ||
	err "check-layers: $out"

# commands: the table's first column vs `probity help`
help_cmds=$("$P" help | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" && $1 != "help" {print $1}' | sort -u)
map_cmds=$(grep -oE '^\| `probity [a-z]+' "$MAP" | awk '{print $3}' | sort -u)
[ -n "$help_cmds" ] || err "probity help lists no commands"
[ "$help_cmds" = "$map_cmds" ] ||
	err "commands differ: help has [$(echo $help_cmds)], $MAP has [$(echo $map_cmds)]"

# every path named in the map exists (templates with NAME are skipped)
for p in $(grep -oE '`(src|include|tests|scripts|docs|bench)/[A-Za-z0-9_./-]*`' "$MAP" | tr -d '`' | sort -u); do
	case "$p" in *NAME*|*'*'*) continue ;; esac
	[ -e "$p" ] || err "$MAP names $p, which does not exist"
done

# no command re-executes the binary; JSON read back goes through decoders
hits=$(grep -rn 'proc/self/exe' src)
[ -z "$hits" ] || err "re-exec of /proc/self/exe: $hits"
hits=$(grep -rnE 'json_object_get\([^,]*, *"' src)
[ -z "$hits" ] || err "string-keyed JSON reads outside the decoders: $hits"

# the checker can fail: a planted upward include and a cross-command call
mkdir -p "$T/docs" && cp "$MAP" "$T/docs/" && cp -r src "$T/src"
echo '#include "cli/cli.h"' >>"$T/src/common/io.c"
echo '#include "receipts/receipts_int.h"' >>"$T/src/attribute/itable.c"
bad=$(cd "$T" && python3 "$PROBITY_ROOT/scripts/check-layers.py" 2>&1); rc=$?
[ $rc -eq 1 ] || err "check-layers exited $rc on a planted violation"
echo "$bad" | grep -q 'src/common/io.c: includes "cli/cli.h"' || err "upward include not caught: $bad"
echo "$bad" | grep -q 'a header private to src/receipts/' || err "private header not caught: $bad"
mkdir -p "$T/obj"
printf 'int helper_in_a(void) { return 1; }\n' >"$T/a.c"
printf 'int helper_in_a(void);\nint b(void) { return helper_in_a(); }\n' >"$T/b.c"
cc -c -o "$T/obj/a.o" "$T/a.c" && cc -c -o "$T/obj/b.o" "$T/b.c" || err "cannot build the planted objects"
bad=$(python3 scripts/check-layers.py --objs "$T/obj" 2>&1)
echo "$bad" | grep -q 'src/cli/b.c calls helper_in_a, defined in src/cli/a.c' ||
	err "cross-command call not caught: $bad"
exit $fail
