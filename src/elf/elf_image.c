/* SPDX-License-Identifier: BSD-2-Clause */
/* elf_image.c: one ELF file as probity needs it, read through libelf.
 *
 * Everything is parsed once, at open: program headers, the GNU build-id,
 * the function symbols of .symtab and .dynsym (symbols.c, indexed by name
 * and by address) and the USDT notes of .note.stapsdt (usdt.c). Lookups
 * afterwards are pure reads, so a const image can be shared. This file
 * holds the headers, the build-id, vaddr -> file offset and open/free.
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
#include "elf/elf_image_int.h"

/* ---- small helpers ---------------------------------------------------- */

static const char *section_name(const struct elf_image *img, const GElf_Shdr *sh)
{
	if (!img->have_shstrndx)
		return NULL;
	return elf_strptr(img->elf, img->shstrndx, sh->sh_name);
}

Elf_Scn *elf_image__find_section(const struct elf_image *img, const char *name,
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

uint64_t elf_image__read_addr(const struct elf_image *img, const uint8_t *p)
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
		if (!elf_range_ok(name_off, 4, data->d_size) ||
		    !elf_range_ok(desc_off, nh.n_descsz, data->d_size))
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
		    !elf_range_ok(ph->p_offset, ph->p_filesz, img->raw_sz))
			continue;
		data = elf_getdata_rawchunk(img->elf, ph->p_offset, ph->p_filesz,
					    ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (scan_build_id(img, data))
			return;
	}
}

/* ---- vaddr -> file offset ---------------------------------------------- */

int elf_image__map_vaddr(const struct elf_image *img, uint64_t vaddr,
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
	return elf_image__map_vaddr(img, vaddr, off, NULL);
}

int elf_image__mapped_len(const struct elf_image *img, uint64_t vaddr,
			  uint64_t *len)
{
	uint64_t off;

	if (!img || !len)
		return -EINVAL;
	return elf_image__map_vaddr(img, vaddr, &off, len);
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
	err = elf_image__map_vaddr(img, vaddr, &off, &avail);
	if (err)
		return err;
	if (len > avail)
		return -ERANGE;
	memcpy(buf, img->raw + off, len);
	return 0;
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
	    !elf_range_ok(img->ehdr.e_shoff,
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
			    !elf_range_ok(ph->p_offset, ph->p_filesz, img->raw_sz))
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
	err = elf_image__load_symbols(img);
	if (err)
		goto err_out;
	err = elf_image__load_usdt_notes(img);
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
