/* SPDX-License-Identifier: BSD-2-Clause */
/* test_jcs.c: the canonical JSON receipts are hashed in is RFC 8785
 * (JCS) to the byte: the RFC's own examples (section 3.2.2 input and
 * output, 3.2.3 sorting, Appendix B numbers) and the corner cases
 * jansson's own encoder gets wrong (upper-case \u001F).
 */
#include <math.h>
#include <jansson.h>
#include "harness.h"
#include "receipts/canon.h"

static char *jcs_of(const char *json, unsigned int flags)
{
	json_error_t e;
	json_t *j = json_loads(json, JSON_DECODE_ANY, &e);
	char *out = NULL;

	if (!j) {
		fprintf(stderr, "  bad test input: %s\n", e.text);
		return NULL;
	}
	if (canon__jcs(j, flags, &out, NULL))
		out = NULL;
	json_decref(j);
	return out;
}

/* RFC 8785 section 3.2.2: the example object and its canonical form. */
TEST(test_jcs_rfc8785_example)
{
	char *out = jcs_of("{\n  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, "
			   "0.000000000000000000000000001],\n"
			   "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
			   "  \"literals\": [null, true, false]\n}", CANON_REALS);

	ASSERT_STREQ(out, "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
		     "\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
	free(out);
}

/* RFC 8785 section 3.2.3: members sorted by UTF-16 code units, so the
 * emoji (surrogates D83D DE00) sorts before U+FB33 although its UTF-8
 * bytes sort after. */
TEST(test_jcs_rfc8785_sorting)
{
	char *out = jcs_of("{\"\\u20ac\": \"Euro Sign\", \"\\r\": \"Carriage Return\","
			   "\"\\ufb33\": \"Hebrew Letter Dalet With Dagesh\", \"1\": \"One\","
			   "\"\\ud83d\\ude00\": \"Emoji: Grinning Face\", \"\\u0080\": \"Control\","
			   "\"\\u00f6\": \"Latin Small Letter O With Diaeresis\"}", 0);

	ASSERT_STREQ(out, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\","
		     "\"\xc3\xb6\":\"Latin Small Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\","
		     "\"\xf0\x9f\x98\x80\":\"Emoji: Grinning Face\","
		     "\"\xef\xac\xb3\":\"Hebrew Letter Dalet With Dagesh\"}");
	free(out);
}

static double from_bits(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* RFC 8785 Appendix B: IEEE 754 bit patterns and their JCS spelling. */
TEST(test_jcs_rfc8785_numbers)
{
	static const struct { uint64_t bits; const char *want; } v[] = {
		{ 0x0000000000000000ull, "0" }, { 0x8000000000000000ull, "0" },
		{ 0x0000000000000001ull, "5e-324" }, { 0x8000000000000001ull, "-5e-324" },
		{ 0x7fefffffffffffffull, "1.7976931348623157e+308" },
		{ 0xffefffffffffffffull, "-1.7976931348623157e+308" },
		{ 0x4340000000000000ull, "9007199254740992" },
		{ 0xc340000000000000ull, "-9007199254740992" },
		{ 0x4430000000000000ull, "295147905179352830000" },
		{ 0x44b52d02c7e14af5ull, "9.999999999999997e+22" },
		{ 0x44b52d02c7e14af6ull, "1e+23" },
		{ 0x44b52d02c7e14af7ull, "1.0000000000000001e+23" },
		{ 0x444b1ae4d6e2ef4eull, "999999999999999700000" },
		{ 0x444b1ae4d6e2ef4full, "999999999999999900000" },
		{ 0x444b1ae4d6e2ef50ull, "1e+21" },
		{ 0x3eb0c6f7a0b5ed8cull, "9.999999999999997e-7" },
		{ 0x3eb0c6f7a0b5ed8dull, "0.000001" },
		{ 0x41b3de4355555553ull, "333333333.3333332" },
		{ 0x41b3de4355555554ull, "333333333.33333325" },
		{ 0x41b3de4355555555ull, "333333333.3333333" },
		{ 0x41b3de4355555556ull, "333333333.3333334" },
		{ 0x41b3de4355555557ull, "333333333.33333343" },
		{ 0xbecbf647612f3696ull, "-0.0000033333333333333333" },
		{ 0x43143ff3c1cb0959ull, "1424953923781206.2" },
	};
	char out[32];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ASSERT_OK(canon__format_double(from_bits(v[i].bits), out));
		ASSERT_STREQ(out, v[i].want);
	}
	ASSERT_ERR(canon__format_double(NAN, out), -EINVAL);
	ASSERT_ERR(canon__format_double(INFINITY, out), -EINVAL);
}

/* Control characters in lower-case hex (jansson writes \u001F), the
 * short escapes, DEL, '/' and non-ASCII as is. */
TEST(test_jcs_string_escapes)
{
	json_t *j = json_stringn("\x1f\x01\x7f/\b\f\t\"\\\xc3\xa9", 11);
	char *out = NULL;

	ASSERT_NOT_NULL(j);
	ASSERT_OK(canon__jcs(j, 0, &out, NULL));
	ASSERT_STREQ(out, "\"\\u001f\\u0001\x7f/\\b\\f\\t\\\"\\\\\xc3\xa9\"");
	free(out);
	json_decref(j);
}

/* Receipts: no reals, integers within +-2^53 unless the caller (the
 * lifecycle log's clocks) allows big ones, written exactly. */
TEST(test_jcs_integer_policy)
{
	json_t *j = json_pack("{s:I}", "t", (json_int_t)9007199254740993ll);
	json_t *ok = json_pack("{s:I, s:I}", "max", (json_int_t)9007199254740992ll, "min",
			       (json_int_t)-9007199254740992ll);
	json_t *r = json_pack("[f]", 1.5);
	char *out = NULL;

	ASSERT_ERR(canon__jcs(j, 0, &out, NULL), -ERANGE);	/* what receipts are put with */
	ASSERT_OK(canon__encode(j, &out, NULL));
	ASSERT_STREQ(out, "{\"t\":9007199254740993}");
	free(out);
	ASSERT_OK(canon__jcs(ok, 0, &out, NULL));
	ASSERT_STREQ(out, "{\"max\":9007199254740992,\"min\":-9007199254740992}");
	free(out);
	ASSERT_ERR(canon__encode(r, &out, NULL), -EINVAL);
	ASSERT_OK(canon__jcs(r, CANON_REALS, &out, NULL));
	ASSERT_STREQ(out, "[1.5]");
	free(out);
	json_decref(j);
	json_decref(ok);
	json_decref(r);
}

/* Prefixes sort first; deep nesting is refused, not a stack overflow. */
TEST(test_jcs_prefix_and_depth)
{
	char *out = jcs_of("{\"ab\":1,\"a\":2,\"\":3,\"b\":{}}", 0);
	json_t *deep = json_array(), *cur = deep;
	int i;

	ASSERT_STREQ(out, "{\"\":3,\"a\":2,\"ab\":1,\"b\":{}}");
	free(out);
	for (i = 0; i < 100; i++) {
		json_t *n = json_array();

		json_array_append_new(cur, n);
		cur = n;
	}
	ASSERT_ERR(canon__encode(deep, &out, NULL), -ELOOP);
	json_decref(deep);
}
