/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_manifest.c: libFuzzer entry for the manifest reader (libyaml event
 * stream, tree, model, checks, JSON export) and, on short inputs, the
 * value-expression and guard parsers on their own. Whatever the bytes, it
 * must not crash, leak or hang.
 *
 *   make build/fuzz/fuzz_manifest
 *   build/fuzz/fuzz_manifest -max_total_time=180 tests/fuzz/corpus/fuzz_manifest
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest.h"

static void exercise_model(const struct manifest *m)
{
	char buf[512];
	size_t i;
	json_t *j;

	/* printers must cope with every model the reader accepts */
	j = manifest__to_json(m);
	json_decref(j);
	for (i = 0; i < m->n_events; i++) {
		pb_value__format(&m->events[i].instance, buf, sizeof(buf));
		pb_value__format(&m->events[i].units, buf, 7);
		pb_guard__format(&m->events[i].when, buf, sizeof(buf));
	}
}

static void exercise_expr(const uint8_t *data, size_t size)
{
	struct pb_value v;
	struct pb_guard g;
	struct pb_errtext err = { 0 };
	char buf[256];
	char *s;

	if (size > 256)
		return;
	s = malloc(size + 1);
	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	if (pb_value__parse(s, &v, &err) == 0) {
		struct pb_value again;

		/* the canonical form must parse back */
		if (pb_value__format(&v, buf, sizeof(buf)) > 0) {
			if (pb_value__parse(buf, &again, &err) != 0)
				abort();
			pb_value__free(&again);
		}
		pb_value__free(&v);
	}
	if (pb_guard__parse(s, &g, &err) == 0) {
		pb_guard__format(&g, buf, sizeof(buf));
		pb_guard__free(&g);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;

	if (!d)
		return 0;
	if (manifest__parse("fuzz.yaml", (const char *)data, size, &m, d) == 0)
		exercise_model(m);
	manifest__free(m);
	diags__free(d);
	exercise_expr(data, size);
	return 0;
}
