/* SPDX-License-Identifier: BSD-2-Clause */
/* usdt.h: USDT probes of an ELF image (.note.stapsdt), parsed when the
 * image is opened (usdt.c).
 */
#ifndef PROBITY_ELF_USDT_H
#define PROBITY_ELF_USDT_H

#include <stdint.h>

struct elf_image;

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

/* USDT notes from .note.stapsdt; the array is owned by the image.
 * Returns the count (>= 0) or -errno. */
int elf_image__usdt_notes(const struct elf_image *img,
			  const struct elf_usdt_note **notes);

#endif
