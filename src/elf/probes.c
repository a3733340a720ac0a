/* SPDX-License-Identifier: BSD-2-Clause */
/* probes.c: the probe sites of one binary (see probes.h).
 *
 * Functions come from the binary's own tables (elf_image.c) and, when it
 * is stripped and a separate debug file exists, from that file's .symtab
 * (dwarf.c): static functions then appear too, marked "debug-file",
 * because `plan` resolves symbols in the binary's own tables only. The
 * first instruction of each site is decoded with the same Capstone check
 * `plan` uses (insn.c), so "optimizable" here and a plan warning agree.
 *
 * C++ names are demangled with libstdc++'s __cxa_demangle, looked up with
 * dlopen: probity is C and links no C++ runtime; without libstdc++ the
 * names stay mangled and the listing says so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "elf/probes.h"
#include "elf/proc_maps.h"
#include "elf/usdt.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn find_demangler(void)
{
	static demangle_fn fn;
	static bool tried;
	void *h;

	if (tried)
		return fn;
	tried = true;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		fn = (demangle_fn)dlsym(h, "__cxa_demangle");
	if (!fn)
		pr_debug("libstdc++ __cxa_demangle not available: C++ names stay mangled\n");
	return fn;
}

const char *insn_exec_str(enum insn_exec e)
{
	switch (e) {
	case INSN_EXEC_OPTIMIZABLE:
		return "optimizable";
	case INSN_EXEC_EMULATED:
		return "emulated";
	case INSN_EXEC_SINGLE_STEP:
		return "single-step";
	default:
		return "unknown";
	}
}

const char *probe_table_str(enum probe_table t)
{
	static const char *const names[] = { "usdt", "symtab", "dynsym", "debug-file" };

	return (unsigned)t < 4 ? names[t] : "?";
}

/* The first instruction at sym + off, as `plan` would check it. */
static void classify_site(struct probe_list *l, struct probe_site *s,
			  const struct elf_symbol *sym, uint64_t off)
{
	struct insn_site_check c = { 0 };
	int err;

	err = elf_image__check_insn_boundary(l->img, sym, off, &c);
	if (err) {
		snprintf(s->note, sizeof(s->note), "not decoded: %s", strerror(-err));
	} else if (!c.on_boundary) {
		snprintf(s->note, sizeof(s->note), "not decoded: %s",
			 c.decode_failed ? "undecodable bytes" : "not an instruction boundary");
	} else {
		s->exec = c.exec;
		snprintf(s->insn, sizeof(s->insn), "%s", c.insn_text);
		snprintf(s->note, sizeof(s->note), "%s", c.note);
	}
	insn_site_check__clear(&c);
	l->n_exec[s->exec]++;
}

static bool glob_ok(const struct probe_list_opts *o, const char *a, const char *b)
{
	if (!o->glob)
		return true;
	return !fnmatch(o->glob, a, 0) || (b && !fnmatch(o->glob, b, 0));
}

static int add_usdt(struct probe_list *l, const struct probe_list_opts *o, size_t *cap)
{
	const struct elf_usdt_note *notes;
	char full[512];
	int n, i, err;

	n = elf_image__usdt_notes(l->img, &notes);
	for (i = 0; i < n; i++) {
		struct elf_symbol fn, at;
		struct probe_site *s;

		snprintf(full, sizeof(full), "%s:%s", notes[i].provider, notes[i].name);
		if (!glob_ok(o, full, NULL))
			continue;
		err = PB_ARRAY_RESERVE_ONE(l->sites, l->n, *cap);
		if (err)
			return err;
		s = &l->sites[l->n++];
		memset(s, 0, sizeof(*s));
		s->kind = PROBE_USDT;
		s->table = PROBE_TABLE_NOTE;
		s->provider = notes[i].provider;
		s->name = notes[i].name;
		s->args = notes[i].args;
		s->n_args = notes[i].n_args;
		s->vaddr = notes[i].pc;
		s->file_offset = notes[i].file_offset;
		s->semaphore = notes[i].semaphore;
		s->global = true;
		if (!elf_image__symbol_at(l->img, notes[i].pc, &fn)) {
			s->function = fn.name;
			classify_site(l, s, &fn, notes[i].pc - fn.vaddr);
		} else {
			at = (struct elf_symbol){ .name = s->name, .vaddr = s->vaddr };
			classify_site(l, s, &at, 0);
		}
		l->n_usdt++;
	}
	return n < 0 ? n : 0;
}

static int add_func(struct probe_list *l, const struct probe_list_opts *o,
		    const struct elf_symbol *sym, enum probe_table table, size_t *cap)
{
	demangle_fn dm = find_demangler();
	char *demangled = NULL;
	struct probe_site *s;
	int status, err;

	if (dm && !strncmp(sym->name, "_Z", 2)) {
		demangled = dm(sym->name, NULL, NULL, &status);
		if (status) {
			free(demangled);
			demangled = NULL;
		}
	}
	if (!glob_ok(o, sym->name, demangled)) {
		free(demangled);
		return 0;
	}
	err = PB_ARRAY_RESERVE_ONE(l->sites, l->n, *cap);
	if (err) {
		free(demangled);
		return err;
	}
	s = &l->sites[l->n++];
	memset(s, 0, sizeof(*s));
	s->kind = PROBE_FUNC;
	s->table = table;
	s->name = sym->name;
	s->demangled = demangled;
	s->version = sym->version;
	s->vaddr = sym->vaddr;
	s->size = sym->size;
	s->global = sym->global;
	s->ifunc = sym->ifunc;
	if (elf_image__vaddr_to_offset(l->img, sym->vaddr, &s->file_offset))
		s->file_offset = 0;
	classify_site(l, s, sym, 0);
	l->n_func++;
	l->n_debug_only += table == PROBE_TABLE_DEBUG;
	return 0;
}

/* Functions of the separate debug file the binary's own tables lack. */
static int add_debug_funcs(struct probe_list *l, const struct probe_list_opts *o, size_t *cap)
{
	const struct dwarf_sym *ds;
	struct elf_symbol have;
	int n, i, err;

	if (!l->dw || !dwarf_info__debug_file(l->dw) || elf_image__has_symtab(l->img))
		return 0;
	n = dwarf_info__func_symbols(l->dw, &ds);
	for (i = 0; i < n; i++) {
		struct elf_symbol sym = {
			.name = ds[i].name, .vaddr = ds[i].vaddr, .size = ds[i].size,
			.global = ds[i].global,
		};

		if (!elf_image__find_symbol(l->img, ds[i].name, &have) && have.vaddr == ds[i].vaddr)
			continue;
		err = add_func(l, o, &sym, PROBE_TABLE_DEBUG, cap);
		if (err)
			return err;
	}
	return n < 0 ? n : 0;
}

static int cmp_site(const void *a, const void *b)
{
	const struct probe_site *x = a, *y = b;
	int r;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->provider && y->provider && (r = strcmp(x->provider, y->provider)))
		return r;
	if ((r = strcmp(x->name, y->name)))
		return r;
	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return (int)x->table - (int)y->table;
}

/* Every function of the binary's own tables; a name in both .symtab and
 * .dynsym is listed twice here and merged by dedupe() after the sort. */
static int add_image_funcs(struct probe_list *l, const struct probe_list_opts *o, size_t *cap)
{
	size_t i, n = elf_image__symbol_count(l->img);
	struct elf_symbol sym;
	int err;

	for (i = 0; i < n; i++) {
		if (elf_image__symbol_by_index(l->img, i, &sym))
			break;
		err = add_func(l, o, &sym, sym.from_dynsym ? PROBE_TABLE_DYNSYM
							   : PROBE_TABLE_SYMTAB, cap);
		if (err)
			return err;
	}
	return 0;
}

/* One entry per (name, address): the sort put the .symtab entry (listed
 * first) before its .dynsym twin. */
static void dedupe(struct probe_list *l)
{
	size_t i, o = 0;

	for (i = 0; i < l->n; i++) {
		struct probe_site *s = &l->sites[i];

		if (o && s->kind == PROBE_FUNC && l->sites[o - 1].kind == PROBE_FUNC &&
		    s->vaddr == l->sites[o - 1].vaddr && !strcmp(s->name, l->sites[o - 1].name)) {
			l->n_func--;
			l->n_exec[s->exec]--;
			free(s->demangled);
			continue;
		}
		l->sites[o++] = *s;
	}
	l->n = o;
}

/* The image of path, or of the executable pid runs (opened through
 * /proc/PID, so the very inode it runs, even when replaced on disk). */
static int open_target(struct probe_list *l, const char *path, pid_t pid)
{
	struct proc_mapping *maps = NULL;
	int n = 0, err = 0;

	if (pid > 0) {
		n = proc_mappings__read(pid, &maps);
		if (n < 0)
			return n;
		if (!n) {
			err = -ENOENT;
			goto out;
		}
		path = maps[0].path;
	}
	l->path = strdup(pid > 0 ? maps[0].map_path : path);
	if (!l->path) {
		err = -ENOMEM;
		goto out;
	}
	l->img = elf_image__open(path);
	if (!l->img) {
		err = -errno;
		goto out;
	}
	l->dw = dwarf_info__open(path);
	if (!l->dw)
		pr_debug("%s: no debug information reader: %s\n", path, strerror(errno));
out:
	proc_mappings__free(maps, n);
	return err;
}

int probe_list__load(const char *path, const struct probe_list_opts *opts,
		     struct probe_list **out)
{
	struct probe_list_opts none = { 0 };
	struct probe_list *l = calloc(1, sizeof(*l));
	size_t cap = 0;
	int err;

	*out = NULL;
	if (!opts)
		opts = &none;
	if (!l)
		return -ENOMEM;
	err = open_target(l, path, opts->pid);
	if (err)
		goto out;
	if (elf_image__build_id_hex(l->img, l->build_id, sizeof(l->build_id)) < 0)
		l->build_id[0] = '\0';
	l->demangler = find_demangler() != NULL;
	err = opts->no_usdt ? 0 : add_usdt(l, opts, &cap);
	if (!err && !opts->no_funcs)
		err = add_image_funcs(l, opts, &cap);
	if (!err && !opts->no_funcs)
		err = add_debug_funcs(l, opts, &cap);
	if (err)
		goto out;
	if (l->n)
		qsort(l->sites, l->n, sizeof(*l->sites), cmp_site);
	dedupe(l);
	*out = l;
	l = NULL;
out:
	probe_list__free(l);
	return err;
}

void probe_list__free(struct probe_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		free(l->sites[i].demangled);
	free(l->sites);
	dwarf_info__free(l->dw);
	elf_image__free(l->img);
	free(l->path);
	free(l);
}

int probe_list__find_struct(struct probe_list *l, const char *name, struct dwarf_struct **out)
{
	*out = NULL;
	if (!l->dw)
		return -ENODATA;
	return dwarf_info__find_struct(l->dw, name, out);
}
