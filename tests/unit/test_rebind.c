/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rebind.c: the text editor of `manifest rebind`
 * (src/contract/rebind_edit.c): build_id, confidence and provenance
 * replaced or inserted at libyaml's positions, every other byte kept. */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "contract/manifest.h"
#include "contract/rebind_int.h"

#define OLD_ID "0123456789abcdef0123456789abcdef01234567"
#define NEW_ID "89abcdef0123456789abcdef0123456789abcdef"

#define HEAD(q)								\
	"manifest: 1   # keep me\n"					\
	"name: t\n"							\
	"targets:\n"							\
	"  - id: a\n"							\
	"    binary: /bin/true\n"					\
	"    build_id: " q OLD_ID q "\n"				\
	"resources:\n"							\
	"  - { name: r, class: lock, units: holders }\n"				\
	"events:\n"

/* Apply: every target gets NEW_ID; event i gets conf[i] and, when
 * src[i], provenance (src[i], "ev \"q\"", 2026-12-01). */
static char *apply(const char *yaml, const char *const *conf, const char *const *src, size_t n)
{
	const char *ids[1] = { NEW_ID };
	struct rebind_prov_text prov[4] = { 0 };
	struct rebind_edit_req req = { 1, ids, n, conf, prov };
	char *out = NULL, why[256];
	size_t len, i;

	for (i = 0; i < n; i++)
		prov[i] = (struct rebind_prov_text){ src[i], "ev \"q\"", "2026-12-01" };
	if (rebind_edit__apply(yaml, strlen(yaml), &req, &out, &len, why, sizeof(why)))
		return NULL;
	return out;
}

TEST(test_block_fields_replaced_in_place)
{
	const char *in = HEAD("")
		"  - id: e\n"
		"    resource: r\n"
		"    kind: ACQUIRE\n"
		"    site: { target: a, symbol: f }   # the site\n"
		"    instance: arg0\n"
		"    confidence: validated\n"
		"    provenance:\n"
		"      source: developer\n"
		"      evidence: \"old\"\n"
		"      date: 2026-11-29\n"
		"    # trailing comment\n";
	const char *conf[] = { "candidate" }, *src[] = { "runtime" };
	char *out = apply(in, conf, src, 1);

	ASSERT_NOT_NULL(out);
	ASSERT_STRSTR(out, "manifest: 1   # keep me\n");
	ASSERT_STRSTR(out, "    build_id: " NEW_ID "\n");
	ASSERT_STRSTR(out, "    site: { target: a, symbol: f }   # the site\n");
	ASSERT_STRSTR(out, "    confidence: candidate\n    provenance:\n      source: runtime\n"
		      "      evidence: \"ev \\\"q\\\"\"\n      date: 2026-12-01\n    # trailing comment\n");
	ASSERT_NULL(strstr(out, OLD_ID));
	ASSERT_NULL(strstr(out, "developer"));
	free(out);
}

TEST(test_missing_fields_inserted_after_the_last_line)
{
	const char *in = HEAD("'")
		"  - id: e\n"
		"    resource: r\n"
		"    kind: ACQUIRE\n"
		"    site: { target: a, symbol: f }\n"
		"    instance: arg0   # last\n"
		"  - { id: g, resource: r, kind: RELEASE, site: { target: a, symbol: g }, instance: arg0 }\n";
	const char *conf[] = { "validated", "candidate" }, *src[] = { "runtime", "static_analysis" };
	char *out = apply(in, conf, src, 2);
	struct manifest *m = NULL;
	struct diags *d = diags__new();

	ASSERT_NOT_NULL(out);
	/* the quote style of the build-id is kept */
	ASSERT_STRSTR(out, "    build_id: '" NEW_ID "'\n");
	/* block: new lines after the last field and its comment */
	ASSERT_STRSTR(out, "    instance: arg0   # last\n    confidence: validated\n    provenance:\n"
		      "      source: runtime\n");
	/* flow: before the closing brace */
	ASSERT_STRSTR(out, "instance: arg0, confidence: candidate, provenance: { source: static_analysis, "
		      "evidence: \"ev \\\"q\\\"\", date: 2026-12-01 } }\n");
	ASSERT_OK(manifest__parse("out", out, strlen(out), &m, d));
	ASSERT_EQ(m->events[0].confidence, PB_CONF_VALIDATED);
	ASSERT_EQ(m->events[0].provenance.source, PB_PROV_RUNTIME);
	ASSERT_EQ(m->events[1].provenance.source, PB_PROV_STATIC_ANALYSIS);
	ASSERT_STREQ(m->events[1].provenance.evidence, "ev \"q\"");
	manifest__free(m);
	diags__free(d);
	free(out);
}

TEST(test_crlf_bom_and_unicode_columns)
{
	/* columns count characters: a multi-byte comment before a value on
	 * the same line must not shift the edit */
	const char *in = "\xef\xbb\xbf" "manifest: 1\r\nname: t\r\ntargets:\r\n"
		"  - { id: a, binary: /bin/true, build_id: " OLD_ID " }  # \xc3\xa9\xe2\x80\x94\r\n"
		"resources:\r\n  - { name: r, class: lock, units: holders }\r\nevents:\r\n"
		"  - { id: \xc3\xa9v, resource: r, kind: USE, site: { target: a, symbol: f }, instance: arg0, confidence: candidate }\r\n";
	const char *conf[] = { "validated" }, *src[] = { NULL };
	char *out = apply(in, conf, src, 1);

	ASSERT_NOT_NULL(out);
	ASSERT_STRSTR(out, "build_id: " NEW_ID " }  # \xc3\xa9\xe2\x80\x94\r\n");
	ASSERT_STRSTR(out, "instance: arg0, confidence: validated }\r\n");
	ASSERT_TRUE(!memcmp(out, "\xef\xbb\xbf", 3));
	free(out);
}

TEST(test_shape_mismatch_is_an_error)
{
	const char *conf[] = { NULL }, *src[] = { NULL };
	const char *ids[1] = { NEW_ID };
	struct rebind_prov_text prov[1] = { { 0 } };
	struct rebind_edit_req req = { 2, ids, 1, conf, prov };
	const char *in = HEAD("") "  - { id: e, resource: r, kind: USE, site: { target: a, symbol: f }, instance: arg0 }\n";
	char *out = NULL, why[256];
	size_t len;

	(void)src;
	/* two targets asked for, one in the text */
	ASSERT_ERR(rebind_edit__apply(in, strlen(in), &req, &out, &len, why, sizeof(why)), -EINVAL);
	ASSERT_STRSTR(why, "targets");
	ASSERT_NULL(out);
	ASSERT_ERR(rebind_edit__apply("a: [", 4, &req, &out, &len, why, sizeof(why)), -EINVAL);
}
