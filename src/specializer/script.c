/* SPDX-License-Identifier: BSD-2-Clause */
/* script.c: configuration assignments and scenario scripts of
 * `probity rejit` (see script.h, docs/rejit.md). Every error names the
 * file, the line and what was expected.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "common/array.h"
#include "specializer/lb_xdp.h"
#include "specializer/script.h"

#define F(n, lo, hi) { #n, __builtin_offsetof(struct lb_cfg, n), lo, hi }
const struct sp_cfg_field sp_cfg_fields[] = {
	F(feature_acl, 0, 1),
	F(feature_stats, 0, 1),
	F(n_backends, 1, LB_MAX_BACKENDS),
	F(vip_port, 1, 65535),
	F(acl_prefix, 0, UINT32_MAX),
	F(default_verdict, 0, 3),
};
#undef F
const size_t sp_n_cfg_fields = sizeof(sp_cfg_fields) / sizeof(sp_cfg_fields[0]);
const char *const sp_mix_names[SP_N_MIX] = { "normal", "shift" };

const struct sp_cfg_field *sp_cfg_field_at(uint32_t offset)
{
	size_t i;

	for (i = 0; i < sp_n_cfg_fields; i++)
		if (sp_cfg_fields[i].offset == offset)
			return &sp_cfg_fields[i];
	return NULL;
}

static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_dotted(const char *s, uint32_t *out)
{
	unsigned a, b, c, d;
	char tail;

	if (sscanf(s, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 ||
	    c > 255 || d > 255)
		return -EINVAL;
	*out = a << 24 | b << 16 | c << 8 | d;
	return 0;
}

int sp_config_parse(const char *kv, uint32_t *field, uint32_t *value, struct pb_errtext *err)
{
	const char *eq = strchr(kv, '=');
	size_t i, klen;
	uint32_t v;

	if (!eq) {
		pb_errtext__set(err, "expected KEY=VALUE, found '%.64s'", kv);
		return -EINVAL;
	}
	klen = (size_t)(eq - kv);
	for (i = 0; i < sp_n_cfg_fields; i++)
		if (strlen(sp_cfg_fields[i].name) == klen && !strncmp(sp_cfg_fields[i].name, kv, klen))
			break;
	if (i == sp_n_cfg_fields) {
		pb_errtext__set(err, "unknown configuration key '%.*s' (expected one of feature_acl, "
				"feature_stats, n_backends, vip_port, acl_prefix, default_verdict)",
				(int)(klen > 64 ? 64 : klen), kv);
		return -EINVAL;
	}
	if (parse_u32(eq + 1, &v) && (strcmp(sp_cfg_fields[i].name, "acl_prefix") ||
				      parse_dotted(eq + 1, &v))) {
		pb_errtext__set(err, "%s: expected an unsigned number%s, found '%.64s'",
				sp_cfg_fields[i].name,
				strcmp(sp_cfg_fields[i].name, "acl_prefix") ? "" : " or a.b.c.d",
				eq + 1);
		return -EINVAL;
	}
	if (v < sp_cfg_fields[i].min || v > sp_cfg_fields[i].max) {
		pb_errtext__set(err, "%s: expected %u..%u, found %u", sp_cfg_fields[i].name,
				sp_cfg_fields[i].min, sp_cfg_fields[i].max, v);
		return -EINVAL;
	}
	*field = (uint32_t)i;
	*value = v;
	return 0;
}

void sp_script_release(struct sp_script *s)
{
	free(s->steps);
	s->steps = NULL;
	s->n = 0;
}

static int cmp_step(const void *a, const void *b)
{
	const struct sp_step *x = a, *y = b;

	if (x->t_ms != y->t_ms)
		return x->t_ms < y->t_ms ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

#define SP_MAX_STEPS 4096
#define SP_MAX_T_MS (7ull * 24 * 3600 * 1000)

/* one line (NUL-terminated, no newline) into st */
static int parse_line(char *s, struct sp_step *st, struct pb_errtext *why)
{
	char *tok[4], *save = NULL, *t;
	int n = 0;
	double sec;
	char *end;

	for (t = strtok_r(s, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == 4) {
			pb_errtext__set(why, "expected 't=SECONDS config KEY=VALUE' or "
					"'t=SECONDS traffic MIX', found extra words");
			return -EINVAL;
		}
		tok[n++] = t;
	}
	if (n < 3 || strncmp(tok[0], "t=", 2)) {
		pb_errtext__set(why,
				"expected 't=SECONDS config KEY=VALUE' or 't=SECONDS traffic MIX'");
		return -EINVAL;
	}
	if (n != 3) {
		pb_errtext__set(why, "expected 3 words, found %d", n);
		return -EINVAL;
	}
	errno = 0;
	sec = strtod(tok[0] + 2, &end);
	if (errno || end == tok[0] + 2 || *end || !isfinite(sec) || sec < 0 ||
	    sec * 1000 > (double)SP_MAX_T_MS) {
		pb_errtext__set(why, "expected t=SECONDS (0..604800), found '%.32s'", tok[0]);
		return -EINVAL;
	}
	st->t_ms = (uint64_t)(sec * 1000 + 0.5);
	if (!strcmp(tok[1], "config")) {
		st->kind = SP_STEP_CONFIG;
		return sp_config_parse(tok[2], &st->field, &st->value, why);
	}
	if (!strcmp(tok[1], "traffic")) {
		uint32_t m;

		st->kind = SP_STEP_TRAFFIC;
		for (m = 0; m < SP_N_MIX; m++)
			if (!strcmp(tok[2], sp_mix_names[m]))
				break;
		if (m == SP_N_MIX) {
			pb_errtext__set(why, "expected a traffic mix (normal, shift), found '%.32s'",
					tok[2]);
			return -EINVAL;
		}
		st->mix = m;
		return 0;
	}
	pb_errtext__set(why, "expected 'config' or 'traffic', found '%.32s'", tok[1]);
	return -EINVAL;
}

int sp_script_parse(const char *buf, size_t len, const char *name, struct sp_script *out,
		    struct pb_errtext *err)
{
	struct pb_errtext why = { 0 };
	size_t pos = 0, cap = 0;
	uint32_t line = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		size_t e = pos, start = pos;
		char *l, *hash;

		while (e < len && buf[e] != '\n')
			e++;
		line++;
		pos = e + 1;
		if (memchr(buf + start, '\0', e - start)) {
			pb_errtext__set_at(err, (int)line, 0,
					   "%s:%u: expected text, found a NUL byte", name, line);
			rc = -EINVAL;
			break;
		}
		l = strndup(buf + start, e - start);
		if (!l) {
			rc = -ENOMEM;
			break;
		}
		hash = strchr(l, '#');
		if (hash)
			*hash = '\0';
		if (strspn(l, " \t\r") == strlen(l)) {
			free(l);
			continue;
		}
		if (out->n == SP_MAX_STEPS) {
			pb_errtext__set_at(err, (int)line, 0, "%s:%u: more than %d steps", name,
					   line, SP_MAX_STEPS);
			free(l);
			rc = -E2BIG;
			break;
		}
		if ((rc = PB_ARRAY_RESERVE_ONE(out->steps, out->n, cap))) {
			free(l);
			break;
		}
		memset(&out->steps[out->n], 0, sizeof(out->steps[0]));
		out->steps[out->n].line = line;
		rc = parse_line(l, &out->steps[out->n], &why);
		free(l);
		if (rc) {
			pb_errtext__set_at(err, (int)line, 0, "%s:%u: %s", name, line, why.msg);
			break;
		}
		out->n++;
	}
	if (rc) {
		sp_script_release(out);
		return rc;
	}
	if (out->n)
		qsort(out->steps, out->n, sizeof(*out->steps), cmp_step);
	return 0;
}
