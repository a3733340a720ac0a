/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_envelope.c: libFuzzer entry point for the envelope parser
 * (src/validate/envelope_json.c): any bytes must parse or fail with a message,
 * never crash. What parses is bound-checked against a fixed manifest,
 * written back to JSON and, when its metrics exist in that manifest, used
 * to check a few snapshots and records. Seeds: tests/fuzz/corpus/fuzz_envelope
 * (a trained envelope, one per metric type, broken shapes, bad JSON). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/envelope.h"

static const char manifest_yaml[] =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - id: app\n"
	"    binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.pool, class: pool, units: pages, capacity: 16 }\n"
	"events:\n"
	"  - { id: p_wait, resource: t.pool, kind: WAIT, site: { symbol: pw, at: span }, instance: arg0 }\n"
	"  - { id: p_get, resource: t.pool, kind: ACQUIRE, site: { symbol: pg }, instance: arg0, when: arg0 != 0 }\n"
	"  - { id: p_use, resource: t.pool, kind: USE, site: { symbol: pu }, instance: arg0 }\n"
	"  - { id: p_put, resource: t.pool, kind: RELEASE, site: { symbol: pp }, instance: arg0 }\n";

static struct manifest *m;

static void feed(struct envelope_check *chk)
{
	struct pb_desc_stats cum[4];
	struct pb_rec_resource r = { .hdr = { .type = PB_REC_RESOURCE, .size = sizeof(r) } };
	uint64_t ts = 1;
	int i, d;

	memset(cum, 0, sizeof(cum));
	for (i = 0; i < 12; i++) {
		for (d = 0; d < 4; d++) {
			cum[d].hits += 100 + (uint64_t)d;
			cum[d].events += 90 + (uint64_t)(i * d);
			cum[d].units += 90;
			cum[d].new_generations += 50;
			cum[d].hist[(i + d) % PB_HIST_BUCKETS] += 40;
			r.descriptor = (uint32_t)d;
			r.instance = (uint64_t)i * 8 + (uint64_t)d;
			envelope_check__record(chk, &r, sizeof(r));
		}
		ts += 300000000ull;
		envelope_check__snapshot(chk, ts, cum, 4);
	}
	json_decref(envelope_check__to_json(chk));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct envelope_binding b = { .n_targets = 1 };
	struct pb_envelope *env;
	struct envelope_check *chk;
	struct pb_errtext err = { 0 };
	json_t *doc;

	if (!m) {
		struct diags *d = diags__new();

		if (manifest__parse("t.yaml", manifest_yaml, sizeof(manifest_yaml) - 1, &m, d))
			abort();
		diags__free(d);
	}
	env = envelope__parse("fuzz.json", data, size, &err);
	if (!env) {
		if (!err.msg[0])
			abort();	/* every refusal says why */
		return 0;
	}
	doc = envelope__to_json(env);
	json_decref(doc);
	memcpy(b.manifest_sha256, m->digest, 32);
	strcpy(b.build_id[0], "0123456789abcdef");
	/* the fuzzer cannot guess the digest: check the metrics anyway by
	 * trying the binding first (refusal must be clean), then a check */
	envelope__check_binding(env, m, &b, &err);
	chk = envelope_check__new(env, m);
	if (chk) {
		feed(chk);
		envelope_check__free(chk);
	}
	envelope__free(env);
	return 0;
}
