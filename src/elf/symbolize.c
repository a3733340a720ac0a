// SPDX-License-Identifier: BSD-2-Clause
/* symbolize.c: offline user-stack symbolization (see symbolize.h). One
 * libdwfl session per recorded mapping, opened at its first lookup: the
 * load bias comes from the executable PT_LOAD that holds the mapping's
 * file offset, so PIE, shared libraries and fixed executables all work.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "elf/symbolize.h"

struct sym_map {
	uint32_t pid;
	bool dead;		/* replaced by a newer table */
	int state;		/* 0 not opened, 1 open, -1 cannot */
	uint64_t start, end, offset;
	uint8_t bid[40];
	size_t bid_len;
	char *path;
	uint64_t bias;
	Dwfl *dwfl;
	bool borrowed;		/* dwfl is another mapping's (same file, same bias) */
};

struct symbolizer {
	struct sym_map *m;
	size_t n, cap;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer__new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer__reset(struct symbolizer *s, uint32_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->m[i].pid == pid)
			s->m[i].dead = true;
}

int symbolizer__add(struct symbolizer *s, uint32_t pid, const char *path, uint64_t start,
		    uint64_t end, uint64_t offset, const uint8_t *build_id, size_t build_id_len)
{
	struct sym_map *m;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		m = realloc(s->m, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->m = m;
		s->cap = cap;
	}
	m = &s->m[s->n];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->pid = pid;
	m->start = start;
	m->end = end;
	m->offset = offset;
	m->bid_len = build_id_len < sizeof(m->bid) ? build_id_len : sizeof(m->bid);
	memcpy(m->bid, build_id, m->bid_len);
	s->n++;
	return 0;
}

/* The load bias of the mapping: file offset -> vaddr of its PT_LOAD.
 * -1 when the file is not the recorded one (build-id) or has no such
 * segment. */
static int map_bias(Elf *elf, const struct sym_map *m, uint64_t *bias)
{
	const void *bid;
	GElf_Phdr ph;
	size_t i, n;

	if (m->bid_len) {
		ssize_t l = dwelf_elf_gnu_build_id(elf, &bid);

		if (l != (ssize_t)m->bid_len || memcmp(bid, m->bid, m->bid_len))
			return -1;
	}
	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if ((ph.p_offset & ~(ph.p_align ? ph.p_align - 1 : 0)) <= m->offset &&
		    m->offset < ph.p_offset + ph.p_filesz) {
			*bias = m->start - m->offset + ph.p_offset - ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

/* A mapping of the same file at the same load bias already opened (the
 * same library in many processes of --all): share its session. */
static bool map_share(struct symbolizer *s, struct sym_map *m)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct sym_map *o = &s->m[i];

		if (o == m || o->state <= 0 || o->borrowed || o->bias != m->bias ||
		    o->bid_len != m->bid_len || memcmp(o->bid, m->bid, m->bid_len) ||
		    strcmp(o->path, m->path))
			continue;
		m->dwfl = o->dwfl;
		m->borrowed = true;
		m->state = 1;
		return true;
	}
	return false;
}

static void map_open(struct symbolizer *s, struct sym_map *m)
{
	uint64_t bias = 0;
	Elf *elf = NULL;
	int fd, ok = -1;

	m->state = -1;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		ok = map_bias(elf, m, &bias);
	if (elf)
		elf_end(elf);
	close(fd);
	if (ok)
		return;
	m->bias = bias;
	if (map_share(s, m))
		return;
	m->dwfl = dwfl_begin(&callbacks);
	if (!m->dwfl)
		return;
	dwfl_report_begin(m->dwfl);
	if (!dwfl_report_elf(m->dwfl, m->path, m->path, -1, bias, true)) {
		pr_debug("symbolize: %s: %s\n", m->path, dwfl_errmsg(-1));
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		return;
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	m->state = 1;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

enum sym_result symbolizer__name(struct symbolizer *s, uint32_t pid, uint64_t ip, bool ret_addr,
				 char *buf, size_t sz)
{
	uint64_t look = ret_addr && ip ? ip - 1 : ip;
	struct sym_map *m = NULL;
	const char *name = NULL;
	size_t i;

	for (i = s->n; i-- > 0;)
		if (s->m[i].pid == pid && !s->m[i].dead && s->m[i].start <= look &&
		    look < s->m[i].end) {
			m = &s->m[i];
			break;
		}
	if (!m) {
		snprintf(buf, sz, "[unknown]");
		return SYM_UNKNOWN;
	}
	if (!m->state)
		map_open(s, m);
	if (m->state > 0) {
		Dwfl_Module *mod = dwfl_addrmodule(m->dwfl, look);
		GElf_Off off;
		GElf_Sym sym;

		if (mod)
			name = dwfl_module_addrinfo(mod, look, &off, &sym, NULL, NULL, NULL);
	}
	if (name && *name) {
		snprintf(buf, sz, "%s", name);
		return SYM_NAMED;
	}
	snprintf(buf, sz, "%s+0x%llx", base_name(m->path),
		 (unsigned long long)(ip - m->start + m->offset));
	return SYM_MODULE;
}

bool symbolizer__knows(const struct symbolizer *s, uint32_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->m[i].pid == pid && !s->m[i].dead)
			return true;
	return false;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		if (s->m[i].dwfl && !s->m[i].borrowed)
			dwfl_end(s->m[i].dwfl);
		free(s->m[i].path);
	}
	free(s->m);
	free(s);
}
