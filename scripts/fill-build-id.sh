#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fill-build-id.sh TEMPLATE BINARY OUT
#
# Writes OUT: the manifest TEMPLATE with the @BUILD_ID@ of each build_id: line replaced by the
# GNU build-id of BINARY (lower-case hex, as `readelf -n` prints it). The
# write is atomic (temporary file in OUT's directory, then mv), so a reader
# never sees a half-written manifest. Fails when BINARY has no build-id or
# TEMPLATE has no placeholder.
set -eu

prog=fill-build-id.sh
die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}

[ $# -eq 3 ] || {
	printf 'usage: %s TEMPLATE BINARY OUT\n' "$prog" >&2
	exit 2
}
template=$1
binary=$2
out=$3

[ -r "$template" ] || die "cannot read template $template"
[ -r "$binary" ] || die "cannot read binary $binary"
command -v readelf >/dev/null 2>&1 || die "readelf not found (install binutils)"
grep -q '^[[:space:]]*build_id:.*@BUILD_ID@' "$template" || die "$template has no @BUILD_ID@ placeholder"

notes=$(LC_ALL=C readelf -n "$binary" 2>&1) || die "readelf -n $binary failed: $notes"
build_id=$(printf '%s\n' "$notes" |
	sed -n 's/^[[:space:]]*Build ID:[[:space:]]*\([0-9A-Fa-f]*\)[[:space:]]*$/\1/p' |
	head -n 1 | tr 'A-F' 'a-f')
[ -n "$build_id" ] ||
	die "$binary has no GNU build-id note (link it with -Wl,--build-id)"
len=${#build_id}
if [ $((len % 2)) -ne 0 ] || [ "$len" -lt 8 ] || [ "$len" -gt 128 ]; then
	die "$binary: build-id '$build_id' is not 8..128 hex digits of even length"
fi

outdir=$(dirname "$out")
mkdir -p "$outdir"
tmp="$outdir/.$(basename "$out").tmp.$$"
trap 'rm -f "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
# only in build_id values, never in comments that mention the placeholder
sed "/^[[:space:]]*build_id:/s/@BUILD_ID@/$build_id/" "$template" >"$tmp"
mv -f "$tmp" "$out"
trap - EXIT
