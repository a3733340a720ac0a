/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_fields.c: typed access to the YAML tree for the manifest
 * builder: one function per kind of scalar (string, name, integer, bool,
 * enum, value expression, guard, duration, date) and for mappings and
 * lists. Each checks its node and reports "expected X, found Y" at the
 * node's position; the builder (manifest_parse.c) decides what is
 * required and what the defaults are.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest_int.h"
#include "contract/manifest_schema.h"

static void join_list(const char *const *names, size_t n, const char *sep, char *buf, size_t sz)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n && o < sz; i++)
		o += snprintf(buf + o, sz - o, "%s%s", i ? sep : "", names[i]);
}

/* A string field: any non-null scalar. */
bool mf_want_scalar(struct mctx *c, const struct ynode *v, const char *parent,
		    const char *key, const char *what)
{
	char found[80];

	if (v && v->kind == YNODE_SCALAR && !ynode__is_null(v))
		return true;
	ynode__describe(v, found, sizeof(found));
	merr(c, v->loc, parent, key, "expected %s, found %s", what, found);
	return false;
}

bool mf_has_nul(const struct ynode *v)
{
	return strlen(v->str) != v->len;
}

int mf_dup_str(struct mctx *c, const struct ynode *v, char **out)
{
	*out = strdup(v->str);
	if (!*out) {
		c->oom = true;
		return -ENOMEM;
	}
	return 0;
}

bool mf_get_string(struct mctx *c, const struct ynode *v, const char *parent,
		   const char *key, char **out)
{
	char found[80];

	if (!mf_want_scalar(c, v, parent, key, "a string"))
		return false;
	if (mf_has_nul(v) || !v->len) {
		ynode__describe(v, found, sizeof(found));
		merr(c, v->loc, parent, key, "expected a non-empty string without NUL bytes, found %s",
		     found);
		return false;
	}
	return !mf_dup_str(c, v, out);
}

bool mf_name_char(char ch, const char *extra)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || (ch && strchr(extra, ch));
}

/* An identifier-like string: [A-Za-z0-9<extra>]+ */
bool mf_get_name(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 const char *extra, const char *what, char **out)
{
	char found[80];
	size_t i;

	if (!mf_want_scalar(c, v, parent, key, what))
		return false;
	for (i = 0; i < v->len; i++)
		if (!mf_name_char(v->str[i], extra))
			break;
	if (i < v->len || v->len > 255) {
		ynode__describe(v, found, sizeof(found));
		merr(c, v->loc, parent, key, "expected %s, found %s", what, found);
		return false;
	}
	return !mf_dup_str(c, v, out);
}

/* Overflow-safe unsigned integer, decimal or 0x hex; plain scalars only. */
static bool scan_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10, d;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		char ch = s[i];

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (base == 16 && ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (base == 16 && ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

bool mf_get_u64(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		const char *what, uint64_t *out)
{
	char found[80];

	if (!mf_want_scalar(c, v, parent, key, what))
		return false;
	if (v->style != YSTYLE_PLAIN || !scan_u64(v->str, v->len, out)) {
		ynode__describe(v, found, sizeof(found));
		merr(c, v->loc, parent, key, "expected %s, found %s%s", what,
		     v->style != YSTYLE_PLAIN ? "a quoted string " : "", found);
		return false;
	}
	return true;
}

bool mf_get_bool(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 bool *out)
{
	char found[80];

	if (v && v->kind == YNODE_SCALAR && v->style == YSTYLE_PLAIN) {
		if (!strcmp(v->str, "true")) {
			*out = true;
			return true;
		}
		if (!strcmp(v->str, "false")) {
			*out = false;
			return true;
		}
	}
	ynode__describe(v, found, sizeof(found));
	merr(c, v->loc, parent, key, "expected true or false, found %s", found);
	return false;
}

bool mf_get_enum(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 const char *const *names, size_t n, size_t n_shown, int *out)
{
	char found[80], list[160], hint[80];
	size_t i;

	if (v && v->kind == YNODE_SCALAR && !mf_has_nul(v)) {
		for (i = 0; i < n; i++) {
			if (!strcmp(v->str, names[i])) {
				*out = (int)i;
				return true;
			}
		}
	}
	join_list(names, n_shown, ", ", list, sizeof(list));
	ynode__describe(v, found, sizeof(found));
	hint[0] = '\0';
	if (v && v->kind == YNODE_SCALAR && !c->capped)
		suggest(v->str, v->len, names, n_shown, true, hint, sizeof(hint));
	merr(c, v->loc, parent, key, "expected one of %s, found %s%s", list, found, hint);
	return false;
}

/* Column in the file of byte `col` of a scalar's text: exact for plain and
 * quoted one-line scalars without escapes, the scalar's start otherwise. */
struct pb_loc mf_text_loc(const struct ynode *v, int col)
{
	struct pb_loc l = v->loc;

	if (v->loc.line != v->end.line)
		return l;
	if (v->style == YSTYLE_PLAIN && v->end.col - v->loc.col == (int)v->len)
		l.col += col;
	else if ((v->style == YSTYLE_SINGLE || v->style == YSTYLE_DOUBLE) &&
		 v->end.col - v->loc.col == (int)v->len + 2)
		l.col += 1 + col;
	return l;
}

bool mf_get_value(struct mctx *c, const struct ynode *v, const char *parent,
		  const char *key, struct pb_value *out)
{
	struct pb_errtext why = { 0 };
	int err;

	if (!mf_want_scalar(c, v, parent, key,
			    "a value expression (argN, retval, an integer or *uN(...))"))
		return false;
	if (mf_has_nul(v)) {
		merr(c, v->loc, parent, key, "expected a value expression, found a string with NUL bytes");
		return false;
	}
	err = pb_value__parse(v->str, out, &why);
	if (err == -ENOMEM) {
		c->oom = true;
		return false;
	}
	if (err) {
		merr(c, mf_text_loc(v, why.col), parent, key, "%s", why.msg);
		return false;
	}
	out->loc = v->loc;
	return true;
}

bool mf_get_guard(struct mctx *c, const struct ynode *v, const char *parent,
		  const char *key, struct pb_guard *out)
{
	struct pb_errtext why = { 0 };
	int err;

	if (!mf_want_scalar(c, v, parent, key, "a guard '<value> <op> <integer>' (e.g. retval != 0)"))
		return false;
	if (mf_has_nul(v)) {
		merr(c, v->loc, parent, key, "expected a guard, found a string with NUL bytes");
		return false;
	}
	err = pb_guard__parse(v->str, out, &why);
	if (err == -ENOMEM) {
		c->oom = true;
		return false;
	}
	if (err) {
		merr(c, mf_text_loc(v, why.col), parent, key, "%s", why.msg);
		return false;
	}
	out->loc = v->loc;
	out->lhs.loc = v->loc;
	return true;
}

/* "500ms", "2 s", "100us", "1000ns" -> nanoseconds, > 0, no overflow. */
bool mf_get_duration(struct mctx *c, const struct ynode *v, const char *parent,
		     const char *key, uint64_t *out)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	char found[80];
	uint64_t n;
	size_t i, digits = 0, u;

	if (!mf_want_scalar(c, v, parent, key, "a duration (e.g. 500ms)"))
		return false;
	while (digits < v->len && v->str[digits] >= '0' && v->str[digits] <= '9')
		digits++;
	u = digits;
	while (u < v->len && v->str[u] == ' ')
		u++;
	for (i = 0; digits && i < N(units); i++) {
		if (strcmp(v->str + u, units[i].unit) || strlen(v->str + u) != v->len - u)
			continue;
		if (!scan_u64(v->str, digits, &n) || n > UINT64_MAX / units[i].ns) {
			ynode__describe(v, found, sizeof(found));
			merr(c, v->loc, parent, key, "duration out of range, found %s", found);
			return false;
		}
		if (!n) {
			merr(c, v->loc, parent, key,
			     "a bound must be > 0, found '%s' (leave '%s' out for no bound)",
			     v->str, key);
			return false;
		}
		*out = n * units[i].ns;
		return true;
	}
	ynode__describe(v, found, sizeof(found));
	merr(c, v->loc, parent, key,
	     "expected a duration: an integer and a unit (ns, us, ms or s), e.g. 500ms, found %s",
	     found);
	return false;
}

static bool is_leap(unsigned y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool mf_get_date(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 char **out)
{
	static const unsigned mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned y, mo, d, i;
	char found[80];
	const char *s;

	if (!mf_want_scalar(c, v, parent, key, "a date YYYY-MM-DD"))
		return false;
	s = v->str;
	for (i = 0; i < 10 && v->len == 10; i++)
		if (i == 4 || i == 7 ? s[i] != '-' : s[i] < '0' || s[i] > '9')
			break;
	ynode__describe(v, found, sizeof(found));
	if (v->len != 10 || i != 10) {
		merr(c, v->loc, parent, key, "expected a date YYYY-MM-DD, found %s", found);
		return false;
	}
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	mo = (s[5] - '0') * 10 + (s[6] - '0');
	d = (s[8] - '0') * 10 + (s[9] - '0');
	if (mo < 1 || mo > 12) {
		merr(c, v->loc, parent, key, "no such date: month %02u is not 01..12, found %s", mo,
		     found);
		return false;
	}
	if (d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y))) {
		merr(c, v->loc, parent, key, "no such date: %04u-%02u has %u days, found %s", y, mo,
		     mdays[mo - 1] + (mo == 2 && is_leap(y)), found);
		return false;
	}
	if (y < 1970) {
		merr(c, v->loc, parent, key, "implausible date before 1970, found %s", found);
		return false;
	}
	return !mf_dup_str(c, v, out);
}

/* ---- mappings and lists -------------------------------------------------- */

/* Split a mapping into known fields; report unknown and duplicate keys. */
/* A scalar `TODO` (what `manifest init` writes where a person must choose)
 * is one "left to fill" finding saying what is expected; the field then
 * counts as absent without a second "required field is missing". */
static bool left_to_fill(struct mctx *c, struct fields *f, size_t k, const char *path)
{
	const struct ynode *v = f->val[k];
	const struct mf_table *t;
	char hint[300] = "";

	if (v->kind != YNODE_SCALAR || strcmp(v->str, MANIFEST_PLACEHOLDER) ||
	    v->len != strlen(MANIFEST_PLACEHOLDER))
		return false;
	for (t = mf_tables; t->name; t++)
		if (t->items == f->known)
			mf_field_hint(t->name, f->known[k], hint, sizeof(hint));
	merr(c, v->loc, path, f->known[k], "left to fill (TODO): %s",
	     hint[0] ? hint : "a value");
	f->hinted |= 1u << k;
	return true;
}

bool mf_map_fields(struct mctx *c, const struct ynode *map, const char *path,
		   const char *const *known, size_t n_known, struct fields *f)
{
	char list[400], hint[80], found[80];
	size_t i, k;
	int hi;

	memset(f, 0, sizeof(*f));
	f->known = known;
	f->n_known = n_known;
	for (i = 0; i < map->n; i++) {
		const struct ynode *key = map->keys[i];

		for (k = 0; k < n_known; k++)
			if (!mf_has_nul(key) && !strcmp(key->str, known[k]))
				break;
		if (k == n_known) {
			if (c->capped)
				continue; /* nothing more is printed; skip the work */
			join_list(known, n_known, ", ", list, sizeof(list));
			ynode__describe(key, found, sizeof(found));
			hi = suggest(key->str, key->len, known, n_known, false, hint, sizeof(hint));
			if (hi >= 0)
				f->hinted |= 1u << hi;
			merr(c, key->loc, path, NULL, "unknown field %s (expected one of: %s)%s", found,
			     list, hint);
			continue;
		}
		if (f->key[k]) {
			merr(c, key->loc, path, known[k],
			     "duplicate key '%s' (first given at %d:%d)", known[k],
			     f->key[k]->loc.line, f->key[k]->loc.col);
			continue;
		}
		f->key[k] = key;
		f->val[k] = map->items[i];
		if (left_to_fill(c, f, k, path))
			f->val[k] = NULL;
	}
	return true;
}

bool mf_want_map(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 const char *example)
{
	char found[80];

	if (v && v->kind == YNODE_MAP)
		return true;
	ynode__describe(v, found, sizeof(found));
	merr(c, v->loc, parent, key, "expected a mapping (%s), found %s", example, found);
	return false;
}

bool mf_want_list(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		  const char *one, const char *many, size_t max)
{
	char found[80];

	if (!v || v->kind != YNODE_SEQ) {
		ynode__describe(v, found, sizeof(found));
		merr(c, v->loc, parent, key, "expected a list of %s, found %s", many, found);
		return false;
	}
	if (!v->n) {
		merr(c, v->loc, parent, key, "expected at least one %s, found an empty list", one);
		return false;
	}
	if (v->n > max) {
		merr(c, v->loc, parent, key, "too many entries: %zu (at most %zu)", v->n, max);
		return false;
	}
	return true;
}

void mf_missing(struct mctx *c, const struct fields *f, struct pb_loc loc, const char *parent,
		const char *key, const char *hint)
{
	size_t k;

	/* "unknown field 'sit'; did you mean 'site'?" already said it */
	for (k = 0; k < f->n_known; k++)
		if (!strcmp(f->known[k], key) && (f->hinted & (1u << k)))
			return;
	merr(c, loc, parent, key, "required field is missing%s%s", hint ? " " : "", hint ? hint : "");
}
