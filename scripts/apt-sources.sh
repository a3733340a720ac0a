# SPDX-License-Identifier: BSD-2-Clause
# apt-sources.sh: read the machine's configured apt sources (deb822
# .sources files and one-line .list files alike), so that every script
# that adds a suite (scripts/install-deps.sh: backports, deb-src;
# bench/realmut/versions.sh: the next release's sources in a private apt
# tree) derives its URIs from them and never hard-codes a mirror host.
# Sourced, not run: it defines functions only.

# apt_suite_uris SUITE: the URIs of every enabled `deb` source of SUITE
apt_suite_uris() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v c="$1" '$1=="deb" { u=""; s="";
			for (i=2;i<=NF;i++) { if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; continue }
				if (u=="") u=$i; else if (s=="") { s=$i; break } }
			if (s==c) print u }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v c="$1" 'BEGIN{RS=""; FS="\n"} {
			uris=""; suites=""; types=""; enabled="yes";
			for (i=1;i<=NF;i++) {
				if ($i ~ /^URIs:/) { uris=$i; sub(/^URIs:[ \t]*/,"",uris) }
				if ($i ~ /^Suites:/) { suites=$i; sub(/^Suites:[ \t]*/,"",suites) }
				if ($i ~ /^Types:/) { types=$i }
				if ($i ~ /^Enabled:[ \t]*no/) enabled="no" }
			if (enabled=="no" || types !~ /deb( |$)/) next
			n=split(suites, s, /[ \t]+/)
			for (j=1;j<=n;j++) if (s[j]==c) { print uris; break } }' "$f"
	done
}

# apt_archive_uris SUITE: SUITE's URIs without the security archive, one
# line, each once (the mirrors another suite of the same archive lives on)
apt_archive_uris() {
	apt_suite_uris "$1" | tr ' ' '\n' | grep -v -- '-security' | grep -v '^$' | sort -u | tr '\n' ' '
}

# apt_suite_keyring SUITE: the Signed-By keyring of SUITE's first
# deb822 source that names one (none: nothing printed)
apt_suite_keyring() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v c="$1" 'BEGIN{RS=""; FS="\n"} {
			suites=""; key="";
			for (i=1;i<=NF;i++) {
				if ($i ~ /^Suites:/) suites=$i
				if ($i ~ /^Signed-By:/) { key=$i; sub(/^Signed-By:[ \t]*/,"",key) } }
			if ((" " suites " ") ~ (" " c " ") && key != "") { print key; exit } }' "$f"
	done | head -1
}
