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

/* Open path; NULL with errno set on failure (ENOENT, EACCES, ENOEXEC for
 * a non-ELF file, ...). */
struct elf_image *elf_image__open(const char *path);
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
 * when several distinct local functions share the name (out gets the first).
 * Versioned dynsym names ("memcpy@@GLIBC_2.14") match their bare name. */
int elf_image__find_symbol(const struct elf_image *img, const char *name,
			   struct elf_symbol *out);
/* The function containing vaddr (for messages); -ENOENT if none. */
int elf_image__symbol_at(const struct elf_image *img, uint64_t vaddr,
			 struct elf_symbol *out);
bool elf_image__has_symtab(const struct elf_image *img);

/* vaddr -> file offset through the PT_LOAD segment that maps it
 * (executable segments only when exec_only). -ENOENT if unmapped. */
int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr,
			       uint64_t *off);
/* Copy len bytes of the file image at vaddr (must be file-backed). */
int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf,
		    size_t len);

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
	uint64_t prev_boundary;	/* nearest instruction starts around offset */
	uint64_t next_boundary;
	char *listing;		/* disassembly around offset, one insn per line,
				 * the offending line marked; caller frees */
};

/* Disassemble sym from its start and check that offset lands on an
 * instruction boundary inside [0, size). 0 on success (see out fields;
 * a bad offset is not an error return), -errno when the code could not be
 * read or the architecture is unsupported (-EOPNOTSUPP). */
int elf_image__check_insn_boundary(const struct elf_image *img,
				   const struct elf_symbol *sym, uint64_t offset,
				   struct insn_site_check *out);
void insn_site_check__clear(struct insn_site_check *c);

/* ---- running processes ---- */

struct proc_mapping {
	char *path;		/* path as mapped, seen through /proc/PID/root */
	char *map_path;		/* path as printed in /proc/PID/maps */
	uint64_t start, end, pgoff;
	bool exec;
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
