# SPDX-License-Identifier: BSD-2-Clause
# lib.sh: throwaway real servers for benchmarks and CI tests, sourced by
# bench/real/*.sh and tests/cli/postgres.sh. Every server runs from a temp
# directory, on a free loopback port, as its usual unprivileged user, and
# is stopped by real_cleanup, which the caller installs as a trap on
# every exit path:
#
#   . bench/real/lib.sh
#   trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
#   real_tmpdir postgres; W=$REAL_DIR   # a temp dir owned by that user
#   PORT=$(real_free_port)
#   pg_start "$W" "$PORT"; PM=$PG_PID   # initdb + pg_ctl start (PostgreSQL 15)
#   real_on_exit "echo done"            # more cleanup, run in reverse order
#   real_rec_start NAME -m M --all      # probity record in the background
#   ...; real_rec_stop                  # Ctrl-C it, its exit status
#
# Functions that register cleanup set variables instead of printing: a
# command substitution would run them in a subshell and lose the
# registration.
# Nothing here touches a system service, its data or its port.

REAL_CLEANUP=""
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
# Quiet background workers (no autovacuum, bgwriter/walwriter asleep 10 s,
# no timed checkpoint) so that counts compared between two tracers
# attached a moment apart come from the clients' backends only.
PG_OPTS=${PG_OPTS:--c autovacuum=off -c bgwriter_delay=10000 -c wal_writer_delay=10000 -c checkpoint_timeout=3600}

# real_on_exit CMD: run CMD from real_cleanup (last registered runs first)
real_on_exit() { REAL_CLEANUP="$1
$REAL_CLEANUP"; }

# Every step runs even when one fails (a kill of a process already gone)
# and under set -e in the caller.
real_cleanup() {
	rc=$?
	set +e
	trap - EXIT INT TERM
	printf '%s\n' "$REAL_CLEANUP" | while IFS= read -r c; do
		[ -z "$c" ] || eval "$c" >/dev/null 2>&1 || true
	done
	REAL_CLEANUP=""
	exit $rc
}

# real_tmpdir USER: REAL_DIR = a new directory under /tmp owned by USER
# (removed at exit)
real_tmpdir() {
	REAL_DIR=$(mktemp -d /tmp/probity-real.XXXXXX) || return 1
	real_on_exit "rm -rf '$REAL_DIR'"
	chown "$1": "$REAL_DIR" && chmod 0755 "$REAL_DIR"
}

# real_cgroup: REAL_CGROUP = a new cgroup v2 for the server (its processes
# and their forks, nothing else), removed at exit after the server stops
real_cgroup() {
	cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$cg2" ] || { echo "no cgroup v2 mounted" >&2; return 1; }
	REAL_CGROUP=$(mktemp -d "$cg2/probity-real.XXXXXX" 2>/dev/null) ||
		{ REAL_CGROUP=$cg2/probity-real.$$; mkdir "$REAL_CGROUP" || return 1; }
	real_on_exit "for i in 1 2 3 4 5 6; do rmdir '$REAL_CGROUP' && break; sleep 0.5; done"
}

# real_free_port: a TCP port nothing listens on at 127.0.0.1 (the kernel
# picks it; the window until the server binds it is tiny)
real_free_port() {
	python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# real_require_tools MISSING: for a CI test, a non-empty MISSING (what is
# not installed) fails under CI=true and skips (exit 77) otherwise
real_require_tools() {
	[ -z "$1" ] && return 0
	[ "${CI:-}" = true ] && { echo "FAIL: missing under CI=true: $1"; exit 1; }
	echo "skip: missing $1 (scripts/install-deps.sh installs them)"; exit 77
}

# real_session USER: one cleanup trap for every exit path, W = a temp
# directory owned by USER, PORT = a free loopback port, phase() = a line
# with the seconds since the start
real_session() {
	T0=$(date +%s)
	trap real_cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
	real_tmpdir "$1" || return 1
	W=$REAL_DIR
	PORT=$(real_free_port)
}
phase() { echo "[$(($(date +%s) - T0)) s] $*"; }

# real_as USER CMD...: run CMD as USER (no login shell, no environment)
real_as() { u=$1; shift; runuser -u "$u" -- "$@"; }

# pg_start DIR PORT: a throwaway PostgreSQL 15 cluster in DIR/data, socket
# in DIR, listening on 127.0.0.1:PORT only; registers its stop. Settings
# stay at their defaults except those that keep it small, private and
# quiet (PG_OPTS; fsync=off: nothing here needs to survive a crash), in
# its own cgroup (REAL_CGROUP). PG_PID = the postmaster's pid.
pg_start() {
	real_as postgres "$PG_BIN/initdb" -D "$1/data" -A trust -U postgres \
		--no-sync >"$1/initdb.log" 2>&1 || { cat "$1/initdb.log" >&2; return 1; }
	real_cgroup || return 1
	real_on_exit "runuser -u postgres -- '$PG_BIN/pg_ctl' -D '$1/data' -m immediate -w -t 20 stop"
	# shellcheck disable=SC2016
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$REAL_CGROUP" \
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 \
		-o "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c max_connections=40 -c fsync=off $PG_OPTS" \
		start >/dev/null || { tail -20 "$1/server.log" >&2; return 1; }
	PG_PID=$(head -1 "$1/data/postmaster.pid")
}

# pg_psql DIR PORT SQL...: psql as postgres on the throwaway cluster
pg_psql() {
	d=$1 p=$2; shift 2
	real_as postgres "$PG_BIN/psql" -X -q -At -h "$d" -p "$p" -d postgres "$@"
}

# pg_bench DIR PORT ARGS...: pgbench as postgres on the throwaway cluster
pg_bench() {
	d=$1 p=$2; shift 2
	real_as postgres "$PG_BIN/pgbench" -h "$d" -p "$p" "$@" postgres
}

# pg_usdt_bt FILE [PID|cgroup [PROBE...]]: write a bpftrace program to FILE
# that counts PostgreSQL's own USDT probes (PROBEs, default PG_USDT_PROBES)
# per process (all processes of the binary; only PID; or with "cgroup" only
# those in REAL_CGROUP): the
# ground truth the shipped manifests are checked against. Printed at exit
# as JSON maps (bpftrace -f json), one per probe.
PG_USDT_PROBES="lwlock__acquire lwlock__condacquire lwlock__condacquire__fail
lwlock__acquire__or__wait lwlock__release lwlock__wait__start lock__wait__start
buffer__read__done"
pg_usdt_bt() {
	f=$1 filt="" probes=$PG_USDT_PROBES
	case "${2:-}" in
	"") ;;
	cgroup) filt="/cgroup == cgroupid(\"$REAL_CGROUP\")/ " ;;
	*) filt="/pid == $2/ " ;;
	esac
	[ $# -gt 2 ] && { shift 2; probes=$*; }
	: >"$f"
	for u in $probes; do
		echo "usdt:$PG_BIN/postgres:postgresql:$u $filt{ @$u[pid] = count(); }" >>"$f"
	done
}

# bt_start PROGRAM OUT: run bpftrace -f json PROGRAM > OUT in the
# background (BT_PID; extra options in BT_ARGS, e.g. -p PID), registered
# for cleanup; returns once its probes are
# attached (1 if it fails or takes over 60 s)
bt_start() {
	# shellcheck disable=SC2086
	bpftrace -f json ${BT_ARGS:-} "$1" >"$2" 2>"$2.err" &
	BT_PID=$!
	real_on_exit "kill -INT $BT_PID"
	i=0
	while [ $i -lt 300 ]; do
		grep -q attached_probes "$2" 2>/dev/null && return 0
		kill -0 $BT_PID 2>/dev/null || { cat "$2.err" >&2; return 1; }
		sleep 0.2; i=$((i + 1))
	done
	return 1
}

# bt_stop: stop bpftrace (it prints its maps) and wait for it
bt_stop() { kill -INT "$BT_PID" 2>/dev/null; wait "$BT_PID" 2>/dev/null; true; }

# pg_wait_backends PM: wait (at most 20 s) until the postmaster PM has no
# client backend left (each exits on its own after its client disconnects)
pg_wait_backends() {
	i=0
	while [ $i -lt 100 ]; do
		ps --ppid "$1" -o args= | grep -q '^postgres: postgres ' || return 0
		sleep 0.2; i=$((i + 1))
	done
	return 1
}

# pg_bench_cluster WHO INIT_ARGS...: the set-up of a bench on a throwaway
# cluster: root, PostgreSQL 15, pgbench and $P present (else a message
# "WHO: ..." and exit 1), real_session postgres (W, PORT, the cleanup
# trap), a cluster started (PM = its postmaster), then pgbench -i
# INIT_ARGS -q into $W/init.log.
pg_bench_cluster() {
	who=$1; shift
	[ "$(id -u)" -eq 0 ] || { printf '%s: needs root (BPF)\n' "$who" >&2; exit 1; }
	for x in "$PG_BIN/postgres" "$PG_BIN/pgbench" "$P"; do
		[ -x "$x" ] || { printf '%s: missing %s\n' "$who" "$x" >&2; exit 1; }
	done
	real_session postgres
	pg_start "$W" "$PORT"
	PM=$PG_PID
	pg_bench "$W" "$PORT" -i "$@" -q >"$W/init.log" 2>&1
}

# pg_session DIR PORT FD NAME: a psql session (application_name NAME)
# that reads SQL from file descriptor FD (write to it with pg_send), so
# its backend exists, idle, before the tracers attach and works only when
# told. PG_SESSION_PID = its backend's pid, PG_SESSION_PSQL its client's
# (it exits after pg_send FD '\q'). Killed at exit.
pg_session() {
	mkfifo "$1/$4.in" && chown postgres "$1/$4.in"
	real_as postgres "$PG_BIN/psql" -X -q -At \
		"host=$1 port=$2 dbname=postgres application_name=$4" \
		<"$1/$4.in" >"$1/$4.out" 2>&1 &
	PG_SESSION_PSQL=$!
	real_on_exit "kill $!"
	eval "exec $3>\"\$1/\$4.in\""
	i=0 PG_SESSION_PID=""
	while [ $i -lt 100 ] && [ -z "$PG_SESSION_PID" ]; do
		PG_SESSION_PID=$(pg_psql "$1" "$2" -c \
			"SELECT pid FROM pg_stat_activity WHERE application_name = '$4'")
		[ -n "$PG_SESSION_PID" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$PG_SESSION_PID" ]
}

# pg_send FD SQL: send SQL to the session reading FD
pg_send() { eval "printf '%s\n' \"\$2\" >&$1"; }

# --- Redis 7.0 (bench/real/redis.sh, tests/cli/redis.sh) ---------------
REDIS_BIN=${REDIS_BIN:-/usr/bin/redis-server}

# redis_start DIR PORT [ARGS...]: a throwaway redis-server as user redis,
# working directory DIR, listening on 127.0.0.1:PORT only, no persistence,
# in its own cgroup (REAL_CGROUP); ARGS are more config options
# (--maxmemory 2mb ...). setpriv, not runuser: it execs, so REDIS_PID is
# the server itself. Registers its stop.
redis_start() {
	d=$1 p=$2; shift 2
	real_cgroup || return 1
	# shellcheck disable=SC2016
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$REAL_CGROUP" \
		setpriv --reuid=redis --regid=redis --init-groups -- "$REDIS_BIN" --port "$p" --bind 127.0.0.1 --dir "$d" \
		--save '' --appendonly no --daemonize no --logfile "$d/redis.log" "$@" &
	REDIS_PID=$!
	real_on_exit "kill $REDIS_PID; i=0; while kill -0 $REDIS_PID && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done; kill -9 $REDIS_PID"
	i=0
	while [ $i -lt 100 ]; do
		redis-cli -h 127.0.0.1 -p "$p" PING 2>/dev/null | grep -q PONG && return 0
		kill -0 $REDIS_PID 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	tail -20 "$d/redis.log" >&2
	return 1
}

# redis_info PORT OUT: INFO (all sections) of the throwaway server into OUT
redis_info() { redis-cli -h 127.0.0.1 -p "$1" INFO everything >"$2"; }

# redis_workload PORT DIR N BLPOPS: the bounded loopback workload the Redis
# counts are checked on (all to 127.0.0.1:PORT): redis-benchmark -n N -c 10
# of SET, GET, LPUSH; BLPOPS redis-cli clients block in BLPOP (timeout 10 s)
# while DIR/info_mid is read (blocked_clients), then one LPUSH serves
# them; then maxmemory 2 MB allkeys-random and N/4 SETs of 1 KiB values
# on 100000 random keys evict keys; maxmemory back to 0.
redis_workload() {
	p=$1 d=$2 n=$3 b=$4
	rc() { redis-cli -h 127.0.0.1 -p "$p" "$@"; }
	redis-benchmark -h 127.0.0.1 -p "$p" -n "$n" -c 10 -t set,get,lpush -q >"$d/bench.out" 2>&1 || return 1
	i=0 bp=""
	while [ $i -lt "$b" ]; do
		rc BLPOP probity:q 10 >"$d/blpop.$i" 2>&1 &
		bp="$bp $!"; i=$((i + 1))
	done
	i=0
	while [ $i -lt 50 ] && [ "$(rc INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" != "$b" ]; do
		sleep 0.1; i=$((i + 1))
	done
	redis_info "$p" "$d/info_mid"
	i=0 v=""
	while [ $i -lt "$b" ]; do v="$v x$i"; i=$((i + 1)); done
	# shellcheck disable=SC2086
	rc LPUSH probity:q $v >/dev/null
	# shellcheck disable=SC2086
	wait $bp
	rc CONFIG SET maxmemory-policy allkeys-random >/dev/null
	rc CONFIG SET maxmemory 2mb >/dev/null
	redis-benchmark -h 127.0.0.1 -p "$p" -n $((n / 4)) -c 2 -r 100000 -d 1024 -t set -q \
		>>"$d/bench.out" 2>&1 || return 1
	rc CONFIG SET maxmemory 0 >/dev/null
	# the clients' frees (freeClient runs when the server reads their EOF)
	i=0
	while [ $i -lt 50 ] && [ "$(rc INFO clients | tr -d '\r' | sed -n 's/^connected_clients://p')" != 1 ]; do
		sleep 0.1; i=$((i + 1))
	done
	sleep 0.3	# the last redis-cli's own free
}

# --- MariaDB 10.11 (mariadb-server) ---------------------------------------
# md_start DIR PORT: a throwaway MariaDB server in DIR/data (no /etc/mysql:
# --no-defaults), socket DIR/sock, listening on 127.0.0.1:PORT only, as
# user mysql (setpriv execs, so MD_PID is mariadbd itself), in its own cgroup (REAL_CGROUP); registers its stop.
# MD_PID = mariadbd's pid. performance_schema is on (metadata-lock
# instrument) so that its tables can be read as ground truth.
MD_OPTS="--skip-log-bin --innodb-buffer-pool-size=32M --innodb-log-file-size=16M
--performance-schema=ON --performance-schema-instrument=wait/lock/metadata/sql/mdl=ON
--innodb-flush-log-at-trx-commit=0 --max-connections=60"
md_start() {
	mariadb-install-db --no-defaults --user=mysql --datadir="$1/data" \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$1/install.log" 2>&1 || { tail -20 "$1/install.log" >&2; return 1; }
	real_cgroup || return 1
	# shellcheck disable=SC2016,SC2086
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$REAL_CGROUP" \
		setpriv --reuid=mysql --regid=mysql --init-groups /usr/sbin/mariadbd --no-defaults --datadir="$1/data" \
		--socket="$1/sock" --port="$2" --bind-address=127.0.0.1 \
		--pid-file="$1/mariadbd.pid" --log-error="$1/server.log" $MD_OPTS &
	MD_PID=$!
	real_on_exit "kill $MD_PID; i=0; while kill -0 $MD_PID 2>/dev/null && [ \$i -lt 100 ]; do sleep 0.2; i=\$((i+1)); done; kill -9 $MD_PID 2>/dev/null"
	i=0
	while ! md_sql "$1" "SELECT 1" >/dev/null 2>&1; do
		if ! kill -0 $MD_PID 2>/dev/null || [ $i -ge 300 ]; then
			tail -20 "$1/server.log" >&2; return 1
		fi
		sleep 0.2; i=$((i + 1))
	done
}

# md_sql DIR SQL: run SQL as root through the socket (batch, no headers)
md_sql() { mariadb --no-defaults -uroot -S "$1/sock" -N -B -e "$2"; }

# md_status DIR: SHOW GLOBAL STATUS as NAME<TAB>VALUE lines
md_status() { md_sql "$1" "SHOW GLOBAL STATUS"; }

# --- Apache 2.4 (apache2, apache2-utils) -----------------------------------
APACHE_BIN=${APACHE_BIN:-/usr/sbin/apache2}
# APACHE_BIN/APACHE_MODS may name another build (e.g. one unpacked with
# dpkg -x, for `record --rebind`; docs/servers.md "Rebinding")
APACHE_MODS=${APACHE_MODS:-/usr/lib/apache2/modules}
# Fixed pool: 2 children x 3 worker threads, no spawning or reaping while
# measured (MaxSpareThreads = MaxRequestWorkers), so the counts compare.
APACHE_THREADS=${APACHE_THREADS:-3}
APACHE_SERVERS=${APACHE_SERVERS:-2}

# apache_start DIR PORT: a throwaway apache2 (event MPM) with its own
# config DIR/httpd.conf (nothing from /etc/apache2), ServerRoot DIR,
# listening on 127.0.0.1:PORT only, children and the cgid daemon as
# www-data (the parent stays root to bind and switch users, as the
# distribution's service does), in its own cgroup (REAL_CGROUP).
# Serves DIR/htdocs/index.html (2 KiB), /server-status (mod_status,
# ExtendedStatus On) and /cgi/slow.cgi (DIR/htdocs/cgi, mod_cgid; sleeps
# APACHE_SLOW_S, default 0.5 s). APACHE_PID = the parent's pid.
# Registers its stop.
apache_start() {
	d=$1 p=$2
	mkdir -p "$d/htdocs/cgi" "$d/logs" || return 1
	head -c 2048 /dev/zero | tr '\0' x >"$d/htdocs/index.html"
	printf '#!/bin/sh\nsleep %s\nprintf "Content-Type: text/plain\\r\\n\\r\\nslow\\n"\n' \
		"${APACHE_SLOW_S:-0.5}" >"$d/htdocs/cgi/slow.cgi"
	chmod 0755 "$d/htdocs/cgi/slow.cgi"
	chown -R www-data: "$d/logs"
	w=$((APACHE_THREADS * APACHE_SERVERS))
	cat >"$d/httpd.conf" <<CONF
ServerRoot "$d"
ServerName 127.0.0.1
Listen 127.0.0.1:$p
PidFile "$d/httpd.pid"
ErrorLog "$d/logs/error.log"
LogLevel warn
User www-data
Group www-data
LoadModule mpm_event_module $APACHE_MODS/mod_mpm_event.so
LoadModule authz_core_module $APACHE_MODS/mod_authz_core.so
LoadModule status_module $APACHE_MODS/mod_status.so
LoadModule cgid_module $APACHE_MODS/mod_cgid.so
ScriptSock "$d/logs/cgisock"
StartServers $APACHE_SERVERS
ServerLimit $APACHE_SERVERS
ThreadsPerChild $APACHE_THREADS
ThreadLimit $APACHE_THREADS
MaxRequestWorkers $w
MinSpareThreads 1
MaxSpareThreads $w
MaxConnectionsPerChild 0
KeepAlive Off
ExtendedStatus On
DocumentRoot "$d/htdocs"
<Directory />
	Require all granted
</Directory>
<Location /server-status>
	SetHandler server-status
</Location>
<Directory "$d/htdocs/cgi">
	Options +ExecCGI
	SetHandler cgi-script
</Directory>
CONF
	real_cgroup || return 1
	# shellcheck disable=SC2016
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$REAL_CGROUP" \
		"$APACHE_BIN" -f "$d/httpd.conf" -DFOREGROUND >"$d/logs/stdout" 2>&1 &
	APACHE_PID=$!
	real_on_exit "kill -TERM $APACHE_PID; i=0; while kill -0 $APACHE_PID && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done; kill -9 $APACHE_PID; for q in \$(cat '$REAL_CGROUP/cgroup.procs'); do kill -9 \$q; done"
	i=0
	while [ $i -lt 150 ]; do
		[ "$(apache_status "$p" | sed -n 's/^IdleWorkers: //p')" = $((w - 1)) ] && return 0
		kill -0 $APACHE_PID 2>/dev/null || break
		sleep 0.2; i=$((i + 1))
	done
	cat "$d/logs/stdout" >&2; tail -20 "$d/logs/error.log" >&2
	return 1
}

# apache_status PORT: mod_status's machine-readable page (?auto)
apache_status() {
	python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/server-status?auto" % sys.argv[1], timeout=30).read().decode(), end="")' "$1" 2>/dev/null
}

# real_rec_start NAME ARGS...: `$P -j record -o $W/NAME.trace ARGS...` in
# the background (REC_PID, Ctrl-C'd at exit; its stdout in $W/NAME.rec,
# stderr in $W/NAME.rerr); returns once it has attached (its trace file
# exists), or 1 with the reason on stderr when it died or took 60 s
real_rec_start() {
	n=$1; shift
	"$P" -j record -o "$W/$n.trace" "$@" >"$W/$n.rec" 2>"$W/$n.rerr" &
	REC_PID=$!
	real_on_exit "kill -INT $REC_PID"
	i=0
	while [ ! -s "$W/$n.trace" ]; do
		kill -0 "$REC_PID" 2>/dev/null ||
			{ echo "FAIL: record $n: $(tail -3 "$W/$n.rerr")" >&2; return 1; }
		[ $i -lt 600 ] || { echo "FAIL: record $n did not attach in 60 s" >&2; return 1; }
		sleep 0.1; i=$((i + 1))
	done
}

# real_rec_stop: Ctrl-C the recorder real_rec_start started and wait for
# it; returns its exit status
real_rec_stop() { kill -INT "$REC_PID" 2>/dev/null; wait "$REC_PID"; }
