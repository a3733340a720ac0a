/* elf_image.h: what probity needs to know about one ELF file on disk.
 *
 * GNU build-id, function symbols from .symtab and .dynsym, virtual address
 * to file offset translation (what uprobes take), raw code bytes, and USDT
 * notes from .note.stapsdt. Backed by libelf; the file stays open while the
 * image lives.
 */
#ifndef PROBITY_ELF_IMAGE_H
#define PROBITY_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

struct elf_usdt_note {
	const char *provider;	/* owned by the image */
	const char *name;
	const char *args;	/* argument spec string, e.g. "-4@%edi 8@%rsi" */
	uint64_t pc;		/* note's location (link-time vaddr, already
				 * adjusted for prelink via .stapsdt.base) */
	uint64_t file_offset;	/* file offset of pc */
	uint64_t semaphore;	/* vaddr of the semaphore, 0 if none */
	uint64_t semaphore_file_offset; /* 0 if none */
	int n_args;
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

/* USDT notes from .note.stapsdt; the array is owned by the image.
 * Returns the count (>= 0) or -errno. */
int elf_image__usdt_notes(const struct elf_image *img,
			  const struct elf_usdt_note **notes);

/* ---- instruction boundaries (Capstone) ---- */

struct insn_site_check {
	bool in_bounds;		/* offset < symbol size (or size unknown) */
	bool on_boundary;	/* offset starts an instruction */
	uint32_t insn_len;	/* length of the instruction at offset */
	char insn_text[96];	/* "push rbp" etc. */
	bool is_nop5;		/* 5-byte nop (optimizable by the kernel) */
	bool needs_emulation;	/* the kernel emulates/single-steps it (warn) */
	uint64_t prev_boundary;	/* start of the instruction holding offset
				 * (== offset when on_boundary) */
	uint64_t next_boundary;	/* start of the instruction after it; both
				 * relative to the symbol, like offset */
	bool decode_failed;	/* Capstone could not decode the bytes at
				 * decode_failed_at <= offset: the verdict is
				 * "not verified", on_boundary is false */
	uint64_t decode_failed_at;
	char note[64];		/* why the kernel emulates / single-steps the
				 * instruction, e.g. "rip-relative: executed
				 * out of line with fixup" */
	char *listing;		/* disassembly around offset, one insn per line,
				 * the offending line marked; caller frees */
};

/* Disassemble sym from its start and check that offset lands on an
 * instruction boundary inside [0, size). 0 on success (see out fields;
 * a bad offset is not an error return), -errno when the code could not be
 * read (-ENOENT: sym not file-backed, -ERANGE: offset past the file data,
 * -E2BIG: offset beyond 16 MiB into the function) or the architecture is
 * unsupported (-EOPNOTSUPP: x86-64 only).
 *
 * A symbol of size 0 is checked against its first 4096 bytes (or up to the
 * end of its segment). insn_len, insn_text, is_nop5, needs_emulation and
 * note describe the instruction at offset, so they are set only when
 * on_boundary. On success listing is always set (for an out-of-bounds
 * offset it is one line saying so); insn_site_check__clear() frees it. */
int elf_image__check_insn_boundary(const struct elf_image *img,
				   const struct elf_symbol *sym, uint64_t offset,
				   struct insn_site_check *out);
void insn_site_check__clear(struct insn_site_check *c);

/* ---- running processes ---- */

struct proc_mapping {
	char *path;		/* openable path: /proc/PID/root/<map_path>, or
				 * /proc/PID/map_files/<start>-<end> for a
				 * deleted or replaced file */
	char *map_path;		/* path as printed in /proc/PID/maps, without
				 * the " (deleted)" suffix */
	uint64_t start, end, pgoff;
	bool exec;
	bool deleted;		/* maps says "(deleted)": the file was unlinked
				 * or replaced; path then goes through
				 * /proc/PID/map_files when that is readable */
	dev_t dev;
	ino_t ino;
};

/* File-backed mappings of a process, one entry per distinct file (the
 * first executable mapping, else the first mapping). Returns count or -errno
 * (-ESRCH when the process is gone, -EACCES, ...). Caller frees with
 * proc_mappings__free. The main executable is resolved via /proc/PID/exe
 * and returned first. */
int proc_mappings__read(pid_t pid, struct proc_mapping **out);
void proc_mappings__free(struct proc_mapping *maps, int n);

#endif
