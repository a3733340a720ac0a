/* SPDX-License-Identifier: BSD-2-Clause */
/* dwarf.h: what a binary's debug information adds to its own tables
 * (dwarf.c, elfutils libdwfl): the full symbol table when the binary is
 * stripped but a debug file exists (.gnu_debuglink, or
 * /usr/lib/debug/.build-id/xx/yyyy.debug), and struct member offsets from
 * DWARF, so `*u64(arg0 + 16)` can be written from a struct's layout
 * instead of found by disassembly.
 */
#ifndef PROBITY_ELF_DWARF_H
#define PROBITY_ELF_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_info;

struct dwarf_sym {
	char *name;
	uint64_t vaddr;		/* link-time address (st_value) */
	uint64_t size;
	bool global;		/* STB_GLOBAL or STB_WEAK */
};

struct dwarf_member {
	char *name;		/* "(anonymous)" for an unnamed member */
	char *type;		/* "int", "struct foo *", "char[16]", ... */
	uint64_t offset;	/* bytes from the start of the struct */
	uint64_t size;		/* bytes; 0 when unknown */
	uint32_t bit_size;	/* bit-fields: width in bits, else 0 */
	uint32_t bit_offset;	/* bit-fields: bits from offset */
};

struct dwarf_struct {
	char *name;
	char *kind;		/* "struct" or "union" */
	uint64_t size;
	char *decl_file;	/* may be NULL */
	int decl_line;
	struct dwarf_member *members;
	size_t n_members;
};

/* Open path's debug information the way gdb and perf find it: the file
 * itself, then its build-id under /usr/lib/debug/.build-id/, then its
 * .gnu_debuglink next to it, in .debug/ and under /usr/lib/debug.
 * NULL with errno on failure (a file without any debug information is not
 * a failure: the queries below say so). */
struct dwarf_info *dwarf_info__open(const char *path);
void dwarf_info__free(struct dwarf_info *d);

/* The separate debug file in use, or NULL when none was found. */
const char *dwarf_info__debug_file(const struct dwarf_info *d);
/* True when DWARF (.debug_info) was found (in the file or a debug file). */
bool dwarf_info__has_dwarf(const struct dwarf_info *d);
/* Where the debug information was looked for, one place per line, for a
 * "no DWARF found" message. */
const char *dwarf_info__searched(const struct dwarf_info *d);

/* Defined function symbols of the best table libdwfl has (the binary's
 * .symtab, else the debug file's, else .dynsym). *out is owned by d.
 * Returns the count (>= 0) or -errno. */
int dwarf_info__func_symbols(struct dwarf_info *d, const struct dwarf_sym **out);

/* The first complete definition of struct or union name (a typedef to
 * one is followed). 0, -ENODATA when there is no DWARF, -ENOENT when no
 * complete definition has that name, -ENOMEM. Free with
 * dwarf_struct__free. */
int dwarf_info__find_struct(struct dwarf_info *d, const char *name, struct dwarf_struct **out);
void dwarf_struct__free(struct dwarf_struct *s);

#endif
