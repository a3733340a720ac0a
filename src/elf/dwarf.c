/* SPDX-License-Identifier: BSD-2-Clause */
/* dwarf.c: symbols and struct layouts from a binary's debug information
 * (see dwarf.h), through elfutils' libdwfl in offline mode: it finds the
 * separate debug file exactly as gdb, perf and eu-* tools do (build-id
 * directory, .gnu_debuglink), so "no DWARF" here means none of them would
 * find any either.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "common/array.h"
#include "common/log.h"
#include "elf/dwarf.h"

#define MAX_TYPE_DEPTH 16	/* pointer to const pointer to ... */

struct dwarf_info {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;		/* NULL without DWARF */
	Dwarf_Addr bias;
	char *debug_file;
	char *searched;
	struct dwarf_sym *syms;
	int n_syms;		/* -1 until loaded */
	struct dwarf_func *funcs;
	int n_funcs;		/* -1 until loaded */
};

static char *debuginfo_path;	/* NULL: libdwfl's default, ":.debug:/usr/lib/debug" */

/* dwfl_standard_find_debuginfo, with a .gnu_debuglink name that is not
 * a plain file name ("", ".", "..", or one with a '/') treated as absent
 * (the file's basename + ".debug" is tried instead, and the build-id
 * directory as always). elfutils 0.188 opens such a name as a directory
 * of its search path, and when the opened file then fails validation it
 * leaks the path it built (find_debuginfo_in_path frees it only when the
 * open fails): found by fuzz_probes (an empty debuglink). gdb and
 * objcopy write a plain name; a stale debug file under a plain name still
 * leaks its 32 bytes there (the library's bug, one per load). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	if (debuglink_file && (!debuglink_file[0] || strchr(debuglink_file, '/') ||
			       !strcmp(debuglink_file, ".") || !strcmp(debuglink_file, "..")))
		debuglink_file = NULL;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The places dwfl_standard_find_debuginfo tries, in its order. */
static char *describe_search(Dwfl_Module *mod, const char *path)
{
	const unsigned char *bid = NULL;
	GElf_Addr vaddr;
	GElf_Word crc;
	Dwarf_Addr bias;
	const char *link = NULL;
	char *out = NULL, hex[130] = "";
	Elf *elf;
	int len, i;

	len = dwfl_module_build_id(mod, &bid, &vaddr);
	for (i = 0; i < len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	elf = dwfl_module_getelf(mod, &bias);
	if (elf)
		link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (asprintf(&out, "%s (.debug_info)\n%s%.2s/%s.debug (build-id)\n%s%s%s\n", path,
		     len > 1 ? "/usr/lib/debug/.build-id/" : "(no build-id: no ", hex,
		     len > 1 ? hex + 2 : "/usr/lib/debug/.build-id/ file)",
		     link ? ".gnu_debuglink '" : "(no .gnu_debuglink)", link ? link : "",
		     link ? "' next to the binary, in its .debug/ and under /usr/lib/debug" : "") < 0)
		return NULL;
	return out;
}

struct dwarf_info *dwarf_info__open(const char *path)
{
	struct dwarf_info *d = calloc(1, sizeof(*d));
	const char *mainfile = NULL, *debugfile = NULL;
	int err = 0;

	if (!d)
		return NULL;
	d->n_syms = -1;
	d->n_funcs = -1;
	d->dwfl = dwfl_begin(&offline_callbacks);
	if (!d->dwfl) {
		err = -ENOMEM;
		goto out;
	}
	d->mod = dwfl_report_offline(d->dwfl, "", path, -1);
	if (!d->mod) {
		pr_debug("%s: libdwfl: %s\n", path, dwfl_errmsg(-1));
		err = -ENOEXEC;
		goto out;
	}
	dwfl_report_end(d->dwfl, NULL, NULL);
	d->dw = dwfl_module_getdwarf(d->mod, &d->bias);
	dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (debugfile && (!mainfile || strcmp(debugfile, mainfile))) {
		d->debug_file = strdup(debugfile);
		if (!d->debug_file)
			err = -ENOMEM;
	}
	d->searched = describe_search(d->mod, path);
	if (!d->searched)
		err = -ENOMEM;
out:
	if (err) {
		dwarf_info__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

void dwarf_info__free(struct dwarf_info *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < d->n_syms; i++)
		free(d->syms[i].name);
	free(d->syms);
	for (i = 0; i < d->n_funcs; i++) {
		free(d->funcs[i].name);
		free(d->funcs[i].proto);
		free(d->funcs[i].args);
	}
	free(d->funcs);
	free(d->debug_file);
	free(d->searched);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d);
}

const char *dwarf_info__debug_file(const struct dwarf_info *d)
{
	return d->debug_file;
}

bool dwarf_info__has_dwarf(const struct dwarf_info *d)
{
	return d->dw != NULL;
}

const char *dwarf_info__searched(const struct dwarf_info *d)
{
	return d->searched;
}

int dwarf_info__func_symbols(struct dwarf_info *d, const struct dwarf_sym **out)
{
	size_t cap = 0, n = 0;
	int i, nsym, err;

	if (d->n_syms >= 0)
		goto done;
	nsym = dwfl_module_getsymtab(d->mod);
	for (i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;

		name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || shndx == (GElf_Word)-1)
			continue;
		err = PB_ARRAY_RESERVE_ONE(d->syms, n, cap);
		if (err)
			return err;
		d->syms[n].name = strdup(name);
		if (!d->syms[n].name)
			return -ENOMEM;
		d->syms[n].vaddr = sym.st_value;
		d->syms[n].size = sym.st_size;
		d->syms[n].global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		d->n_syms = (int)++n;
	}
	if (d->n_syms < 0)
		d->n_syms = 0;
done:
	*out = d->syms;
	return d->n_syms;
}

/* ---- struct layouts -------------------------------------------------------- */

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type);
}

/* A C spelling of the type of die ("const char *", "uint64_t", "int[4]"). */
static void type_name(Dwarf_Die *die, char *buf, size_t sz, int depth)
{
	Dwarf_Die t, sub;
	const char *name;
	Dwarf_Word count;
	char inner[160];

	if (depth > MAX_TYPE_DEPTH || !die_type(die, &t)) {
		snprintf(buf, sz, "%s", depth ? "void" : "?");
		return;
	}
	name = dwarf_diename(&t);
	switch (dwarf_tag(&t)) {
	case DW_TAG_pointer_type:
		type_name(&t, inner, sizeof(inner), depth + 1);
		snprintf(buf, sz, "%s *", inner);
		break;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		type_name(&t, inner, sizeof(inner), depth + 1);
		snprintf(buf, sz, "%s %s", dwarf_tag(&t) == DW_TAG_const_type ? "const" : "volatile",
			 inner);
		break;
	case DW_TAG_array_type:
		type_name(&t, inner, sizeof(inner), depth + 1);
		count = 0;
		if (dwarf_child(&t, &sub) == 0) {
			Dwarf_Attribute a;
			Dwarf_Word ub;

			if (dwarf_attr(&sub, DW_AT_count, &a) && !dwarf_formudata(&a, &ub))
				count = ub;
			else if (dwarf_attr(&sub, DW_AT_upper_bound, &a) && !dwarf_formudata(&a, &ub))
				count = ub + 1;
		}
		snprintf(buf, sz, "%s[%llu]", inner, (unsigned long long)count);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		snprintf(buf, sz, "%s %s",
			 dwarf_tag(&t) == DW_TAG_structure_type ? "struct"
			 : dwarf_tag(&t) == DW_TAG_union_type ? "union" : "enum",
			 name ? name : "{...}");
		break;
	case DW_TAG_subroutine_type:
		snprintf(buf, sz, "function");
		break;
	default:
		snprintf(buf, sz, "%s", name ? name : "?");
	}
}

static uint64_t attr_u(Dwarf_Die *die, unsigned int at, uint64_t dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (!dwarf_attr_integrate(die, at, &a) || dwarf_formudata(&a, &v))
		return dflt;
	return v;
}

static int add_member(struct dwarf_struct *s, Dwarf_Die *m, size_t *cap)
{
	struct dwarf_member *dm;
	const char *name = dwarf_diename(m);
	char type[256];
	Dwarf_Die t;
	Dwarf_Word size;
	uint64_t dbo;
	int err;

	err = PB_ARRAY_RESERVE_ONE(s->members, s->n_members, *cap);
	if (err)
		return err;
	dm = &s->members[s->n_members];
	memset(dm, 0, sizeof(*dm));
	type_name(m, type, sizeof(type), 0);
	dm->name = strdup(name ? name : "(anonymous)");
	dm->type = strdup(type);
	if (!dm->name || !dm->type) {
		free(dm->name);
		free(dm->type);
		return -ENOMEM;
	}
	dm->offset = attr_u(m, DW_AT_data_member_location, 0);
	dm->bit_size = (uint32_t)attr_u(m, DW_AT_bit_size, 0);
	dbo = attr_u(m, DW_AT_data_bit_offset, UINT64_MAX);
	if (dm->bit_size && dbo != UINT64_MAX) {
		dm->offset = dbo / 8;
		dm->bit_offset = (uint32_t)(dbo % 8);
	}
	if (die_type(m, &t) && dwarf_aggregate_size(&t, &size) == 0)
		dm->size = size;
	s->n_members++;
	return 0;
}

static int build_struct(Dwarf_Die *die, const char *name, struct dwarf_struct **out)
{
	struct dwarf_struct *s = calloc(1, sizeof(*s));
	const char *file = dwarf_decl_file(die);
	Dwarf_Die child;
	size_t cap = 0;
	int err = -ENOMEM, line = 0;

	if (!s)
		return -ENOMEM;
	s->name = strdup(name);
	s->kind = strdup(dwarf_tag(die) == DW_TAG_union_type ? "union" : "struct");
	s->decl_file = file ? strdup(file) : NULL;
	if (!s->name || !s->kind || (file && !s->decl_file))
		goto out;
	dwarf_decl_line(die, &line);
	s->decl_line = line;
	s->size = attr_u(die, DW_AT_byte_size, 0);
	if (dwarf_child(die, &child) == 0) {
		do {
			if (dwarf_tag(&child) != DW_TAG_member)
				continue;
			err = add_member(s, &child, &cap);
			if (err)
				goto out;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	err = 0;
out:
	if (err)
		dwarf_struct__free(s);
	else
		*out = s;
	return err;
}

static bool complete_aggregate(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) &&
	       !dwarf_hasattr(die, DW_AT_declaration);
}

/* A top-level DIE named name: a complete struct/union, or a typedef that
 * leads to one (through qualifiers). */
static bool match_die(Dwarf_Die *die, const char *name, Dwarf_Die *agg)
{
	const char *n = dwarf_diename(die);
	int depth;

	if (!n || strcmp(n, name))
		return false;
	*agg = *die;
	for (depth = 0; depth < MAX_TYPE_DEPTH; depth++) {
		int tag = dwarf_tag(agg);

		if (complete_aggregate(agg))
			return true;
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type)
			return false;
		if (!die_type(agg, agg))
			return false;
	}
	return false;
}

int dwarf_info__find_struct(struct dwarf_info *d, const char *name, struct dwarf_struct **out)
{
	Dwarf_Die *cu = NULL, child, agg;
	Dwarf_Addr bias;

	*out = NULL;
	if (!d->dw)
		return -ENODATA;
	while ((cu = dwfl_module_nextcu(d->mod, cu, &bias))) {
		if (dwarf_child(cu, &child))
			continue;
		do {
			if (match_die(&child, name, &agg))
				return build_struct(&agg, name, out);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return -ENOENT;
}

void dwarf_struct__free(struct dwarf_struct *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_members; i++) {
		free(s->members[i].name);
		free(s->members[i].type);
	}
	free(s->members);
	free(s->name);
	free(s->kind);
	free(s->decl_file);
	free(s);
}

/* ---- function prototypes --------------------------------------------------- */

/* How a parameter of type die is passed (x86-64 SysV): 1 in an integer
 * register, 0 in a vector register (float), -1 unknown (an aggregate by
 * value: its registers depend on its layout; later args are unknown too). */
static int int_reg_class(Dwarf_Die *param)
{
	Dwarf_Die t = *param;
	Dwarf_Attribute a;
	Dwarf_Word enc;
	int depth;

	for (depth = 0; depth < MAX_TYPE_DEPTH; depth++) {
		if (!die_type(&t, &t))
			return -1;
		switch (dwarf_tag(&t)) {
		case DW_TAG_pointer_type:
		case DW_TAG_enumeration_type:
		case DW_TAG_reference_type:
			return 1;
		case DW_TAG_base_type:
			if (dwarf_attr(&t, DW_AT_encoding, &a) && !dwarf_formudata(&a, &enc) &&
			    (enc == DW_ATE_float || enc == DW_ATE_complex_float))
				return 0;
			return attr_u(&t, DW_AT_byte_size, 8) <= 8 ? 1 : -1;
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
			continue;
		default:
			return -1;
		}
	}
	return -1;
}

/* "int x" but "char *x" */
static const char *sep(const char *type)
{
	size_t n = strlen(type);

	return n && type[n - 1] == '*' ? "" : " ";
}

static int add_function(struct dwarf_info *d, Dwarf_Die *fn, size_t *cap)
{
	char proto[1024], args[512], ret[160], pt[160];
	size_t po, ao = 0;
	int reg = 0, cls, err, n = 0;
	Dwarf_Die p;

	type_name(fn, ret, sizeof(ret), 0);
	if (!strcmp(ret, "?"))
		snprintf(ret, sizeof(ret), "void");
	po = (size_t)snprintf(proto, sizeof(proto), "%s%s%s(", ret, sep(ret), dwarf_diename(fn));
	args[0] = '\0';
	if (dwarf_child(fn, &p) == 0) {
		do {
			const char *pn;

			if (dwarf_tag(&p) != DW_TAG_formal_parameter)
				continue;
			pn = dwarf_diename(&p) ? dwarf_diename(&p) : "?";
			type_name(&p, pt, sizeof(pt), 0);
			if (po < sizeof(proto))
				po += snprintf(proto + po, sizeof(proto) - po, "%s%s%s%s", n++ ? ", " : "",
					       pt, sep(pt), pn);
			cls = reg < 0 ? -1 : int_reg_class(&p);
			if (cls > 0 && reg < 6 && ao < sizeof(args))
				ao += snprintf(args + ao, sizeof(args) - ao, "%sarg%d = %s",
					       ao ? ", " : "", reg, pn);
			if (cls < 0 && reg >= 0 && ao < sizeof(args))
				ao += snprintf(args + ao, sizeof(args) - ao, "%s%s passed by value: later argN unknown",
					       ao ? ", " : "", pn);
			reg = cls < 0 ? -1 : reg + cls;
		} while (dwarf_siblingof(&p, &p) == 0);
	}
	if (po < sizeof(proto))
		snprintf(proto + po, sizeof(proto) - po, "%s)", n ? "" : "void");
	err = PB_ARRAY_RESERVE_ONE(d->funcs, (size_t)d->n_funcs, *cap);
	if (err)
		return err;
	d->funcs[d->n_funcs].name = strdup(dwarf_diename(fn));
	d->funcs[d->n_funcs].proto = strdup(proto);
	d->funcs[d->n_funcs].args = strdup(args);
	if (!d->funcs[d->n_funcs].name || !d->funcs[d->n_funcs].proto ||
	    !d->funcs[d->n_funcs].args) {
		free(d->funcs[d->n_funcs].name);
		free(d->funcs[d->n_funcs].proto);
		free(d->funcs[d->n_funcs].args);
		return -ENOMEM;
	}
	d->n_funcs++;
	return 0;
}

static int cmp_func(const void *a, const void *b)
{
	return strcmp(((const struct dwarf_func *)a)->name, ((const struct dwarf_func *)b)->name);
}

int dwarf_info__functions(struct dwarf_info *d, const struct dwarf_func **out)
{
	Dwarf_Die *cu = NULL, child;
	Dwarf_Addr bias;
	size_t cap = 0;
	int err;

	if (d->n_funcs >= 0)
		goto done;
	d->n_funcs = 0;
	while (d->dw && (cu = dwfl_module_nextcu(d->mod, cu, &bias))) {
		if (dwarf_child(cu, &child))
			continue;
		do {
			/* a definition with code: not a declaration, not inlined-only */
			if (dwarf_tag(&child) != DW_TAG_subprogram || !dwarf_diename(&child) ||
			    !dwarf_hasattr(&child, DW_AT_low_pc))
				continue;
			err = add_function(d, &child, &cap);
			if (err)
				return err;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (d->n_funcs)
		qsort(d->funcs, (size_t)d->n_funcs, sizeof(*d->funcs), cmp_func);
done:
	*out = d->funcs;
	return d->n_funcs;
}

const struct dwarf_func *dwarf_info__function(struct dwarf_info *d, const char *name)
{
	const struct dwarf_func *f;
	struct dwarf_func key = { .name = (char *)name };

	const struct dwarf_func *hit, *end;

	if (dwarf_info__functions(d, &f) <= 0)
		return NULL;
	hit = bsearch(&key, f, (size_t)d->n_funcs, sizeof(*f), cmp_func);
	if (!hit)
		return NULL;
	/* several statics of one name with different prototypes: no answer */
	end = f + d->n_funcs;
	while (hit > f && !strcmp(hit[-1].name, name))
		hit--;
	for (f = hit + 1; f < end && !strcmp(f->name, name); f++)
		if (strcmp(f->proto, hit->proto))
			return NULL;
	return hit;
}
