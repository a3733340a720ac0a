/* SPDX-License-Identifier: BSD-2-Clause */
/* args.c: option-value helpers shared by the command files (see args.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli/args.h"
#include "cli/cli.h"

int cli_parse_duration(const char *opt, const char *s, bool zero_ok, double max_s, uint64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "h", 3600 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || *s == '-' || *s == '+')
		goto bad;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		goto bad;
	v *= units[i].scale;
	if (v < 0 || v > max_s || (!zero_ok && v * 1e9 < 1))
		goto bad;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
bad:
	p_err("%s: expected a duration %s %.0f s (seconds, or a number with ms, s, m or h), found '%s'",
	      opt, zero_ok ? "from 0 to" : "above 0 and up to", max_s, s);
	return -EINVAL;
}

int cli_parse_count(const char *opt, const char *s, bool zero_ok, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *s == '+' || (!zero_ok && v == 0) || v > max) {
		p_err("%s: expected a number %d..%llu, found '%s'", opt, zero_ok ? 0 : 1,
		      (unsigned long long)max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

const char *cli_default_store(void)
{
	const char *s = getenv("PROBITY_STORE");

	return s && *s ? s : "./probity-store";
}
