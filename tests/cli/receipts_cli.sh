#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# receipts_cli.sh: `probity receipts` and `probity watch` on a real store.
# The unit test test_three_generations (build/tests/test_receipts) loads
# three generations of an XDP program in a private netns, swaps them with
# bpf_link_update and unloads the middle one; meanwhile `probity watch`
# observes the machine into a second store. Then: show reconstructs the
# unloaded generation, verify passes, diff names the rewritten immediate,
# tampering with an object or a log entry fails verify naming it, gc
# removes only what is unreachable, and the observer's store holds the
# same loads and link updates.
set -u
. tests/cli/lib.sh
T="$PROBITY_BUILD/tests/test_receipts"
need_root
[ -x "$T" ] || { echo "FAIL: $T not built"; exit 1; }
W=$(mktemp -d /tmp/pbrcli.XXXXXX)
WPID=""
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
S="$W/store"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }

# the observer, alongside
if "$P" watch --help >/dev/null 2>&1; then
	"$P" -j watch --store "$W/watch" -d 30 >"$W/watch.out" 2>"$W/watch.err" &
	WPID=$!
	i=0
	while ! grep -q observing "$W/watch.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	grep -q observing "$W/watch.err" || { err "watch did not become ready"; cat "$W/watch.err"; }
fi

PB_RCPT_STORE="$S" "$T" test_three_generations >"$W/t.out" 2>&1 ||
	{ cat "$W/t.out"; err "test_three_generations failed"; exit 1; }
G0=$(sed -n 1p "$S.gens"); G1=$(sed -n 2p "$S.gens"); G2=$(sed -n 3p "$S.gens")

# show: the unloaded middle generation, by prefix
out=$("$P" receipts show --store "$S" "$(echo "$G1" | cut -c1-10)") || err "show exited $?"
for want in "generation $G1" "source build id" "const-inline/mark" "profile-epoch" \
	"verifier:" "processed" "kernel/JIT:" "native image" "activation intervals:" \
	"ended: replaced" "unloaded"; do
	echo "$out" | grep -q -- "$want" || err "show lacks '$want'"
done
"$P" -j receipts show -s "$S" "$G1" | json "
assert d['generation_id'] == '$G1'
assert [x['generation_id'] for x in d['lineage']] == ['$G0', '$G1'], d['lineage']
iv = d['intervals']; assert len(iv) == 1 and iv[0]['end_reason'] == 'replaced', iv
assert iv[0]['start_mono_ns'] <= iv[0]['start_mono_ns_latest'] <= iv[0]['end_mono_ns']
kinds = [e['kind'] for e in d['lifecycle']]
assert kinds == ['loaded', 'activated', 'retired', 'unloaded'], kinds
p = d['statement']['predicate']
assert d['statement']['_type'] == 'https://in-toto.io/Statement/v1'
for f in ['generation_id','parent_generation_id','source_build_id','original_bpf_tag','specialized_bpf_tag',
          'optimizer_build_id','transform_ids','assumption_ids','verifier_result_digest','kernel_build_id',
          'jit_backend','native_image_digest','line_mapping_digest','submitted_insns_digest','xlated_insns_digest']:
    assert f in p, f
" || err "show -j"

PROGS=$("$P" -j receipts log -s "$S" | json "print(' '.join(str(e['prog_id']) for e in d['entries'] if e['kind']=='loaded'))")

# an auditor recomputes every object name and generation id with its own
# RFC 8785 encoder (tests/jcs_audit.py shares no code with probity)
python3 "${PROBITY_ROOT:-.}/tests/jcs_audit.py" --vectors >/dev/null || err "jcs_audit.py vectors"
python3 "${PROBITY_ROOT:-.}/tests/jcs_audit.py" "$S" 3 || err "JCS audit of the store"

# verify, log
"$P" receipts verify -s "$S" >"$W/v.out" || { cat "$W/v.out"; err "verify of a clean store exited $?"; }
"$P" -j receipts verify -s "$S" | json "assert d['ok'] and d['receipts'] == 3 and d['log_entries'] == 9, d" ||
	err "verify -j"
"$P" -j receipts log -s "$S" | json "
k = [e['kind'] for e in d['entries']]
assert k.count('loaded') == 3 and k.count('activated') == 3 and k.count('retired') == 2 and k.count('unloaded') == 1, k
assert all(d['entries'][i]['prev'] == d['entries'][i-1]['hash'] for i in range(1, len(k)))
" || err "log -j"
[ "$("$P" receipts log -s "$S" -g "$G1" | wc -l)" -eq 4 ] || err "log --generation"

# diff: exactly the rewritten immediate
"$P" -j receipts diff -s "$S" "$G0" "$G1" >"$W/d.json"; rc=$?
[ $rc -eq 1 ] || err "diff of different generations exited $rc, expected 1"
json "
e = d['insns']['edits']
assert [x['op'] for x in e] == ['-', '+'] and e[0]['a_index'] == e[1]['b_index'] == 8, e
assert '0x5eed01' in e[0]['insn'] and '0x5eed02' in e[1]['insn'], e
assert [t['id'] for t in d['transforms']['added']] == ['const-inline/mark']
assert 'parent_generation_id' in d['generation_fields']
" <"$W/d.json" || err "diff -j"
"$P" receipts diff -s "$S" "$G2" "$G2" >/dev/null || err "diff of a generation with itself exited $?"

# usage errors
"$P" receipts show -s "$S" ffffffffffff >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "show of an unknown generation exited $rc, expected 2"
"$P" receipts verify -s "$W/nostore" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "verify of a missing store exited $rc, expected 2"
PROBITY_STORE="$S" "$P" receipts verify >/dev/null || err "\$PROBITY_STORE not used"

# gc: an unreachable object goes, everything reachable stays
ORPHAN=$(printf 'orphan artifact' | sha256sum | cut -c1-64)
mkdir -p "$S/objects/$(echo "$ORPHAN" | cut -c1-2)"
printf 'orphan artifact' >"$S/objects/$(echo "$ORPHAN" | cut -c1-2)/$(echo "$ORPHAN" | cut -c3-)"
"$P" -j receipts gc -s "$S" | json "assert d['removed'] == 0 and d['kept_young'] == 1, d" || err "gc kept young"
printf 'half' >"$S/tmp/$ORPHAN.1.AbCdEf"	# an interrupted write
"$P" -j receipts verify -s "$S" | json "assert d['ok'] and [n['where'] for n in d['notes']] == ['tmp/$ORPHAN.1.AbCdEf'], d" ||
	err "verify: a tmp leftover is a note, not a problem"
"$P" -j receipts gc -s "$S" --min-age 0 --dry-run | json "assert d['removed'] == 2, d" || err "gc --dry-run"
"$P" -j receipts gc -s "$S" --min-age 0 | json "assert sorted(d['removed_objects']) == sorted(['$ORPHAN', 'tmp/$ORPHAN.1.AbCdEf']), d" || err "gc orphan"
[ -z "$(ls "$S/tmp")" ] || err "gc left tmp/ leftovers"
"$P" receipts verify -s "$S" >/dev/null || err "verify after gc"

# tamper with the middle generation's receipt: named
REC=$("$P" -j receipts show -s "$S" "$G1" | json "print(d['receipt'])")
F="$S/objects/$(echo "$REC" | cut -c1-2)/$(echo "$REC" | cut -c3-)"
cp "$F" "$W/rec.bak"; chmod 644 "$F"
sed -i 's/const-inline\/mark/const-inline\/MARK/' "$F"
"$P" receipts verify -s "$S" >"$W/v.out"; rc=$?
[ $rc -eq 1 ] || err "verify of a tampered receipt exited $rc"
grep -q "PROBLEM object $REC: altered" "$W/v.out" || { cat "$W/v.out"; err "tampered receipt not named"; }
grep -q "receipt $REC is altered" "$W/v.out" || err "log entry naming the altered receipt not reported"
cp "$W/rec.bak" "$F"
"$P" receipts verify -s "$S" >/dev/null || err "verify after restore"
# tamper with log entry #4
OFF=$("$P" -j receipts log -s "$S" | json "print(d['entries'][4]['hash'])" >/dev/null;
      python3 -c "
import struct
b = open('$S/lifecycle.log','rb').read()
off = struct.unpack('<I', b[12:16])[0]
for i in range(4):
    off += 16 + struct.unpack('<I', b[off+8:off+12])[0]
print(off + 40)")
printf 'X' | dd of="$S/lifecycle.log" bs=1 seek="$OFF" conv=notrunc 2>/dev/null
"$P" receipts verify -s "$S" >"$W/v.out"; rc=$?
[ $rc -eq 1 ] || err "verify of a tampered log exited $rc"
grep -q "PROBLEM lifecycle.log entry #4" "$W/v.out" || { cat "$W/v.out"; err "tampered log entry not named"; }

# the observer saw the same loads and swaps
if [ -n "$WPID" ]; then
	kill -INT "$WPID"; wait "$WPID"; rc=$?; WPID=""
	[ $rc -eq 0 ] || { cat "$W/watch.err"; err "watch exited $rc"; }
	"$P" receipts verify -s "$W/watch" >"$W/wv.out" || { cat "$W/wv.out"; err "verify of the observer's store"; }
	"$P" -j receipts log -s "$W/watch" | json "
want = [int(x) for x in '$PROGS'.split()]
loaded = {e['prog_id']: e for e in d['entries'] if e['kind'] == 'loaded'}
for p in want:
    assert p in loaded, ('observer missed prog', p, sorted(loaded))
ups = [e for e in d['entries'] if e['kind'] == 'link-updated']
news = [e['new_prog_id'] for e in ups]
assert want[1] in news and want[2] in news, ups
gone = [e['prog_id'] for e in d['entries'] if e['kind'] == 'unloaded']
assert want[1] in gone, ('observer missed the unload', gone)
u = [e for e in d['entries'] if e['kind'] == 'unloaded' and e['prog_id'] == want[1]][0]
r = loaded[want[1]]['jit_ranges'][0]['addr']
assert r in [k['addr'] for k in u['ksymbols_unregistered']], (r, u)
# same program bytes: the observer's xlated digest for a load is the library's
" || err "observer records differ from the library's"
	G1W=$("$P" -j receipts log -s "$W/watch" | json "print([e['generation_id'] for e in d['entries'] if e['kind'] == 'loaded' and e['prog_id'] == int('$PROGS'.split()[1])][0])")
	LIBP=$("$P" -j receipts show -s "$S" "$G1" | json "p = d['statement']['predicate']; print(p['xlated_insns_digest'], p['native_image_digest'])")
	"$P" -j receipts show -s "$W/watch" "$G1W" | json "
p = d['statement']['predicate']
assert p['generation']['provenance'] == 'unknown', p['generation']
# the same load, captured independently: same kernel-side digests
assert '%s %s' % (p['xlated_insns_digest'], p['native_image_digest']) == '$LIBP', (p, '$LIBP')
kinds = [e['kind'] for e in d['lifecycle']]
assert 'loaded' in kinds and 'link-updated' in kinds and 'unloaded' in kinds, kinds
iv = d['intervals']
assert len(iv) == 1 and iv[0]['source'] == 'observer' and iv[0]['end_reason'].startswith('replaced'), iv
assert iv[0]['start_mono_ns'] <= iv[0]['start_mono_ns_latest'] <= iv[0]['end_mono_ns'], iv
" || err "observer receipt differs from the library's"
fi
exit $fail
