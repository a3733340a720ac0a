/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_elf.c: libFuzzer entry point for src/elf/ (ELF files are untrusted
 * input: probity opens whatever binary a manifest or a pid names).
 *
 * Each input is opened as a memory image and goes through everything plan
 * time does with a binary: build-id, symbol lookups (plain and versioned),
 * USDT notes, vaddr translation, and the instruction-boundary check on the
 * first few function symbols. Seeds: tests/fuzz/corpus/fuzz_elf/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "elf/elf_image.h"
#include "elf/insn.h"
#include "elf/usdt.h"

static int quiet(enum pb_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void check_site(const struct elf_image *img, const struct elf_symbol *sym,
		       uint64_t off)
{
	struct insn_site_check c;

	if (!elf_image__check_insn_boundary(img, sym, off, &c) && c.listing)
		(void)strlen(c.listing);
	insn_site_check__clear(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[] = { "main", "_start", "pb_layout_fn", "pb_dup",
				       "memcpy", "memcpy@@GLIBC_2.14", "pb_ver@VER_1",
				       "malloc@GLIBC_2.2.5", "" };
	const struct elf_usdt_note *notes;
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	uint8_t id[ELF_BUILD_ID_MAX], code[32];
	struct elf_symbol sym, many[4];
	struct elf_image *img;
	uint64_t off, len;
	size_t i, nsyms;
	int n, k;

	pb_set_print(quiet);
	img = elf_image__open_mem(data, size, "fuzz");
	if (!img)
		return 0;

	elf_image__build_id(img, id, sizeof(id));
	elf_image__build_id_hex(img, hex, sizeof(hex));
	elf_image__has_symtab(img);
	elf_image__type(img);
	elf_image__machine(img);

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (elf_image__find_symbol(img, names[i], &sym) != -ENOENT) {
			(void)strlen(sym.name);
			elf_image__read(img, sym.vaddr, code, sizeof(code));
			elf_image__symbol_at(img, sym.vaddr + sym.size / 2, &sym);
		}
		elf_image__find_symbols(img, names[i], many, 4);
	}

	n = elf_image__usdt_notes(img, &notes);
	for (k = 0; k < n; k++) {
		(void)strlen(notes[k].provider);
		(void)strlen(notes[k].name);
		(void)strlen(notes[k].args);
		elf_image__vaddr_to_offset(img, notes[k].pc, &off);
		if (!elf_image__symbol_at(img, notes[k].pc, &sym))
			check_site(img, &sym, notes[k].pc - sym.vaddr);
	}

	nsyms = elf_image__symbol_count(img);
	for (i = 0; i < nsyms && i < 4; i++) {
		if (elf_image__symbol_by_index(img, i, &sym))
			break;
		(void)strlen(sym.name);
		/* the first function symbols, at their start, middle and end */
		check_site(img, &sym, 0);
		check_site(img, &sym, sym.size / 2);
		check_site(img, &sym, sym.size ? sym.size - 1 : 1);
		check_site(img, &sym, sym.size);
		elf_image__mapped_len(img, sym.vaddr, &len);
		/* every lookup by name of what iteration returned must work */
		elf_image__find_symbol(img, sym.name, &many[0]);
	}
	/* arbitrary addresses taken from the input itself */
	if (size >= 16) {
		uint64_t a;

		memcpy(&a, data + size - 8, 8);
		elf_image__symbol_at(img, a, &sym);
		elf_image__vaddr_to_offset(img, a, &off);
		elf_image__read(img, a, code, sizeof(code));
	}
	elf_image__free(img);
	return 0;
}
