/* SPDX-License-Identifier: BSD-2-Clause */
/* probes.h: every place of a binary a probe can go, the way `bpftrace -l`
 * and `perf probe -F` list them (probes.c): USDT probes with their
 * argument specs and semaphores, function symbols (the binary's own
 * .symtab/.dynsym, plus its separate debug file's .symtab when there is
 * one), each with the first instruction a uprobe would replace and what
 * the kernel does with it. `probity probes` prints it; `probity manifest
 * init` writes a manifest skeleton from it.
 */
#ifndef PROBITY_ELF_PROBES_H
#define PROBITY_ELF_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <sys/types.h>

#include "elf/dwarf.h"
#include "elf/elf_image.h"
#include "elf/insn.h"

enum probe_kind { PROBE_USDT = 0, PROBE_FUNC };

enum probe_table {
	PROBE_TABLE_NOTE = 0,	/* .note.stapsdt (USDT) */
	PROBE_TABLE_SYMTAB,	/* the binary's .symtab */
	PROBE_TABLE_DYNSYM,	/* the binary's .dynsym only */
	PROBE_TABLE_DEBUG,	/* only the separate debug file's .symtab */
};

struct probe_site {
	enum probe_kind kind;
	enum probe_table table;
	const char *provider;	/* USDT; NULL for functions */
	const char *name;	/* USDT probe name, or the symbol as in the table
				 * (mangled for C++) */
	char *demangled;	/* C++ functions: the demangled name; else NULL */
	const char *version;	/* symbol version, NULL if none */
	const char *args;	/* USDT argument spec ("-4@%edi 8@%rsi") */
	int n_args;
	uint64_t vaddr;		/* symbol address, or the USDT probe's pc */
	uint64_t file_offset;	/* what a uprobe attaches at (0 if unmapped) */
	uint64_t size;		/* function size (0 for USDT or unknown) */
	uint64_t semaphore;	/* USDT semaphore vaddr, 0 if none */
	const char *function;	/* USDT: the function holding the probe, or NULL */
	bool global;
	bool ifunc;
	enum insn_exec exec;	/* how the kernel runs the first instruction */
	char insn[96];		/* "push r15", "nop" ("" when not decoded) */
	char note[64];		/* why (insn.c), or why it was not decoded */
};

struct probe_list {
	char *path;		/* as given, or the process's executable as its
				 * maps name it */
	char build_id[2 * ELF_BUILD_ID_MAX + 1];	/* "" when the file has none */
	struct probe_site *sites;	/* USDT first, then functions, each by name */
	size_t n;
	size_t n_usdt, n_func, n_debug_only;
	size_t n_exec[4];	/* per enum insn_exec */
	bool demangler;		/* libstdc++'s __cxa_demangle was available */
	struct elf_image *img;
	struct dwarf_info *dw;	/* NULL when libdwfl could not open the file */
};

struct probe_list_opts {
	const char *glob;	/* fnmatch(3) on "provider:name" (USDT) or the
				 * mangled or demangled name; NULL: everything */
	bool no_usdt;
	bool no_funcs;
	pid_t pid;		/* > 0: list the main executable of this process
				 * (path is then ignored and may be NULL) */
};

/* List the probe sites of the ELF file at path (or of opts->pid's
 * executable). 0 or -errno (-ENOENT, -ENOEXEC for a file that is not
 * ELF, -ESRCH for a process that is gone, -ENOMEM). */
int probe_list__load(const char *path, const struct probe_list_opts *opts,
		     struct probe_list **out);
void probe_list__free(struct probe_list *l);
json_t *probe_list__to_json(const struct probe_list *l);

/* "optimizable", "emulated", "single-step", "unknown" */
const char *insn_exec_str(enum insn_exec e);
/* "usdt", "symtab", "dynsym", "debug-file" */
const char *probe_table_str(enum probe_table t);

/* The layout of struct/union name from DWARF (the binary's or its debug
 * file's): see dwarf_info__find_struct; -ENODATA also when libdwfl could
 * not open the file. */
int probe_list__find_struct(struct probe_list *l, const char *name, struct dwarf_struct **out);
json_t *dwarf_struct__to_json(const struct dwarf_struct *s);

#endif
