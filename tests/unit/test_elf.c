/* SPDX-License-Identifier: BSD-2-Clause */
/* test_elf.c: src/elf/ against the fixtures of mk/elf-fixtures.mk (and,
 * when installed, the system libc and PostgreSQL 15).
 *
 * Fixtures are found in $PROBITY_BUILD/fixtures (set by tests/run.sh) or
 * next to this binary's build directory when run by hand.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "elf/elf_image.h"
#include "elf/insn.h"
#include "elf/proc_maps.h"
#include "elf/usdt.h"

#define FIXTURE_BUILD_ID "0123456789abcdef0123456789abcdef01234567"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define POSTGRES "/usr/lib/postgresql/15/bin/postgres"
#define POSTGRES_BUILD_ID "44c007cfee140e4c25e8a434008096828e70a92c"

static const char *fixture(const char *name)
{
	static char buf[8][PATH_MAX];
	static int slot;
	const char *build = getenv("PROBITY_BUILD");
	char *p = buf[slot++ % 8];

	if (build) {
		if (snprintf(p, PATH_MAX, "%s/fixtures/%s", build, name) >= PATH_MAX)
			p[0] = '\0';
	} else {
		/* <build>/tests/test_elf -> <build>/fixtures/name */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		char *slash;

		exe[n > 0 ? n : 0] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		if (snprintf(p, PATH_MAX, "%s/../fixtures/%s", exe, name) >= PATH_MAX)
			p[0] = '\0';
	}
	return p;
}

/* A committed seed of tests/fuzz/corpus/fuzz_elf/ (see mk-elf-seeds.sh):
 * the only ELF32, big-endian and foreign-machine files we have. */
static const char *seed(const char *name)
{
	static char buf[4][PATH_MAX];
	static int slot;
	const char *root = getenv("PROBITY_ROOT");
	char *p = buf[slot++ % 4], exe[PATH_MAX];

	if (!root) {
		/* <root>/<build>/tests/test_elf */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		if (strrchr(exe, '/'))
			*strrchr(exe, '/') = '\0';
		strncat(exe, "/../..", sizeof(exe) - strlen(exe) - 1);
		root = exe;
	}
	if (snprintf(p, PATH_MAX, "%s/tests/fuzz/corpus/fuzz_elf/%s", root,
		     name) >= PATH_MAX)
		p[0] = '\0';
	return p;
}

/* Bytes of the file at a file offset. */
static int pread_file(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY), ok;

	if (fd < 0)
		return -errno;
	ok = pread(fd, buf, len, (off_t)off) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -EIO;
}

static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (buf = malloc(st.st_size ? st.st_size : 1))) {
		if (read(fd, buf, st.st_size) != st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = st.st_size;
	}
	close(fd);
	return buf;
}

/* ---- open / errors -------------------------------------------------- */

TEST(test_open_missing)
{
	struct elf_image *img = elf_image__open("/nonexistent/probity/elf");

	ASSERT_NULL(img);
	ASSERT_EQ(errno, ENOENT);
}

TEST(test_open_not_elf)
{
	struct elf_image *img = elf_image__open(fixture("not_elf.txt"));

	ASSERT_NULL(img);
	ASSERT_EQ(errno, ENOEXEC);
}

TEST(test_open_directory)
{
	struct elf_image *img = elf_image__open("/");

	ASSERT_NULL(img);
	ASSERT_EQ(errno, EISDIR);
}

TEST(test_open_truncated)
{
	struct elf_image *img;

	img = elf_image__open(fixture("elf_truncated_shdrs"));
	ASSERT_NULL(img);
	ASSERT_EQ(errno, ENOEXEC);
	img = elf_image__open(fixture("elf_truncated_ehdr"));
	ASSERT_NULL(img);
	ASSERT_EQ(errno, ENOEXEC);
}

TEST(test_open_mem_empty_and_garbage)
{
	static const uint8_t junk[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0xff, 0xff };
	struct elf_image *img;

	img = elf_image__open_mem(junk, 0, "empty");
	ASSERT_NULL(img);
	ASSERT_EQ(errno, ENOEXEC);
	img = elf_image__open_mem(junk, sizeof(junk), "junk");
	ASSERT_NULL(img);
	ASSERT_EQ(errno, ENOEXEC);
}

TEST(test_open_basic)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));

	ASSERT_NOT_NULL(img);
	ASSERT_STREQ(elf_image__path(img), fixture("elf_fixture"));
	ASSERT_EQ(elf_image__machine(img), EM_X86_64);
	ASSERT_EQ(elf_image__type(img), ET_DYN);	/* PIE */
	ASSERT_TRUE(elf_image__has_symtab(img));
	elf_image__free(img);
	elf_image__free(NULL);
}

/* ---- build-id ------------------------------------------------------- */

TEST(test_build_id_known)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	uint8_t raw[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];

	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__build_id(img, raw, sizeof(raw)), 20);
	ASSERT_EQ(raw[0], 0x01);
	ASSERT_EQ(raw[19], 0x67);
	ASSERT_EQ(elf_image__build_id_hex(img, hex, sizeof(hex)), 20);
	ASSERT_STREQ(hex, FIXTURE_BUILD_ID);
	ASSERT_ERR(elf_image__build_id(img, raw, 19), -ENOSPC);
	ASSERT_ERR(elf_image__build_id_hex(img, hex, 40), -ENOSPC);
	elf_image__free(img);
}

TEST(test_build_id_none)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture_nobuildid"));
	uint8_t raw[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];

	ASSERT_NOT_NULL(img);
	ASSERT_ERR(elf_image__build_id(img, raw, sizeof(raw)), -ENOENT);
	ASSERT_ERR(elf_image__build_id_hex(img, hex, sizeof(hex)), -ENOENT);
	elf_image__free(img);
}

/* The build-id through PT_NOTE alone: section headers wiped in memory. */
TEST(test_build_id_from_phdr)
{
	size_t len = 0;
	uint8_t *buf = slurp(fixture("elf_fixture"), &len);
	struct elf_image *img;
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	Elf64_Ehdr *eh;

	ASSERT_NOT_NULL(buf);
	eh = (Elf64_Ehdr *)buf;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	img = elf_image__open_mem(buf, len, "no-shdrs");
	free(buf);
	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__build_id_hex(img, hex, sizeof(hex)), 20);
	ASSERT_STREQ(hex, FIXTURE_BUILD_ID);
	ASSERT_FALSE(elf_image__has_symtab(img));
	elf_image__free(img);
}

/* ---- symbols -------------------------------------------------------- */

TEST(test_symbol_asm_layout)
{
	static const uint8_t want[28] = {
		0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0x88, 0x77, 0x66, 0x55,
		0x44, 0x33, 0x22, 0x11, 0x48, 0x8d, 0x05, 0x00, 0x00, 0x00,
		0x00, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x5d, 0xc3,
	};
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	uint8_t got[28], filebytes[28];
	struct elf_symbol sym;
	uint64_t off;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_STREQ(sym.name, "pb_layout_fn");
	ASSERT_EQ(sym.size, 28);
	ASSERT_TRUE(sym.global);
	ASSERT_FALSE(sym.from_dynsym);
	ASSERT_FALSE(sym.ifunc);
	ASSERT_NE(sym.vaddr, 0);
	ASSERT_OK(elf_image__read(img, sym.vaddr, got, sizeof(got)));
	ASSERT_TRUE(!memcmp(got, want, sizeof(want)));
	ASSERT_OK(pread_file(fixture("elf_fixture"), sym.file_offset, filebytes,
			     sizeof(filebytes)));
	ASSERT_TRUE(!memcmp(filebytes, want, sizeof(want)));
	ASSERT_OK(elf_image__vaddr_to_offset(img, sym.vaddr + 5, &off));
	ASSERT_U64_EQ(off, sym.file_offset + 5);
	elf_image__free(img);
}

TEST(test_symbol_c_function)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	uint8_t a[16], b[16];
	struct elf_symbol sym;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_fixture_loop", &sym));
	ASSERT_GT(sym.size, 0);
	ASSERT_TRUE(sym.global);
	ASSERT_OK(elf_image__read(img, sym.vaddr, a, sizeof(a)));
	ASSERT_OK(pread_file(fixture("elf_fixture"), sym.file_offset, b, sizeof(b)));
	ASSERT_TRUE(!memcmp(a, b, sizeof(a)));
	ASSERT_ERR(elf_image__find_symbol(img, "pb_no_such_function", &sym), -ENOENT);
	/* data, not a function */
	ASSERT_ERR(elf_image__find_symbol(img, "probity_test_sema_semaphore", &sym),
		   -ENOENT);
	elf_image__free(img);
}

TEST(test_symbol_ambiguous_locals)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct elf_symbol sym, all[4];

	ASSERT_NOT_NULL(img);
	ASSERT_ERR(elf_image__find_symbol(img, "pb_dup", &sym), -ENOTUNIQ);
	ASSERT_STREQ(sym.name, "pb_dup");	/* out gets the first */
	ASSERT_FALSE(sym.global);
	ASSERT_EQ(elf_image__find_symbols(img, "pb_dup", all, 4), 2);
	ASSERT_NE(all[0].vaddr, all[1].vaddr);
	elf_image__free(img);
}

TEST(test_symbol_global_beats_local)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct elf_symbol sym, all[4];

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_shadow", &sym));
	ASSERT_TRUE(sym.global);
	ASSERT_EQ(elf_image__find_symbols(img, "pb_shadow", all, 4), 2);
	ASSERT_EQ(elf_image__find_symbols(img, "pb_shadow", NULL, 0), 2);
	elf_image__free(img);
}

TEST(test_symbol_at)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct elf_symbol sym, at;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_OK(elf_image__symbol_at(img, sym.vaddr, &at));
	ASSERT_STREQ(at.name, "pb_layout_fn");
	ASSERT_OK(elf_image__symbol_at(img, sym.vaddr + 27, &at));
	ASSERT_STREQ(at.name, "pb_layout_fn");
	ASSERT_ERR(elf_image__symbol_at(img, sym.vaddr + 28, &at), -ENOENT);
	ASSERT_ERR(elf_image__symbol_at(img, 0, &at), -ENOENT);
	ASSERT_ERR(elf_image__symbol_at(img, UINT64_MAX, &at), -ENOENT);
	/* unsized: only its first byte */
	ASSERT_OK(elf_image__find_symbol(img, "pb_unsized_fn", &sym));
	ASSERT_EQ(sym.size, 0);
	ASSERT_OK(elf_image__symbol_at(img, sym.vaddr, &at));
	ASSERT_STREQ(at.name, "pb_unsized_fn");
	elf_image__free(img);
}

TEST(test_symbol_index)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct elf_symbol s, prev;
	size_t i, n;
	bool seen_main = false;

	ASSERT_NOT_NULL(img);
	n = elf_image__symbol_count(img);
	ASSERT_GT(n, 10);
	for (i = 0; i < n; i++) {
		ASSERT_OK(elf_image__symbol_by_index(img, i, &s));
		if (i)
			ASSERT_TRUE(s.vaddr >= prev.vaddr);
		seen_main |= !strcmp(s.name, "main");
		prev = s;
	}
	ASSERT_TRUE(seen_main);
	ASSERT_ERR(elf_image__symbol_by_index(img, n, &s), -ENOENT);
	elf_image__free(img);
}

TEST(test_symbol_dynsym_only)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture_stripped"));
	struct elf_symbol sym;
	uint8_t a[8], b[8];

	ASSERT_NOT_NULL(img);
	ASSERT_FALSE(elf_image__has_symtab(img));
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_TRUE(sym.from_dynsym);
	ASSERT_TRUE(sym.global);
	ASSERT_EQ(sym.size, 28);
	ASSERT_OK(elf_image__read(img, sym.vaddr, a, sizeof(a)));
	ASSERT_OK(pread_file(fixture("elf_fixture_stripped"), sym.file_offset, b,
			     sizeof(b)));
	ASSERT_TRUE(!memcmp(a, b, sizeof(a)));
	ASSERT_EQ(a[0], 0x55);
	/* statics do not survive strip */
	ASSERT_ERR(elf_image__find_symbol(img, "pb_dup", &sym), -ENOENT);
	elf_image__free(img);
}

/* Versioned lookups; .symtab spells versions in names ("pb_ver@@VER_2"),
 * .dynsym keeps them in .gnu.version / .gnu.version_d. */
static void check_versions(const char *lib, bool stripped)
{
	struct elf_image *img = elf_image__open(fixture(lib));
	struct elf_symbol def, old, bare, all[4];

	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__has_symtab(img), !stripped);
	ASSERT_OK(elf_image__find_symbol(img, "pb_ver@@VER_2", &def));
	ASSERT_STREQ(def.version, "VER_2");
	ASSERT_OK(elf_image__find_symbol(img, "pb_ver@VER_1", &old));
	ASSERT_STREQ(old.version, "VER_1");
	ASSERT_NE(def.vaddr, old.vaddr);
	/* the bare name is the default version, not ambiguous */
	ASSERT_OK(elf_image__find_symbol(img, "pb_ver", &bare));
	ASSERT_U64_EQ(bare.vaddr, def.vaddr);
	ASSERT_EQ(elf_image__find_symbols(img, "pb_ver", all, 4), 1);
	/* "@VER_2" names the default version too; "@@VER_1" is not one */
	ASSERT_OK(elf_image__find_symbol(img, "pb_ver@VER_2", &bare));
	ASSERT_U64_EQ(bare.vaddr, def.vaddr);
	ASSERT_ERR(elf_image__find_symbol(img, "pb_ver@@VER_1", &bare), -ENOENT);
	ASSERT_ERR(elf_image__find_symbol(img, "pb_ver@VER_9", &bare), -ENOENT);
	ASSERT_EQ(def.from_dynsym, stripped);
	ASSERT_OK(elf_image__find_symbol(img, "pb_plain", &bare));
	/* .symtab has the unversioned definition; .dynsym knows the version */
	if (stripped)
		ASSERT_STREQ(bare.version, "VER_2");
	else
		ASSERT_NULL(bare.version);
	elf_image__free(img);
}

TEST(test_symbol_versions_symtab)
{
	check_versions("libpb_ver.so", false);
}

TEST(test_symbol_versions_dynsym)
{
	check_versions("libpb_ver_stripped.so", true);
}

TEST(test_symbol_versions_libc)
{
	struct elf_image *img;
	struct elf_symbol sym, old;

	if (access(LIBC, R_OK))
		SKIP("%s not present", LIBC);
	img = elf_image__open(LIBC);
	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "malloc", &sym));
	ASSERT_TRUE(sym.from_dynsym);
	ASSERT_GT(sym.size, 0);
	ASSERT_NOT_NULL(sym.version);
	ASSERT_OK(elf_image__find_symbol(img, "malloc@@GLIBC_2.2.5", &sym));
	/* two memcpy versions at different addresses: the default wins */
	ASSERT_OK(elf_image__find_symbol(img, "memcpy", &sym));
	ASSERT_STREQ(sym.version, "GLIBC_2.14");
	ASSERT_TRUE(sym.ifunc);
	ASSERT_OK(elf_image__find_symbol(img, "memcpy@GLIBC_2.2.5", &old));
	ASSERT_NE(sym.vaddr, old.vaddr);
	elf_image__free(img);
}

/* ---- vaddr / read ---------------------------------------------------- */

TEST(test_vaddr_unmapped)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct elf_symbol sym;
	uint64_t off, len;
	uint8_t b[8];

	ASSERT_NOT_NULL(img);
	ASSERT_ERR(elf_image__vaddr_to_offset(img, 0xdead00000000ull, &off), -ENOENT);
	ASSERT_ERR(elf_image__read(img, 0xdead00000000ull, b, sizeof(b)), -ENOENT);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_OK(elf_image__mapped_len(img, sym.vaddr, &len));
	ASSERT_GE(len, 28);
	ASSERT_ERR(elf_image__read(img, sym.vaddr + len - 4, b, sizeof(b)), -ERANGE);
	ASSERT_OK(elf_image__read(img, sym.vaddr, b, 0));
	elf_image__free(img);
}

/* ---- instruction boundaries ------------------------------------------ */

TEST(test_insn_every_start)
{
	static const struct {
		uint64_t off;
		uint32_t len;
		const char *text;
	} want[] = {
		{ 0, 1, "push rbp" },
		{ 1, 3, "mov rbp, rsp" },
		{ 4, 10, "movabs rax, 0x1122334455667788" },
		{ 14, 7, "lea rax, [rip]" },
		{ 21, 5, "nop dword ptr [rax + rax]" },
		{ 26, 1, "pop rbp" },
		{ 27, 1, "ret" },
	};
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;
	size_t i;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ASSERT_OK(elf_image__check_insn_boundary(img, &sym, want[i].off, &c));
		ASSERT_TRUE(c.in_bounds);
		ASSERT_TRUE(c.on_boundary);
		ASSERT_FALSE(c.decode_failed);
		ASSERT_EQ(c.insn_len, want[i].len);
		ASSERT_STREQ(c.insn_text, want[i].text);
		ASSERT_U64_EQ(c.prev_boundary, want[i].off);
		ASSERT_U64_EQ(c.next_boundary, want[i].off + want[i].len);
		ASSERT_STRSTR(c.listing, "=> ");
		ASSERT_EQ(c.is_nop5, want[i].off == 21);
		ASSERT_EQ(c.needs_emulation, want[i].off != 21);
		ASSERT_TRUE(c.note[0] != '\0');
		insn_site_check__clear(&c);
		ASSERT_NULL(c.listing);
	}
	elf_image__free(img);
}

TEST(test_insn_notes)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 0, &c));
	ASSERT_STREQ(c.note, "1-byte push: emulated by the kernel");
	insn_site_check__clear(&c);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 14, &c));
	ASSERT_STREQ(c.note, "rip-relative: executed out of line with fixup");
	insn_site_check__clear(&c);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 21, &c));
	ASSERT_STREQ(c.note, "5-byte nop: can be optimized");
	insn_site_check__clear(&c);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 4, &c));
	ASSERT_STREQ(c.note, "executed out of line (single-step)");
	insn_site_check__clear(&c);
	elf_image__free(img);
}

TEST(test_insn_mid_instruction)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;
	char line[64];
	uint64_t off;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 7, &c));
	ASSERT_TRUE(c.in_bounds);
	ASSERT_FALSE(c.on_boundary);
	ASSERT_FALSE(c.decode_failed);
	ASSERT_U64_EQ(c.prev_boundary, 4);
	ASSERT_U64_EQ(c.next_boundary, 14);
	ASSERT_STRSTR(c.listing, "=> ");
	ASSERT_STRSTR(c.listing, "offset +7 falls inside the 10-byte instruction at +4");
	ASSERT_STRSTR(c.listing, "movabs rax, 0x1122334455667788");
	snprintf(line, sizeof(line), "=> 0x%llx <+4>:", (unsigned long long)sym.vaddr + 4);
	ASSERT_STRSTR(c.listing, line);
	ASSERT_STRSTR(c.listing, "48 89 e5");
	insn_site_check__clear(&c);

	/* every byte inside an instruction is refused */
	for (off = 0; off < 28; off++) {
		bool start = off == 0 || off == 1 || off == 4 || off == 14 ||
			     off == 21 || off == 26 || off == 27;

		ASSERT_OK(elf_image__check_insn_boundary(img, &sym, off, &c));
		ASSERT_EQ(c.on_boundary, start);
		insn_site_check__clear(&c);
	}
	/* inside the nop5 */
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 23, &c));
	ASSERT_U64_EQ(c.prev_boundary, 21);
	ASSERT_U64_EQ(c.next_boundary, 26);
	ASSERT_FALSE(c.is_nop5);
	insn_site_check__clear(&c);
	elf_image__free(img);
}

TEST(test_insn_out_of_bounds)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 28, &c));
	ASSERT_FALSE(c.in_bounds);
	ASSERT_FALSE(c.on_boundary);
	ASSERT_STRSTR(c.listing, "outside pb_layout_fn");
	insn_site_check__clear(&c);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, UINT64_MAX, &c));
	ASSERT_FALSE(c.in_bounds);
	insn_site_check__clear(&c);
	elf_image__free(img);
}

TEST(test_insn_unsized)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_unsized_fn", &sym));
	ASSERT_EQ(sym.size, 0);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 2, &c));
	ASSERT_TRUE(c.in_bounds);
	ASSERT_TRUE(c.on_boundary);
	ASSERT_STREQ(c.insn_text, "xor eax, eax");
	insn_site_check__clear(&c);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 4096, &c));
	ASSERT_FALSE(c.in_bounds);
	insn_site_check__clear(&c);
	elf_image__free(img);
}

TEST(test_insn_decode_failure)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_baddecode_fn", &sym));
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 2, &c));
	ASSERT_TRUE(c.in_bounds);
	ASSERT_FALSE(c.on_boundary);
	ASSERT_TRUE(c.decode_failed);
	ASSERT_U64_EQ(c.decode_failed_at, 1);
	ASSERT_STRSTR(c.listing, "not verified");
	insn_site_check__clear(&c);
	/* before the bad byte the verdict stands */
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 0, &c));
	ASSERT_TRUE(c.on_boundary);
	ASSERT_FALSE(c.decode_failed);
	ASSERT_STRSTR(c.listing, "cannot decode");
	insn_site_check__clear(&c);
	elf_image__free(img);
}

TEST(test_insn_entry_endbr_or_push)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	struct insn_site_check c;
	struct elf_symbol sym;

	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "main", &sym));
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 0, &c));
	ASSERT_TRUE(c.on_boundary);
	if (c.insn_len == 4 && !strcmp(c.insn_text, "endbr64"))
		ASSERT_TRUE(c.needs_emulation);
	ASSERT_GT(c.insn_len, 0);
	insn_site_check__clear(&c);
	elf_image__free(img);
}

TEST(test_insn_wrong_machine)
{
	size_t len = 0;
	uint8_t *buf = slurp(fixture("elf_fixture"), &len);
	struct insn_site_check c;
	struct elf_image *img;
	struct elf_symbol sym;

	ASSERT_NOT_NULL(buf);
	((Elf64_Ehdr *)buf)->e_machine = EM_AARCH64;
	img = elf_image__open_mem(buf, len, "aarch64");
	free(buf);
	ASSERT_NOT_NULL(img);
	ASSERT_OK(elf_image__find_symbol(img, "pb_layout_fn", &sym));
	ASSERT_ERR(elf_image__check_insn_boundary(img, &sym, 0, &c), -EOPNOTSUPP);
	ASSERT_NULL(c.listing);
	elf_image__free(img);
}

/* ---- USDT ------------------------------------------------------------ */

static const struct elf_usdt_note *find_note(const struct elf_usdt_note *n, int cnt,
					     const char *provider, const char *name)
{
	int i;

	for (i = 0; i < cnt; i++)
		if (!strcmp(n[i].provider, provider) && !strcmp(n[i].name, name))
			return &n[i];
	return NULL;
}

TEST(test_usdt_notes)
{
	struct elf_image *img = elf_image__open(fixture("elf_fixture"));
	const struct elf_usdt_note *notes, *hit, *sema;
	struct elf_symbol at;
	uint8_t b[2];
	int n;

	ASSERT_NOT_NULL(img);
	n = elf_image__usdt_notes(img, &notes);
	ASSERT_EQ(n, 2);
	hit = find_note(notes, n, "probity_test", "hit");
	ASSERT_NOT_NULL(hit);
	ASSERT_EQ(hit->n_args, 2);
	ASSERT_STRSTR(hit->args, "@");
	ASSERT_U64_EQ(hit->semaphore, 0);
	ASSERT_U64_EQ(hit->semaphore_file_offset, 0);
	ASSERT_NE(hit->file_offset, 0);
	ASSERT_OK(pread_file(fixture("elf_fixture"), hit->file_offset, b, 1));
	ASSERT_EQ(b[0], 0x90);	/* sys/sdt.h plants a nop */
	ASSERT_OK(elf_image__symbol_at(img, hit->pc, &at));
	ASSERT_STREQ(at.name, "main");

	sema = find_note(notes, n, "probity_test", "sema");
	ASSERT_NOT_NULL(sema);
	ASSERT_EQ(sema->n_args, 1);
	ASSERT_NE(sema->semaphore, 0);
	ASSERT_NE(sema->semaphore_file_offset, 0);
	/* the semaphore starts at zero in the file (.probes, PROGBITS) */
	ASSERT_OK(pread_file(fixture("elf_fixture"), sema->semaphore_file_offset, b, 2));
	ASSERT_EQ(b[0] | b[1], 0);
	ASSERT_OK(pread_file(fixture("elf_fixture"), sema->file_offset, b, 1));
	ASSERT_EQ(b[0], 0x90);
	ASSERT_OK(elf_image__symbol_at(img, sema->pc, &at));
	ASSERT_STREQ(at.name, "pb_fixture_sema");
	elf_image__free(img);
}

TEST(test_usdt_none)
{
	struct elf_image *img = elf_image__open(fixture("libpb_ver.so"));
	const struct elf_usdt_note *notes;

	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__usdt_notes(img, &notes), 0);
	elf_image__free(img);
}

/* One USDT note (tiny.c's probity_test:tiny, two args, a semaphore) in a
 * foreign layout: the probe site must hold the machine's nop, the
 * semaphore must sit on zeroed file bytes. */
static void check_tiny_seed(const char *name, int machine, const uint8_t *nop,
			    size_t nop_len, bool start_has_pc)
{
	const char *path = seed(name);
	const struct elf_usdt_note *notes;
	struct insn_site_check c;
	struct elf_image *img;
	struct elf_symbol sym;
	uint8_t b[4];

	img = elf_image__open(path);
	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__machine(img), machine);
	ASSERT_ERR(elf_image__build_id(img, b, 0), -ENOSPC);	/* has one */
	ASSERT_EQ(elf_image__usdt_notes(img, &notes), 1);
	ASSERT_STREQ(notes[0].provider, "probity_test");
	ASSERT_STREQ(notes[0].name, "tiny");
	ASSERT_EQ(notes[0].n_args, 2);
	ASSERT_NE(notes[0].file_offset, 0);
	ASSERT_OK(pread_file(path, notes[0].file_offset, b, nop_len));
	ASSERT_TRUE(!memcmp(b, nop, nop_len));
	ASSERT_NE(notes[0].semaphore, 0);
	ASSERT_NE(notes[0].semaphore_file_offset, 0);
	ASSERT_OK(pread_file(path, notes[0].semaphore_file_offset, b, 2));
	ASSERT_EQ(b[0] | b[1], 0);
	if (start_has_pc) {
		ASSERT_OK(elf_image__symbol_at(img, notes[0].pc, &sym));
		ASSERT_STREQ(sym.name, "_start");
	}
	ASSERT_OK(elf_image__find_symbol(img, "pb_tiny_add", &sym));
	if (machine != EM_386)
		ASSERT_ERR(elf_image__check_insn_boundary(img, &sym, 0, &c),
			   -EOPNOTSUPP);
	elf_image__free(img);
}

TEST(test_seed_elf32_i386)
{
	static const uint8_t nop[] = { 0x90 };

	check_tiny_seed("tiny_i386", EM_386, nop, 1, true);
}

TEST(test_seed_big_endian_ppc64)
{
	static const uint8_t nop[] = { 0x60, 0x00, 0x00, 0x00 };

	/* ELFv1: function symbols point at .opd descriptors, not code */
	check_tiny_seed("tiny_ppc64be", EM_PPC64, nop, 4, false);
}

TEST(test_seed_big_endian_mips32)
{
	static const uint8_t nop[] = { 0x00, 0x00, 0x00, 0x00 };

	check_tiny_seed("tiny_mips32be", EM_MIPS, nop, 4, true);
}

TEST(test_seed_aarch64)
{
	static const uint8_t nop[] = { 0x1f, 0x20, 0x03, 0xd5 };

	check_tiny_seed("tiny_aarch64", EM_AARCH64, nop, 4, true);
}

TEST(test_seed_relocatable)
{
	const struct elf_usdt_note *notes;
	struct elf_image *img;
	struct elf_symbol sym;

	img = elf_image__open(seed("tiny_x86_64.o"));
	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__type(img), ET_REL);
	ASSERT_OK(elf_image__find_symbol(img, "pb_tiny_add", &sym));
	ASSERT_U64_EQ(sym.file_offset, 0);	/* no PT_LOAD to map it */
	ASSERT_EQ(elf_image__usdt_notes(img, &notes), 1);
	elf_image__free(img);
}

/* ---- PostgreSQL 15, when installed ----------------------------------- */

TEST(test_postgres)
{
	const struct elf_usdt_note *notes;
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	struct insn_site_check c;
	struct elf_image *img;
	struct elf_symbol sym;
	int n;

	if (access(POSTGRES, R_OK))
		SKIP("%s not present", POSTGRES);
	img = elf_image__open(POSTGRES);
	ASSERT_NOT_NULL(img);
	ASSERT_EQ(elf_image__build_id_hex(img, hex, sizeof(hex)), 20);
	if (strcmp(hex, POSTGRES_BUILD_ID)) {
		elf_image__free(img);
		SKIP("postgres build-id %s, not the expected one", hex);
	}
	ASSERT_FALSE(elf_image__has_symtab(img));
	ASSERT_OK(elf_image__find_symbol(img, "LWLockAcquire", &sym));
	ASSERT_TRUE(sym.from_dynsym);
	ASSERT_GT(sym.size, 0);
	ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 0, &c));
	ASSERT_TRUE(c.on_boundary);
	insn_site_check__clear(&c);
	n = elf_image__usdt_notes(img, &notes);
	ASSERT_GT(n, 10);
	ASSERT_NOT_NULL(find_note(notes, n, "postgresql", "lwlock__wait__start"));
	elf_image__free(img);
}

/* ---- running processes ----------------------------------------------- */

TEST(test_proc_maps_self)
{
	struct proc_mapping *m = NULL;
	char exe[PATH_MAX];
	ssize_t len;
	int n, i, libc = -1;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(len, 0);
	exe[len] = '\0';
	n = proc_mappings__read(getpid(), &m);
	ASSERT_GT(n, 1);
	ASSERT_STREQ(m[0].map_path, exe);
	ASSERT_TRUE(m[0].exec);
	ASSERT_FALSE(m[0].deleted);
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(m[i].path && m[i].map_path);
		ASSERT_TRUE(m[i].map_path[0] == '/');
		ASSERT_TRUE(m[i].end > m[i].start);
		if (strstr(m[i].map_path, "/libc.so"))
			libc = i;
	}
	ASSERT_GE(libc, 0);
	ASSERT_TRUE(m[libc].exec);
	/* one entry per file */
	for (i = 1; i < n; i++)
		ASSERT_FALSE(m[i].ino == m[0].ino && m[i].dev == m[0].dev);
	/* the path opens the mapped file */
	{
		struct elf_image *img = elf_image__open(m[libc].path);

		ASSERT_NOT_NULL(img);
		elf_image__free(img);
	}
	proc_mappings__free(m, n);
}

TEST(test_proc_maps_deleted)
{
	char tmpl[] = "/tmp/probity-elf-XXXXXX";
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	struct proc_mapping *m = NULL;
	struct elf_image *img;
	size_t len = 0;
	void *buf, *map;
	struct stat st;
	int fd, n, i, hit = -1;

	buf = slurp(fixture("elf_fixture"), &len);
	ASSERT_NOT_NULL(buf);
	fd = mkstemp(tmpl);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, buf, len), (ssize_t)len);
	free(buf);
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	fstat(fd, &st);
	close(fd);
	unlink(tmpl);

	n = proc_mappings__read(getpid(), &m);
	ASSERT_GT(n, 0);
	for (i = 0; i < n; i++)
		if (m[i].ino == st.st_ino && m[i].dev == st.st_dev)
			hit = i;
	ASSERT_GE(hit, 0);
	ASSERT_TRUE(m[hit].deleted);
	ASSERT_STREQ(m[hit].map_path, tmpl);
	/* map_files reaches the unlinked inode when we may read it (root) */
	if (strstr(m[hit].path, "/map_files/")) {
		img = elf_image__open(m[hit].path);
		ASSERT_NOT_NULL(img);
		ASSERT_EQ(elf_image__build_id_hex(img, hex, sizeof(hex)), 20);
		ASSERT_STREQ(hex, FIXTURE_BUILD_ID);
		elf_image__free(img);
	} else if (geteuid() == 0) {
		PB_FAIL("expected a map_files path as root, got %s", m[hit].path);
	}
	proc_mappings__free(m, n);
	munmap(map, len);
}

TEST(test_proc_maps_gone)
{
	struct proc_mapping *m = NULL;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(0);
	ASSERT_EQ(waitpid(pid, NULL, 0), pid);
	ASSERT_ERR(proc_mappings__read(pid, &m), -ESRCH);
	ASSERT_NULL(m);
	ASSERT_ERR(proc_mappings__read(-1, &m), -EINVAL);
}
