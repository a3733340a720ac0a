#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# build.sh: PostgreSQL 15 from Debian source for the real-code mutation
# benchmark (issue 15, bench/realmut.sh). Root; not in CI.
#
#   bench/realmut/build.sh base              # apt-get source + configure +
#                                            # the server binary
#   bench/realmut/build.sh variant NAME      # one variant's two binaries
#
# Cache: $REALMUT_CACHE (default /var/cache/probity-realmut), never the repo.
#   src/postgresql-15-*/   the source tree, built once in place (hooks.patch
#                          applied: the semantic-site macros, empty unless
#                          -DREALMUT_INSTR), with realmut_rec.{c,h} copied in
#   inst/base/             bin/postgres of that tree (hooks compiled out) and
#                          share/postgresql, copied from the installed
#                          postgresql-15 package (the same version: checked)
#   var/NAME-HASH/{plain,instr}/bin/postgres
#                          per variant: plain = hooks compiled out (the
#                          manifest, system-only and bare arms); instr =
#                          in-process recorder (on when the data
#                          directory holds realmut_rec/) + sys/sdt.h probes (compiled-in
#                          and USDT arms). Each is a copy of inst/base with
#                          bin/postgres replaced.
# A variant = clean (no patch) or one patch of bench/realmut/patches. A
# variant build applies its patch to the one tree, recompiles the touched
# objects of src/backend/storage/buffer and relinks postgres (about a
# minute on 2 cores), copies the binary out and reverts the patch; the
# result is cached under the patch's hash (a changed patch rebuilds).
# Only the server binary is built (src/backend): initdb, pgbench and psql
# are the installed package's (initdb and pg_ctl refuse a server whose
# version string differs, so realmut.sh starts the server binary itself).
# Configure: Debian's own flags where they matter here (--enable-dtrace,
# --enable-debug, -O2 -g -fno-omit-frame-pointer, the same hardening),
# without the optional libraries (llvm JIT, tcl/perl/python, icu, ...)
# that only lengthen the build.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${REALMUT_CACHE:-/var/cache/probity-realmut}
JOBS=${REALMUT_JOBS:-2}
mkdir -p "$CACHE/src" "$CACHE/var"
exec 9>"$CACHE/.lock"
flock 9

# ensure_hooks SRC: hooks.patch applied once (the base build compiles it
# out: REALMUT_EVENT is empty without -DREALMUT_INSTR)
ensure_hooks() {
	if [ ! -f "$1/.realmut-hooks" ]; then
		patch -d "$1" -p1 -s <"$HERE/patches/hooks.patch"
		cp "$HERE/rec/realmut_rec.c" "$HERE/rec/realmut_rec.h" "$1/src/backend/storage/buffer/"
		touch "$1/.realmut-hooks"
	fi
}

# recompile_list SRC PATCH: the backend files a header-changing patch
# needs recompiled (the tree has no dependency tracking): those naming the
# identifiers of its "# realmut-recompile:" line
recompile_list() {
	ids=$(sed -n 's/^# realmut-recompile: //p' "$2")
	[ -n "$ids" ] || return 0
	for id in $ids; do
		grep -rlw --include='*.c' "$id" "$1/src/backend"
		# and the files including a header that names it (nbtree.h's
		# BTScanPosUnpin calls ReleaseBuffer)
		for h in $(grep -rlw --include='*.h' "$id" "$1/src/include" "$1/src/backend"); do
			grep -rl --include='*.c' "#include \".*$(basename "$h")\"" "$1/src/backend"
		done
	done | sort -u
}

srcdir() { ls -d "$CACHE"/src/postgresql-15-*/ 2>/dev/null | head -1 | sed 's:/$::'; }

build_base() {
	S=$(srcdir)
	if [ -z "$S" ]; then
		(cd "$CACHE/src" && apt-get source -q postgresql-15 >/dev/null)
		S=$(srcdir)
	fi
	[ -n "$S" ] || { echo "build.sh: apt-get source postgresql-15 failed" >&2; exit 1; }
	# the installed server's tools and share files are reused: same version
	v=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null | sed 's/-.*//')
	[ "$S" = "$CACHE/src/postgresql-15-$v" ] ||
		{ echo "build.sh: source $S is not the installed postgresql-15 $v" >&2; exit 1; }
	ensure_hooks "$S"
	if [ ! -f "$S/config.status" ]; then
		(cd "$S" && ./configure -q --prefix="$CACHE/inst/base" \
			--enable-dtrace --enable-debug --with-openssl \
			--without-readline --without-icu --with-extra-version=" (probity realmut)" \
			CFLAGS="-g -O2 -fstack-protector-strong -Wformat -Werror=format-security -fno-omit-frame-pointer" \
			CPPFLAGS="-Wdate-time -D_FORTIFY_SOURCE=2" LDFLAGS="-Wl,-z,relro -Wl,-z,now")
	fi
	if [ ! -x "$CACHE/inst/base/bin/postgres" ]; then
		# the generated headers first: the postgres target alone does not
		# order them before its objects (a fresh tree fails on
		# utils/errcodes.h under -j2)
		make -s -C "$S/src/backend" generated-headers >/dev/null
		make -s -C "$S/src/backend" -j"$JOBS" postgres >/dev/null
		# share/postgresql: the installed package's (same version), with the
		# system time zones this build (no --with-system-tzdata) looks up
		# under share/postgresql/timezone
		rm -rf "$CACHE/inst/base"
		mkdir -p "$CACHE/inst/base/bin" "$CACHE/inst/base/share"
		cp -a /usr/share/postgresql/15 "$CACHE/inst/base/share/postgresql"
		ln -s /usr/share/zoneinfo "$CACHE/inst/base/share/postgresql/timezone"
		cp "$S/src/backend/postgres" "$CACHE/inst/base/bin/postgres"
	fi
	echo "$CACHE/inst/base"
}

# variant NAME: NAME = clean or a patch in patches/ (NAME.patch)
build_variant() {
	name=$1
	S=$(srcdir)
	[ -n "$S" ] && [ -x "$CACHE/inst/base/bin/postgres" ] || build_base >/dev/null
	S=$(srcdir)
	if [ "$name" = clean ]; then
		p=""; h=$(cat "$HERE/patches/hooks.patch" "$HERE/rec/realmut_rec.c" "$HERE/rec/realmut_rec.h" | sha256sum | cut -c1-12)
	else
		p="$HERE/patches/$name.patch"
		[ -f "$p" ] || { echo "build.sh: no patch $p" >&2; exit 1; }
		h=$(cat "$p" "$HERE/patches/hooks.patch" "$HERE/rec/realmut_rec.c" "$HERE/rec/realmut_rec.h" | sha256sum | cut -c1-12)
	fi
	out="$CACHE/var/$name-$h"
	if [ -x "$out/instr/bin/postgres" ] && [ -x "$out/plain/bin/postgres" ]; then
		echo "$out"; return 0
	fi
	ensure_hooks "$S"
	B="$S/src/backend/storage/buffer"
	cp "$HERE/rec/realmut_rec.c" "$HERE/rec/realmut_rec.h" "$B/"
	extra=""
	if [ -n "$p" ]; then
		patch -d "$S" -p1 -s <"$p"
		extra=$(recompile_list "$S" "$p")
	fi
	rc=0
	for kind in plain instr; do
		copt=""; [ $kind = instr ] && copt="-DREALMUT_INSTR"
		# shellcheck disable=SC2086
		touch "$B"/*.c $extra
		if make -s -C "$S/src/backend" -j"$JOBS" COPT="$copt" postgres >/dev/null; then
			rm -rf "$out/$kind"; mkdir -p "$out"
			cp -a "$CACHE/inst/base" "$out/$kind"
			cp "$S/src/backend/postgres" "$out/$kind/bin/postgres"
		else
			rc=1; break
		fi
	done
	[ -z "$p" ] || patch -d "$S" -p1 -R -s <"$p"
	# shellcheck disable=SC2086
	touch "$B"/*.c $extra
	[ $rc = 0 ] || { echo "build.sh: variant $name failed to build" >&2; exit 1; }
	echo "$out"
}

case "${1:-}" in
base) build_base ;;
variant) build_variant "$2" ;;
*) echo "usage: build.sh base | variant NAME" >&2; exit 2 ;;
esac
