/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_receipt.c: libFuzzer entry point for reading a stored receipt
 * object and for the canonical JSON encoder (src/receipts/canon.c,
 * generation.c, normalize.c). Any bytes are parsed the way
 * store__get_json reads an object for `receipts show/verify/diff`
 * (json_loadb, JSON_REJECT_DUPLICATES), then:
 *  - receipt__is_receipt / receipt__generation_id on the statement and
 *    every field verify recomputes from (verifier result digest, the
 *    verifier log and JIT normalizations over the input bytes with the
 *    statement's own jit.func_lens);
 *  - the canonical encoder round trip: canon(parse(canon(j))) must equal
 *    canon(j) byte for byte and digest the same (a receipt hashed twice
 *    must not change its name).
 * Seeds: tests/fuzz/corpus/fuzz_receipt (receipts, odd shapes, reals,
 * deep nesting, unicode). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "receipts/canon.h"
#include "receipts/normalize.h"
#include "receipts/receipt.h"
#include "receipts/store.h"

static void check_canon(const json_t *j)
{
	char *a = NULL, *b = NULL, ha[PB_DIGEST_HEX_LEN], hb[PB_DIGEST_HEX_LEN];
	json_error_t jerr;
	size_t la, lb;
	json_t *j2;
	int err;

	err = canon__encode(j, &a, &la);
	if (err) {
		if (canon__digest(j, ha) == 0)
			abort();	/* digest must refuse what encode refuses */
		return;
	}
	if (la != strlen(a))
		abort();
	/* canonical JSON reads back (decode-any: a bare scalar is allowed
	 * in nested positions only, but canon__encode accepts any) */
	j2 = json_loadb(a, la, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!j2) {
		fprintf(stderr, "canonical encoding does not parse: %s\n%s\n", jerr.text, a);
		abort();
	}
	if (!json_equal((json_t *)j, j2)) {
		fprintf(stderr, "canonical encoding changes the value\n");
		abort();
	}
	if (canon__encode(j2, &b, &lb)) {
		fprintf(stderr, "canonical encoding re-encodes with an error\n");
		abort();
	}
	if (la != lb || memcmp(a, b, la)) {
		fprintf(stderr, "canonical encoding not stable:\n%s\n%s\n", a, b);
		abort();
	}
	if (canon__digest(j, ha) || canon__digest(j2, hb) || strcmp(ha, hb))
		abort();
	json_decref(j2);
	free(a);
	free(b);
}

/* With reals and big integers allowed (RFC 8785 numbers): the bytes
 * read back and re-encode to themselves (a real 1e3 reads back as the
 * integer 1000: JCS does not tell them apart, so values are compared
 * by their encoding). */
static void check_jcs_numbers(const json_t *j)
{
	char *a = NULL, *b = NULL;
	json_error_t jerr;
	size_t la, lb;
	json_t *j2;

	if (canon__jcs(j, CANON_REALS | CANON_BIG_INTS, &a, &la))
		return;
	/* a real >= 2^63 prints as an integer jansson cannot read back */
	j2 = json_loadb(a, la, JSON_DECODE_ANY, &jerr);
	if (j2 && (canon__jcs(j2, CANON_REALS | CANON_BIG_INTS, &b, &lb) || la != lb ||
		   memcmp(a, b, la))) {
		fprintf(stderr, "JCS numbers not stable:\n%s\n%s\n", a, b ? b : "(none)");
		abort();
	}
	json_decref(j2);
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hex[PB_DIGEST_HEX_LEN];
	json_error_t jerr;
	json_t *j, *p, *ver, *vr;
	uint8_t *copy;
	char *s, *n;

	/* as store__get_json reads an object */
	j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (j) {
		p = json_object_get(j, "predicate");
		(void)receipt__is_receipt(j);
		if (receipt__generation_id(p, hex) == 0 && !pb_is_digest_hex(hex))
			abort();
		ver = json_object_get(p, "verifier");
		/* as verify recomputes the verifier result digest */
		vr = json_pack("{s:O, s:O, s:O, s:O}", "accepted", json_object_get(ver, "accepted"),
			       "log_level", json_object_get(ver, "log_level"),
			       "verified_insns", json_object_get(ver, "verified_insns"),
			       "log_normalized_digest", json_object_get(ver, "log_normalized_digest"));
		if (vr)
			canon__digest(vr, hex);
		json_decref(vr);
		/* the artifact normalizations verify runs, with this receipt's
		 * func_lens over the input bytes as the JIT image */
		if (size <= 1024)
			normalize__native_digest(data, size,
						 json_object_get(json_object_get(p, "jit"), "func_lens"), hex);
		check_canon(j);
		check_jcs_numbers(j);
		json_decref(j);
	}
	/* bare values too (canon__encode is JSON_ENCODE_ANY) */
	j = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
	if (j) {
		check_canon(j);
		check_jcs_numbers(j);
		json_decref(j);
	}

	/* artifacts verify reads: a verifier log (NUL-terminated by
	 * pb_store__get) and xlated instructions of any length */
	s = malloc(size + 1);
	copy = malloc(size + 1);
	if (s && copy) {
		memcpy(s, data, size);
		s[size] = 0;
		n = normalize__verifier_log(s);
		if (n && strlen(n) > strlen(s))
			abort();
		free(n);
		memcpy(copy, data, size);
		normalize__bpf_insns(copy, size);
	}
	free(s);
	free(copy);
	return 0;
}
