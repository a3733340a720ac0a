/* SPDX-License-Identifier: BSD-2-Clause */
/* test_manifest.c: value expressions, guards, the manifest model and every
 * semantic check of docs/manifest.md, digests and hostile inputs.
 * (The exact text of each lint message is pinned by the .expected files
 * of tests/lint/.)
 */
#include "harness.h"
#include "common/digest.h"
#include "contract/manifest.h"

/* ---- helpers ----------------------------------------------------------- */

static int parse_str(const char *yaml, struct manifest **m, struct diags **d)
{
	*d = diags__new();
	if (!*d)
		return -ENOMEM;
	return manifest__parse("t.yaml", yaml, strlen(yaml), m, *d);
}

/* the first finding whose field is `field` and whose message contains
 * `needle` (field NULL: any field) */
static const struct diag *find_diag(const struct diags *d, const char *field, const char *needle)
{
	size_t i;

	for (i = 0; i < diags__count(d); i++) {
		const struct diag *g = diags__get(d, i);

		if (field && (!g->field || strcmp(g->field, field)))
			continue;
		if (strstr(g->msg, needle))
			return g;
	}
	return NULL;
}

static void dump_diags(const struct diags *d)
{
	char buf[1024];
	size_t i;

	for (i = 0; i < diags__count(d); i++) {
		diag__format(diags__get(d, i), buf, sizeof(buf));
		fprintf(stderr, "    | %s\n", buf);
	}
}

#define HEAD								\
	"manifest: 1\n"							\
	"name: t\n"							\
	"targets:\n"							\
	"  - binary: /usr/bin/x\n"					\
	"    build_id: 0123456789abcdef\n"				\
	"resources:\n"							\
	"  - { name: r, class: pool, units: pages }\n"			\
	"  - { name: c, class: connection, units: conns, generation: counter }\n" \
	"events:\n"							\
	"  - { id: base, resource: r, kind: RELEASE, site: { symbol: put }, instance: arg0 }\n" \
	"  - { id: cbase, resource: c, kind: RELEASE, site: { symbol: cput }, instance: arg0, generation: arg1 }\n"

/* HEAD plus one event line: must fail with a finding on field/needle */
#define ASSERT_EVENT_FINDING(ev, field, needle)				\
	do {								\
		struct manifest *_m = NULL;				\
		struct diags *_d = NULL;				\
		int _rc = parse_str(HEAD "  - " ev "\n", &_m, &_d);	\
		const struct diag *_g = find_diag(_d, field, needle);	\
		if (_rc != -EINVAL || _m || !_g)				\
			dump_diags(_d);					\
		manifest__free(_m);					\
		diags__free(_d);					\
		ASSERT_ERR(_rc, -EINVAL);				\
		ASSERT_NOT_NULL(_g);					\
	} while (0)

static const char *value_err(const char *text, int *col)
{
	static struct pb_errtext err;
	struct pb_value v;
	int rc;

	rc = pb_value__parse(text, &v, &err);
	*col = err.col;
	if (rc == 0) {
		pb_value__free(&v);
		return "(parsed)";
	}
	return err.msg;
}

/* ---- value expressions ----------------------------------------------------- */

TEST(test_value_bases)
{
	struct pb_value v;
	struct pb_errtext err = { 0 };

	ASSERT_OK(pb_value__parse("arg0", &v, &err));
	ASSERT_EQ(v.base, PB_VAL_ARG);
	ASSERT_EQ(v.arg, 0);
	ASSERT_STREQ(v.text, "arg0");
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("arg11", &v, &err));
	ASSERT_EQ(v.arg, 11);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("retval", &v, &err));
	ASSERT_EQ(v.base, PB_VAL_RETVAL);
	ASSERT_TRUE(pb_value__uses_retval(&v));
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("0x7fffffffffffffff", &v, &err));
	ASSERT_EQ(v.base, PB_VAL_CONST);
	ASSERT_U64_EQ(v.constant, 0x7fffffffffffffffULL);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("0xffffffffffffffff", &v, &err));
	ASSERT_U64_EQ(v.constant, ~0ULL);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("-9223372036854775808", &v, &err));
	ASSERT_TRUE(v.constant == INT64_MIN);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("  -5  ", &v, &err));
	ASSERT_EQ(v.constant, -5);
	ASSERT_STREQ(v.text, "-5");
	pb_value__free(&v);
}

TEST(test_value_derefs_and_casts)
{
	struct pb_value v;
	struct pb_errtext err = { 0 };

	ASSERT_OK(pb_value__parse("*u64(arg0 + 16)", &v, &err));
	ASSERT_EQ(v.base, PB_VAL_ARG);
	ASSERT_EQ(v.n_deref, 1);
	ASSERT_EQ(v.deref[0].offset, 16);
	ASSERT_EQ(v.deref[0].size, 8);
	ASSERT_EQ(v.final_offset, 0);
	pb_value__free(&v);

	/* the innermost dereference is applied first */
	ASSERT_OK(pb_value__parse("*u32(*u64(arg2 + 8) + 4) - 0x10", &v, &err));
	ASSERT_EQ(v.arg, 2);
	ASSERT_EQ(v.n_deref, 2);
	ASSERT_EQ(v.deref[0].offset, 8);
	ASSERT_EQ(v.deref[0].size, 8);
	ASSERT_EQ(v.deref[1].offset, 4);
	ASSERT_EQ(v.deref[1].size, 4);
	ASSERT_EQ(v.final_offset, -16);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("*u8(*u16(*u32(retval)))", &v, &err));
	ASSERT_EQ(v.n_deref, 3);
	ASSERT_EQ(v.deref[0].size, 4);
	ASSERT_EQ(v.deref[1].size, 2);
	ASSERT_EQ(v.deref[2].size, 1);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("s32(retval)", &v, &err));
	ASSERT_EQ(v.cast_size, 4);
	ASSERT_TRUE(v.cast_signed);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("\t* u16 ( arg1+2 )\t", &v, &err));
	ASSERT_EQ(v.deref[0].size, 2);
	ASSERT_EQ(v.deref[0].offset, 2);
	pb_value__free(&v);

	ASSERT_OK(pb_value__parse("u8(*u64(arg0) + 3)", &v, &err));
	ASSERT_EQ(v.cast_size, 1);
	ASSERT_FALSE(v.cast_signed);
	ASSERT_EQ(v.final_offset, 3);
	pb_value__free(&v);
}

TEST(test_value_const)
{
	struct pb_value v;
	struct pb_errtext err = { 0 };
	int64_t k;

	ASSERT_OK(pb_value__parse("s8(0x1ff)", &v, &err));
	ASSERT_TRUE(pb_value__const(&v, &k));
	ASSERT_EQ(k, -1);
	pb_value__free(&v);
	ASSERT_OK(pb_value__parse("4 + 4", &v, &err));
	ASSERT_TRUE(pb_value__const(&v, &k));
	ASSERT_EQ(k, 8);
	pb_value__free(&v);
	ASSERT_OK(pb_value__parse("*u64(0x601040)", &v, &err));
	ASSERT_FALSE(pb_value__const(&v, &k));
	pb_value__free(&v);
}

TEST(test_value_format_round_trip)
{
	static const char *const cases[][2] = {
		{ "arg0", "arg0" },
		{ " retval ", "retval" },
		{ "0x10", "16" },
		{ "0x601040", "0x601040" },
		{ "-3", "-3" },
		{ "*u64(arg0+16)", "*u64(arg0 + 16)" },
		{ "* u32 ( * u64 ( arg0 + 8 ) + 4 )", "*u32(*u64(arg0 + 8) + 4)" },
		{ "*u8(*u16(*u32(arg5 - 1)))", "*u8(*u16(*u32(arg5 - 1)))" },
		{ "s32(retval)", "s32(retval)" },
		{ "u16(*u64(retval) + 2)", "u16(*u64(retval) + 2)" },
		{ "arg3 - 9223372036854775808", "arg3 - 9223372036854775808" },
	};
	struct pb_errtext err = { 0 };
	char buf[256], buf2[256];
	struct pb_value v, w;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_OK(pb_value__parse(cases[i][0], &v, &err));
		ASSERT_GT(pb_value__format(&v, buf, sizeof(buf)), 0);
		ASSERT_STREQ(buf, cases[i][1]);
		/* the canonical form parses back to the same value */
		ASSERT_OK(pb_value__parse(buf, &w, &err));
		ASSERT_GT(pb_value__format(&w, buf2, sizeof(buf2)), 0);
		ASSERT_STREQ(buf2, buf);
		ASSERT_EQ(w.base, v.base);
		ASSERT_EQ(w.n_deref, v.n_deref);
		ASSERT_EQ(w.final_offset, v.final_offset);
		ASSERT_EQ(w.cast_size, v.cast_size);
		pb_value__free(&v);
		pb_value__free(&w);
	}
	/* a short buffer is reported, still NUL-terminated */
	ASSERT_OK(pb_value__parse("*u64(arg0 + 16)", &v, &err));
	ASSERT_ERR(pb_value__format(&v, buf, 5), -ENOSPC);
	ASSERT_EQ(strlen(buf), 4);
	pb_value__free(&v);
}

TEST(test_value_errors)
{
	int col = -1;

	ASSERT_STREQ(value_err("*(arg0 + 16)", &col),
		     "expected a size after '*' (*u8, *u16, *u32 or *u64, e.g. *u64(arg0 + 16)), found '('");
	ASSERT_EQ(col, 1);
	ASSERT_STREQ(value_err("*u64(*u64(*u64(*u64(arg0))))", &col),
		     "at most 3 dereference levels, found 4");
	ASSERT_EQ(col, 15);
	ASSERT_STREQ(value_err("*u8(*u8(*u8(*u8(*u8(arg0)))))", &col),
		     "at most 3 dereference levels, found 5");
	ASSERT_STREQ(value_err("arg12", &col), "argument index out of range: 'arg12' (arg0..arg11)");
	ASSERT_STREQ(value_err("arg99999999999999999999", &col),
		     "argument index out of range: 'arg99999999999999999999' (arg0..arg11)");
	ASSERT_STREQ(value_err("", &col),
		     "expected a value (argN, retval, an integer or *uN(...)), found nothing");
	ASSERT_STREQ(value_err("retval +", &col), "expected an integer after '+', found end of expression");
	ASSERT_EQ(col, 8);
	ASSERT_STREQ(value_err("18446744073709551616", &col),
		     "integer out of range (at most 64 bits), found '18446744073709551616'");
	ASSERT_STREQ(value_err("-9223372036854775809", &col),
		     "integer out of range: '-9223372036854775809' (at least -9223372036854775808)");
	ASSERT_STREQ(value_err("arg0 + 9223372036854775808", &col),
		     "offset out of range: + 9223372036854775808 (at most 9223372036854775807)");
	ASSERT_STREQ(value_err("arg0 + 8 + 4", &col),
		     "only one offset is allowed per term (write one '+ N' or '- N'), found '+'");
	ASSERT_STREQ(value_err("foo", &col), "expected argN, retval, an integer or *uN(...), found 'foo'");
	ASSERT_STREQ(value_err("*u64(arg0", &col), "expected ')' to close '*u64(', found end of expression");
	ASSERT_STREQ(value_err("*u64 arg0", &col), "expected '(' after '*u64', found 'arg0'");
	ASSERT_STREQ(value_err("s32(arg0) + 1", &col),
		     "an offset after a cast is not allowed: put it inside, e.g. s32(arg0 + 1)");
	ASSERT_STREQ(value_err("s32 arg0", &col), "expected '(' after the cast 's32' (e.g. s32(retval)), found 'arg0'");
	ASSERT_STREQ(value_err("*u64(s32(arg0))", &col),
		     "a cast such as 's32(...)' may only wrap the whole value (e.g. s32(*u32(arg0 + 4))), found it inside");
	ASSERT_STREQ(value_err("arg0 * 2", &col),
		     "unexpected '*' after the value (the only arithmetic is '+ N' or '- N')");
	ASSERT_STREQ(value_err("12ab", &col), "invalid integer '12ab' (decimal, or hex with 0x)");
	ASSERT_STREQ(value_err("arg", &col), "expected an argument number after 'arg' (arg0..arg11), found end of expression");
	ASSERT_STREQ(value_err("0x", &col), "invalid integer '0x' (decimal, or hex with 0x)");
	ASSERT_STREQ(value_err("arg0\x01", &col), "unexpected byte 0x01 after the value");
}

/* ---- guards -------------------------------------------------------------- */

TEST(test_guards)
{
	struct pb_guard g;
	struct pb_errtext err = { 0 };
	char buf[256];

	ASSERT_OK(pb_guard__parse("s32(retval) == 0", &g, &err));
	ASSERT_TRUE(g.present);
	ASSERT_EQ(g.op, PB_CMP_EQ);
	ASSERT_EQ(g.rhs, 0);
	ASSERT_EQ(g.lhs.cast_size, 4);
	ASSERT_STREQ(g.text, "s32(retval) == 0");
	ASSERT_STREQ(g.lhs.text, "s32(retval)");
	ASSERT_GT(pb_guard__format(&g, buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "s32(retval) == 0");
	pb_guard__free(&g);

	ASSERT_OK(pb_guard__parse("*u32(arg0+4)>=-1", &g, &err));
	ASSERT_EQ(g.op, PB_CMP_GE);
	ASSERT_EQ(g.rhs, -1);
	pb_guard__format(&g, buf, sizeof(buf));
	ASSERT_STREQ(buf, "*u32(arg0 + 4) >= -1");
	pb_guard__free(&g);

	ASSERT_OK(pb_guard__parse("u8(retval) != 0x0", &g, &err));
	ASSERT_EQ(g.op, PB_CMP_NE);
	pb_guard__free(&g);
	ASSERT_OK(pb_guard__parse("arg1 < 5", &g, &err));
	ASSERT_EQ(g.op, PB_CMP_LT);
	pb_guard__free(&g);
	ASSERT_OK(pb_guard__parse("arg1 > 5", &g, &err));
	ASSERT_EQ(g.op, PB_CMP_GT);
	pb_guard__free(&g);
	ASSERT_OK(pb_guard__parse("arg1 <= 5", &g, &err));
	ASSERT_EQ(g.op, PB_CMP_LE);
	pb_guard__free(&g);

	ASSERT_ERR(pb_guard__parse("retval = 0", &g, &err), -EINVAL);
	ASSERT_STREQ(err.msg, "expected a comparison operator (==, !=, <, <=, > or >=), found '='");
	ASSERT_EQ(err.col, 7);
	ASSERT_ERR(pb_guard__parse("retval", &g, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "expected a comparison after the value");
	ASSERT_ERR(pb_guard__parse("== 0", &g, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "found nothing");
	ASSERT_ERR(pb_guard__parse("retval == x", &g, &err), -EINVAL);
	ASSERT_STREQ(err.msg, "expected an integer after the comparison, found 'x'");
	ASSERT_ERR(pb_guard__parse("retval == 1 == 2", &g, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "unexpected '='");
	ASSERT_ERR(pb_guard__parse("*(arg0) != 0", &g, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "expected a size after '*'");
	ASSERT_ERR(pb_guard__parse("retval <> 0", &g, &err), -EINVAL);
	ASSERT_STREQ(err.msg, "expected a comparison operator (==, !=, <, <=, > or >=), found '<>'");
}

/* ---- the model -------------------------------------------------------------- */

static const char full_yaml[] =
	"manifest: 1\n"
	"name: demo\n"
	"description: the demo\n"
	"targets:\n"
	"  - binary: build/demo/probity-demo\n"
	"    build_id: 3F0A1B2C3D4E5F60718293A4B5C6D7E8F9001122\n"
	"resources:\n"
	"  - name: demo.pool.page\n"
	"    class: pool\n"
	"    units: pages\n"
	"    capacity: 64\n"
	"    shared: true\n"
	"    externally_owned: true\n"
	"  - name: demo.conn\n"
	"    class: connection\n"
	"    units: conns\n"
	"    generation: counter\n"
	"events:\n"
	"  - id: page_wait\n"
	"    resource: demo.pool.page\n"
	"    kind: WAIT\n"
	"    site: { symbol: pool_get }\n"
	"    instance: arg0\n"
	"  - id: page_get\n"
	"    resource: demo.pool.page\n"
	"    kind: ACQUIRE\n"
	"    site: { symbol: pool_get, at: return }\n"
	"    instance: retval\n"
	"    units: \"*u32(arg0 + 8)\"\n"
	"    when: retval != 0\n"
	"    returns: value\n"
	"    expect:\n"
	"      - next: [USE, RELEASE]\n"
	"        within: 500ms\n"
	"      - next: [WAIT]\n"
	"    confidence: validated\n"
	"    provenance: { source: llm, evidence: looked at it, date: 2024-02-29 }\n"
	"    description: a page\n"
	"  - id: page_use\n"
	"    resource: demo.pool.page\n"
	"    kind: USE\n"
	"    site: { symbol: conn_send, offset: 0x1c }\n"
	"    instance: arg1\n"
	"    target: arg0\n"
	"    target_resource: demo.conn\n"
	"  - id: conn_open\n"
	"    resource: demo.conn\n"
	"    kind: ACQUIRE\n"
	"    site: { usdt: \"demo:conn__open\" }\n"
	"    instance: arg0\n"
	"    generation: arg11\n";

TEST(test_model_fields)
{
	struct manifest *m = NULL;
	struct diags *d = NULL;
	const struct pb_event *e;
	int err = parse_str(full_yaml, &m, &d);

	if (err)
		dump_diags(d);
	ASSERT_OK(err);
	ASSERT_EQ(diags__count(d), 0);
	ASSERT_EQ(m->version, 1);
	ASSERT_STREQ(m->name, "demo");
	ASSERT_STREQ(m->description, "the demo");
	ASSERT_STREQ(m->path, "t.yaml");

	ASSERT_EQ(m->n_targets, 1);
	ASSERT_STREQ(m->targets[0].id, "main");
	ASSERT_STREQ(m->targets[0].binary, "build/demo/probity-demo");
	ASSERT_EQ(m->targets[0].build_id_len, 20);
	ASSERT_EQ(m->targets[0].build_id[0], 0x3f);
	ASSERT_EQ(m->targets[0].build_id[19], 0x22);
	ASSERT_EQ(m->targets[0].build_id_loc.line, 6);
	ASSERT_EQ(m->targets[0].build_id_loc.col, 15);

	ASSERT_EQ(m->n_resources, 2);
	ASSERT_EQ(m->resources[0].class, PB_CLASS_POOL);
	ASSERT_TRUE(m->resources[0].has_capacity);
	ASSERT_EQ(m->resources[0].capacity, 64);
	ASSERT_TRUE(m->resources[0].shared);
	ASSERT_TRUE(m->resources[0].externally_owned);
	ASSERT_EQ(m->resources[0].generation, PB_GEN_ON_ACQUIRE);
	ASSERT_FALSE(m->resources[1].has_capacity);
	ASSERT_EQ(m->resources[1].generation, PB_GEN_COUNTER);
	ASSERT_EQ(m->resources[0].loc.line, 8);
	ASSERT_EQ(m->resources[0].loc.col, 5);

	ASSERT_EQ(m->n_events, 4);
	e = &m->events[0];
	ASSERT_EQ(e->kind, PB_EV_WAIT);
	ASSERT_EQ(e->site.at, PB_AT_SPAN); /* the default for a WAIT on a symbol */
	ASSERT_EQ(e->site.target_idx, 0);
	ASSERT_EQ(e->resource_idx, 0);
	ASSERT_EQ(e->units.base, PB_VAL_CONST);
	ASSERT_EQ(e->units.constant, 1);
	ASSERT_EQ(e->confidence, PB_CONF_CANDIDATE);
	ASSERT_FALSE(e->provenance.present);
	ASSERT_FALSE(e->when.present);
	ASSERT_EQ(e->returns, PB_RET_UNSPECIFIED);
	ASSERT_EQ(e->target_resource_idx, -1);

	e = &m->events[1];
	ASSERT_EQ(e->kind, PB_EV_ACQUIRE);
	ASSERT_EQ(e->site.at, PB_AT_RETURN);
	ASSERT_STREQ(e->site.symbol, "pool_get");
	ASSERT_EQ(e->instance.base, PB_VAL_RETVAL);
	ASSERT_EQ(e->units.n_deref, 1);
	ASSERT_EQ(e->units.loc.line, 29);
	ASSERT_EQ(e->units.loc.col, 12);
	ASSERT_TRUE(e->when.present);
	ASSERT_EQ(e->when.op, PB_CMP_NE);
	ASSERT_EQ(e->returns, PB_RET_VALUE);
	ASSERT_EQ(e->n_expect, 2);
	ASSERT_EQ(e->expect[0].next_mask, (1u << PB_EV_USE) | (1u << PB_EV_RELEASE));
	ASSERT_U64_EQ(e->expect[0].within_ns, 500000000ULL);
	ASSERT_EQ(e->expect[1].next_mask, 1u << PB_EV_WAIT);
	ASSERT_EQ(e->expect[1].within_ns, 0);
	ASSERT_EQ(e->confidence, PB_CONF_VALIDATED);
	ASSERT_TRUE(e->provenance.present);
	ASSERT_EQ(e->provenance.source, PB_PROV_LLM);
	ASSERT_STREQ(e->provenance.evidence, "looked at it");
	ASSERT_STREQ(e->provenance.date, "2024-02-29");
	ASSERT_STREQ(e->description, "a page");
	ASSERT_EQ(e->loc.line, 24);
	ASSERT_EQ(e->loc.col, 5);
	ASSERT_EQ(e->site.loc.line, 27);

	e = &m->events[2];
	ASSERT_EQ(e->kind, PB_EV_USE);
	ASSERT_EQ(e->site.at, PB_AT_ENTRY);
	ASSERT_EQ(e->site.offset, 0x1c);
	ASSERT_EQ(e->target.base, PB_VAL_ARG);
	ASSERT_EQ(e->target_resource_idx, 1);

	e = &m->events[3];
	ASSERT_STREQ(e->site.usdt_provider, "demo");
	ASSERT_STREQ(e->site.usdt_name, "conn__open");
	ASSERT_NULL(e->site.symbol);
	ASSERT_EQ(e->site.at, PB_AT_ENTRY);
	ASSERT_EQ(e->generation.arg, 11);

	ASSERT_EQ(manifest__find_resource(m, "demo.conn"), 1);
	ASSERT_EQ(manifest__find_resource(m, "nope"), -1);
	ASSERT_EQ(manifest__find_target(m, "main"), 0);
	ASSERT_EQ(manifest__find_event(m, "conn_open"), 3);
	ASSERT_EQ(manifest__find_event(m, NULL), -1);
	manifest__free(m);
	diags__free(d);
}

TEST(test_model_json)
{
	struct manifest *m = NULL;
	struct diags *d = NULL;
	json_t *j;

	ASSERT_OK(parse_str(full_yaml, &m, &d));
	j = manifest__to_json(m);
	ASSERT_NOT_NULL(j);
	ASSERT_STREQ(json_string_value(json_object_get(j, "name")), "demo");
	ASSERT_EQ(json_array_size(json_object_get(j, "events")), 4);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(json_object_get(j, "targets"), 0),
						       "build_id")),
		     "3f0a1b2c3d4e5f60718293a4b5c6d7e8f9001122");
	json_decref(j);
	manifest__free(m);
	diags__free(d);
}

TEST(test_enum_names)
{
	ASSERT_STREQ(pb_event_kind_str(PB_EV_RELEASE), "RELEASE");
	ASSERT_STREQ(pb_res_class_str(PB_CLASS_CONNECTION), "connection");
	ASSERT_STREQ(pb_site_at_str(PB_AT_SPAN), "span");
	ASSERT_STREQ(pb_confidence_str(PB_CONF_DEGRADED), "degraded");
	ASSERT_STREQ(pb_prov_source_str(PB_PROV_STATIC_ANALYSIS), "static_analysis");
	ASSERT_STREQ(pb_cmp_op_str(PB_CMP_LE), "<=");
	ASSERT_STREQ(pb_returns_str(PB_RET_VOID), "void");
	ASSERT_STREQ(pb_gen_rule_str(PB_GEN_COUNTER), "counter");
	ASSERT_STREQ(pb_event_kind_str((enum pb_event_kind)99), "?");
}

TEST(test_several_targets)
{
	static const char yaml[] =
		"manifest: 1\nname: t\n"
		"targets:\n"
		"  - { id: app, binary: /bin/app, build_id: 0123456789abcdef }\n"
		"  - { id: libc, binary: libc.so.6, build_id: 89abcdef01234567 }\n"
		"resources: [ { name: r, class: lock, units: holders } ]\n"
		"events:\n"
		"  - { id: a, resource: r, kind: ACQUIRE, site: { target: libc, symbol: lock }, instance: arg0 }\n"
		"  - { id: b, resource: r, kind: RELEASE, site: { target: app, symbol: unlock }, instance: arg0 }\n";
	struct manifest *m = NULL;
	struct diags *d = NULL;

	ASSERT_OK(parse_str(yaml, &m, &d));
	ASSERT_EQ(m->events[0].site.target_idx, 1);
	ASSERT_EQ(m->events[1].site.target_idx, 0);
	manifest__free(m);
	diags__free(d);
}

/* ---- each semantic check fires ------------------------------------------------ */

TEST(test_check_duplicates_and_refs)
{
	ASSERT_EVENT_FINDING("{ id: base, resource: r, kind: USE, site: { symbol: f }, instance: arg0 }",
			     "events[2].id", "duplicate event id 'base'");
	ASSERT_EVENT_FINDING("{ id: x, resource: rr, kind: USE, site: { symbol: f }, instance: arg0 }",
			     "events[2].resource", "unknown resource 'rr'");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, target: arg1, target_resource: cc }",
			     "events[2].target_resource", "unknown resource 'cc'");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { target: nope, symbol: f }, instance: arg0 }",
			     "events[2].site.target", "unknown target 'nope'");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, target_resource: c }",
			     "events[2].target_resource", "has no target");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f }, instance: arg0, target: arg1 }",
			     "events[2].target", "only for USE events");
}

TEST(test_check_sites)
{
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f, at: return, offset: 4 }, instance: arg0 }",
			     "events[2].site.offset", "offset must be 0");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: WAIT, site: { symbol: f, offset: 4 }, instance: arg0 }",
			     "events[2].site.offset", "the default for WAIT");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f, at: span }, instance: arg0 }",
			     "events[2].site.at", "only for WAIT");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: WAIT, site: { symbol: f, at: return }, instance: arg0 }",
			     "events[2].site.at", "a WAIT is at: span");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { usdt: 'p:n', at: return }, instance: arg0 }",
			     "events[2].site.at", "at must be entry");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { usdt: 'p:n', offset: 0 }, instance: arg0 }",
			     "events[2].site.offset", "only valid with symbol");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { usdt: 'p:n', symbol: f }, instance: arg0 }",
			     "events[2].site.usdt", "not both");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { at: entry }, instance: arg0 }",
			     "events[2].site", "found neither");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { usdt: 'p' }, instance: arg0 }",
			     "events[2].site.usdt", "expected PROVIDER:NAME");
}

TEST(test_check_values)
{
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg6 }",
			     "events[2].instance", "arg6 is out of range at a symbol site");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, when: '*u8(arg7) == 1' }",
			     "events[2].when", "arg7 is out of range");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: retval }",
			     "events[2].instance", "retval with at: entry");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { usdt: 'p:n' }, instance: retval }",
			     "events[2].instance", "not available at a USDT probe");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: RELEASE, site: { symbol: f, at: return }, instance: arg0, when: s32(retval) == 0 }",
			     "events[2].when", "needs 'returns: value'");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f, at: return }, instance: retval, returns: void }",
			     "events[2].instance", "returns: void");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f }, instance: arg0, units: 0 }",
			     "events[2].units", "must be > 0");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f }, instance: arg0, units: s8(0x80) }",
			     "events[2].units", "must be > 0, found -128");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f }, instance: '*(arg0)' }",
			     "events[2].instance", "expected a size after '*'");
}

TEST(test_check_release_with_returns_value_is_fine)
{
	struct manifest *m = NULL;
	struct diags *d = NULL;
	int err = parse_str(HEAD "  - { id: x, resource: r, kind: RELEASE, site: { symbol: f, at: return }, "
				 "instance: arg0, when: s32(retval) == 0, returns: value }\n",
			    &m, &d);

	if (err)
		dump_diags(d);
	ASSERT_OK(err);
	manifest__free(m);
	diags__free(d);
}

TEST(test_check_generation)
{
	ASSERT_EVENT_FINDING("{ id: x, resource: c, kind: ACQUIRE, site: { symbol: f }, instance: arg0 }",
			     "events[2].generation", "required: resource 'c' has generation: counter");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: ACQUIRE, site: { symbol: f }, instance: arg0, generation: arg1 }",
			     "events[2].generation", "not allowed: resource 'r'");
	ASSERT_EVENT_FINDING("{ id: x, resource: c, kind: WAIT, site: { symbol: f }, instance: arg0, generation: arg1 }",
			     "events[2].generation", "not read on WAIT events");
}

TEST(test_check_field_formats)
{
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: AQUIRE, site: { symbol: f }, instance: arg0 }",
			     "events[2].kind", "did you mean 'ACQUIRE'?");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, confidence: degraded }",
			     "events[2].confidence", "never in a file");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, expect: [ { next: [] } ] }",
			     "events[2].expect[0].next", "at least one event kind");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, expect: [ { next: [USE], within: 0s } ] }",
			     "events[2].expect[0].within", "must be > 0");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, expect: [ { next: [USE], within: 18446744073709551615s } ] }",
			     "events[2].expect[0].within", "out of range");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, provenance: { source: llm, date: 1900-02-29 } }",
			     "events[2].provenance.date", "1900-02 has 28 days");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, provenance: { evidence: x } }",
			     "events[2].provenance.source", "required field is missing");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, sit: { symbol: f }, instance: arg0 }",
			     "events[2]", "did you mean 'site'?");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, kind: WAIT }",
			     "events[2].kind", "duplicate key 'kind'");
	ASSERT_EVENT_FINDING("{ id: x, resource: r, kind: USE, site: { symbol: f }, instance: arg0, returns: int }",
			     "events[2].returns", "expected one of value, void");
}

TEST(test_check_document_level)
{
	struct manifest *m = NULL;
	struct diags *d = NULL;
	static const char *const bad[][3] = {
		{ "", NULL, "empty file" },
		{ "---\n", NULL, "an empty document" },
		{ "- a\n", NULL, "found a list" },
		{ "just text\n", NULL, "found the scalar 'just text'" },
		{ "a: 1\n---\nb: 2\n", NULL, "a second YAML document" },
		{ "a: &x 1\nb: *x\n", NULL, "YAML alias '*x' is not allowed" },
		{ "a: [1, 2\n", NULL, "YAML syntax error" },
		{ "manifest: 2\n", "manifest", "unsupported schema version 2" },
		{ "manifest: 1\n", "targets", "required field is missing" },
		{ "manifest: '1'\n", "manifest", "found a quoted string '1'" },
		{ "manifest: 1\ntargets: [ { binary: x, build_id: 012 } ]\n", "targets[0].build_id",
		  "even number of hex digits" },
		{ "manifest: 1\ntargets: [ { binary: x }, { binary: y } ]\n", "targets[0].id",
		  "required when the manifest has several targets" },
		{ "manifest: 1\nresources: [ { name: r, class: pool, units: p, capacity: 0 } ]\n",
		  "resources[0].capacity", "must be > 0" },
		{ "manifest: 1\nresources: [ { name: r, class: pool, units: p, shared: yes } ]\n",
		  "resources[0].shared", "expected true or false" },
		{ "a: caf\xc3\x28\n", NULL, "invalid input" },
		{ "a:\n\t- b\n", NULL, "tabs" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = manifest__parse("t.yaml", bad[i][0], strlen(bad[i][0]), &m, d = diags__new());
		const struct diag *g = find_diag(d, bad[i][1], bad[i][2]);

		if (err != -EINVAL || !g) {
			fprintf(stderr, "  case %zu: %s\n", i, bad[i][2]);
			dump_diags(d);
		}
		manifest__free(m);
		diags__free(d);
		ASSERT_ERR(err, -EINVAL);
		ASSERT_NOT_NULL(g);
		ASSERT_NULL(m);
	}
}

TEST(test_findings_are_sorted_and_positioned)
{
	struct manifest *m = NULL;
	struct diags *d = NULL;
	size_t i;

	ASSERT_ERR(parse_str("manifest: 1\n"
			     "name: t\n"
			     "targets: [ { binary: x, build_id: zz } ]\n"
			     "resources: [ { name: r, class: poool, units: p } ]\n"
			     "events: [ { id: e, resource: r, kind: USE, site: { symbol: f }, instance: '*(x)' } ]\n",
			     &m, &d), -EINVAL);
	ASSERT_EQ(diags__count_severity(d, DIAG_ERROR), 3);
	for (i = 1; i < diags__count(d); i++)
		ASSERT_GE(diags__get(d, i)->line, diags__get(d, i - 1)->line);
	ASSERT_EQ(diags__get(d, 0)->line, 3);
	ASSERT_EQ(diags__get(d, 0)->col, 35);	/* the offending character */
	ASSERT_STREQ(diags__get(d, 1)->field, "resources[0].class");
	ASSERT_STRSTR(diags__get(d, 1)->msg, "did you mean 'pool'?");
	ASSERT_EQ(diags__get(d, 2)->col, 77);	/* '(' inside the quoted value */
	diags__free(d);
}

/* ---- digests ------------------------------------------------------------------ */

TEST(test_digest)
{
	uint8_t out[PB_SHA256_LEN], again[PB_SHA256_LEN];
	char hex[PB_DIGEST_HEX_LEN];
	struct manifest *m = NULL;
	struct diags *d = NULL;
	char *copy;

	ASSERT_OK(pb_sha256("abc", 3, out));
	pb_hex(out, sizeof(out), hex);
	ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ASSERT_OK(pb_sha256("", 0, out));
	pb_hex(out, sizeof(out), hex);
	ASSERT_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

	/* the manifest digest is the SHA-256 of the bytes, stable across parses */
	ASSERT_OK(parse_str(full_yaml, &m, &d));
	ASSERT_OK(pb_sha256(full_yaml, strlen(full_yaml), out));
	ASSERT_OK(memcmp(m->digest, out, sizeof(out)));
	memcpy(again, m->digest, sizeof(again));
	manifest__free(m);
	diags__free(d);
	ASSERT_OK(parse_str(full_yaml, &m, &d));
	ASSERT_OK(memcmp(m->digest, again, sizeof(again)));
	manifest__free(m);
	diags__free(d);

	/* a comment changes the digest, not the model */
	copy = malloc(strlen(full_yaml) + 8);
	ASSERT_NOT_NULL(copy);
	sprintf(copy, "%s# x\n", full_yaml);
	ASSERT_OK(parse_str(copy, &m, &d));
	ASSERT_NE(memcmp(m->digest, again, sizeof(again)), 0);
	manifest__free(m);
	diags__free(d);
	free(copy);
}

/* ---- files and hostile input ----------------------------------------------------- */

TEST(test_load_errors)
{
	struct manifest *m = NULL;
	struct diags *d = diags__new();
	const struct diag *g;

	ASSERT_ERR(manifest__load("/nonexistent/x.yaml", &m, d), -ENOENT);
	ASSERT_NULL(m);
	g = diags__get(d, 0);
	ASSERT_NOT_NULL(g);
	ASSERT_STREQ(g->file, "/nonexistent/x.yaml");
	ASSERT_STREQ(g->msg, "cannot read file: No such file or directory");
	ASSERT_ERR(manifest__load("/", &m, d), -EISDIR);
	ASSERT_STRSTR(diags__get(d, 1)->msg, "Is a directory");
	diags__free(d);
}

TEST(test_load_file)
{
	char path[] = "/tmp/probity-test-manifest-XXXXXX";
	struct manifest *m = NULL;
	struct diags *d = diags__new();
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, full_yaml, strlen(full_yaml)), (long long)strlen(full_yaml));
	close(fd);
	ASSERT_OK(manifest__load(path, &m, d));
	ASSERT_STREQ(m->path, path);
	ASSERT_EQ(m->n_events, 4);
	manifest__free(m);
	diags__free(d);
	unlink(path);
}

TEST(test_hostile_inputs)
{
	struct manifest *m = NULL;
	struct diags *d;
	size_t n = 100000, i;
	char *buf = malloc(2 * n + 1);

	ASSERT_NOT_NULL(buf);
	/* deep nesting stops early, without recursion */
	for (i = 0; i < n; i++)
		buf[i] = '[';
	d = diags__new();
	ASSERT_ERR(manifest__parse("deep", buf, n, &m, d), -EINVAL);
	ASSERT_NOT_NULL(find_diag(d, NULL, "nesting deeper than"));
	diags__free(d);

	/* NUL bytes */
	d = diags__new();
	ASSERT_ERR(manifest__parse("nul", "manifest: 1\0\n", 13, &m, d), -EINVAL);
	diags__free(d);

	/* a long unknown key (libyaml allows 1024 bytes) is clipped in the message */
	memcpy(buf, "{", 1);
	for (i = 1; i < 1000; i++)
		buf[i] = 'k';
	memcpy(buf + 1000, ": 1}", 5);
	d = diags__new();
	ASSERT_ERR(manifest__parse("key", buf, 1004, &m, d), -EINVAL);
	ASSERT_NOT_NULL(find_diag(d, NULL, "unknown field 'kkkk"));
	ASSERT_TRUE(strlen(diags__get(d, 0)->msg) < 1000);
	diags__free(d);

	/* too large */
	d = diags__new();
	ASSERT_ERR(manifest__parse("big", buf, PB_MANIFEST_MAX_BYTES + 1, &m, d), -EINVAL);
	ASSERT_NOT_NULL(find_diag(d, NULL, "file too large"));
	diags__free(d);
	free(buf);
}

TEST(test_too_many_events_and_findings)
{
	size_t n = PB_MANIFEST_MAX_EVENTS + 1, i, o = 0, sz = 64 * n + 512;
	struct manifest *m = NULL;
	struct diags *d;
	char *buf = malloc(sz);

	ASSERT_NOT_NULL(buf);
	o += snprintf(buf + o, sz - o, "manifest: 1\nname: t\nevents:\n");
	for (i = 0; i < n; i++)
		o += snprintf(buf + o, sz - o, "  - { id: e%zu }\n", i);
	d = diags__new();
	ASSERT_ERR(manifest__parse("many", buf, o, &m, d), -EINVAL);
	ASSERT_NOT_NULL(find_diag(d, "events", "too many entries: 10001 (at most 10000)"));
	diags__free(d);

	/* 500 broken events: findings stop at 200 plus one note */
	o = snprintf(buf, sz, "manifest: 1\nname: t\nevents:\n");
	for (i = 0; i < 500; i++)
		o += snprintf(buf + o, sz - o, "  - { id: e%zu, kind: NOPE }\n", i);
	d = diags__new();
	ASSERT_ERR(manifest__parse("many", buf, o, &m, d), -EINVAL);
	ASSERT_EQ(diags__count(d), 201);
	ASSERT_EQ(diags__get(d, 200)->severity, DIAG_NOTE);
	ASSERT_STRSTR(diags__get(d, 200)->msg, "too many findings");
	diags__free(d);
	free(buf);
}

TEST(test_predicts_model)
{
	static const char yaml[] =
		"manifest: 1\n"
		"name: p\n"
		"targets: [{binary: /bin/x, build_id: 0123456789abcdef}]\n"
		"resources: [{name: r, class: pool, units: pages}]\n"
		"events:\n"
		"  - {id: w, resource: r, kind: WAIT, site: {symbol: w}, instance: arg0,\n"
		"     predicts: [{effect: off_cpu, min_duration: 2ms}, {effect: block_io}]}\n"
		"  - {id: g, resource: r, kind: ACQUIRE, site: {symbol: g, at: return},\n"
		"     instance: retval, predicts: [{effect: page_fault}]}\n"
		"  - {id: p, resource: r, kind: RELEASE, site: {symbol: p}, instance: arg0,\n"
		"     predicts: [{effect: wakes_waiter}]}\n";
	struct manifest *m = NULL;
	struct diags *d = NULL;
	json_t *j, *p;

	ASSERT_OK(parse_str(yaml, &m, &d));
	ASSERT_EQ(m->events[0].n_predicts, 2);
	ASSERT_EQ(m->events[0].predicts[0].effect, PB_FX_OFF_CPU);
	ASSERT_EQ(m->events[0].predicts[0].min_duration_ns, 2000000);
	ASSERT_EQ(m->events[0].predicts[1].effect, PB_FX_BLOCK_IO);
	ASSERT_EQ(m->events[0].predicts[1].min_duration_ns, 0);
	ASSERT_EQ(m->events[1].predicts[0].effect, PB_FX_PAGE_FAULT);
	ASSERT_TRUE(pb_effect_in_call(PB_FX_PAGE_FAULT));
	ASSERT_FALSE(pb_effect_in_call(PB_FX_WAKES_WAITER));
	/* the resource's only WAIT span is the default waiter */
	ASSERT_EQ(m->events[2].predicts[0].effect, PB_FX_WAKES_WAITER);
	ASSERT_EQ(m->events[2].predicts[0].waiter_idx, 0);
	ASSERT_NULL(m->events[2].predicts[0].waiter);
	j = manifest__to_json(m);
	ASSERT_NOT_NULL(j);
	p = json_array_get(json_object_get(json_array_get(json_object_get(j, "events"), 2),
					   "predicts"), 0);
	ASSERT_STREQ(json_string_value(json_object_get(p, "effect")), "wakes_waiter");
	ASSERT_STREQ(json_string_value(json_object_get(p, "waiter")), "w");
	p = json_array_get(json_object_get(json_array_get(json_object_get(j, "events"), 0),
					   "predicts"), 0);
	ASSERT_EQ(json_integer_value(json_object_get(p, "min_duration_ns")), 2000000);
	json_decref(j);
	manifest__free(m);
	diags__free(d);
}
