/* elf_image.c: one ELF file as probity needs it, read through libelf.
 *
 * Everything is parsed once, at open: program headers, the GNU build-id,
 * the function symbols of .symtab and .dynsym (indexed by name and by
 * address) and the USDT notes of .note.stapsdt. Lookups afterwards are
 * pure reads, so a const image can be shared.
 *
 * The file is untrusted input (it may be truncated, corrupted or built to
 * hurt). libelf checks section data against the file size; everything we
 * derive from it ourselves (note descriptors, symbol and version indices,
 * segment arithmetic, string lengths) is bound-checked here before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "elf/elf_image.h"

#define NT_STAPSDT 3
/* .gnu.version entries: index in the low 15 bits, "hidden" (not the
 * default version) in the top one. */
#define VERSYM_HIDDEN 0x8000
#define VERSYM_INDEX 0x7fff
/* Walking back from a vaddr for the containing symbol stops after this
 * many starts: enough for aliases and nested labels, bounded on hostile
 * files with thousands of symbols at one address. */
#define SYMBOL_AT_LOOKBACK 64

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

/* ---- small helpers ---------------------------------------------------- */

static const char *section_name(const struct elf_image *img, const GElf_Shdr *sh)
{
	if (!img->have_shstrndx)
		return NULL;
	return elf_strptr(img->elf, img->shstrndx, sh->sh_name);
}

/* First section called name (NULL if none). */
static Elf_Scn *find_section(const struct elf_image *img, const char *name,
			     GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(img->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = section_name(img, sh);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* An address-sized field of a note descriptor, in the file's byte order. */
static uint64_t read_addr(const struct elf_image *img, const uint8_t *p)
{
	size_t n = img->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	bool le = img->ehdr.e_ident[EI_DATA] != ELFDATA2MSB;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		size_t b = le ? n - 1 - i : i;

		v = (v << 8) | p[b];
	}
	return v;
}

/* Is [off, off + len) inside a buffer of sz bytes? (overflow-safe) */
static bool range_ok(size_t off, size_t len, size_t sz)
{
	return off <= sz && len <= sz - off;
}

/* ---- build-id --------------------------------------------------------- */

/* Look for NT_GNU_BUILD_ID in one block of notes; true when found. */
static bool scan_build_id(struct elf_image *img, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return false;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *d = data->d_buf;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4)
			continue;
		if (!range_ok(name_off, 4, data->d_size) ||
		    !range_ok(desc_off, nh.n_descsz, data->d_size))
			continue;
		if (memcmp(d + name_off, "GNU", 4))
			continue;
		if (nh.n_descsz == 0 || nh.n_descsz > ELF_BUILD_ID_MAX)
			continue;
		memcpy(img->build_id, d + desc_off, nh.n_descsz);
		img->build_id_len = (int)nh.n_descsz;
		return true;
	}
	return false;
}

static void load_build_id(struct elf_image *img)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t i;

	img->build_id_len = -ENOENT;
	while ((scn = elf_nextscn(img->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (scan_build_id(img, elf_getdata(scn, NULL)))
			return;
	}
	/* Section headers can be stripped (sstrip) or bogus; the loader only
	 * needs PT_NOTE, so look there too. */
	for (i = 0; i < img->nphdrs; i++) {
		const GElf_Phdr *ph = &img->phdrs[i];
		Elf_Data *data;

		if (ph->p_type != PT_NOTE || ph->p_filesz == 0 ||
		    !range_ok(ph->p_offset, ph->p_filesz, img->raw_sz))
			continue;
		data = elf_getdata_rawchunk(img->elf, ph->p_offset, ph->p_filesz,
					    ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (scan_build_id(img, data))
			return;
	}
}

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
		const char *name, *at;
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

		if (img->nsyms == *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			struct func_sym *t = realloc(img->syms, ncap * sizeof(*t));

			if (!t) {
				err = -ENOMEM;
				goto out;
			}
			img->syms = t;
			*cap = ncap;
		}
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
		/* .symtab spells versions into the name ("memcpy@@GLIBC_2.14",
		 * "memcpy@GLIBC_2.2.5": default and hidden versions). */
		at = strchr(name, '@');
		if (at) {
			s->key_len = (size_t)(at - name);
			if (at[1] == '@') {
				s->version = at + 2;
			} else {
				s->version = at + 1;
				s->hidden = true;
			}
		}
		/* .dynsym keeps them in .gnu.version / .gnu.version_d. */
		if (vdefs) {
			GElf_Versym vs;

			if (gelf_getversym(versym, (int)i, &vs) &&
			    (vs & VERSYM_INDEX) >= 2) {
				const char *v = vdefs[vs & VERSYM_INDEX];

				if (v) {
					s->version = v;
					s->hidden = vs & VERSYM_HIDDEN;
				}
			}
		}
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

static int load_symbols(struct elf_image *img)
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

/* ---- vaddr -> file offset ---------------------------------------------- */

/* The PT_LOAD whose file-backed part holds vaddr: file offset and the
 * number of file bytes from there to the end of that part. */
static int map_vaddr(const struct elf_image *img, uint64_t vaddr,
		     uint64_t *off, uint64_t *avail)
{
	size_t i;

	for (i = 0; i < img->nphdrs; i++) {
		const GElf_Phdr *ph = &img->phdrs[i];
		uint64_t delta, o, left;

		if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr)
			continue;
		delta = vaddr - ph->p_vaddr;
		if (delta >= ph->p_filesz)
			continue;
		o = ph->p_offset + delta;
		if (o < ph->p_offset || o >= img->raw_sz)
			continue;	/* overflow, or past the end of the file */
		left = ph->p_filesz - delta;
		if (left > img->raw_sz - o)
			left = img->raw_sz - o;
		*off = o;
		if (avail)
			*avail = left;
		return 0;
	}
	return -ENOENT;
}

int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr,
			       uint64_t *off)
{
	if (!img || !off)
		return -EINVAL;
	return map_vaddr(img, vaddr, off, NULL);
}

int elf_image__mapped_len(const struct elf_image *img, uint64_t vaddr,
			  uint64_t *len)
{
	uint64_t off;

	if (!img || !len)
		return -EINVAL;
	return map_vaddr(img, vaddr, &off, len);
}

int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf,
		    size_t len)
{
	uint64_t off, avail;
	int err;

	if (!img || (!buf && len))
		return -EINVAL;
	if (!len)
		return 0;
	err = map_vaddr(img, vaddr, &off, &avail);
	if (err)
		return err;
	if (len > avail)
		return -ERANGE;
	memcpy(buf, img->raw + off, len);
	return 0;
}

/* ---- USDT notes --------------------------------------------------------- */

static int count_args(const char *args)
{
	int n = 0;
	bool in_tok = false;

	for (; *args; args++) {
		if (*args == ' ') {
			in_tok = false;
		} else if (!in_tok) {
			in_tok = true;
			n++;
		}
	}
	return n;
}

/* One string of a note descriptor at *p; NULL unless NUL-terminated
 * before end. */
static const char *desc_string(const char **p, const char *end)
{
	const char *s = *p, *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, '\0', (size_t)(end - s));
	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

static int load_usdt_notes(struct elf_image *img)
{
	size_t asz = img->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	uint64_t mask = asz == 4 ? 0xffffffffull : ~0ull;
	size_t off = 0, next, name_off, desc_off, cap = 0;
	uint64_t base_addr = 0;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Nhdr nh;

	scn = find_section(img, ".stapsdt.base", &sh);
	if (scn)
		base_addr = sh.sh_addr;
	scn = find_section(img, ".note.stapsdt", &sh);
	if (!scn || sh.sh_type != SHT_NOTE)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *d = data->d_buf, *p, *end;
		struct elf_usdt_note *u;
		uint64_t pc, base, sema;

		off = next;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    !range_ok(name_off, 8, data->d_size) ||
		    memcmp(d + name_off, "stapsdt", 8))
			continue;
		if (!range_ok(desc_off, nh.n_descsz, data->d_size) ||
		    nh.n_descsz < 3 * asz)
			continue;
		pc = read_addr(img, (const uint8_t *)d + desc_off);
		base = read_addr(img, (const uint8_t *)d + desc_off + asz);
		sema = read_addr(img, (const uint8_t *)d + desc_off + 2 * asz);
		p = d + desc_off + 3 * asz;
		end = d + desc_off + nh.n_descsz;

		if ((size_t)img->nnotes == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct elf_usdt_note *t;

			if (ncap > INT32_MAX)
				break;
			t = realloc(img->notes, ncap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			img->notes = t;
			cap = ncap;
		}
		u = &img->notes[img->nnotes];
		memset(u, 0, sizeof(*u));
		u->provider = desc_string(&p, end);
		u->name = u->provider ? desc_string(&p, end) : NULL;
		u->args = u->name ? desc_string(&p, end) : NULL;
		if (!u->args) {
			pr_debug("%s: malformed stapsdt note at +%zu\n", img->path, off);
			continue;
		}
		/* Prelink moves sections after the notes were written; the
		 * note records where .stapsdt.base was at link time, the
		 * section says where it is now (libbpf usdt.c does the same). */
		if (base_addr && base) {
			pc = (pc + base_addr - base) & mask;
			if (sema)
				sema = (sema + base_addr - base) & mask;
		}
		u->pc = pc;
		u->semaphore = sema;
		u->n_args = count_args(u->args);
		if (map_vaddr(img, pc, &u->file_offset, NULL))
			u->file_offset = 0;
		/* Semaphores live in .probes, in the writable PT_LOAD: the
		 * segment maps them like code. Unmapped (a relocatable
		 * object): 0, as documented. */
		if (sema && map_vaddr(img, sema, &u->semaphore_file_offset, NULL))
			u->semaphore_file_offset = 0;
		img->nnotes++;
	}
	return 0;
}

int elf_image__usdt_notes(const struct elf_image *img,
			  const struct elf_usdt_note **notes)
{
	if (!img || !notes)
		return -EINVAL;
	*notes = img->notes;
	return img->nnotes;
}

/* ---- open / free ------------------------------------------------------- */

static int load_headers(struct elf_image *img)
{
	Elf_Scn *scn = NULL;
	size_t n, i;
	GElf_Shdr sh;

	if (elf_kind(img->elf) != ELF_K_ELF || !gelf_getehdr(img->elf, &img->ehdr))
		return -ENOEXEC;
	img->raw = (const uint8_t *)elf_rawfile(img->elf, &img->raw_sz);
	if (!img->raw)
		return -ENOEXEC;

	/* A header table that is announced but lies past the end of the
	 * file means a truncated or corrupted file: refuse it rather than
	 * report "no symbols" (libelf quietly treats such a section header
	 * table as empty). Same for a PT_LOAD whose bytes are not all there. */
	if (img->ehdr.e_shoff &&
	    !range_ok(img->ehdr.e_shoff,
		      (size_t)(img->ehdr.e_shnum ? img->ehdr.e_shnum : 1) *
		      img->ehdr.e_shentsize, img->raw_sz))
		return -ENOEXEC;
	if (elf_getphdrnum(img->elf, &n))
		return -ENOEXEC;
	if (n) {
		img->phdrs = calloc(n, sizeof(*img->phdrs));
		if (!img->phdrs)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			const GElf_Phdr *ph = &img->phdrs[i];

			if (!gelf_getphdr(img->elf, (int)i, &img->phdrs[i]))
				return -ENOEXEC;
			if (ph->p_type == PT_LOAD &&
			    !range_ok(ph->p_offset, ph->p_filesz, img->raw_sz))
				return -ENOEXEC;
		}
		img->nphdrs = n;
	}

	if (elf_getshdrnum(img->elf, &n))
		return -ENOEXEC;
	while ((scn = elf_nextscn(img->elf, scn)))
		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
	img->have_shstrndx = n > 0 && !elf_getshdrstrndx(img->elf, &img->shstrndx);
	return 0;
}

static struct elf_image *image_finish(struct elf_image *img)
{
	int err;

	err = load_headers(img);
	if (err)
		goto err_out;
	load_build_id(img);
	err = load_symbols(img);
	if (err)
		goto err_out;
	err = load_usdt_notes(img);
	if (err)
		goto err_out;
	return img;

err_out:
	elf_image__free(img);
	errno = -err;
	return NULL;
}

static struct elf_image *image_alloc(const char *name)
{
	struct elf_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->fd = -1;
	img->build_id_len = -ENOENT;
	img->path = strdup(name ? name : "");
	if (!img->path) {
		free(img);
		return NULL;
	}
	return img;
}

struct elf_image *elf_image__open(const char *path)
{
	struct elf_image *img;
	struct stat st;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	elf_version(EV_CURRENT);
	img = image_alloc(path);
	if (!img)
		return NULL;
	img->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0) {
		err = -errno;
		goto err_out;
	}
	if (fstat(img->fd, &st)) {
		err = -errno;
		goto err_out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto err_out;
	}
	/* libelf would happily read a FIFO or a device forever. */
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto err_out;
	}
	img->elf = elf_begin(img->fd, ELF_C_READ_MMAP, NULL);
	if (!img->elf) {
		pr_debug("%s: %s\n", path, elf_errmsg(-1));
		err = -ENOEXEC;
		goto err_out;
	}
	return image_finish(img);

err_out:
	elf_image__free(img);
	errno = -err;
	return NULL;
}

struct elf_image *elf_image__open_mem(const void *buf, size_t len,
				      const char *name)
{
	struct elf_image *img;
	int err;

	if (!buf && len) {
		errno = EINVAL;
		return NULL;
	}
	elf_version(EV_CURRENT);
	img = image_alloc(name ? name : "<memory>");
	if (!img)
		return NULL;
	/* A private copy: libelf may write into a memory image (it opens it
	 * as ELF_C_READ_MMAP_PRIVATE) and the caller's buffer may go away. */
	img->mem = malloc(len ? len : 1);
	if (!img->mem) {
		err = -ENOMEM;
		goto err_out;
	}
	if (len)
		memcpy(img->mem, buf, len);
	img->elf = elf_memory(img->mem, len);
	if (!img->elf) {
		err = -ENOEXEC;
		goto err_out;
	}
	return image_finish(img);

err_out:
	elf_image__free(img);
	errno = -err;
	return NULL;
}

void elf_image__free(struct elf_image *img)
{
	int saved = errno;

	if (!img)
		return;
	free(img->notes);
	free(img->by_name);
	free(img->by_addr);
	free(img->syms);
	free(img->phdrs);
	if (img->elf)
		elf_end(img->elf);
	if (img->fd >= 0)
		close(img->fd);
	free(img->mem);
	free(img->path);
	free(img);
	errno = saved;
}

const char *elf_image__path(const struct elf_image *img)
{
	return img ? img->path : NULL;
}

int elf_image__type(const struct elf_image *img)
{
	return img ? img->ehdr.e_type : ET_NONE;
}

int elf_image__machine(const struct elf_image *img)
{
	return img ? img->ehdr.e_machine : EM_NONE;
}

bool elf_image__has_symtab(const struct elf_image *img)
{
	return img && img->has_symtab;
}

int elf_image__build_id(const struct elf_image *img, uint8_t *buf, size_t sz)
{
	if (!img || (!buf && sz))
		return -EINVAL;
	if (img->build_id_len < 0)
		return img->build_id_len;
	if (sz < (size_t)img->build_id_len)
		return -ENOSPC;
	memcpy(buf, img->build_id, img->build_id_len);
	return img->build_id_len;
}

int elf_image__build_id_hex(const struct elf_image *img, char *buf, size_t sz)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	if (!img || (!buf && sz))
		return -EINVAL;
	if (img->build_id_len < 0)
		return img->build_id_len;
	if (sz < 2 * (size_t)img->build_id_len + 1)
		return -ENOSPC;
	for (i = 0; i < img->build_id_len; i++) {
		buf[2 * i] = hex[img->build_id[i] >> 4];
		buf[2 * i + 1] = hex[img->build_id[i] & 0xf];
	}
	buf[2 * i] = '\0';
	return img->build_id_len;
}

/* ---- symbol lookup ----------------------------------------------------- */

static void fill_symbol(const struct elf_image *img, const struct func_sym *s,
			struct elf_symbol *out)
{
	memset(out, 0, sizeof(*out));
	out->name = s->name;
	out->vaddr = s->vaddr;
	out->size = s->size;
	if (map_vaddr(img, s->vaddr, &out->file_offset, NULL))
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
