#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# receipts_export.sh: signed receipts for auditors, checked without probity.
# A real store (test_three_generations: three generations of an XDP program
# loaded, swapped and unloaded) is exported as DSSE envelopes with an
# Ed25519, an ECDSA P-256 and an OpenSSH key; each signature verifies with
# openssl / ssh-keygen over the DSSE PAE, each payload hashes to the
# receipt digest the log names. The --bundle tar is unpacked with tar and
# its VERIFY.md sh block is run exactly as written (python3, openssl,
# ssh-keygen, sha256sum): it prints VERIFIED; a tampered envelope payload,
# object, signature or log makes it fail. A checkpoint pins the log: a
# rewritten entry no longer hashes to it, and a damaged log is refused.
set -u
. tests/cli/lib.sh
TR="$PROBITY_BUILD/tests/test_receipts"
need_root
[ -x "$TR" ] || { echo "FAIL: $TR not built"; exit 1; }
for t in openssl ssh-keygen sha256sum tar python3; do
	command -v $t >/dev/null 2>&1 || { echo "FAIL: $t missing"; exit 1; }
done
W=$(mktemp -d /tmp/pbexport.XXXXXX)
trap 'rm -rf "$W"' EXIT
S="$W/store"
PB_RCPT_STORE="$S" "$TR" test_three_generations >"$W/t.out" 2>&1 ||
	{ cat "$W/t.out"; err "test_three_generations failed"; exit 1; }
G1=$(sed -n 2p "$S.gens")
openssl genpkey -algorithm ed25519 -out "$W/ed.pem" 2>/dev/null || err "openssl genpkey ed25519"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/ec.pem" 2>/dev/null || err "genpkey P-256"
ssh-keygen -q -t ed25519 -N "" -C probity-test -f "$W/ssh" || err "ssh-keygen"

# run the sh block of DIR/VERIFY.md in DIR; 0 only when it printed VERIFIED
verify_md() {
	(cd "$1" && sed -n '/^```sh$/,/^```$/p' VERIFY.md | sed '1d;$d' >"$W/verify.sh" &&
		sh "$W/verify.sh" >"$W/verify.out" 2>&1 && tail -1 "$W/verify.out" | grep -qx VERIFIED)
}
unpack() { rm -rf "$2" && mkdir "$2" && tar -xf "$1" -C "$2"; }

# one generation by prefix: one envelope, its PAE signature, its payload
"$P" receipts export -s "$S" --key "$W/ed.pem" -o "$W/one.jsonl" "$(echo "$G1" | cut -c1-10)" 2>/dev/null ||
	err "export GEN exited $?"
"$P" -j receipts show -s "$S" "$G1" >"$W/show.json"
python3 - "$W/one.jsonl" "$W/show.json" "$W" <<'PY' || err "envelope (above)"
import base64, hashlib, json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == 1, len(lines)
env = json.loads(lines[0])
assert env["payloadType"] == "application/vnd.in-toto+json", env["payloadType"]
p = base64.b64decode(env["payload"])
st = json.loads(p)
show = json.load(open(sys.argv[2]))
assert st["predicate"]["generation_id"] == show["generation_id"]
assert hashlib.sha256(p).hexdigest() == show["receipt"], "payload is not the stored receipt"
assert env["signatures"][0]["keyid"].startswith("sha256:")
t = env["payloadType"].encode()
open(sys.argv[3] + "/one.pae", "wb").write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(p), p))
open(sys.argv[3] + "/one.sig", "wb").write(base64.b64decode(env["signatures"][0]["sig"]))
PY
openssl pkey -in "$W/ed.pem" -pubout -out "$W/ed.pub" 2>/dev/null
openssl pkeyutl -verify -pubin -inkey "$W/ed.pub" -rawin -in "$W/one.pae" -sigfile "$W/one.sig" >/dev/null ||
	err "openssl does not verify the Ed25519 PAE signature"
printf 'x' >>"$W/one.pae"
openssl pkeyutl -verify -pubin -inkey "$W/ed.pub" -rawin -in "$W/one.pae" -sigfile "$W/one.sig" >/dev/null 2>&1 &&
	err "a changed PAE still verified"

# every key type: --all + bundle, VERIFY.md as written
for k in ed.pem ec.pem ssh; do
	"$P" -j receipts export --all -s "$S" --key "$W/$k" -o "$W/$k.jsonl" --bundle "$W/$k.tar" \
		>"$W/$k.json" || { err "$k: export --all exited $?"; continue; }
	py "$W/$k.json" 'assert d["exported"] == 3 and d["bundle_files"] > 10, d' || err "$k: -j summary"
	[ "$(grep -c . "$W/$k.jsonl")" = 3 ] || err "$k: expected 3 envelopes"
	unpack "$W/$k.tar" "$W/b-$k"
	verify_md "$W/b-$k" || err "$k: VERIFY.md did not verify: $(tail -5 "$W/verify.out")"
done
grep -q 'ssh-keygen -Y verify' "$W/b-ssh/VERIFY.md" || err "ssh bundle: VERIFY.md lacks ssh-keygen -Y verify"
grep -q 'openssl dgst -sha256 -verify' "$W/b-ec.pem/VERIFY.md" || err "P-256 bundle: no openssl dgst"

# tampering, each on a fresh copy of a bundle: the payload of an Ed25519
# envelope, the signature of an SSH checkpoint, an object, the log
for k in ed.pem; do
	unpack "$W/$k.tar" "$W/t"
	python3 - "$W/t/envelopes.intoto.jsonl" <<'PY'
import base64, json, sys
lines = open(sys.argv[1]).read().splitlines()
env = json.loads(lines[1])
p = base64.b64decode(env["payload"]).replace(b'"provenance":"recorded"', b'"provenance":"unknown"', 1)
env["payload"] = base64.b64encode(p).decode()
lines[1] = json.dumps(env)
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
	verify_md "$W/t" && err "$k: a tampered envelope payload verified"
done
for k in ssh; do
	unpack "$W/$k.tar" "$W/t"
	python3 - "$W/t/checkpoint.dsse.json" <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
s = bytearray(base64.b64decode(env["signatures"][0]["sig"]))
s[len(s) // 2] ^= 1
env["signatures"][0]["sig"] = base64.b64encode(bytes(s)).decode()
json.dump(env, open(sys.argv[1], "w"))
PY
	verify_md "$W/t" && err "$k: a tampered checkpoint signature verified"
done
unpack "$W/ed.pem.tar" "$W/t"
obj=$(ls "$W/t/objects" | head -1)
chmod u+w "$W/t/objects/$obj"
printf '\001' | dd of="$W/t/objects/$obj" bs=1 seek=3 conv=notrunc 2>/dev/null
verify_md "$W/t" && err "a tampered object verified"
unpack "$W/ed.pem.tar" "$W/t"
python3 - "$W/t/lifecycle.log" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b'"reason":"')
b[i + 10] ^= 0x20
open(sys.argv[1], "wb").write(bytes(b))
PY
verify_md "$W/t" && err "a tampered lifecycle.log verified"

# checkpoint: the log up to it cannot change unnoticed
"$P" receipts checkpoint -s "$S" --key "$W/ec.pem" -o "$W/cp.json" 2>/dev/null || err "checkpoint exited $?"
eval "$(python3 - "$W/cp.json" <<'PY'
import base64, json, sys
st = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))
assert st["predicateType"] == "https://probity.dev/log-checkpoint/v1"
print("CP_SHA=%s CP_BYTES=%d" % (st["subject"][0]["digest"]["sha256"], st["predicate"]["log_bytes"]))
PY
)"
[ "$(head -c "$CP_BYTES" "$S/lifecycle.log" | sha256sum | cut -d' ' -f1)" = "$CP_SHA" ] ||
	err "checkpoint subject is not the log's bytes"
"$P" -j receipts checkpoint -s "$S" --key "$W/ed.pem" | py /dev/stdin 'assert d["payloadType"] == "application/vnd.in-toto+json"' ||
	err "checkpoint -j to stdout is not the envelope"
python3 - "$S/lifecycle.log" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b'"reason":"')
b[i + 10] ^= 0x20
open(sys.argv[1], "wb").write(bytes(b))
PY
[ "$(head -c "$CP_BYTES" "$S/lifecycle.log" | sha256sum | cut -d' ' -f1)" != "$CP_SHA" ] ||
	err "a rewritten entry still matches the checkpoint"
"$P" receipts checkpoint -s "$S" --key "$W/ed.pem" >/dev/null 2>"$W/e"; rc=$?
[ $rc -eq 1 ] || err "checkpoint of a damaged log exited $rc, expected 1"
grep -q damaged "$W/e" || err "damaged-log message: $(cat "$W/e")"
"$P" receipts export --all -s "$S" --key "$W/ed.pem" --bundle "$W/bad.tar" 2>/dev/null; rc=$?
[ $rc -eq 1 ] || err "bundle of a damaged log exited $rc, expected 1"
[ ! -e "$W/bad.tar" ] && [ ! -e "$W/bad.tar.tmp" ] || err "a bundle was left behind for a damaged log"

# usage errors
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$W/rsa.pem" 2>/dev/null
"$P" receipts export --all -s "$S" --key "$W/rsa.pem" -o "$W/x" 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q "expected Ed25519 or ECDSA P-256" "$W/e" || err "RSA key: exit $rc, $(cat "$W/e")"
"$P" receipts export --all -s "$S" -o "$W/x" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || err "no --key exited $rc"
"$P" receipts export -s "$S" --key "$W/ed.pem" -o "$W/x" ffffffffffff 2>/dev/null; rc=$?
[ $rc -eq 2 ] || err "unknown GEN exited $rc"
"$P" receipts export --all "$G1" -s "$S" --key "$W/ed.pem" -o "$W/x" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || err "GEN with --all exited $rc"
"$P" -j receipts export --all -s "$S" --key "$W/missing.pem" -o "$W/x" | py /dev/stdin 'assert "error" in d' ||
	err "-j error is not JSON"
exit $fail
