/* SPDX-License-Identifier: BSD-2-Clause */
/* self_build_id.c: the running executable's GNU build-id from memory
 * (self_build_id.h). dl_iterate_phdr reports the main program first; its
 * PT_NOTE segments are mapped (they sit in the first, read-only load
 * segment), so the note is read where the loader put it.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include "elf/self_build_id.h"

#define NOTE_ALIGN(x) (((x) + 3) & ~(size_t)3)

struct find_ctx {
	uint8_t *buf;
	size_t sz;
	int result;		/* length, or -errno */
};

/* The NT_GNU_BUILD_ID note ("GNU") in one PT_NOTE segment: its length, or
 * -ENOENT. */
static int note_build_id(const uint8_t *p, size_t len, struct find_ctx *c)
{
	size_t off = 0;

	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(p + off);
		size_t name_off = off + sizeof(*n);
		size_t desc_off = name_off + NOTE_ALIGN(n->n_namesz);
		size_t next = desc_off + NOTE_ALIGN(n->n_descsz);

		if (desc_off > len || n->n_descsz > len - desc_off)
			break;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4)) {
			if (n->n_descsz > c->sz)
				return -ENOSPC;
			memcpy(c->buf, p + desc_off, n->n_descsz);
			return (int)n->n_descsz;
		}
		off = next;
	}
	return -ENOENT;
}

static int find_in_main(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_ctx *c = arg;
	int i, r;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_NOTE)
			continue;
		r = note_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, c);
		if (r != -ENOENT) {
			c->result = r;
			break;
		}
	}
	return 1;	/* the first object is the main program: stop there */
}

int elf_self_build_id(uint8_t *buf, size_t sz)
{
	struct find_ctx c = { .buf = buf, .sz = sz, .result = -ENOENT };

	if (!buf && sz)
		return -EINVAL;
	dl_iterate_phdr(find_in_main, &c);
	return c.result;
}

int elf_self_build_id_hex(char *buf, size_t sz)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t id[64];
	int i, n;

	if (!buf && sz)
		return -EINVAL;
	n = elf_self_build_id(id, sizeof(id));
	if (n < 0)
		return n;
	if (sz < 2 * (size_t)n + 1)
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 0xf];
	}
	buf[2 * i] = '\0';
	return n;
}
