/* SPDX-License-Identifier: BSD-2-Clause */
/* elf_image_int.h: the parsed ELF image shared by the files of src/elf/
 * (elf_image.c: headers, build-id, vaddr -> offset, open/free; symbols.c:
 * function symbols; usdt.c: USDT notes). Private to src/elf/.
 */
#ifndef PROBITY_ELF_IMAGE_INT_H
#define PROBITY_ELF_IMAGE_INT_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf_image.h"
#include "elf/usdt.h"

struct func_sym {
	const char *name;	/* as in the string table */
	const char *version;	/* NULL when unversioned */
	size_t key_len;		/* strlen(name) without "@VER" / "@@VER" */
	size_t idx;		/* table order: .symtab first, then .dynsym */
	uint64_t vaddr;
	uint64_t size;
	unsigned char bind;
	bool ifunc;
	bool dynsym;
	bool hidden;		/* non-default version ("name@VER") */
};

struct elf_image {
	char *path;
	int fd;			/* -1 for memory images */
	void *mem;		/* our copy of a memory image */
	Elf *elf;
	GElf_Ehdr ehdr;
	const uint8_t *raw;	/* the whole file image (libelf's mapping) */
	size_t raw_sz;

	GElf_Phdr *phdrs;
	size_t nphdrs;
	size_t shstrndx;
	bool have_shstrndx;

	uint8_t build_id[ELF_BUILD_ID_MAX];
	int build_id_len;	/* -ENOENT when absent */

	struct func_sym *syms;
	size_t nsyms;
	struct func_sym **by_name;	/* key, then idx */
	struct func_sym **by_addr;	/* vaddr, then idx */
	bool has_symtab;

	struct elf_usdt_note *notes;
	int nnotes;
};

/* Is [off, off + len) inside a buffer of sz bytes? (overflow-safe) */
static inline bool elf_range_ok(size_t off, size_t len, size_t sz)
{
	return off <= sz && len <= sz - off;
}

/* First section called name (NULL if none). */
Elf_Scn *elf_image__find_section(const struct elf_image *img, const char *name,
				 GElf_Shdr *sh);
/* An address-sized field of a note descriptor, in the file's byte order. */
uint64_t elf_image__read_addr(const struct elf_image *img, const uint8_t *p);
/* The PT_LOAD whose file-backed part holds vaddr: file offset and (avail
 * may be NULL) the number of file bytes from there to the end of that
 * part. -ENOENT when none does. */
int elf_image__map_vaddr(const struct elf_image *img, uint64_t vaddr,
			 uint64_t *off, uint64_t *avail);

/* Loaders run once by elf_image__open*: 0 or -errno. */
int elf_image__load_symbols(struct elf_image *img);	/* symbols.c */
int elf_image__load_usdt_notes(struct elf_image *img);	/* usdt.c */

#endif
