/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_store.c: libFuzzer entry point for `receipts verify` over a whole
 * store (src/receipts/verify.c, store.c, normalize.c): each input builds
 * a tiny store in a fresh temporary directory and verifies it.
 *
 * The input is parts separated by "\n--\n":
 *   part 0       a receipt statement (JSON). Every string "@N" (N = 1..9)
 *                in it becomes the digest of part N, and "@G" the
 *                digest of its own predicate.generation body, so the
 *                fuzzer reaches the artifact and derived-digest checks
 *                without computing SHA-256. It is stored canonically if
 *                it parses, else as is.
 *   parts 1..N   artifacts, stored as objects.
 * The first byte of part 0, when it is not '{', is a flag byte (then
 * dropped): bit 0 log 'loaded' + 'activated' for the receipt, bit 1 plant
 * an altered object, bit 2 a stray non-digest file in objects/, bit 3 a
 * leftover in tmp/, bit 4 a second receipt naming the first as parent,
 * bit 5 a FIFO named like an object and a directory one level too deep,
 * bit 6 a FIFO as lifecycle.log (unless bit 0): neither may hang verify.
 * Then show-style resolution (receipts__find_generation,
 * store__get_json of the receipt and its parent) and verify__store run;
 * everything is freed and the directory removed every run.
 * Seeds: tests/fuzz/corpus/fuzz_store. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "receipts/canon.h"
#include "receipts/lifelog.h"
#include "receipts/receipt.h"
#include "receipts/store.h"
#include "receipts/verify.h"
#include "fuzz_tmp.h"

#define MAX_PARTS 10


static char hexes[MAX_PARTS][PB_DIGEST_HEX_LEN];

/* "@N" -> digest of part N, "@G" -> gen (if known) */
static void substitute(json_t *j, const char *gen, size_t n_parts, int depth)
{
	const char *key, *s;
	json_t *v;
	size_t i;
	void *tmp;

	if (depth > 32)
		return;
	if (json_is_object(j)) {
		json_object_foreach_safe(j, tmp, key, v) {
			s = json_string_value(v);
			if (s && s[0] == '@' && s[1] >= '1' && s[1] <= '9' && !s[2] &&
			    (size_t)(s[1] - '0') < n_parts)
				json_object_set_new(j, key, json_string(hexes[s[1] - '0']));
			else if (s && gen && !strcmp(s, "@G"))
				json_object_set_new(j, key, json_string(gen));
			else
				substitute(v, gen, n_parts, depth + 1);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			s = json_string_value(v);
			if (s && s[0] == '@' && s[1] >= '1' && s[1] <= '9' && !s[2] &&
			    (size_t)(s[1] - '0') < n_parts)
				json_array_set_new(j, i, json_string(hexes[s[1] - '0']));
			else if (s && gen && !strcmp(s, "@G"))
				json_array_set_new(j, i, json_string(gen));
			else
				substitute(v, gen, n_parts, depth + 1);
		}
	}
}

static void put_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *part[MAX_PARTS];
	size_t plen[MAX_PARTS], n = 0, i;
	char dir[128], path[512], gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN];
	char g2[PB_DIGEST_HEX_LEN], r2[PB_DIGEST_HEX_LEN];
	struct verify_result vr;
	struct pb_store *s = NULL;
	json_error_t jerr;
	json_t *stmt, *back = NULL, *e;
	const uint8_t *p = data, *end = data + size;
	unsigned flags = 0;
	bool have_gen = false;

	if (size > 8192)
		return 0;
	while (n < MAX_PARTS) {
		const uint8_t *sep = memmem(p, end - p, "\n--\n", 4);

		part[n] = p;
		plen[n] = sep ? (size_t)(sep - p) : (size_t)(end - p);
		n++;
		if (!sep)
			break;
		p = sep + 4;
	}
	if (plen[0] && part[0][0] != '{') {
		flags = part[0][0];
		part[0]++;
		plen[0]--;
	}

	snprintf(dir, sizeof(dir), "%s/fuzz_store.XXXXXX", base);
	if (!mkdtemp(dir))
		return 0;
	if (pb_store__open(dir, NULL, &s))
		goto out;
	for (i = 1; i < n; i++)
		if (pb_store__put(s, part[i], plen[i], hexes[i]))
			goto out;

	stmt = json_loadb((const char *)part[0], plen[0], JSON_REJECT_DUPLICATES, &jerr);
	if (json_is_object(stmt)) {
		substitute(stmt, NULL, n, 0);
		have_gen = receipt__generation_id(json_object_get(stmt, "predicate"), gen) == 0;
		if (have_gen)
			substitute(stmt, gen, n, 0);
		if (store__put_json(s, stmt, rec))
			pb_store__put(s, part[0], plen[0], rec);
	} else {
		pb_store__put(s, part[0], plen[0], rec);
	}
	json_decref(stmt);

	if ((flags & 1) && have_gen) {
		e = json_pack("{s:s, s:s}", "generation_id", gen, "receipt", rec);
		lifelog__append(s, LIFE_LOADED, e, NULL);
		json_decref(e);
		e = json_pack("{s:s, s:s}", "generation_id", gen, "receipt", rec);
		lifelog__append(s, LIFE_ACTIVATED, e, NULL);
		json_decref(e);
	}
	if ((flags & 16) && have_gen) {
		/* a child receipt of the same shape naming this one as parent */
		json_t *child = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}}",
					  "_type", PB_INTOTO_STATEMENT_TYPE,
					  "predicateType", PB_RECEIPT_PREDICATE_TYPE,
					  "predicate", "parent_generation_id", gen, "generation_id", "@G",
					  "generation", "parent", gen);

		if (child && !receipt__generation_id(json_object_get(child, "predicate"), g2)) {
			json_object_set_new(json_object_get(child, "predicate"), "generation_id",
					    json_string(g2));
			if (!store__put_json(s, child, r2) && (flags & 1)) {
				e = json_pack("{s:s, s:s}", "generation_id", g2, "receipt", r2);
				lifelog__append(s, LIFE_LOADED, e, NULL);
				json_decref(e);
			}
		}
		json_decref(child);
	}
	if (flags & 2) {	/* an object whose bytes do not match its name */
		snprintf(path, sizeof(path), "%s/objects/%.2s", dir, rec);
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/objects/%.2s/%.61sf", dir, rec, rec + 2);
		if (access(path, F_OK))
			put_file(path, part[0], plen[0]);
	}
	if (flags & 4) {	/* not digest-named */
		snprintf(path, sizeof(path), "%s/objects/stray", dir);
		put_file(path, "x", 1);
		snprintf(path, sizeof(path), "%s/objects/zz", dir);
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/objects/zz/short", dir);
		put_file(path, "y", 1);
	}
	if (flags & 32) {
		snprintf(path, sizeof(path), "%s/objects/%.2s", dir, rec);
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/objects/%.2s/%.61se", dir, rec, rec + 2);
		mkfifo(path, 0600);
		snprintf(path, sizeof(path), "%s/objects/%.2s/%.61sd", dir, rec, rec + 2);
		mkdir(path, 0700);
	}
	if ((flags & 64) && !(flags & 1)) {
		snprintf(path, sizeof(path), "%s/%s", dir, PB_LIFELOG_NAME);
		mkfifo(path, 0600);
	}
	if (flags & 8) {
		snprintf(path, sizeof(path), "%s/tmp/leftover.1.abcdef", dir);
		put_file(path, "z", 1);
	}

	/* as `receipts show` resolves and reads */
	if (have_gen && !receipts__find_generation(s, gen, g2, r2) && !store__get_json(s, r2, &back)) {
		const char *par = json_string_value(
			json_object_get(json_object_get(back, "predicate"), "parent_generation_id"));
		json_t *pj = NULL;

		if (par && !receipts__find_generation(s, par, g2, r2))
			store__get_json(s, r2, &pj);
		json_decref(pj);
	}
	json_decref(back);

	if (verify__store(s, &vr) == 0) {
		json_array_foreach(vr.problems, i, e)
			if (!json_string_value(json_object_get(e, "where")) ||
			    !json_string_value(json_object_get(e, "what")))
				abort();
	}
	verify_result__clear(&vr);
out:
	pb_store__free(s);
	fuzz_tmp_remove(dir);
	return 0;
}
