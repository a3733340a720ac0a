#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mk-signing-seeds.sh: seeds of fuzz_signing (first byte: 0 address,
# 1 PEM key, 2 OpenSSH public key line), real and broken.
#   tests/fuzz/mk-signing-seeds.sh tests/fuzz/corpus/fuzz_signing
set -eu
D=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$D"
seed() { name=$1 sel=$2; shift 2; { printf "\\$sel"; cat; } >"$D/$name"; }
for a in 127.0.0.1:9464 127.0.0.1:0 0.0.0.0:65535 localhost :80 127.0.0.1: 127.0.0.1:99999 \
	1.2.3.4:-1 '[::1]:80' 127.0.0.1:80x 300.1.1.1:80; do
	printf '%s' "$a" | seed "addr-$(printf '%s' "$a" | tr -c 'a-z0-9' _)" 000
done
openssl genpkey -algorithm ed25519 -out "$T/ed.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/ec.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$T/ec384.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$T/rsa.pem" 2>/dev/null
openssl pkcs8 -topk8 -in "$T/ed.pem" -passout pass:x -out "$T/enc.pem" 2>/dev/null
for k in ed ec ec384 rsa enc; do seed "pem-$k" 001 <"$T/$k.pem"; done
head -c 60 "$T/ed.pem" | seed pem-truncated 001
sed 's/A/B/g' "$T/ec.pem" | seed pem-garbled 001
ssh-keygen -q -t ed25519 -N "" -C seed -f "$T/ssh"
seed ssh-ed25519 002 <"$T/ssh.pub"
printf 'ssh-ed25519 not*base64 c\n' | seed ssh-badb64 002
printf 'ssh-ed25519\n' | seed ssh-nofield 002
printf 'ssh-ed25519 ==== x\n' | seed ssh-padding 002
