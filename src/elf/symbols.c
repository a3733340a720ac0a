/* SPDX-License-Identifier: BSD-2-Clause */
/* symbols.c: function symbols of an ELF image (see elf_image.h).
 *
 * At open, the defined STT_FUNC / STT_GNU_IFUNC symbols of .symtab and
 * .dynsym are collected with their versions (from "name@VER" spellings in
 * .symtab, .gnu.version / .gnu.version_d for .dynsym) and indexed by name
 * and by address; lookups by name, by address and by index read those
 * indices. Counts and indices come from the untrusted file: every one is
 * bound-checked before use.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "elf/elf_image_int.h"

/* .gnu.version entries: index in the low 15 bits, "hidden" (not the
 * default version) in the top one. */
#define VERSYM_HIDDEN 0x8000
#define VERSYM_INDEX 0x7fff
/* Walking back from a vaddr for the containing symbol stops after this
 * many starts: enough for aliases and nested labels, bounded on hostile
 * files with thousands of symbols at one address. */
#define SYMBOL_AT_LOOKBACK 64

/* ---- symbols ---------------------------------------------------------- */

/* Version index (15 bits) -> name, from the SHT_GNU_verdef section linked
 * to the string table dynstr. NULL when there is none (or no memory: the
 * symbols then simply carry no version). */
static const char **load_verdefs(struct elf_image *img, size_t dynstr)
{
	const char **v = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		Elf_Data *data;
		size_t off = 0, guard;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_GNU_verdef ||
		    sh.sh_link != dynstr)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		/* vd_next chains can loop on a hostile file: bound the walk by
		 * what the section could hold. */
		for (guard = 0; guard < data->d_size / sizeof(Elf64_Verdef) + 1; guard++) {
			GElf_Verdef vd;
			GElf_Verdaux vda;
			const char *name;

			if (off > INT32_MAX || !gelf_getverdef(data, (int)off, &vd))
				break;
			if (!(vd.vd_flags & VER_FLG_BASE) && vd.vd_cnt > 0 &&
			    off + vd.vd_aux <= INT32_MAX &&
			    gelf_getverdaux(data, (int)(off + vd.vd_aux), &vda) &&
			    (name = elf_strptr(img->elf, dynstr, vda.vda_name))) {
				if (!v)
					v = calloc(VERSYM_INDEX + 1, sizeof(*v));
				if (!v)
					return NULL;
				v[vd.vd_ndx & VERSYM_INDEX] = name;
			}
			if (vd.vd_next == 0)
				break;
			off += vd.vd_next;
		}
		break;
	}
	return v;
}

/* The SHT_GNU_versym section that describes symbol table symndx. */
static Elf_Data *find_versym(struct elf_image *img, size_t symndx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym &&
		    sh.sh_link == symndx)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* A symbol's version: spelled into a .symtab name ("memcpy@@GLIBC_2.14",
 * "memcpy@GLIBC_2.2.5": default and hidden versions), kept in
 * .gnu.version / .gnu.version_d for .dynsym (vdefs, versym entry i). */
static void set_version(struct func_sym *s, const char **vdefs, Elf_Data *versym, size_t i)
{
	const char *at = strchr(s->name, '@');
	GElf_Versym vs;

	if (at) {
		s->key_len = (size_t)(at - s->name);
		if (at[1] == '@') {
			s->version = at + 2;
		} else {
			s->version = at + 1;
			s->hidden = true;
		}
	}
	if (vdefs && gelf_getversym(versym, (int)i, &vs) && (vs & VERSYM_INDEX) >= 2) {
		const char *v = vdefs[vs & VERSYM_INDEX];

		if (v) {
			s->version = v;
			s->hidden = vs & VERSYM_HIDDEN;
		}
	}
}

/* Append the defined function symbols of one symbol table. */
static int load_symtab(struct elf_image *img, Elf_Scn *scn, const GElf_Shdr *sh,
		       size_t *cap)
{
	bool dyn = sh->sh_type == SHT_DYNSYM;
	const char **vdefs = NULL;
	Elf_Data *data, *versym = NULL;
	size_t i, n, entsz;
	int err = 0;

	data = elf_getdata(scn, NULL);
	entsz = gelf_fsize(img->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !entsz)
		return 0;
	n = data->d_size / entsz;
	if (dyn) {
		versym = find_versym(img, elf_ndxscn(scn));
		if (versym)
			vdefs = load_verdefs(img, sh->sh_link);
	}

	for (i = 1; i < n && i <= INT32_MAX; i++) {
		struct func_sym *s;
		const char *name;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(img->elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;

		err = PB_ARRAY_RESERVE_ONE(img->syms, img->nsyms, *cap);
		if (err)
			goto out;
		s = &img->syms[img->nsyms];
		memset(s, 0, sizeof(*s));
		s->name = name;
		s->idx = img->nsyms;
		s->vaddr = sym.st_value;
		s->size = sym.st_size;
		s->bind = GELF_ST_BIND(sym.st_info);
		s->ifunc = type == STT_GNU_IFUNC;
		s->dynsym = dyn;
		s->key_len = strlen(name);
		set_version(s, vdefs, versym, i);
		img->nsyms++;
	}
out:
	free(vdefs);
	return err;
}

static int cmp_key(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int cmp_by_name(const void *pa, const void *pb)
{
	const struct func_sym *a = *(struct func_sym *const *)pa;
	const struct func_sym *b = *(struct func_sym *const *)pb;
	int c = cmp_key(a->name, a->key_len, b->name, b->key_len);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_by_addr(const void *pa, const void *pb)
{
	const struct func_sym *a = *(struct func_sym *const *)pa;
	const struct func_sym *b = *(struct func_sym *const *)pb;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_by_idx(const void *pa, const void *pb)
{
	const struct func_sym *a = *(struct func_sym *const *)pa;
	const struct func_sym *b = *(struct func_sym *const *)pb;

	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int elf_image__load_symbols(struct elf_image *img)
{
	static const Elf64_Word order[] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t cap = 0, i;
	unsigned int t;
	int err;

	/* .symtab entries go first so that table order ("the first
	 * candidate") and the by-address tie-break favour them. */
	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(img->elf, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != order[t])
				continue;
			if (order[t] == SHT_SYMTAB)
				img->has_symtab = true;
			err = load_symtab(img, scn, &sh, &cap);
			if (err)
				return err;
		}
	}
	if (!img->nsyms)
		return 0;

	img->by_name = malloc(img->nsyms * sizeof(*img->by_name));
	img->by_addr = malloc(img->nsyms * sizeof(*img->by_addr));
	if (!img->by_name || !img->by_addr)
		return -ENOMEM;
	for (i = 0; i < img->nsyms; i++)
		img->by_name[i] = img->by_addr[i] = &img->syms[i];
	qsort(img->by_name, img->nsyms, sizeof(*img->by_name), cmp_by_name);
	qsort(img->by_addr, img->nsyms, sizeof(*img->by_addr), cmp_by_addr);
	return 0;
}

/* ---- symbol lookup ----------------------------------------------------- */

static void fill_symbol(const struct elf_image *img, const struct func_sym *s,
			struct elf_symbol *out)
{
	memset(out, 0, sizeof(*out));
	out->name = s->name;
	out->vaddr = s->vaddr;
	out->size = s->size;
	if (elf_image__map_vaddr(img, s->vaddr, &out->file_offset, NULL))
		out->file_offset = 0;
	out->from_dynsym = s->dynsym;
	out->global = s->bind != STB_LOCAL;
	out->ifunc = s->ifunc;
	out->version = s->version;
}

static bool is_global(const struct func_sym *s)
{
	return s->bind != STB_LOCAL;
}

/* Better representative of one address: global over local, sized over
 * unsized, else the earlier one. */
static bool better_alias(const struct func_sym *a, const struct func_sym *b)
{
	if (is_global(a) != is_global(b))
		return is_global(a);
	if ((a->size != 0) != (b->size != 0))
		return a->size != 0;
	return false;
}

/* Candidates for name, aliases collapsed, in table order. Returns the
 * count; *out is malloc'ed (NULL when 0) or -ENOMEM. */
static int collect_candidates(const struct elf_image *img, const char *name,
			      const struct func_sym ***out)
{
	const char *at = strchr(name, '@'), *qver = NULL;
	size_t qlen = at ? (size_t)(at - name) : strlen(name);
	const struct func_sym **c = NULL;
	bool qdefault = false;
	size_t lo = 0, hi = img->nsyms, first, end, n = 0, i, j;
	int t;

	*out = NULL;
	if (at) {
		qdefault = at[1] == '@';
		qver = at + (qdefault ? 2 : 1);
	}
	/* lower bound of the key in by_name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct func_sym *s = img->by_name[mid];

		if (cmp_key(s->name, s->key_len, name, qlen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	for (end = first; end < img->nsyms; end++) {
		const struct func_sym *s = img->by_name[end];

		if (cmp_key(s->name, s->key_len, name, qlen))
			break;
	}
	if (end == first)
		return 0;
	c = malloc((end - first) * sizeof(*c));
	if (!c)
		return -ENOMEM;

	/* .symtab first; .dynsym only when .symtab has no candidate. */
	for (t = 0; t < 2 && !n; t++) {
		bool any_default = false;
		size_t k = 0;

		for (i = first; i < end; i++) {
			const struct func_sym *s = img->by_name[i];

			if (s->dynsym != (t == 1))
				continue;
			if (qver && (!s->version || strcmp(s->version, qver) ||
				     (qdefault && s->hidden)))
				continue;
			c[k++] = s;
			any_default |= !s->hidden;
		}
		/* A bare name means the default version, like the linker. */
		if (!qver && any_default) {
			for (i = j = 0; i < k; i++)
				if (!c[i]->hidden)
					c[j++] = c[i];
			k = j;
		}
		/* collapse aliases, one entry per address (sorted, so a
		 * file with thousands of same-named symbols stays linear),
		 * then back to table order */
		qsort(c, k, sizeof(*c), cmp_by_addr);
		for (i = j = 0; i < k; i++) {
			if (j && c[j - 1]->vaddr == c[i]->vaddr) {
				if (better_alias(c[i], c[j - 1]))
					c[j - 1] = c[i];
				continue;
			}
			c[j++] = c[i];
		}
		qsort(c, j, sizeof(*c), cmp_by_idx);
		n = j;
	}
	if (!n) {
		free(c);
		return 0;
	}
	*out = c;
	return (int)n;
}

int elf_image__find_symbols(const struct elf_image *img, const char *name,
			    struct elf_symbol *out, int max)
{
	const struct func_sym **c;
	int n, i;

	if (!img || !name || (max > 0 && !out))
		return -EINVAL;
	n = collect_candidates(img, name, &c);
	for (i = 0; i < n && i < max; i++)
		fill_symbol(img, c[i], &out[i]);
	free(c);
	return n;
}

int elf_image__find_symbol(const struct elf_image *img, const char *name,
			   struct elf_symbol *out)
{
	const struct func_sym **c, *pick = NULL;
	int n, i, nstrong = 0, nweak = 0, err = 0;
	const struct func_sym *strong = NULL, *weak = NULL;

	if (!img || !name || !out)
		return -EINVAL;
	n = collect_candidates(img, name, &c);
	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	if (n == 1) {
		pick = c[0];
		goto done;
	}
	/* Several addresses: one strong definition wins, as it would at
	 * link time; a lone weak one next; several statics (or several
	 * globals, which only a hostile or partially linked file has) are
	 * a question only the user can answer. */
	for (i = 0; i < n; i++) {
		if (c[i]->bind == STB_WEAK) {
			nweak++;
			weak = c[i];
		} else if (c[i]->bind != STB_LOCAL) {
			nstrong++;
			strong = c[i];
		}
	}
	if (nstrong == 1)
		pick = strong;
	else if (nstrong == 0 && nweak == 1)
		pick = weak;
	else {
		pick = c[0];
		err = -ENOTUNIQ;
	}
done:
	fill_symbol(img, pick, out);
	free(c);
	return err;
}

int elf_image__symbol_at(const struct elf_image *img, uint64_t vaddr,
			 struct elf_symbol *out)
{
	const struct func_sym *best = NULL;
	size_t lo = 0, hi, j, steps;

	if (!img || !out)
		return -EINVAL;
	hi = img->nsyms;
	/* first entry with start > vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->by_addr[mid]->vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo, steps = 0; j > 0 && steps < SYMBOL_AT_LOOKBACK; j--, steps++) {
		const struct func_sym *s = img->by_addr[j - 1];
		bool inside = s->size ? vaddr - s->vaddr < s->size : vaddr == s->vaddr;

		if (best && s->vaddr != best->vaddr)
			break;
		/* equal starts are sorted by idx: keep walking to the first */
		if (inside)
			best = s;
	}
	if (!best)
		return -ENOENT;
	fill_symbol(img, best, out);
	return 0;
}

size_t elf_image__symbol_count(const struct elf_image *img)
{
	return img ? img->nsyms : 0;
}

int elf_image__symbol_by_index(const struct elf_image *img, size_t i,
			       struct elf_symbol *out)
{
	if (!img || !out)
		return -EINVAL;
	if (i >= img->nsyms)
		return -ENOENT;
	fill_symbol(img, img->by_addr[i], out);
	return 0;
}
