/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_rebind_edit.c: libFuzzer entry for the text editor of `manifest
 * rebind` (src/contract/rebind_edit.c): on every input the manifest reader
 * accepts, replacing each target's build_id and every event's confidence
 * and provenance must give a text that parses again into as many targets
 * and events, with the new values. Whatever the bytes, it must not crash,
 * leak or hang; a clean manifest whose edit does not parse traps.
 *
 *   make build/fuzz/fuzz_rebind_edit
 *   build/fuzz/fuzz_rebind_edit -max_total_time=180 tests/fuzz/corpus/fuzz_rebind_edit
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest.h"
#include "contract/rebind_int.h"

#define NEW_ID "0123456789abcdef0123456789abcdef01234567"

static void check_edit(const char *buf, size_t len, const struct manifest *m)
{
	const char **ids = calloc(m->n_targets + 1, sizeof(*ids));
	const char **conf = calloc(m->n_events + 1, sizeof(*conf));
	struct rebind_prov_text *prov = calloc(m->n_events + 1, sizeof(*prov));
	struct rebind_edit_req req = { m->n_targets, ids, m->n_events, conf, prov };
	struct manifest *m2 = NULL;
	struct diags *d = diags__new();
	char *out = NULL, why[256];
	size_t out_len, i;

	if (!ids || !conf || !prov || !d)
		goto out;
	for (i = 0; i < m->n_targets; i++)
		ids[i] = NEW_ID;
	for (i = 0; i < m->n_events; i++) {
		conf[i] = i % 3 == 2 ? NULL : "validated";
		prov[i].source = i % 2 ? "runtime" : NULL;
		prov[i].evidence = "a \"quoted\" \\ line: with # and\ttab";
		prov[i].date = "2026-12-01";
	}
	if (rebind_edit__apply(buf, len, &req, &out, &out_len, why, sizeof(why)))
		goto out;
	if (manifest__parse("edited", out, out_len, &m2, d) || m2->n_events != m->n_events ||
	    m2->n_targets != m->n_targets)
		__builtin_trap();
	for (i = 0; i < m2->n_events; i++)
		if ((conf[i] && m2->events[i].confidence != PB_CONF_VALIDATED) ||
		    (prov[i].source && m2->events[i].provenance.source != PB_PROV_RUNTIME))
			__builtin_trap();
out:
	manifest__free(m2);
	diags__free(d);
	free(out);
	free(ids);
	free(conf);
	free(prov);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;

	if (!d)
		return 0;
	if (!manifest__parse("fuzz", (const char *)data, size, &m, d))
		check_edit((const char *)data, size, m);
	manifest__free(m);
	diags__free(d);
	return 0;
}
