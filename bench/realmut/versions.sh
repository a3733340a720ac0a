#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# versions.sh: issue 15, "across real versions". The manifests written for
# the installed Debian postgresql-15 (manifests/postgresql-15/*.yaml, bound
# to its build-id) applied with --rebind to other real PostgreSQL builds:
#   pg15-debian  the installed 15.x (the manifests' own binary: the control)
#   pg15-<ver>   the other 15.x build Debian offers for bookworm (security,
#                updates, backports), `apt-get download` + `dpkg -x` into
#                the cache (nothing installed, no upgrade)
#   pg<N>-src    the newest major in the next Debian release (trixie) built
#                from its Debian source package (--enable-dtrace, -O2 -g)
#                fetched through a private apt tree whose deb-src line is
#                derived from the machine's configured sources (the system's
#                apt sources and lists are not changed)
# For each build: a throwaway cluster (bench/real/lib.sh), pgbench -i -s 5,
# then per manifest one bounded `pgbench -S -T 10 -c 4` (lock.yaml: an
# advisory-lock script; buffer.yaml once more under sequential scans,
# "buffer_seq": `SELECT count(*) FROM pgbench_accounts`, -c 2) under
# `probity record --cgroup CG --rebind -m MANIFEST` (the cluster's own
# cgroup: --all limited to it) while bpftrace counts that build's own USDT
# probes in the same cgroup and run. Also `probity plan` without --rebind
# (the build-id refusal) and with it (what resolves, what is refused).
# Writes bench/results/realmut_versions.json (bench/realmut/versions_summary.py).
#
#   bench/realmut/versions.sh [fetch|build|run|all]     (root; default all)
#
# Run time: fetch ~1 min; the major-version build ~15-25 min on 2 shared
# cores, once (cached: REALMUT_CACHE, default /var/cache/probity-realmut,
# under versions/); run ~1 min per build and manifest (~10 min; VERSIONS_ONLY="NAME..."
# re-measures only those builds; raw outputs stay in the cache's runs/,
# and the JSON is made from all of them). Fetch
# and build are idempotent (a finished step leaves a stamp file).
# Knobs: BUILD (build), VERSIONS_T (10), VERSIONS_CLIENTS (4),
# VERSIONS_SCALE (5), VERSIONS_NEXT ("trixie forky").
set -eu
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
C=${REALMUT_CACHE:-/var/cache/probity-realmut}/versions
NEXT=${VERSIONS_NEXT:-trixie forky}
T=${VERSIONS_T:-10}
CLIENTS=${VERSIONS_CLIENTS:-4}
SCALE=${VERSIONS_SCALE:-5}
say() { printf 'bench/versions: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (BPF, runuser)"; exit 1; }
mkdir -p "$C"

# the configured sources (scripts/install-deps.sh reads them the same way)
. scripts/apt-sources.sh

# the other postgresql-15 build(s) apt knows for this release (any suite),
# newest first, without the installed one
other15() {
	inst=$(dpkg-query -W -f '${Version}' postgresql-15 2>/dev/null || true)
	apt-cache madison postgresql-15 | awk -F'|' '$3 ~ /Packages/ { gsub(/ /,"",$2); print $2 }' |
		sort -u -r -V | grep -v -x -F "$inst" || true
}

# a version as a path bpftrace's attach-point parser takes (no + ~ :)
vdir() { printf '%s/pg15-%s' "$C" "$(printf '%s' "$1" | tr '+~:' '___')"; }

fetch15() { # VER: postgresql-15=VER extracted under $(vdir VER)/root
	d=$(vdir "$1")
	[ -f "$d/.fetched" ] && return 0
	rm -rf "$d"; mkdir -p "$d/deb" "$d/root"
	say "fetch postgresql-15=$1 (apt-get download; dpkg -x)"
	(cd "$d/deb" && apt-get download "postgresql-15=$1") || return 1
	for p in "$d"/deb/*.deb; do dpkg -x "$p" "$d/root"; done
	[ -x "$d/root/usr/lib/postgresql/15/bin/postgres" ] || return 1
	touch "$d/.fetched"
}

# the next release's newest postgresql-N source through a private apt tree
# (its own sources, lists and cache; the system's are not read or changed),
# trying the suites of NEXT in order: the first whose source downloads
# wins; $C/src/.which names it (suite, package, version)
fetch_src() {
	d=$C/src
	[ -f "$d/.fetched" ] && return 0
	uris=$(apt_archive_uris bookworm)
	[ -n "$uris" ] || { say "no configured apt source for bookworm to derive $NEXT from"; return 1; }
	rm -rf "$d"; mkdir -p "$d"
	for n in $NEXT; do
		a=$d/apt-$n
		key=/usr/share/keyrings/debian-archive-$n-stable.gpg
		[ -f "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
		mkdir -p "$a/parts" "$a/lists/partial" "$a/cache/archives/partial" "$d/src-$n"
		{ echo "Types: deb-src"; echo "URIs: $uris"; echo "Suites: $n"
		  echo "Components: main"; echo "Signed-By: $key"; } >"$a/parts/next.sources"
		say "private apt tree for $n deb-src from: $uris"
		set -- -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$a/parts" \
			-o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache"
		apt-get "$@" update >"$a/update.log" 2>&1 || { tail -3 "$a/update.log" >&2; continue; }
		pv=$(for f in "$a"/lists/*_source_Sources*; do /usr/lib/apt/apt-helper cat-file "$f"; done |
			awk '/^Package: postgresql-[0-9]+$/ {p=$2} /^Version:/ && p {print p, $2; p=""}' | sort -V | tail -1)
		[ -n "$pv" ] || { say "$n: no postgresql-N source"; continue; }
		pkg=${pv% *} ver=${pv#* }
		say "$n: $pkg $ver (apt-get source)"
		if (cd "$d/src-$n" && chown _apt . 2>/dev/null; apt-get "$@" source "$pkg=$ver") >"$a/source.log" 2>&1; then
			echo "$n $pkg $ver" >"$d/.which"
			touch "$d/.fetched"
			return 0
		fi
		say "$n: $pkg $ver did not download: $(grep -m1 '^E:' "$a/source.log")"
		echo "$n $pkg $ver $(grep -m1 '^E:' "$a/source.log")" >>"$d/.unavailable"
	done
	return 1
}

# Debian's own binary build of that package, from the same suite (a
# private apt tree again): planned against, and run when this machine's
# libraries can run it
fetch_bin() {
	d=$C/src b=$C/deb
	[ -f "$b/.fetched" ] && return 0
	[ -f "$d/.which" ] || return 1
	read -r n pkg ver <"$d/.which"
	uris=$(apt_archive_uris bookworm)
	key=/usr/share/keyrings/debian-archive-$n-stable.gpg
	[ -f "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
	rm -rf "$b"; mkdir -p "$b/apt/parts" "$b/apt/lists/partial" "$b/apt/cache/archives/partial" "$b/deb" "$b/root"
	{ echo "Types: deb"; echo "URIs: $uris"; echo "Suites: $n"; echo "Components: main"
	  echo "Architectures: $(dpkg --print-architecture)"; echo "Signed-By: $key"; } >"$b/apt/parts/next.sources"
	set -- -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$b/apt/parts" \
		-o Dir::State::Lists="$b/apt/lists" -o Dir::Cache="$b/apt/cache" -o Dir::State::status=/dev/null
	say "$n: $pkg $ver binary (apt-get download; dpkg -x)"
	apt-get "$@" update >"$b/apt/update.log" 2>&1 || { tail -3 "$b/apt/update.log" >&2; return 1; }
	(cd "$b/deb" && chown _apt . 2>/dev/null; apt-get "$@" download "$pkg=$ver") >"$b/apt/download.log" 2>&1 ||
		{ tail -3 "$b/apt/download.log" >&2; return 1; }
	for f in "$b"/deb/*.deb; do dpkg -x "$f" "$b/root"; done
	echo "$n $pkg $ver" >"$b/.which"
	touch "$b/.fetched"
}

# configure (--enable-dtrace, -O2 -g), then make and make install into
# $d/inst of what a throwaway cluster and pgbench need (the server and its
# data files (postgres.bki is installed from src/include/catalog), time zones, snowball and conversions, PL/pgSQL, libpq,
# initdb, pg_ctl, pgbench): not psql, pg_dump and the other client tools,
# whose build would double the time on 2 shared cores
PG_PARTS="src/backend src/include/catalog src/timezone src/backend/utils/mb/conversion_procs
src/backend/snowball src/pl/plpgsql/src src/interfaces/libpq src/fe_utils
src/bin/initdb src/bin/pg_ctl src/bin/pgbench"
build_src() {
	d=$C/src
	[ -f "$d/.built" ] && return 0
	read -r n pkg ver <"$d/.which"
	s=$(find "$d/src-$n" -mindepth 1 -maxdepth 1 -type d -name "postgresql-*" | head -1)
	[ -n "$s" ] || { say "no unpacked source in $d/src"; return 1; }
	say "build $s (configure --enable-dtrace; make -j2; log $d/build.log)"
	(
		cd "$s"
		[ -f config.status ] || ./configure --prefix="$d/inst" --enable-dtrace --without-icu \
			--without-readline CFLAGS='-O2 -g' || exit 1
		make -C src/common -j2 && make -C src/port -j2 || exit 1
		for p in $PG_PARTS; do make -C "$p" -j2 || exit 1; done
		for p in $PG_PARTS; do [ "$p" = src/fe_utils ] || make -C "$p" install || exit 1; done
	) >>"$d/build.log" 2>&1 || { tail -20 "$d/build.log" >&2; return 1; }
	chmod -R a+rX "$d/inst"
	touch "$d/.built"
}

# the builds measured: NAME BINDIR (a built one's postgres, initdb, pg_ctl,
# pgbench); the installed 15.x first (the manifests' own build: the control)
builds() {
	echo "pg15-installed-$(dpkg-query -W -f '${Version}' postgresql-15) /usr/lib/postgresql/15/bin"
	for v in $(other15); do
		[ -f "$(vdir "$v")/.fetched" ] && echo "pg15-$v $(vdir "$v")/root/usr/lib/postgresql/15/bin"
	done
	if [ -f "$C/src/.built" ]; then
		read -r n pkg ver <"$C/src/.which"
		echo "$pkg-$ver-$n-src $C/src/inst/bin"
	fi
	if [ -f "$C/deb/.fetched" ]; then
		read -r n pkg ver <"$C/deb/.which"
		echo "$pkg-$ver-$n-deb $C/deb/root/usr/lib/postgresql/${pkg#postgresql-}/bin"
	fi
	return 0
}

rec_start() { # OUT ARGS...: record in the background until rec_stop
	ro=$1; shift
	"$P" -j record -o "$ro.trace" "$@" >"$ro.rec" 2>"$ro.rerr" &
	REC_PID=$!
	real_on_exit "kill -INT $REC_PID"
	i=0
	while [ ! -s "$ro.trace" ]; do
		kill -0 $REC_PID 2>/dev/null || { rc=0; wait $REC_PID || rc=$?; echo $rc >"$ro.rc"; return 1; }
		[ $i -lt 1200 ] || { say "record did not attach in 120 s"; return 1; }
		sleep 0.1; i=$((i + 1))
	done
}
rec_stop() { kill -INT "$REC_PID" 2>/dev/null || true; rc=0; wait "$REC_PID" || rc=$?; echo $rc >"$1.rc"; }

# bt_halt: bt_stop, bounded: bpftrace 0.17 has been seen to ignore a
# SIGINT here and poll forever; SIGTERM after 30 s (it prints its maps
# on either)
bt_halt() {
	kill -INT "$BT_PID" 2>/dev/null || return 0
	i=0
	while kill -0 "$BT_PID" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
	kill -TERM "$BT_PID" 2>/dev/null || true
	wait "$BT_PID" 2>/dev/null || true
}

# backend_pids JOB PM: the pids of PM's client backends while JOB runs,
# one a line (the USDT counts of those pids are the clients' alone: the
# two tracers attach a moment apart, and only background processes run
# then)
backend_pids() {
	while kill -0 "$1" 2>/dev/null; do
		ps --ppid "$2" -o pid=,args= | awk '$2 == "postgres:" && $3 == "postgres" { print $1 }'
		sleep 0.5
	done | sort -u
	wait "$1" || true
}

# one build: plans, then a throwaway cluster and one recorded pgbench run
# per manifest with that build's USDT counts alongside
run_build() { # NAME BINDIR
	name=$1 PG_BIN=$2 o=$OUT/$1
	bin=$PG_BIN/postgres
	mkdir -p "$o"
	cat /proc/loadavg >"$o/loadavg"
	file -L "$bin" | sed 's/.*BuildID\[sha1\]=\([0-9a-f]*\).*/\1/' >"$o/build_id"
	runs=1
	"$bin" --version >"$o/version" 2>"$o/version.err" || runs=0
	bpftrace -l "usdt:$bin:*" 2>/dev/null | sed 's/.*://' | sort -u >"$o/usdt_probes"
	for m in $MANIFESTS; do
		rc=0; "$P" -j plan "$MDIR/$m.yaml" --binary "$bin" >"$o/$m.plan_strict" 2>"$o/$m.plan_strict.err" || rc=$?
		echo $rc >"$o/$m.plan_strict.rc"
		rc=0; "$P" -j plan "$MDIR/$m.yaml" --binary "$bin" --rebind >"$o/$m.plan" 2>"$o/$m.plan.err" || rc=$?
		echo $rc >"$o/$m.plan.rc"
		# record refuses a manifest with any refused descriptor: record
		# the rest (the refused events cut out, nothing else changed)
		cp "$MDIR/$m.yaml" "$o/$m.yaml"
		if [ "$rc" -ne 0 ]; then
			python3 "$ROOT/bench/realmut/versions_summary.py" subset "$MDIR/$m.yaml" "$o/$m.plan" "$o/$m.yaml" ||
				rm -f "$o/$m.yaml"
		fi
	done
	if [ $runs -eq 0 ]; then
		say "$name: does not run here ($(head -1 "$o/version.err")): planned only"
		return 0
	fi
	(
	trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
	real_tmpdir postgres; W=$REAL_DIR
	PORT=$(real_free_port)
	pg_start "$W" "$PORT" || exit 1
	PM=$PG_PID
	say "$name: postmaster $PM on 127.0.0.1:$PORT; pgbench -i -s $SCALE"
	pg_bench "$W" "$PORT" -i -s "$SCALE" -q >"$o/init.log" 2>&1 || exit 1
	# the lock manifest's waits: 4 clients on 2 advisory locks
	printf '%s\n' '\set k random(1, 2)' 'SELECT pg_advisory_lock(:k);' \
		'SELECT abalance FROM pgbench_accounts WHERE aid = :k;' \
		'SELECT pg_advisory_unlock(:k);' >"$W/advisory.sql"
	chmod a+r "$W/advisory.sql"
	# buffer.yaml again under sequential scans (read streams from 17 on)
	case " $MANIFESTS " in *" buffer "*)
		[ -f "$o/buffer.yaml" ] && cp "$o/buffer.yaml" "$o/buffer_seq.yaml"
		cp "$o/buffer.plan" "$o/buffer_seq.plan"
		cp "$o/buffer.plan_strict" "$o/buffer_seq.plan_strict"
		cp "$o/buffer.plan.rc" "$o/buffer_seq.plan.rc"
		cp "$o/buffer.plan_strict.rc" "$o/buffer_seq.plan_strict.rc" ;;
	esac
	echo 'SELECT count(*) FROM pgbench_accounts;' >"$W/seq.sql"
	chmod a+r "$W/seq.sql"
	for m in $MANIFESTS buffer_seq; do
		[ -f "$o/$m.plan" ] || continue
		probes=$(grep -x -F "$(printf '%s\n' $PG_USDT_PROBES)" "$o/usdt_probes" | tr '\n' ' ')
		# shellcheck disable=SC2086
		pg_usdt_bt "$W/$m.bt" cgroup $probes
		bt_start "$W/$m.bt" "$o/$m.usdt.json" || { say "$name $m: bpftrace failed"; continue; }
		[ -f "$o/$m.yaml" ] || { bt_halt; continue; }
		if rec_start "$o/$m" -m "$o/$m.yaml" --cgroup "$REAL_CGROUP" --rebind --binary "$bin"; then
			say "$name $m: pgbench ($T s, $CLIENTS clients)"
			case $m in
			lock) pg_bench "$W" "$PORT" -n -f "$W/advisory.sql" -c "$CLIENTS" -j 2 -T "$T" ;;
			buffer_seq) pg_bench "$W" "$PORT" -n -f "$W/seq.sql" -c 2 -j 2 -T "$T" ;;
			*) pg_bench "$W" "$PORT" -n -S -c "$CLIENTS" -j 2 -T "$T" ;;
			esac >"$o/$m.pgbench" 2>&1 &
			backend_pids "$!" "$PM" >"$o/$m.backends"
			pg_wait_backends "$PM" || true
			rec_stop "$o/$m"
			"$P" -j health "$o/$m.trace" >"$o/$m.health" 2>/dev/null || true
		else
			say "$name $m: record refused: $(tail -2 "$o/$m.rerr")"
		fi
		bt_halt
	done
	cat /proc/loadavg >>"$o/loadavg"
	)
}

do_run() {
	P=$ROOT/$BUILD/probity
	MDIR=$ROOT/manifests/postgresql-15
	MANIFESTS=${VERSIONS_MANIFESTS:-buffer lwlock lock}
	[ -x "$P" ] || { say "missing $P (make)"; exit 1; }
	command -v bpftrace >/dev/null || { say "missing bpftrace"; exit 1; }
	. "$ROOT/bench/real/lib.sh"
	OUT=$C/runs
	mkdir -p "$OUT"
	builds >"$OUT/builds"
	while read -r name dir <&3; do
		case " ${VERSIONS_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
		rm -rf "${OUT:?}/$name"
		run_build "$name" "$dir" || say "$name: failed (see above)"
	done 3<"$OUT/builds"
	python3 "$ROOT/bench/realmut/versions_summary.py" summary "$OUT" "$ROOT" "$T" "$CLIENTS" "$SCALE" \
		>"$ROOT/bench/results/realmut_versions.json"
	say "wrote bench/results/realmut_versions.json (raw outputs kept in $OUT)"
}

do_fetch() {
	for v in $(other15); do fetch15 "$v"; done
	fetch_src
	fetch_bin || say "no binary build of the next major (planned from the source build only)"
}

case ${1:-all} in
fetch) do_fetch ;;
build) do_fetch; build_src ;;
run) do_run ;;
all) do_fetch; build_src; do_run ;;
*) say "usage: versions.sh [fetch|build|run|all]"; exit 2 ;;
esac
