/* SPDX-License-Identifier: BSD-2-Clause */
/* samples_json.c: typed decoders of the sample file's JSON chunks
 * (samples.h): the snapshot of the programs alive when sampling began,
 * its programs and their JIT ranges, and the end chunk. Each is one
 * json_unpack_ex over the record's keys, then the range checks jansson
 * does not do (non-negative, 32-bit), named like jansson names its own
 * errors ("progs: Expected array"). A record that does not decode reads
 * as all zero: these are our own records, so a bad one is damage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/samples.h"

static int fail(json_error_t *err, const char *key, const char *what)
{
	if (err) {
		memset(err, 0, sizeof(*err));
		snprintf(err->text, sizeof(err->text), "%s: %s", key, what);
	}
	return -EINVAL;
}

static int unpack(const json_t *j, json_error_t *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = json_vunpack_ex((json_t *)j, err, 0, fmt, ap);
	va_end(ap);
	return rc ? -EINVAL : 0;
}

/* v (absent: NULL, or null) must be an array */
static int check_array(const json_t *v, const char *key, json_error_t *err)
{
	return !v || json_is_null(v) || json_is_array(v) ? 0 : fail(err, key, "Expected array");
}

static int decode_sf_snapshot(const json_t *j, struct sf_snapshot *out, json_error_t *err)
{
	json_int_t mono = 0;
	json_t *progs = NULL;

	memset(out, 0, sizeof(*out));
	if (unpack(j, err, "{s?I, s?o}", SFS_MONO_NS, &mono, SFS_PROGS, &progs))
		return -EINVAL;
	if (mono < 0)
		return fail(err, SFS_MONO_NS, "Expected a non-negative integer");
	if (check_array(progs, SFS_PROGS, err))
		return -EINVAL;
	out->mono_ns = (uint64_t)mono;
	out->progs = progs;
	return 0;
}

static int decode_sf_snapshot_prog(const json_t *j, struct sf_snapshot_prog *out, json_error_t *err)
{
	json_int_t id = 0;
	json_t *ranges = NULL;

	memset(out, 0, sizeof(*out));
	if (unpack(j, err, "{s?I, s?s, s?s, s?o}", SFP_ID, &id, SFP_TAG, &out->tag, SFP_NAME, &out->name,
		   SFP_JIT_RANGES, &ranges))
		return -EINVAL;
	if (id < 0 || id > UINT32_MAX)
		return fail(err, SFP_ID, "Expected an integer in [0, 2^32-1]");
	if (check_array(ranges, SFP_JIT_RANGES, err))
		return -EINVAL;
	out->id = (uint32_t)id;
	out->jit_ranges = ranges;
	return 0;
}

static int decode_sf_jit_range(const json_t *j, struct sf_jit_range *out, json_error_t *err)
{
	json_int_t len = 0;
	json_t *addr = NULL;
	const char *s;
	char *end;

	memset(out, 0, sizeof(*out));
	if (unpack(j, err, "{s:o, s?I}", SFR_ADDR, &addr, SFR_LEN, &len))
		return -EINVAL;
	if (len < 0 || len > UINT32_MAX)
		return fail(err, SFR_LEN, "Expected an integer in [0, 2^32-1]");
	out->len = (uint32_t)len;
	if (json_is_integer(addr) && json_integer_value(addr) >= 0) {
		out->addr = (uint64_t)json_integer_value(addr);
		return 0;
	}
	s = json_string_value(addr);
	if (!s || strncmp(s, "0x", 2))
		return fail(err, SFR_ADDR, "Expected a 0x-prefixed hex address");
	errno = 0;
	out->addr = strtoull(s + 2, &end, 16);
	if (errno || end == s + 2 || *end) {
		out->addr = 0;
		return fail(err, SFR_ADDR, "Expected a 0x-prefixed hex address");
	}
	return 0;
}

static int decode_sf_end(const json_t *j, struct sf_end *out, json_error_t *err)
{
	json_int_t mono = 0, real = 0;
	json_t *stats = NULL;

	memset(out, 0, sizeof(*out));
	if (unpack(j, err, "{s?s, s?I, s?I, s?o}", SFE_STOPPED_BY, &out->stopped_by, SFE_STOP_MONO_NS, &mono,
		   SFE_STOP_REALTIME_NS, &real, SFE_STATS, &stats))
		return -EINVAL;
	if (mono < 0 || real < 0)
		return fail(err, mono < 0 ? SFE_STOP_MONO_NS : SFE_STOP_REALTIME_NS,
			    "Expected a non-negative integer");
	if (stats && !json_is_object(stats))
		return fail(err, SFE_STATS, "Expected object");
	out->stop_mono_ns = (uint64_t)mono;
	out->stop_realtime_ns = (uint64_t)real;
	out->stats = stats;
	return 0;
}

int sf_snapshot__decode(const json_t *j, struct sf_snapshot *out, json_error_t *err)
{
	int rc = decode_sf_snapshot(j, out, err);

	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

int sf_snapshot_prog__decode(const json_t *j, struct sf_snapshot_prog *out, json_error_t *err)
{
	int rc = decode_sf_snapshot_prog(j, out, err);

	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

int sf_jit_range__decode(const json_t *j, struct sf_jit_range *out, json_error_t *err)
{
	int rc = decode_sf_jit_range(j, out, err);

	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

int sf_end__decode(const json_t *j, struct sf_end *out, json_error_t *err)
{
	int rc = decode_sf_end(j, out, err);

	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}
