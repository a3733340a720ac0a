# SPDX-License-Identifier: BSD-2-Clause
# elf-fixtures.mk: binaries tests/unit/test_elf.c reads (src/elf/).
#
#   elf_fixture            -O2 -g, known build-id, USDT probes (one with a
#                          semaphore), hand-laid asm functions
#   elf_fixture_nobuildid  the same without a build-id
#   elf_fixture_stripped   the same linked -rdynamic, then stripped: only
#                          .dynsym is left
#   libpb_ver.so           two versions of pb_ver (VER_1 hidden, VER_2);
#                          versions spelled in .symtab names
#   libpb_ver_stripped.so  the same stripped: versions from .gnu.version_d
#   elf_truncated_*        elf_fixture cut short (section headers gone /
#                          inside the ELF header)
#   not_elf.txt            plain text
#
# Built with plain flags (never the ASan ones of test-asan): they are data.
ELF_FIX      := $(BUILD)/fixtures
ELF_FIX_SRCS := tests/fixtures/elf/elf_fixture.c tests/fixtures/elf/elf_fixture_sema.c
ELF_FIX_CC   := $(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror
ELF_FIX_BUILD_ID := 0x0123456789abcdef0123456789abcdef01234567

$(ELF_FIX)/elf_fixture: $(ELF_FIX_SRCS) mk/elf-fixtures.mk
	@mkdir -p $(@D)
	$(ELF_FIX_CC) -Wl,--build-id=$(ELF_FIX_BUILD_ID) -o $@ $(ELF_FIX_SRCS)

$(ELF_FIX)/elf_fixture_nobuildid: $(ELF_FIX_SRCS) mk/elf-fixtures.mk
	@mkdir -p $(@D)
	$(ELF_FIX_CC) -Wl,--build-id=none -o $@ $(ELF_FIX_SRCS)

$(ELF_FIX)/elf_fixture_stripped: $(ELF_FIX_SRCS) mk/elf-fixtures.mk
	@mkdir -p $(@D)
	$(ELF_FIX_CC) -rdynamic -Wl,--build-id=sha1 -o $@.tmp $(ELF_FIX_SRCS)
	strip -o $@ $@.tmp && rm -f $@.tmp

$(ELF_FIX)/libpb_ver.so: tests/fixtures/elf/pb_ver.c tests/fixtures/elf/pb_ver.map mk/elf-fixtures.mk
	@mkdir -p $(@D)
	$(ELF_FIX_CC) -shared -fPIC -Wl,--version-script=tests/fixtures/elf/pb_ver.map \
		-o $@ tests/fixtures/elf/pb_ver.c

$(ELF_FIX)/libpb_ver_stripped.so: $(ELF_FIX)/libpb_ver.so
	strip -o $@ $<

# headers intact, section header table (at the end) cut off
$(ELF_FIX)/elf_truncated_shdrs: $(ELF_FIX)/elf_fixture
	head -c 4096 $< > $@
# cut inside the ELF header
$(ELF_FIX)/elf_truncated_ehdr: $(ELF_FIX)/elf_fixture
	head -c 40 $< > $@

$(ELF_FIX)/not_elf.txt: mk/elf-fixtures.mk
	@mkdir -p $(@D)
	printf 'this is not an ELF file\n' > $@

ELF_FIXTURES := $(addprefix $(ELF_FIX)/,elf_fixture elf_fixture_nobuildid \
	elf_fixture_stripped libpb_ver.so libpb_ver_stripped.so elf_truncated_shdrs elf_truncated_ehdr \
	not_elf.txt)
TEST_FIXTURES += $(ELF_FIXTURES)
