#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# install-deps.sh: install every build and test dependency of probity from
# the distribution's packages. Idempotent: a second run changes nothing.
#
# libbpf >= 1.3 is needed for uprobe_multi links with per-site cookies.
# Debian 12 ships libbpf 1.1, so on bookworm the distribution's own
# bookworm-backports suite is enabled, reusing the URIs (and keyring) that
# the machine's apt sources already use for bookworm. No mirror host is
# hard-coded here.
set -eu

log() { printf 'install-deps: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -E "$0" "$@"
	fi
	log "must run as root (or with sudo available)"
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# other apt/dpkg runs (unattended upgrades, a parallel build): wait, do not fail
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }

. /etc/os-release
codename="${VERSION_CODENAME:-}"
# apt_archive_uris, apt_suite_keyring: the configured sources, read
. "$(dirname "$0")/apt-sources.sh"

BASE_PKGS="make gcc clang llvm lld pkg-config libelf-dev zlib1g-dev libzstd-dev \
libyaml-dev libjansson-dev libcapstone-dev libssl-dev libclang-rt-14-dev \
iproute2 binutils file linux-perf procps systemtap-sdt-dev python3 \
libdw-dev python3-jsonschema python3-yaml \
libmicrohttpd-dev libarchive-dev libsystemd-dev pandoc man-db prometheus openssh-client"
BPF_PKGS="libbpf-dev bpftool"
BASE_PKGS="$BASE_PKGS chromium"	# tests: report --html rendered headless (tests/cli/report_html.sh)
# the real-server test and bench (tests/cli/postgres.sh, bench/real/postgres.sh):
# the server, pgbench, and bpftrace (the independent USDT counter)
BASE_PKGS="$BASE_PKGS postgresql-15 postgresql-contrib bpftrace"
BASE_PKGS="$BASE_PKGS redis-server redis-tools"	# tests/cli/redis.sh, bench/real/redis.sh: the server, redis-benchmark, redis-cli
# MariaDB 10.11 manifests' test and bench (tests/cli/mariadb.sh, bench/real/mariadb.sh)
BASE_PKGS="$BASE_PKGS mariadb-server mariadb-client"
# Apache 2.4 manifest's test and bench (tests/cli/apache.sh, bench/real/apache.sh): the server, ab
BASE_PKGS="$BASE_PKGS apache2 apache2-utils"

# libbpf version the distribution's default suite offers, e.g. 1.1.2
libbpf_candidate() {
	apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *\(1:\)\{0,1\}\([0-9.]*\).*/\2/p' | head -1
}

version_ge() { # version_ge A B: A >= B
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]
}

enable_backports() {
	bp="/etc/apt/sources.list.d/probity-backports.sources"
	if [ -f "$bp" ]; then
		return 0
	fi
	uris=$(apt_archive_uris "$codename")
	if [ -z "$uris" ]; then
		log "no apt source for '$codename' found to derive ${codename}-backports from"
		exit 1
	fi
	key=$(apt_suite_keyring "$codename" || true)
	log "enabling ${codename}-backports from: $uris"
	{
		echo "# added by probity scripts/install-deps.sh (libbpf >= 1.3, bpftool)"
		echo "Types: deb"
		echo "URIs: $uris"
		echo "Suites: ${codename}-backports"
		echo "Components: main"
		if [ -n "$key" ]; then echo "Signed-By: $key"; fi
	} >"$bp"
}

# deb-src lines for "$codename", derived from the configured deb sources the
# same way as backports (no mirror host hard-coded): `apt-get source
# postgresql-15` reads the server's source to give manifests provenance.
enable_deb_src() {
	ds="/etc/apt/sources.list.d/probity-deb-src.sources"
	[ -f "$ds" ] && return 0
	uris=$(apt_archive_uris "$codename")
	[ -n "$uris" ] || { log "no apt source for '$codename' to derive deb-src from"; return 1; }
	key=$(apt_suite_keyring "$codename" || true)
	log "enabling deb-src for $codename from: $uris"
	{
		echo "# added by probity scripts/install-deps.sh (apt-get source postgresql-15)"
		echo "Types: deb-src"
		echo "URIs: $uris"
		echo "Suites: ${codename}"
		echo "Components: main"
		if [ -n "$key" ]; then echo "Signed-By: $key"; fi
	} >"$ds"
}

need_update=1
apt_update() {
	if [ "$need_update" -eq 1 ]; then
		log "apt-get update"
		apt_get update -qq
		need_update=0
	fi
}

# PROBITY_DEB_SRC=1: also enable deb-src (docs/servers.md: reading the
# server's source for manifest provenance)
if [ "${PROBITY_DEB_SRC:-0}" = 1 ]; then enable_deb_src && need_update=1; fi
# PROBITY_REALMUT=1: deb-src and PostgreSQL 15's build dependencies, for
# bench/realmut.sh (it builds the server from Debian source; never in CI)
if [ "${PROBITY_REALMUT:-0}" = 1 ]; then
	enable_deb_src && need_update=1
	apt_update
	log "apt-get build-dep postgresql-15 (PROBITY_REALMUT=1)"
	apt_get build-dep -y -qq postgresql-15 >/dev/null
fi

missing=""
for p in $BASE_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done

if [ -n "$missing" ]; then
	apt_update
	log "installing:$missing"
	apt_get install -y -qq --no-install-recommends $missing >/dev/null
fi

have=$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null | sed 's/^1://; s/-.*//' || true)
if [ -n "$have" ] && version_ge "$have" 1.3 && command -v bpftool >/dev/null 2>&1 && bpftool version >/dev/null 2>&1; then
	log "libbpf-dev $have and bpftool already installed"
else
	cand=$(libbpf_candidate libbpf-dev)
	if [ -n "$cand" ] && version_ge "$cand" 1.3; then
		apt_update
		log "installing libbpf-dev $cand, bpftool from the default suite"
		apt_get install -y -qq --no-install-recommends $BPF_PKGS >/dev/null
	else
		enable_backports
		need_update=1
		apt_update
		log "installing libbpf-dev, bpftool from ${codename}-backports"
		apt_get install -y -qq --no-install-recommends -t "${codename}-backports" $BPF_PKGS >/dev/null
	fi
fi

have=$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null | sed 's/^1://; s/-.*//')
if ! version_ge "$have" 1.3; then
	log "libbpf-dev $have is older than 1.3 (uprobe_multi): cannot continue"
	exit 1
fi
log "ok: libbpf $have, $(bpftool version 2>/dev/null | head -1)"
