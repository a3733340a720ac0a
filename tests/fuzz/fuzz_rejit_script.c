/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_rejit_script.c: libFuzzer entry point for `probity rejit`'s
 * scenario scripts and --config assignments (src/specializer/script.c).
 * Any bytes are parsed as a script; a success must give steps sorted by
 * time, with fields, values and mixes in range; a failure must leave no steps
 * and a message that starts with "FILE:LINE: ". The input up to its first
 * newline (or NUL) is also parsed as KEY=VAL.
 * Seeds: tests/fuzz/corpus/fuzz_rejit_script. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "specializer/script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_script s;
	struct pb_errtext err = { 0 };
	char kv[256];
	uint32_t f, v;
	size_t i, n;
	int rc;

	rc = sp_script_parse((const char *)data, size, "f.txt", &s, &err);
	if (rc == 0) {
		for (i = 0; i < s.n; i++) {
			const struct sp_step *st = &s.steps[i];

			if (i && s.steps[i - 1].t_ms > st->t_ms)
				abort();
			if (st->kind == SP_STEP_CONFIG) {
				if (st->field >= sp_n_cfg_fields || st->value < sp_cfg_fields[st->field].min ||
				    st->value > sp_cfg_fields[st->field].max)
					abort();
			} else if (st->kind != SP_STEP_TRAFFIC || st->mix >= SP_N_MIX) {
				abort();
			}
		}
		sp_script_release(&s);
	} else {
		if (s.n || s.steps || (rc == -EINVAL && strncmp(err.msg, "f.txt:", 6)))
			abort();
	}
	for (n = 0; n < size && n < sizeof(kv) - 1 && data[n] != '\n' && data[n]; n++)
		kv[n] = (char)data[n];
	kv[n] = '\0';
	if (!sp_config_parse(kv, &f, &v, &err) &&
	    (f >= sp_n_cfg_fields || v < sp_cfg_fields[f].min || v > sp_cfg_fields[f].max))
		abort();
	return 0;
}
