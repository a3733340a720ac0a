/* SPDX-License-Identifier: BSD-2-Clause */
/* timespec.c: the TIME syntax of `--at` and `--window T1..T2`
 * (docs/attribution.md "Times"):
 *   NS | mono:NS          CLOCK_MONOTONIC nanoseconds
 *   S.FRAC | mono:S.FRAC  CLOCK_MONOTONIC seconds (perf script's times)
 *   @S[.FRAC]             CLOCK_REALTIME seconds since the epoch
 *   YYYY-MM-DDTHH:MM:SS[.FRAC]Z   CLOCK_REALTIME, UTC
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "attribute/timespec.h"

static int bad(struct pb_errtext *err, const char *s, const char *why)
{
	pb_errtext__set(err, "time '%.64s': %s (expected NS, mono:NS, S.FRAC, @S.FRAC or YYYY-MM-DDTHH:MM:SS[.FRAC]Z)",
			s, why);
	return -EINVAL;
}

/* digits -> u64; *end after them; -1 on overflow or none */
static int digits(const char *p, const char **end, uint64_t *v, int *ndig)
{
	uint64_t x = 0;
	int n = 0;

	while (*p >= '0' && *p <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
		p++;
		n++;
	}
	*end = p;
	*v = x;
	if (ndig)
		*ndig = n;
	return n ? 0 : -1;
}

/* S[.FRAC] seconds -> ns */
static int seconds(const char *p, const char **end, uint64_t *ns)
{
	uint64_t sec, frac = 0;
	int nd = 0;

	if (digits(p, &p, &sec, NULL) || sec > UINT64_MAX / 1000000000ull - 1)
		return -1;
	if (*p == '.') {
		const char *q = p + 1;
		uint64_t f = 0;

		nd = 0;
		while (*q >= '0' && *q <= '9') {
			if (nd < 9) {
				f = f * 10 + (uint64_t)(*q - '0');
				nd++;
			}
			q++;
		}
		if (q == p + 1)
			return -1;
		while (nd < 9) {
			f *= 10;
			nd++;
		}
		frac = f;
		p = q;
	}
	*end = p;
	*ns = sec * 1000000000ull + frac;
	return 0;
}

int pb_time__parse(const char *s, struct pb_time *t, struct pb_errtext *err)
{
	const char *p = s, *end;
	uint64_t v;

	memset(t, 0, sizeof(*t));
	if (!s || !*s)
		return bad(err, s ?: "", "empty");
	if (!strncmp(p, "mono:", 5)) {
		p += 5;
		if (strchr(p, '.')) {
			if (seconds(p, &end, &v) || *end)
				return bad(err, s, "bad seconds");
		} else if (digits(p, &end, &v, NULL) || *end) {
			return bad(err, s, "bad nanoseconds");
		}
		t->ns = v;
		return 0;
	}
	if (*p == '@') {
		if (seconds(p + 1, &end, &v) || *end)
			return bad(err, s, "bad epoch seconds");
		t->ns = v;
		t->realtime = true;
		return 0;
	}
	if (strchr(p, '-') && strchr(p, 'T')) {
		struct tm tm;
		uint64_t frac = 0;
		time_t sec;
		int n = 0, y, mo, d, h, mi, se;

		if (sscanf(p, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 || n != 19)
			return bad(err, s, "bad date/time");
		if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 ||
		    h < 0 || mi < 0 || se < 0)
			return bad(err, s, "date/time field out of range");
		p += n;
		if (*p == '.') {
			const char *q = p + 1;
			int nd = 0;

			while (*q >= '0' && *q <= '9') {
				if (nd < 9) {
					frac = frac * 10 + (uint64_t)(*q - '0');
					nd++;
				}
				q++;
			}
			if (q == p + 1)
				return bad(err, s, "bad fraction");
			while (nd++ < 9)
				frac *= 10;
			p = q;
		}
		if (strcmp(p, "Z") && strcmp(p, "+00:00"))
			return bad(err, s, "only UTC (Z) is accepted");
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = h;
		tm.tm_min = mi;
		tm.tm_sec = se;
		sec = timegm(&tm);
		if (sec < 0)
			return bad(err, s, "before 1970");
		t->ns = (uint64_t)sec * 1000000000ull + frac;
		t->realtime = true;
		return 0;
	}
	if (!digits(p, &end, &v, NULL) && *end == '.') {	/* S.FRAC: perf script's seconds */
		if (seconds(p, &end, &v) || *end)
			return bad(err, s, "bad seconds");
		t->ns = v;
		return 0;
	}
	if (digits(p, &end, &v, NULL) || *end)
		return bad(err, s, "not a time");
	t->ns = v;
	return 0;
}

int pb_time__parse_window(const char *s, struct pb_time *t1, struct pb_time *t2, struct pb_errtext *err)
{
	const char *dots = s ? strstr(s, "..") : NULL;
	char a[128];
	int rc;

	if (!dots || dots == s || !dots[2]) {
		pb_errtext__set(err, "window '%.64s': expected T1..T2", s ?: "");
		return -EINVAL;
	}
	if ((size_t)(dots - s) >= sizeof(a)) {
		pb_errtext__set(err, "window '%.64s': first time too long", s);
		return -EINVAL;
	}
	memcpy(a, s, dots - s);
	a[dots - s] = 0;
	if ((rc = pb_time__parse(a, t1, err)) || (rc = pb_time__parse(dots + 2, t2, err)))
		return rc;
	if (t1->realtime == t2->realtime && t1->ns > t2->ns) {
		pb_errtext__set(err, "window '%.64s': T1 is after T2", s);
		return -EINVAL;
	}
	return 0;
}
