#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# install.sh: `make install PREFIX=/usr/local DESTDIR=$tmp` installs the
# binary, probity(1) and probity-manifest(5) (generated from docs/*.md with
# pandoc; `man -l` renders them with every command's section), the bash
# completion generated from the command tables (completing commands,
# subcommands and options in a real bash), and the example manifests
# (which lint clean), probity-agent(8) and the agent's systemd unit
# (`systemd-analyze verify` when it exists, without starting it); `make
# uninstall` removes them all.
set -u
. tests/cli/lib.sh
for t in make pandoc man bash; do
	command -v $t >/dev/null 2>&1 || { echo "FAIL: $t missing (scripts/install-deps.sh)"; exit 1; }
done
T=$(mktemp -d /tmp/pbinstall.XXXXXX)
trap 'rm -rf "$T"' EXIT
D="$T/root"
U="$D/usr/local"

make --no-print-directory -s install BUILD="$PROBITY_BUILD" PREFIX=/usr/local DESTDIR="$D" \
	>"$T/make.out" 2>&1 || { err "make install failed: $(tail -5 "$T/make.out")"; exit 1; }
for f in bin/probity share/man/man1/probity.1 share/man/man5/probity-manifest.5 \
	share/bash-completion/completions/probity share/doc/probity/examples/postgres-lwlock.yaml \
	share/man/man8/probity-agent.8 lib/systemd/system/probity-agent.service; do
	[ -f "$U/$f" ] || err "not installed: /usr/local/$f"
done
[ -x "$U/bin/probity" ] && "$U/bin/probity" --version | grep -q '^probity ' || err "installed binary does not run"
"$U/bin/probity" manifest lint "$U/share/doc/probity/examples/postgres-lwlock.yaml" >/dev/null 2>&1 ||
	err "the installed example manifest does not lint clean"

# man pages render; every command has its section in probity(1)
MANWIDTH=100 man -l "$U/share/man/man1/probity.1" >"$T/p1.txt" 2>"$T/p1.err" || err "man -l probity.1 failed"
grep -v 'warning' "$T/p1.err" | grep -q . && err "man -l probity.1: $(cat "$T/p1.err")"
head -1 "$T/p1.txt" | grep -q '^PROBITY(1)' || err "probity.1 header: $(head -1 "$T/p1.txt")"
grep -q '^NAME' "$T/p1.txt" && grep -q '^SYNOPSIS' "$T/p1.txt" && grep -q '^EXIT STATUS' "$T/p1.txt" ||
	err "probity.1 lacks NAME/SYNOPSIS/EXIT STATUS sections"
for c in $("$P" __complete); do
	grep -Eq "probity ([a-z]+, )?$c\b" "$T/p1.txt" || err "probity(1) does not mention 'probity $c'"
done
MANWIDTH=100 man -l "$U/share/man/man5/probity-manifest.5" >"$T/p5.txt" 2>/dev/null ||
	err "man -l probity-manifest.5 failed"
head -1 "$T/p5.txt" | grep -q '^PROBITY-MANIFEST(5)' || err "probity-manifest.5 header: $(head -1 "$T/p5.txt")"

MANWIDTH=100 man -l "$U/share/man/man8/probity-agent.8" >"$T/p8.txt" 2>/dev/null ||
	err "man -l probity-agent.8 failed"
head -1 "$T/p8.txt" | grep -q '^PROBITY-AGENT(8)' || err "probity-agent.8 header: $(head -1 "$T/p8.txt")"
grep -q -- '--duty' "$T/p8.txt" && grep -q '^PRIVILEGES' "$T/p8.txt" || err "probity-agent.8 lacks --duty or PRIVILEGES"

# the agent's unit: points at the installed binary, Type=notify, verified
UNIT="$U/lib/systemd/system/probity-agent.service"
grep -q '^ExecStart=/usr/local/bin/probity agent ' "$UNIT" || err "unit ExecStart: $(grep ExecStart "$UNIT")"
for k in Type=notify WatchdogSec= ProtectSystem=strict 'ReadWritePaths=/var/lib/probity /var/log/probity' \
	'AmbientCapabilities=CAP_BPF CAP_PERFMON' ExecReload=; do
	grep -q "^$k" "$UNIT" || err "unit lacks $k"
done
# (a copy whose ExecStart names the binary under DESTDIR: verify checks it
# exists; any warning, e.g. an unknown key, fails)
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/unit"
	sed "s|^ExecStart=/usr/local/bin/probity|ExecStart=$U/bin/probity|" "$UNIT" >"$T/unit/probity-agent.service"
	systemd-analyze verify --man=no "$T/unit/probity-agent.service" >"$T/verify.out" 2>&1 ||
		err "systemd-analyze verify failed: $(cat "$T/verify.out")"
	[ -s "$T/verify.out" ] && err "systemd-analyze verify: $(cat "$T/verify.out")"
fi

# completion, in bash, from the installed file
complete_words() { # LINE...: the words bash offers for the last one
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _probity; echo "${COMPREPLY[*]}"' \
		_ "$U/share/bash-completion/completions/probity" "$@"
}
[ "$(complete_words probity rec)" = "record receipts" ] ||
	err "completion: 'probity rec' -> $(complete_words probity rec)"
complete_words probity receipts ex | grep -qw export || err "completion: 'receipts ex' -> $(complete_words probity receipts ex)"
complete_words probity metrics --l | grep -qw -- --listen || err "completion: 'metrics --l'"
complete_words probity receipts export --b | grep -qw -- --bundle || err "completion: 'receipts export --b'"
# every command of the binary's table is offered
all=$(complete_words probity "")
for c in $("$P" __complete); do
	echo "$all" | grep -qw "$c" || err "completion does not offer '$c'"
done

make --no-print-directory -s uninstall BUILD="$PROBITY_BUILD" PREFIX=/usr/local DESTDIR="$D" >/dev/null 2>&1 ||
	err "make uninstall failed"
left=$(find "$D" -type f | sed "s|$D||")
[ -z "$left" ] || err "uninstall left: $left"
exit $fail
