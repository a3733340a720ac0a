/* SPDX-License-Identifier: BSD-2-Clause */
/* usdt.c: USDT probes of an ELF image, from its .note.stapsdt notes
 * (see usdt.h), read once at open.
 *
 * Each note gives the probe's location, the link-time address of
 * .stapsdt.base, the semaphore's address and three strings (provider,
 * name, argument spec). The descriptor is untrusted input: its size and
 * every string are bound-checked here.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "elf/elf_image_int.h"

#define NT_STAPSDT 3

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

/* One stapsdt note descriptor (desc, n >= 3 address-sized fields) into
 * the next entry of img->notes; a malformed one (off: where, for the
 * message) is skipped. 0 or -errno. */
static int add_note(struct elf_image *img, const char *desc, size_t n, uint64_t base_addr,
		    size_t off, size_t *cap)
{
	size_t asz = img->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	uint64_t mask = asz == 4 ? 0xffffffffull : ~0ull;
	const char *p = desc + 3 * asz, *end = desc + n;
	struct elf_usdt_note *u;
	uint64_t pc, base, sema;
	int err;

	pc = elf_image__read_addr(img, (const uint8_t *)desc);
	base = elf_image__read_addr(img, (const uint8_t *)desc + asz);
	sema = elf_image__read_addr(img, (const uint8_t *)desc + 2 * asz);
	err = PB_ARRAY_RESERVE_ONE(img->notes, (size_t)img->nnotes, *cap);
	if (err)
		return err;
	u = &img->notes[img->nnotes];
	memset(u, 0, sizeof(*u));
	u->provider = desc_string(&p, end);
	u->name = u->provider ? desc_string(&p, end) : NULL;
	u->args = u->name ? desc_string(&p, end) : NULL;
	if (!u->args) {
		pr_debug("%s: malformed stapsdt note at +%zu\n", img->path, off);
		return 0;
	}
	/* Prelink moves sections after the notes were written; the note
	 * records where .stapsdt.base was at link time, the section says
	 * where it is now (libbpf usdt.c does the same). */
	if (base_addr && base) {
		pc = (pc + base_addr - base) & mask;
		if (sema)
			sema = (sema + base_addr - base) & mask;
	}
	u->pc = pc;
	u->semaphore = sema;
	u->n_args = count_args(u->args);
	if (elf_image__map_vaddr(img, pc, &u->file_offset, NULL))
		u->file_offset = 0;
	/* Semaphores live in .probes, in the writable PT_LOAD: the segment
	 * maps them like code. Unmapped (a relocatable object): 0, as
	 * documented. */
	if (sema && elf_image__map_vaddr(img, sema, &u->semaphore_file_offset, NULL))
		u->semaphore_file_offset = 0;
	img->nnotes++;
	return 0;
}

int elf_image__load_usdt_notes(struct elf_image *img)
{
	size_t asz = img->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	size_t off = 0, next, name_off, desc_off, cap = 0;
	uint64_t base_addr = 0;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	int err;

	scn = elf_image__find_section(img, ".stapsdt.base", &sh);
	if (scn)
		base_addr = sh.sh_addr;
	scn = elf_image__find_section(img, ".note.stapsdt", &sh);
	if (!scn || sh.sh_type != SHT_NOTE)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *d = data->d_buf;

		off = next;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    !elf_range_ok(name_off, 8, data->d_size) ||
		    memcmp(d + name_off, "stapsdt", 8))
			continue;
		if (!elf_range_ok(desc_off, nh.n_descsz, data->d_size) ||
		    nh.n_descsz < 3 * asz)
			continue;
		if (img->nnotes >= INT32_MAX)
			break;
		err = add_note(img, d + desc_off, nh.n_descsz, base_addr, off, &cap);
		if (err)
			return err;
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
