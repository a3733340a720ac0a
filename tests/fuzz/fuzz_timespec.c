/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_timespec.c: libFuzzer entry point for the TIME and T1..T2 syntax
 * of --at and --window (src/attribute/timespec.c): any string must parse
 * or be refused with a message, never crash or read past its end.
 * Seeds: tests/fuzz/corpus/fuzz_timespec. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/timespec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pb_time a, b;
	struct pb_errtext err;
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	err.msg[0] = 0;
	if (pb_time__parse(s, &a, &err) && !err.msg[0])
		abort();
	err.msg[0] = 0;
	if (pb_time__parse_window(s, &a, &b, &err) && !err.msg[0])
		abort();
	if (!pb_time__parse_window(s, &a, &b, &err) && a.realtime == b.realtime && a.ns > b.ns)
		abort();
	free(s);
	return 0;
}
