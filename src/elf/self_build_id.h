/* SPDX-License-Identifier: BSD-2-Clause */
/* self_build_id.h: the GNU build-id of the running program's own
 * executable, read from its loaded PT_NOTE segments (dl_iterate_phdr), so
 * no path to the binary (and no /proc) is needed. Same bytes as
 * elf_image__build_id() of the file.
 */
#ifndef PROBITY_ELF_SELF_BUILD_ID_H
#define PROBITY_ELF_SELF_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

/* Copy the build-id into buf; its length in bytes, -ENOENT when the
 * executable has none, -ENOSPC when sz is too small. */
int elf_self_build_id(uint8_t *buf, size_t sz);
/* Same, as lowercase hex into buf (sz >= 2 * len + 1). */
int elf_self_build_id_hex(char *buf, size_t sz);

#endif
