/* SPDX-License-Identifier: BSD-2-Clause */
/* test_samecode.c: "is a function's code the same in two builds?"
 * (src/elf/samecode.c) and what `plan --rebind` does with an offset
 * inside a function (src/contract/plan.c): kept when the function's code
 * is the manifest's build's, refused when it differs or when the
 * manifest's build is not on disk. The builds are those of
 * tests/fixtures/rebind/rbpool.c (mk/rebind-fixtures.mk): rbpool_v2 moves
 * the code (other addresses), rbpool_changed changes conn_get. */
#include <limits.h>
#include "harness.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "elf/elf_image.h"
#include "elf/insn.h"


static const char *rb(const char *name)
{
	static char buf[4][PATH_MAX];
	static int slot;
	char *p = buf[slot++ % 4], rel[PATH_MAX];

	const char *b = getenv("PROBITY_BUILD");

	snprintf(rel, sizeof(rel), "%s/fixtures/rebind/%s", b ? b : "build", name);
	if (!realpath(rel, p))
		snprintf(p, PATH_MAX, "%s", rel);
	return p;
}

static int compare(const char *a, const char *b, const char *fn, struct same_code *sc)
{
	struct elf_image *ia = elf_image__open(rb(a)), *ib = elf_image__open(rb(b));
	struct elf_symbol sa, sb;
	int err = -ENOENT;

	if (ia && ib && !elf_image__find_symbol(ia, fn, &sa) && !elf_image__find_symbol(ib, fn, &sb))
		err = elf_image__same_code(ia, &sa, ib, &sb, sc);
	elf_image__free(ia);
	elf_image__free(ib);
	return err;
}

TEST(moved_code_is_the_same)
{
	struct same_code sc;

	/* conn_get reaches the pool rip-relative: another address in v2 */
	ASSERT_OK(compare("rbpool_v1", "rbpool_v2", "conn_get", &sc));
	ASSERT_TRUE(sc.same);
	ASSERT_GT(sc.insns, 5);
	ASSERT_GE(sc.masked, 1);
	ASSERT_OK(compare("rbpool_v1", "rbpool_v2", "conn_put", &sc));
	ASSERT_TRUE(sc.same);
}

TEST(changed_code_differs)
{
	struct same_code sc;

	ASSERT_OK(compare("rbpool_v1", "rbpool_changed", "conn_get", &sc));
	ASSERT_FALSE(sc.same);
	/* a function compared with itself is the same */
	ASSERT_OK(compare("rbpool_v1", "rbpool_v1", "main", &sc));
	ASSERT_TRUE(sc.same);
	ASSERT_OK(compare("rbpool_v1", "rbpool_v1", "conn_get", &sc));
	ASSERT_TRUE(sc.same);
}

/* a one-event manifest for rbpool_v1 (binary OLD) with a site at
 * conn_get+0x9 (an instruction inside its loop in rbpool_v1) */
static struct plan *plan_offset(const char *old, const char *bin, struct diags *d,
				struct manifest **mp)
{
	struct elf_image *img = elf_image__open(rb("rbpool_v1"));
	char text[2048], bid[2 * ELF_BUILD_ID_MAX + 1] = "";
	const char *bins[] = { rb(bin) };
	struct plan_opts o = { .binaries = bins, .n_binaries = 1, .rebind = true };
	struct plan *p = NULL;

	if (img)
		elf_image__build_id_hex(img, bid, sizeof(bid));
	elf_image__free(img);
	snprintf(text, sizeof(text),
		 "manifest: 1\nname: t\ntargets:\n"
		 "  - { id: rbpool, binary: \"%s\", build_id: \"%s\" }\n"
		 "resources:\n  - { name: r, class: pool, units: connections }\n"
		 "events:\n"
		 "  - id: mid\n    resource: r\n    kind: USE\n"
		 "    site: { target: rbpool, symbol: conn_get, offset: 0x9, at: entry }\n"
		 "    instance: arg0\n",
		 old, bid);
	*mp = NULL;
	if (manifest__parse("mem.yaml", text, strlen(text), mp, d))
		return NULL;
	plan__build(*mp, &o, &p, d);
	return p;
}

static bool note_has(const struct plan *p, const char *needle)
{
	size_t i;

	for (i = 0; p && i < diags__count(p->notes); i++)
		if (strstr(diags__get(p->notes, i)->msg, needle))
			return true;
	return false;
}

TEST(rebind_keeps_an_offset_in_unchanged_code)
{
	struct diags *d = diags__new();
	struct manifest *m;
	struct plan *p = plan_offset(rb("rbpool_v1"), "rbpool_v2", d, &m);

	ASSERT_NOT_NULL(p);
	ASSERT_EQ(p->n_refused, 0);
	ASSERT_TRUE(p->targets[0].rebound);
	ASSERT_EQ(p->descriptors[0].confidence, PB_CONF_DEGRADED);
	ASSERT_TRUE(note_has(p, "the function's code is the manifest's build's"));
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}

TEST(rebind_refuses_an_offset_in_changed_code)
{
	struct diags *d = diags__new();
	struct manifest *m;
	struct plan *p = plan_offset(rb("rbpool_v1"), "rbpool_changed", d, &m);

	ASSERT_NOT_NULL(p);
	ASSERT_EQ(p->n_refused, 1);
	ASSERT_TRUE(note_has(p, "the function's code differs from the manifest's build"));
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}

TEST(rebind_refuses_an_offset_without_the_old_build)
{
	struct diags *d = diags__new();
	struct manifest *m;
	struct plan *p = plan_offset("/nonexistent/rbpool_v1", "rbpool_v2", d, &m);

	ASSERT_NOT_NULL(p);
	ASSERT_EQ(p->n_refused, 1);
	ASSERT_TRUE(note_has(p, "is not on disk to compare the function's code with"));
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}
