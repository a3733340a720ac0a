/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_records.c: libFuzzer entry for the analysis (src/analyze/): arbitrary
 * bytes as a stream of ring-buffer records, with snapshots cut from the
 * same bytes, then the findings, JSON, text and Perfetto printers. Whatever
 * the bytes, it must not crash, leak, hang or read past a record.
 *
 *   make build/fuzz/fuzz_records
 *   build/fuzz/fuzz_records -max_total_time=180 tests/fuzz/corpus/fuzz_records
 *
 * Input: byte 0 = options (bit 0: snapshots on, bit 1: tiny long-hold
 * threshold), then records back to back; a record whose hdr.size is 0xffff
 * or more is read as a snapshot when snapshots are on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "analyze/pictures.h"

static const char manifest_yaml[] =
	"manifest: 1\n"
	"name: f\n"
	"targets:\n"
	"  - binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: f.pool, class: pool, units: pages, capacity: 16 }\n"
	"  - { name: f.tok, class: credit, units: tokens, shared: true, generation: counter }\n"
	"events:\n"
	"  - { id: w, resource: f.pool, kind: WAIT, site: { symbol: pw, at: span }, instance: arg0, confidence: validated }\n"
	"  - { id: a, resource: f.pool, kind: ACQUIRE, site: { symbol: pa }, instance: arg0, confidence: validated }\n"
	"  - { id: u, resource: f.pool, kind: USE, site: { symbol: pu }, instance: arg0, confidence: candidate }\n"
	"  - { id: r, resource: f.pool, kind: RELEASE, site: { symbol: pr }, instance: arg0, confidence: validated }\n"
	"  - { id: ta, resource: f.tok, kind: ACQUIRE, site: { symbol: ta }, instance: arg0, generation: arg1, confidence: validated }\n"
	"  - { id: tr, resource: f.tok, kind: RELEASE, site: { symbol: tr }, instance: arg0, generation: arg1, confidence: validated }\n";

/* as big as the biggest record layout in engine/events.h */
#define REC_COPY_MAX sizeof(union pb_rec_any)

static struct manifest *m;
static FILE *devnull;

static void setup(void)
{
	struct diags *d = diags__new();

	if (manifest__parse("f.yaml", manifest_yaml, sizeof(manifest_yaml) - 1, &m, d) || !m)
		abort();
	diags__free(d);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct analysis_opts o = { .max_items = 4096 };
	struct analysis *a;
	size_t off = 1;
	json_t *j;
	uint8_t flags;

	if (!m)
		setup();
	if (!size)
		return 0;
	flags = data[0];
	if (flags & 2)
		o.long_hold_ns = 1000;
	a = analysis__new(m, &o);
	if (!a)
		return 0;
	if (flags & 4)
		analysis__set_confidence(a, 1, (enum pb_confidence)(flags >> 4) % 5);
	while (off < size) {
		size_t rest = size - off, step, clen;
		struct pb_rec_hdr h = { 0 };
		uint8_t *copy;

		memcpy(&h, data + off, rest < sizeof(h) ? rest : sizeof(h));
		if ((flags & 1) && h.size >= 0xffff) {
			size_t nd = (data[off] % 7), nr = (rest > 1 ? data[off + 1] : 0) % 3;
			size_t need = nd * sizeof(struct pb_desc_stats) + nr * sizeof(struct pb_res_stats) +
				      sizeof(struct pb_engine_stats);

			if (rest >= need) {
				struct pb_desc_stats *ds = calloc(nd + 1, sizeof(*ds));
				struct pb_res_stats *rs = calloc(nr + 1, sizeof(*rs));
				struct pb_engine_stats es;

				if (ds && rs) {
					memcpy(ds, data + off, nd * sizeof(*ds));
					memcpy(rs, data + off + nd * sizeof(*ds), nr * sizeof(*rs));
					memcpy(&es, data + off + nd * sizeof(*ds) + nr * sizeof(*rs), sizeof(es));
					analysis__add_snapshot(a, h.ts_ns, ds, nd, rs, nr, &es);
				}
				free(ds);
				free(rs);
				step = need ? need : 1;
			} else {
				step = rest;
			}
			off += step;
			continue;
		}
		/* An exact-size heap copy: ASan sees any read past the record.
		 * A record that fits is passed as the ring buffer and the trace
		 * reader pass it (len == hdr.size); one whose size does not fit
		 * gets the rest of the input, at most REC_COPY_MAX bytes (any
		 * layout fits): the verdict is the same as with the whole rest
		 * (unknown type; malformed: len < header, size > len or size <
		 * layout), as copy_record decides before reading past the
		 * header. Copying the whole rest for every record made a 38 KB
		 * input O(n^2) (~1 s under ASan). */
		clen = h.size >= sizeof(h) && h.size <= rest ? h.size : rest < REC_COPY_MAX ? rest : REC_COPY_MAX;
		copy = malloc(clen ? clen : 1);
		if (!copy)
			break;
		memcpy(copy, data + off, clen);
		analysis__add_record(a, (const struct pb_rec_hdr *)copy, clen);
		step = h.size >= 8 && h.size <= rest ? h.size : sizeof(h) <= rest ? sizeof(h) : rest;
		free(copy);
		off += step;
	}
	analysis__finish(a);
	j = analysis__to_json(a);
	json_decref(j);
	analysis__print(a, devnull, 0);
	export__perfetto(a, devnull, NULL);
	pictures__print(a, devnull);
	json_decref(pictures__json(a));
	analysis__free(a);
	return 0;
}
