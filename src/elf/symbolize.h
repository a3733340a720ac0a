/* SPDX-License-Identifier: BSD-2-Clause */
/* symbolize.h: user return addresses of recorded processes to function
 * names, offline, from the executable mappings a trace recorded (path,
 * range, file offset, build-id). libdwfl reads .symtab, .dynsym and the
 * separate debug files it finds (.gnu_debuglink, /usr/lib/debug/.build-id).
 * A file that cannot be opened, or whose build-id no longer matches the
 * recorded one, is not guessed at: its frames print as module+0xOFF.
 */
#ifndef PROBITY_ELF_SYMBOLIZE_H
#define PROBITY_ELF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

enum sym_result {
	SYM_NAMED = 0,		/* "function" */
	SYM_MODULE = 1,		/* "module+0xOFF": mapped, no symbol (file offset) */
	SYM_UNKNOWN = 2,	/* "[unknown]": in no recorded mapping */
};

struct symbolizer *symbolizer__new(void);
/* Forget the mappings of pid (a newer table replaces them). */
void symbolizer__reset(struct symbolizer *s, uint32_t pid);
/* One executable mapping [start, end) of pid at file offset offset. 0 or
 * -errno. */
int symbolizer__add(struct symbolizer *s, uint32_t pid, const char *path, uint64_t start,
		    uint64_t end, uint64_t offset, const uint8_t *build_id, size_t build_id_len);
/* The name of ip in pid into buf. ret_addr: ip is a return address (the
 * call is the instruction before it). */
enum sym_result symbolizer__name(struct symbolizer *s, uint32_t pid, uint64_t ip, bool ret_addr,
				 char *buf, size_t sz);
/* Whether any mapping of pid was added (and not reset). */
bool symbolizer__knows(const struct symbolizer *s, uint32_t pid);
void symbolizer__free(struct symbolizer *s);

#endif
