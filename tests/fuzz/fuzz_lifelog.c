/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_lifelog.c: libFuzzer entry point for the receipts lifecycle log
 * (src/receipts/lifelog.c over common/framing.c). Any bytes as
 * DIR/lifecycle.log must read, chain-check, verify and resolve without a
 * crash: lifelog__read (every entry, every problem through the callback),
 * receipts__find_generation (what `receipts show/diff` resolve with),
 * verify__store (the log half of `receipts verify`), and lifelog__append
 * (which re-reads the chain and reopens the file for appending through
 * frame_writer__open_append; a broken log must be refused, a good one
 * extended so that it still reads back clean).
 * The first input byte picks how the bytes become a log, so that the
 * fuzzer gets past the chunk CRCs and the hash chain to the entries:
 *   'C' + file    the rest as the file, its framing made valid
 *                 (fuzz_frame.h: magic, header length, chunk lengths, CRCs)
 *   'S' + lines   one entry per '\n'-separated line: line[0] & 7 is the
 *                 chunk type, the rest the payload; a JSON object gets
 *                 "kind", "seq" and "prev" set right (unless line[0] &
 *                 0x80) and is stored canonically, anything else as is
 *   otherwise     the input is the file as it is (raw seeds start 'P')
 * Seeds: tests/fuzz/corpus/fuzz_lifelog (clean logs, a torn tail, a bad
 * CRC, a broken chain, bad headers, entries of odd shapes). */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>
#include "receipts/canon.h"
#include "receipts/lifelog.h"
#include "receipts/receipt.h"
#include "receipts/store.h"
#include "receipts/verify.h"
#include "fuzz_tmp.h"
#include "fuzz_frame.h"

static struct pb_store *store;
static char log_path[256];

static size_t n_problems;

static void on_problem(void *ctx, const char *where, const char *what)
{
	(void)ctx;
	/* problems name where and what: both must be proper strings */
	n_problems += strlen(where) + strlen(what) > 0;
}

static void emit(FILE *f, uint32_t type, const void *buf, size_t len)
{
	uint8_t h[16];

	fuzz_frame_put32(h, 0x4b434250u);
	fuzz_frame_put32(h + 4, type);
	fuzz_frame_put32(h + 8, (uint32_t)len);
	fuzz_frame_put32(h + 12, fuzz_frame_crc(type, (uint32_t)len, buf));
	fwrite(h, 1, 16, f);
	fwrite(buf, 1, len, f);
}

/* 'S': entries from lines */
static void write_structured(FILE *f, const uint8_t *d, size_t size)
{
	char prev[PB_DIGEST_HEX_LEN];
	uint8_t h[16];
	long long seq = 0;

	memcpy(h, PB_LIFELOG_MAGIC, 8);
	fuzz_frame_put32(h + 8, PB_LIFELOG_VERSION);
	fuzz_frame_put32(h + 12, 16);
	fwrite(h, 1, 16, f);
	memset(prev, '0', 64);
	prev[64] = 0;
	while (size) {
		const uint8_t *nl = memchr(d, '\n', size);
		size_t l = nl ? (size_t)(nl - d) : size;
		json_error_t jerr;
		json_t *e = NULL;
		char *txt = NULL;
		size_t tl = 0;

		if (l) {
			uint32_t type = d[0] & 7;

			e = json_loadb((const char *)d + 1, l - 1, 0, &jerr);
			if (json_is_object(e) && !(d[0] & 0x80)) {
				if (lifelog__kind_name(type))
					json_object_set_new(e, "kind", json_string(lifelog__kind_name(type)));
				json_object_set_new(e, "seq", json_integer(seq));
				json_object_set_new(e, "prev", json_string(prev));
			}
			if (!e || canon__encode(e, &txt, &tl)) {
				emit(f, type, d + 1, l - 1);
				pb_sha256_hex(d + 1, l - 1, prev);
			} else {
				emit(f, type, txt, tl);
				pb_sha256_hex(txt, tl, prev);
			}
			free(txt);
			json_decref(e);
			seq++;
		}
		d += l + (nl ? 1 : 0);
		size -= l + (nl ? 1 : 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lifelog_problem_cb cb = { on_problem, NULL };
	char gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN], hash[PB_DIGEST_HEX_LEN];
	char lookup[PB_DIGEST_HEX_LEN];
	struct verify_result vr;
	json_t *entries = NULL, *e, *entry;
	size_t i;
	FILE *f;
	int rc, rc2, sel;

	const char *dir = fuzz_tmp_scratch("fuzz_lifelog");

	/* an empty store each run (one scratch directory, emptied at the
	 * end), opened through a fresh handle */
	if (!dir)
		return 0;
	if (pb_store__open(dir, NULL, &store))
		goto out;
	snprintf(log_path, sizeof(log_path), "%s/%s", dir, PB_LIFELOG_NAME);
	f = fopen(log_path, "wb");
	if (!f)
		goto out;
	if (size && data[0] == 'S') {
		write_structured(f, data + 1, size - 1);
	} else if (size && data[0] == 'C') {
		uint8_t *b = malloc(size);

		if (b) {
			memcpy(b, data + 1, size - 1);
			fuzz_frame_fixup(b, size - 1, PB_LIFELOG_MAGIC);
			fwrite(b, 1, size - 1, f);
			free(b);
		}
	} else {
		fwrite(data, 1, size, f);
	}
	fclose(f);

	/* Every input is read (lifelog__read: the decoders). A clean log
	 * then goes through all three consumers, each of which re-reads and
	 * decodes the whole log: the lookups, the verify and the append. A
	 * log with problems goes through ONE, picked by the input's length
	 * mod 3 (0 lookups, 1 verify, 2 append): all three on every input
	 * was ~6 decodes of the log per execution (perf: the target's time);
	 * the fuzzer reaches each through the length, and the seed corpus
	 * holds broken logs of every length class (padded copies merged with
	 * -merge=1). */
	rc = lifelog__read(store, &entries, &cb);
	sel = rc == 0 ? 3 : (int)(size % 3);
	/* ONE lookup per input, as `receipts show` resolves one name: the
	 * generation id (whole) or the receipt's 6-digit prefix of entry 0
	 * or 1, or "000000", picked by (size / 3) % 5 (independent of the
	 * consumer pick); what is not there falls back to "000000". Each
	 * lookup re-reads and decodes the whole log and matches every
	 * entry, so found, not found and ambiguous are all reachable; the
	 * five lookups of every clean log were ~25 % of a run (perf). */
	lookup[0] = 0;
	if (rc >= 0) {
		size_t pick = size / 3 % 5;

		json_array_foreach(entries, i, e) {
			const char *gid = json_string_value(json_object_get(e, "generation_id"));
			const char *rid = json_string_value(json_object_get(e, "receipt"));
			const char *h = json_string_value(json_object_get(e, "_hash"));

			if (!h || !pb_is_digest_hex(h))
				abort();	/* every entry gets its own digest */
			if (i >= 2)
				continue;
			if (pick == 2 * i && gid && strlen(gid) >= 6)
				snprintf(lookup, sizeof(lookup), "%.64s", gid);
			if (pick == 2 * i + 1 && rid && strlen(rid) >= 6)
				snprintf(lookup, sizeof(lookup), "%.6s", rid);
		}
	}
	json_decref(entries);
	if (sel == 3 || sel == 0)
		receipts__find_generation(store, lookup[0] ? lookup : "000000", gen, rec);

	/* the log half of `receipts verify` (the store has no objects) */
	if (sel == 3 || sel == 1) {
		if (verify__store(store, &vr) == 0) {
			json_t *p;

			json_array_foreach(vr.problems, i, p)
				if (!json_string_value(json_object_get(p, "where")) ||
				    !json_string_value(json_object_get(p, "what")))
					abort();
		}
		verify_result__clear(&vr);
	}
	if (sel != 3 && sel != 2)
		goto out;

	/* append: refused on a broken log, and on a good one the result
	 * reads back clean with one more entry */
	entry = json_pack("{s:s}", "note", "fuzz");
	rc2 = lifelog__append(store, LIFE_OBSERVER, entry, hash);
	json_decref(entry);
	if (rc > 0 && rc2 == 0)
		abort();	/* a log with problems was extended */
	if (rc == 0 && rc2 == 0) {
		n_problems = 0;
		rc = lifelog__read(store, &entries, &cb);
		if (rc != 0) {
			fprintf(stderr, "clean log + append reads back with %d problems\n", rc);
			abort();
		}
		json_decref(entries);
	}
out:
	pb_store__free(store);
	store = NULL;
	fuzz_tmp_reset(dir);
	return 0;
}
