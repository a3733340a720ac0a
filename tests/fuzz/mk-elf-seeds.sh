#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mk-elf-seeds.sh: rebuild the seed corpus of fuzz_elf
# (tests/fuzz/corpus/fuzz_elf/). The seeds are committed: they are data,
# small (< 64 KiB each), and cover what src/elf/ parses in every layout we
# can produce here: ELF64/ELF32, little/big endian, static/PIE/shared/
# relocatable, .symtab and .dynsym only, versioned symbols, USDT notes with
# semaphores, and broken files.
#
#   tests/fuzz/mk-elf-seeds.sh [BUILD]    (BUILD holds the unit fixtures)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
SRC=$ROOT/tests/fixtures/elf/tiny.c
OUT=$ROOT/tests/fuzz/corpus/fuzz_elf
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# sys/sdt.h lives in the x86-64 multiarch dir; it is arch-neutral C.
SDT="-idirafter /usr/include/x86_64-linux-gnu"
mkdir -p "$OUT"

cd "$ROOT"
make -s BUILD="$BUILD" "$BUILD/fixtures/libpb_ver_stripped.so" \
	"$BUILD/fixtures/elf_fixture_stripped"

gcc -Os -nostdlib -static -fno-pie -no-pie -fno-asynchronous-unwind-tables \
	-Wl,-n -Wl,--no-warn-rwx-segments -Wl,--build-id=sha1 \
	-o "$OUT/tiny_x86_64" "$SRC"
strip -o "$OUT/tiny_x86_64_stripped" "$OUT/tiny_x86_64"
gcc -Os -c -fno-asynchronous-unwind-tables -o "$OUT/tiny_x86_64.o" "$SRC"
gcc -m32 -Os -nostdlib -static -fno-pie -no-pie -fno-asynchronous-unwind-tables \
	-Wl,-n -Wl,--no-warn-rwx-segments -Wl,--build-id=md5 $SDT \
	-o "$OUT/tiny_i386" "$SRC"
for t in powerpc64:ppc64be mips:mips32be aarch64:aarch64; do
	triple=${t%%:*}-linux-gnu name=${t##*:}
	clang --target="$triple" -Os -ffreestanding $SDT -c -o "$TMP/$name.o" "$SRC"
	ld.lld -static --build-id=sha1 -e _start -o "$OUT/tiny_$name" "$TMP/$name.o"
done
cp "$BUILD/fixtures/libpb_ver_stripped.so" "$OUT/libpb_ver_stripped.so"
cp "$BUILD/fixtures/elf_fixture_stripped" "$OUT/elf_fixture_stripped"
head -c 512 "$OUT/tiny_x86_64" > "$OUT/truncated_tiny_x86_64"
printf 'this is not an ELF file\n' > "$OUT/not_elf.txt"
ls -l "$OUT"
