/* SPDX-License-Identifier: BSD-2-Clause */
/* perfscript.c: samples from `perf script` text of a `perf record -k mono`
 * session (docs/attribution.md "perf script input"). Accepted layouts:
 *   perf script -F time,cpu,pid,tid,ip,sym   "PID/TID [CPU] S.FRAC: IP SYM"
 *   perf script (default)                    "COMM TID [CPU] S.FRAC: PERIOD EVENT: IP SYM+OFF (DSO)"
 * and the same with --ns, comm added, or fields left out, as long as a
 * line has its time ("S.FRAC:") followed by the instruction pointer. The
 * time is the session's clock: with -k mono, CLOCK_MONOTONIC.
 * Lines without a time (headers, blank lines, call-chain lines) are
 * skipped; a sample line that does not parse is an error naming it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/perfscript.h"

#define PS_MAX_TOK 32

static bool is_time_tok(const char *t, size_t n)
{
	size_t i = 0, d1 = 0, d2 = 0;

	while (i < n && t[i] >= '0' && t[i] <= '9')
		i++, d1++;
	if (!d1 || i >= n || t[i] != '.')
		return false;
	i++;
	while (i < n && t[i] >= '0' && t[i] <= '9')
		i++, d2++;
	return d2 && i == n - 1 && t[i] == ':';
}

static bool parse_u64(const char *t, size_t n, int base, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!n || n > (base == 16 ? 16 : 19))
		return false;
	for (i = 0; i < n; i++) {
		int d;

		if (t[i] >= '0' && t[i] <= '9')
			d = t[i] - '0';
		else if (base == 16 && t[i] >= 'a' && t[i] <= 'f')
			d = t[i] - 'a' + 10;
		else if (base == 16 && t[i] >= 'A' && t[i] <= 'F')
			d = t[i] - 'A' + 10;
		else
			return false;
		x = x * base + d;
	}
	*v = x;
	return true;
}

static uint64_t time_ns(const char *t, size_t n)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0;
	int nd = 0;

	while (t[i] != '.')
		sec = sec * 10 + (uint64_t)(t[i++] - '0');
	for (i++; i < n - 1; i++) {
		if (nd < 9) {
			frac = frac * 10 + (uint64_t)(t[i] - '0');
			nd++;
		}
	}
	while (nd++ < 9)
		frac *= 10;
	return sec * 1000000000ull + frac;
}

static int parse_line(const char *line, size_t len, unsigned long lineno, struct ps_sample *s,
		      char *symbuf, size_t symsz, struct pb_errtext *err)
{
	const char *tok[PS_MAX_TOK];
	size_t tl[PS_MAX_TOK], n = 0, i, ti = SIZE_MAX, k;
	uint64_t v;

	for (i = 0; i < len && n < PS_MAX_TOK;) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i >= len)
			break;
		tok[n] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			i++;
		tl[n] = line + i - tok[n];
		n++;
	}
	for (i = 0; i < n; i++) {
		if (is_time_tok(tok[i], tl[i])) {
			ti = i;
			break;
		}
	}
	if (ti == SIZE_MAX)
		return 0;	/* not a sample line */
	if (tl[ti] > 22) {
		pb_errtext__set(err, "line %lu: time '%.*s' out of range", lineno, (int)tl[ti], tok[ti]);
		return -EBADMSG;
	}
	memset(s, 0, sizeof(*s));
	s->time = time_ns(tok[ti], tl[ti]);
	/* before the time: [CPU], PID/TID or TID, and the command */
	for (i = 0; i < ti; i++) {
		const char *t = tok[i], *slash;

		if (tl[i] >= 3 && t[0] == '[' && t[tl[i] - 1] == ']' && parse_u64(t + 1, tl[i] - 2, 10, &v)) {
			s->cpu = (uint32_t)v;
			s->has_cpu = true;
		} else if ((slash = memchr(t, '/', tl[i])) && parse_u64(t, slash - t, 10, &v)) {
			uint64_t tid;

			if (parse_u64(slash + 1, t + tl[i] - slash - 1, 10, &tid)) {
				s->pid = (uint32_t)v;
				s->tid = (uint32_t)tid;
			}
		} else if (parse_u64(t, tl[i], 10, &v) && v <= UINT32_MAX) {
			s->tid = (uint32_t)v;	/* the default layout prints the tid */
			if (!s->pid)
				s->pid = (uint32_t)v;
		}
	}
	/* after the time: [PERIOD] [EVENT:] IP [SYM[+OFF]] [(DSO)] */
	k = ti + 1;
	for (i = k; i < n && i < k + 3; i++) {
		if (tl[i] > 1 && tok[i][tl[i] - 1] == ':') {
			k = i + 1;
			break;
		}
	}
	if (k >= n || !parse_u64(tok[k], tl[k], 16, &s->ip)) {
		pb_errtext__set(err, "line %lu: expected an instruction pointer (hex) after the time and event, found '%.*s'",
				lineno, k < n ? (int)(tl[k] > 40 ? 40 : tl[k]) : 6, k < n ? tok[k] : "(none)");
		return -EBADMSG;
	}
	if (k + 1 < n && tok[k + 1][0] != '(') {
		const char *t = tok[k + 1];
		size_t l = tl[k + 1], j;

		for (j = 0; j + 2 < l; j++) {	/* sym+0x1f */
			if (t[j] == '+' && t[j + 1] == '0' && t[j + 2] == 'x') {
				l = j;
				break;
			}
		}
		if (l >= symsz)
			l = symsz - 1;
		memcpy(symbuf, t, l);
		symbuf[l] = 0;
		if (l && strcmp(symbuf, "[unknown]"))	/* "+0x5e" alone names nothing */
			s->sym = symbuf;
	}
	return 1;
}

int perfscript__parse(const char *text, size_t len, int (*fn)(void *ctx, const struct ps_sample *s),
		      void *ctx, struct pb_errtext *err)
{
	unsigned long lineno = 0;
	size_t off = 0;
	char sym[256];
	int rc;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (text + off)) : len - off;
		struct ps_sample s;

		lineno++;
		if (memchr(text + off, 0, ll)) {
			pb_errtext__set(err, "line %lu: NUL byte (not perf script text)", lineno);
			return -EBADMSG;
		}
		if (ll && text[off] != '#') {
			rc = parse_line(text + off, ll, lineno, &s, sym, sizeof(sym), err);
			if (rc < 0)
				return rc;
			if (rc == 1 && (rc = fn(ctx, &s)))
				return rc;
		}
		off += ll + 1;
	}
	return 0;
}
