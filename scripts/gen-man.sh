#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# gen-man.sh: a man page from one of docs/*.md with pandoc (Debian's).
#   scripts/gen-man.sh SRC.md NAME SECTION VERSION OUT
# The first line of SRC ("# NAME(SECTION)" or a title) is dropped: the
# man header carries it. Links to other docs become plain text.
set -eu
src=$1 name=$2 section=$3 version=$4 out=$5
command -v pandoc >/dev/null 2>&1 || { echo "gen-man.sh: pandoc missing (scripts/install-deps.sh)" >&2; exit 1; }
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(stat -c %Y "$src")}" +%Y-%m-%d)
tmp="$out.tmp"
sed 1d "$src" | pandoc -s -f gfm -t man --shift-heading-level-by=-1 \
	-M title="$(echo "$name" | tr a-z A-Z)" -M section="$section" -M date="$date" \
	-M footer="probity $version" -M header="probity manual" -o "$tmp"
mv "$tmp" "$out"
