/* SPDX-License-Identifier: BSD-2-Clause */
/* test_probes.c: the probe listing (src/elf/probes.c), DWARF layouts and
 * debug files (src/elf/dwarf.c), the manifest skeleton writer and the JSON
 * Schema (src/contract/manifest_init.c, manifest_schema.c), on the
 * fixtures of mk/probes-fixtures.mk and the demo.
 */
#include "harness.h"
#include "contract/manifest.h"
#include "contract/manifest_schema.h"
#include "demo_paths.h"
#include "elf/probes.h"

static char fix[4096], fix_stripped[4096];

static void fixture_paths(void)
{
	paths();
	snprintf(fix, sizeof(fix), "%s/fixtures/probes/probes_fixture", build_dir());
	snprintf(fix_stripped, sizeof(fix_stripped), "%s/fixtures/probes/stripped/probes_fixture",
		 build_dir());
}

static const struct probe_site *find_site(const struct probe_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->sites[i].name, name))
			return &l->sites[i];
	return NULL;
}

TEST(test_probes_first_insn_classes)
{
	struct probe_list *l = NULL;
	const struct probe_site *s;

	fixture_paths();
	ASSERT_OK(probe_list__load(fix, NULL, &l));
	s = find_site(l, "pb_nop5_fn");
	ASSERT_NOT_NULL(s);
	ASSERT_EQ(s->exec, INSN_EXEC_OPTIMIZABLE);
	s = find_site(l, "pb_push_fn");
	ASSERT_NOT_NULL(s);
	ASSERT_EQ(s->exec, INSN_EXEC_EMULATED);
	ASSERT_STREQ(s->insn, "push rbp");
	s = find_site(l, "pb_riprel_fn");
	ASSERT_NOT_NULL(s);
	ASSERT_EQ(s->exec, INSN_EXEC_SINGLE_STEP);
	ASSERT_STRSTR(s->note, "rip-relative");
	s = find_site(l, "pb_static_fn");
	ASSERT_NOT_NULL(s);
	ASSERT_FALSE(s->global);
	ASSERT_EQ(s->table, PROBE_TABLE_SYMTAB);
	s = find_site(l, "tick");
	ASSERT_NOT_NULL(s);
	ASSERT_EQ(s->kind, PROBE_USDT);
	ASSERT_STREQ(s->provider, "probity_fx");
	ASSERT_EQ(s->n_args, 2);
	ASSERT_STREQ(s->function, "pb_static_fn");
	/* the counts add up: every site has exactly one class */
	ASSERT_EQ(l->n_exec[0] + l->n_exec[1] + l->n_exec[2] + l->n_exec[3], l->n);
	ASSERT_EQ(l->n_usdt + l->n_func, l->n);
	probe_list__free(l);
}

TEST(test_probes_glob_and_filters)
{
	struct probe_list_opts o = { .glob = "pb_*5*" };
	struct probe_list *l = NULL;

	fixture_paths();
	ASSERT_OK(probe_list__load(fix, &o, &l));
	ASSERT_EQ(l->n, 1);
	ASSERT_STREQ(l->sites[0].name, "pb_nop5_fn");
	probe_list__free(l);
	o = (struct probe_list_opts){ .glob = "probity_fx:*", .no_funcs = true };
	ASSERT_OK(probe_list__load(fix, &o, &l));
	ASSERT_EQ(l->n, 1);
	ASSERT_EQ(l->n_usdt, 1);
	probe_list__free(l);
	ASSERT_ERR(probe_list__load("/nonexistent/bin", NULL, &l), -ENOENT);
	ASSERT_NULL(l);
}

/* Stripped binary + .gnu_debuglink: the static function comes back, from
 * the debug file only, and the struct layout is read from there too. */
TEST(test_probes_debug_file)
{
	struct probe_list *l = NULL;
	struct dwarf_struct *st = NULL;
	const struct probe_site *s;

	fixture_paths();
	ASSERT_OK(probe_list__load(fix_stripped, NULL, &l));
	ASSERT_NOT_NULL(l->dw);
	ASSERT_STRSTR(dwarf_info__debug_file(l->dw), "probes_fixture.debug");
	s = find_site(l, "pb_static_fn");
	ASSERT_NOT_NULL(s);
	ASSERT_EQ(s->table, PROBE_TABLE_DEBUG);
	ASSERT_GT(l->n_debug_only, 0);
	/* the code bytes come from the binary: still classified */
	s = find_site(l, "pb_nop5_fn");
	ASSERT_NOT_NULL(s);
	ASSERT_EQ(s->exec, INSN_EXEC_OPTIMIZABLE);
	ASSERT_OK(probe_list__find_struct(l, "pb_layout_t", &st));
	ASSERT_EQ(st->size, 56);
	ASSERT_EQ(st->n_members, 9);
	ASSERT_STREQ(st->members[1].name, "epoch");
	ASSERT_EQ(st->members[1].offset, 8);
	ASSERT_STREQ(st->members[4].type, "struct pb_probe_layout *");
	ASSERT_STREQ(st->members[5].type, "char[16]");
	ASSERT_EQ(st->members[8].bit_size, 5);
	dwarf_struct__free(st);
	ASSERT_ERR(probe_list__find_struct(l, "no_such_struct", &st), -ENOENT);
	probe_list__free(l);
}

/* No DWARF anywhere: -ENODATA, and the places searched are named. */
TEST(test_probes_no_dwarf)
{
	struct probe_list *l = NULL;
	struct dwarf_struct *st = NULL;

	ASSERT_OK(probe_list__load("/bin/true", NULL, &l));
	if (l->dw && dwarf_info__has_dwarf(l->dw)) {
		probe_list__free(l);
		SKIP("/bin/true has DWARF on this machine (a -dbgsym package is installed)");
	}
	ASSERT_ERR(probe_list__find_struct(l, "anything", &st), -ENODATA);
	ASSERT_NOT_NULL(l->dw);
	ASSERT_STRSTR(dwarf_info__searched(l->dw), "/usr/lib/debug/.build-id/");
	probe_list__free(l);
}

/* The skeleton: N events, 3N + 3 TODO, each one finding; filled, it parses. */
TEST(test_manifest_init_roundtrip)
{
	struct manifest_init_opts o = { .symbol_glob = "pb_*_fn", .date = "2026-12-01" };
	struct manifest_init_result r;
	struct manifest *m = NULL;
	struct diags *d = diags__new();
	char *buf = NULL, *p;
	size_t len = 0, i, left = 0;
	FILE *f;

	fixture_paths();
	o.binary = fix;
	ASSERT_NOT_NULL(d);
	f = open_memstream(&buf, &len);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(manifest_init__write(&o, f, &r));
	fclose(f);
	ASSERT_EQ(r.n_events, 4);
	ASSERT_EQ(r.n_symbols, 4);
	ASSERT_EQ(r.n_placeholders, 3 * 4 + 3);
	ASSERT_STRSTR(buf, "source: static_analysis");
	ASSERT_STRSTR(buf, "symbol: pb_nop5_fn");
	ASSERT_ERR(manifest__parse("init.yaml", buf, len, &m, d), -EINVAL);
	for (i = 0; i < diags__count(d); i++)
		left += !!strstr(diags__get(d, i)->msg, "left to fill");
	ASSERT_EQ(left, r.n_placeholders);
	ASSERT_EQ(diags__count(d), r.n_placeholders);
	/* fill every choice the way a user would */
	while ((p = strstr(buf, "name: TODO")))
		memcpy(p, "name: x.y ", 10);
	while ((p = strstr(buf, "class: TODO")))
		memcpy(p, "class: pool", 11);
	while ((p = strstr(buf, "units: TODO")))
		memcpy(p, "units: page", 11);
	while ((p = strstr(buf, "resource: TODO")))
		memcpy(p, "resource: x.y ", 14);
	while ((p = strstr(buf, "kind: TODO")))
		memcpy(p, "kind: USE ", 10);
	while ((p = strstr(buf, "instance: TODO")))
		memcpy(p, "instance: arg0", 14);
	diags__free(d);
	d = diags__new();
	ASSERT_OK(manifest__parse("init.yaml", buf, len, &m, d));
	ASSERT_EQ(m->n_events, 4);
	ASSERT_EQ(m->events[0].provenance.source, PB_PROV_STATIC_ANALYSIS);
	ASSERT_EQ(m->events[0].confidence, PB_CONF_CANDIDATE);
	manifest__free(m);
	diags__free(d);
	free(buf);
	o.symbol_glob = "no_such_*";
	f = fopen("/dev/null", "w");
	ASSERT_ERR(manifest_init__write(&o, f, &r), -ENOENT);
	o.symbol_glob = "*";
	o.max_events = 2;
	ASSERT_ERR(manifest_init__write(&o, f, &r), -E2BIG);
	fclose(f);
}

/* Every field the parser knows has a type in the schema. */
TEST(test_schema_covers_parser)
{
	char gaps[1024];
	json_t *s, *ev, *kind;

	ASSERT_EQ(manifest__schema_gaps(gaps, sizeof(gaps)), 0);
	s = manifest__schema();
	ASSERT_NOT_NULL(s);
	ev = json_object_get(json_object_get(s, "$defs"), "event");
	ASSERT_NOT_NULL(ev);
	ASSERT_TRUE(json_is_false(json_object_get(ev, "additionalProperties")));
	kind = json_object_get(json_object_get(ev, "properties"), "kind");
	ASSERT_EQ(json_array_size(json_object_get(kind, "enum")), PB_EV__COUNT);
	json_decref(s);
}
