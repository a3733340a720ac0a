/* SPDX-License-Identifier: BSD-2-Clause */
/* elf_image.h: what probity needs to know about one ELF file on disk.
 *
 * GNU build-id, function symbols from .symtab and .dynsym, virtual address
 * to file offset translation (what uprobes take) and raw code bytes. Backed
 * by libelf; the file stays open while the image lives. USDT notes are in
 * usdt.h, instruction boundaries in insn.h, a process's mapped files in
 * proc_maps.h.
 */
#ifndef PROBITY_ELF_IMAGE_H
#define PROBITY_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_BUILD_ID_MAX 64

struct elf_image;

struct elf_symbol {
	const char *name;	/* owned by the image */
	uint64_t vaddr;		/* st_value */
	uint64_t size;		/* st_size (0 when unknown) */
	uint64_t file_offset;	/* file offset of vaddr */
	bool from_dynsym;	/* found only in .dynsym */
	bool global;		/* STB_GLOBAL or STB_WEAK */
	bool ifunc;		/* STT_GNU_IFUNC: vaddr is the resolver, not
				 * the implementation the program will call */
	const char *version;	/* symbol version ("GLIBC_2.14"), NULL if none;
				 * owned by the image */
};

/* Open path; NULL with errno set on failure (ENOENT, EACCES, ...;
 * ENOEXEC for anything libelf cannot take as an ELF file: not ELF at all,
 * truncated headers, a program or section header table past the end of
 * the file; EISDIR for a directory). */
struct elf_image *elf_image__open(const char *path);
/* Same, from a memory image (copied; buf may be freed after the call).
 * name is what elf_image__path() reports. */
struct elf_image *elf_image__open_mem(const void *buf, size_t len,
				      const char *name);
void elf_image__free(struct elf_image *img);

const char *elf_image__path(const struct elf_image *img);
/* ET_EXEC, ET_DYN, ... */
int elf_image__type(const struct elf_image *img);
/* EM_X86_64, EM_AARCH64, ... */
int elf_image__machine(const struct elf_image *img);

/* Copy the GNU build-id into buf; returns its length in bytes,
 * -ENOENT when the file has none, -ENOSPC when sz is too small. */
int elf_image__build_id(const struct elf_image *img, uint8_t *buf, size_t sz);
/* Same, as lowercase hex into buf (sz >= 2 * len + 1). */
int elf_image__build_id_hex(const struct elf_image *img, char *buf, size_t sz);

/* Find a function symbol (STT_FUNC or STT_GNU_IFUNC, defined) by exact name,
 * .symtab first, then .dynsym. Returns 0, -ENOENT when absent, -ENOTUNIQ
 * when the name is ambiguous (out gets the first candidate in table order).
 *
 * Several symbols at the same address are aliases, never ambiguous. When
 * they sit at different addresses: exactly one STB_GLOBAL wins (the linker
 * would bind to it too); failing that, exactly one STB_WEAK; otherwise
 * (several locals, e.g. one static per translation unit) -ENOTUNIQ.
 *
 * Versions: "memcpy" matches every version of memcpy but prefers the
 * default one (hidden, non-default versions are dropped when a default
 * exists); "memcpy@@GLIBC_2.14" and "memcpy@GLIBC_2.2.5" select one
 * version. Versions come from .gnu.version/.gnu.version_d for .dynsym and
 * from "name@VER" / "name@@VER" spellings in .symtab. */
int elf_image__find_symbol(const struct elf_image *img, const char *name,
			   struct elf_symbol *out);
/* The function containing vaddr (for messages); -ENOENT if none. */
int elf_image__symbol_at(const struct elf_image *img, uint64_t vaddr,
			 struct elf_symbol *out);
bool elf_image__has_symtab(const struct elf_image *img);
/* Every candidate elf_image__find_symbol() considered for name (same table
 * choice and version filter, aliases at one address collapsed), for
 * listing them in an ambiguity message. Fills up to max entries of out;
 * returns the total count (may exceed max), 0 when absent. */
int elf_image__find_symbols(const struct elf_image *img, const char *name,
			    struct elf_symbol *out, int max);
/* All function symbols (.symtab and .dynsym, aliases included), ordered by
 * address: for iteration (fuzzing, listings). -ENOENT past the end. */
size_t elf_image__symbol_count(const struct elf_image *img);
int elf_image__symbol_by_index(const struct elf_image *img, size_t i,
			       struct elf_symbol *out);

/* vaddr -> file offset through the PT_LOAD segment whose file-backed part
 * (p_filesz) holds it. -ENOENT if unmapped or not backed by the file. */
int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr,
			       uint64_t *off);
/* Copy len bytes of the file image at vaddr (must be file-backed).
 * -ENOENT if vaddr is unmapped, -ERANGE if the range runs past the
 * file-backed part of its segment. */
int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf,
		    size_t len);
/* How many file-backed bytes follow vaddr in its PT_LOAD segment. */
int elf_image__mapped_len(const struct elf_image *img, uint64_t vaddr,
			  uint64_t *len);

#endif
