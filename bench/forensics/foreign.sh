#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# foreign.sh OUT.json SECONDS OBJ PKT: the foreign loader of
# bench/forensics.sh, a tool that never heard of probity. In its own mount
# namespace (a private bpffs) it loads OBJ's XDP program with bpftool
# twice (identical code, the same name as the specializer's generation 0:
# several programs with one name and one tag), runs each with
# `bpftool prog run ... repeat N` (BPF_PROG_TEST_RUN: real executions of
# its JIT image), unloads one and loads a third copy (an address may be
# reused), until SECONDS pass. OUT.json gets {"prog_ids": [...]}.
set -eu
OUT=$1 SECS=${2%.*} OBJ=$3 PKT=$4
exec unshare -m sh -eu -c '
OUT=$1 SECS=${2%.*} OBJ=$3 PKT=$4
M=$(mktemp -d /tmp/pbfx-bpffs.XXXXXX)
mount -t bpf bpf "$M"
trap "umount $M 2>/dev/null; rmdir $M" EXIT
ids=""
load() {
	bpftool prog loadall "$OBJ" "$M/$1" type xdp
	ids="$ids $(bpftool -j prog show pinned "$M/$1/lb_xdp" | sed "s/^{\"id\":\([0-9]*\),.*/\1/")"
}
n=0
load a; load b
end=$(( $(date +%s) + SECS ))
while [ "$(date +%s)" -lt "$end" ]; do
	bpftool prog run pinned "$M/a/lb_xdp" data_in "$PKT" repeat 1000000 >/dev/null
	bpftool prog run pinned "$M/b/lb_xdp" data_in "$PKT" repeat 1000000 >/dev/null
	n=$((n + 1))
	if [ $((n % 8)) -eq 0 ]; then	# unload one copy, load another
		rm -rf "$M/a"; load a
	fi
	sleep 0.05
done
printf "{\"prog_ids\": [%s]}\n" "$(echo $ids | tr " " ",")" >"$OUT"
' sh "$OUT" "$SECS" "$OBJ" "$PKT"
