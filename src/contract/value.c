/* SPDX-License-Identifier: BSD-2-Clause */
/* value.c: value expressions (`arg0`, `retval`, `*u64(arg0 + 16)`,
 * `s32(retval)`) and guards (`s32(retval) == 0`) of manifest v1.
 *
 * The grammar (docs/manifest.md) is a chain, not a tree: every dereference
 * holds exactly one term. So the parser reads the `*uN(` openers in a loop,
 * then the base, then the offsets and `)` closers from the inside out. No
 * recursion means no stack to exhaust on hostile input, and a fourth level
 * can still be counted precisely for the error message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest.h"

#define MAX_ARG_INDEX	PB_MAX_USDT_ARG	/* the manifest layer narrows it per site */

struct vparser {
	const char *s;
	size_t len;
	size_t pos;
	struct pb_errtext *err;
	int err_col;
	bool failed;
};

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void skip_ws(struct vparser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
		p->pos++;
}

static char peek(const struct vparser *p)
{
	return p->pos < p->len ? p->s[p->pos] : '\0';
}

/* Describe the token at pos for "found ..." ("end of expression", 'word'
 * or 'c'); words are clipped so a hostile input cannot flood a message. */
static void describe(const struct vparser *p, size_t pos, char *buf, size_t sz)
{
	size_t n = 0;

	if (pos >= p->len) {
		snprintf(buf, sz, "end of expression");
		return;
	}
	if (is_ident_char(p->s[pos])) {
		while (pos + n < p->len && is_ident_char(p->s[pos + n]) && n < 32)
			n++;
	} else {
		n = 1;
	}
	if ((unsigned char)p->s[pos] < 0x20 || (unsigned char)p->s[pos] >= 0x7f)
		snprintf(buf, sz, "byte 0x%02x", (unsigned char)p->s[pos]);
	else
		snprintf(buf, sz, "'%.*s%s'", (int)n, p->s + pos,
			 n == 32 && pos + n < p->len && is_ident_char(p->s[pos + n]) ? "..." : "");
}

static void fail_at(struct vparser *p, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct vparser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	p->err_col = (int)(pos > p->len ? p->len : pos);
	if (p->err) {
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
}

static char peek_after_ws(const struct vparser *p, size_t pos)
{
	while (pos < p->len && (p->s[pos] == ' ' || p->s[pos] == '\t'))
		pos++;
	return pos < p->len ? p->s[pos] : '\0';
}

/* Length of the identifier at pos (0 if none). */
static size_t ident_len(const struct vparser *p, size_t pos)
{
	size_t n = 0;

	if (pos >= p->len || !is_ident_start(p->s[pos]))
		return 0;
	while (pos + n < p->len && is_ident_char(p->s[pos + n]))
		n++;
	return n;
}

static bool ident_is(const struct vparser *p, size_t pos, size_t n, const char *word)
{
	return n == strlen(word) && !strncmp(p->s + pos, word, n);
}

/* Decimal or 0x-hex unsigned integer at pos; overflow-safe. Returns false
 * (with an error) when there is no valid integer. */
static bool parse_uint(struct vparser *p, uint64_t *out, const char *what)
{
	size_t start = p->pos;
	uint64_t v = 0;
	unsigned base = 10, d;
	bool any = false;
	char buf[64];

	if (!is_digit(peek(p))) {
		describe(p, p->pos, buf, sizeof(buf));
		fail_at(p, p->pos, "expected %s, found %s", what, buf);
		return false;
	}
	if (peek(p) == '0' && p->pos + 1 < p->len &&
	    (p->s[p->pos + 1] == 'x' || p->s[p->pos + 1] == 'X')) {
		base = 16;
		p->pos += 2;
	}
	for (; p->pos < p->len; p->pos++) {
		char c = p->s[p->pos];

		if (is_digit(c))
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - d) / base) {
			while (p->pos < p->len && is_ident_char(p->s[p->pos]))
				p->pos++;
			fail_at(p, start, "integer out of range (at most 64 bits), found '%.*s'",
				(int)(p->pos - start > 40 ? 40 : p->pos - start), p->s + start);
			return false;
		}
		v = v * base + d;
		any = true;
	}
	if (!any || (p->pos < p->len && is_ident_char(p->s[p->pos]))) {
		while (p->pos < p->len && is_ident_char(p->s[p->pos]))
			p->pos++;
		fail_at(p, start, "invalid integer '%.*s' (decimal, or hex with 0x)",
			(int)(p->pos - start > 40 ? 40 : p->pos - start), p->s + start);
		return false;
	}
	*out = v;
	return true;
}

/* Optional "+ N" / "- N" after a term; *off is 0 when absent. */
static bool parse_offset(struct vparser *p, int64_t *off)
{
	uint64_t mag;
	char op;
	size_t at;

	*off = 0;
	skip_ws(p);
	op = peek(p);
	if (op != '+' && op != '-')
		return true;
	p->pos++;
	skip_ws(p);
	at = p->pos;
	if (!parse_uint(p, &mag, op == '+' ? "an integer after '+'" : "an integer after '-'"))
		return false;
	if (op == '+' && mag > (uint64_t)INT64_MAX) {
		fail_at(p, at, "offset out of range: + %" PRIu64 " (at most %" PRId64 ")",
			mag, INT64_MAX);
		return false;
	}
	if (op == '-' && mag > (uint64_t)INT64_MAX + 1) {
		fail_at(p, at, "offset out of range: - %" PRIu64 " (at most %" PRIu64 ")",
			mag, (uint64_t)INT64_MAX + 1);
		return false;
	}
	*off = op == '+' ? (int64_t)mag : (int64_t)(0 - mag);
	skip_ws(p);
	if (peek(p) == '+' || peek(p) == '-') {
		fail_at(p, p->pos, "only one offset is allowed per term (write one '+ N' or '- N'), found '%c'",
			peek(p));
		return false;
	}
	return true;
}

static int size_of_ident(const struct vparser *p, size_t pos, size_t n, bool *is_signed)
{
	static const struct { const char *name; int size; bool sign; } types[] = {
		{ "u8", 1, false }, { "u16", 2, false }, { "u32", 4, false }, { "u64", 8, false },
		{ "s8", 1, true },  { "s16", 2, true },  { "s32", 4, true },  { "s64", 8, true },
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (ident_is(p, pos, n, types[i].name)) {
			if (is_signed)
				*is_signed = types[i].sign;
			return types[i].size;
		}
	}
	return 0;
}

/* argN | retval | integer | -integer */
static bool parse_base(struct vparser *p, struct pb_value *v)
{
	size_t at, n;
	char buf[64];

	skip_ws(p);
	at = p->pos;
	n = ident_len(p, at);
	if (n) {
		if (ident_is(p, at, n, "retval")) {
			v->base = PB_VAL_RETVAL;
			p->pos += n;
			return true;
		}
		if (n >= 3 && !strncmp(p->s + at, "arg", 3)) {
			size_t i;
			unsigned idx = 0;

			for (i = 3; i < n && is_digit(p->s[at + i]); i++)
				if (idx < 1000)
					idx = idx * 10 + (p->s[at + i] - '0');
			if (i == n && n > 3) {
				if (idx > MAX_ARG_INDEX || n > 6) {
					fail_at(p, at, "argument index out of range: '%.*s' (arg0..arg%d)",
						(int)(n > 40 ? 40 : n), p->s + at, MAX_ARG_INDEX);
					return false;
				}
				v->base = PB_VAL_ARG;
				v->arg = (uint8_t)idx;
				p->pos += n;
				return true;
			}
			if (n == 3) {
				describe(p, at + n, buf, sizeof(buf));
				fail_at(p, at + n, "expected an argument number after 'arg' (arg0..arg%d), found %s",
					MAX_ARG_INDEX, buf);
				return false;
			}
		}
		if (size_of_ident(p, at, n, NULL) && peek_after_ws(p, at + n) == '(') {
			fail_at(p, at, "a cast such as '%.*s(...)' may only wrap the whole value (e.g. s32(*u32(arg0 + 4))), found it inside",
				(int)n, p->s + at);
			return false;
		}
		describe(p, at, buf, sizeof(buf));
		fail_at(p, at, "expected argN, retval, an integer or *uN(...), found %s", buf);
		return false;
	}
	if (peek(p) == '-' || is_digit(peek(p))) {
		bool neg = peek(p) == '-';
		uint64_t mag;

		if (neg) {
			p->pos++;
			skip_ws(p);
		}
		if (!parse_uint(p, &mag, neg ? "an integer after '-'" : "an integer"))
			return false;
		if (neg && mag > (uint64_t)INT64_MAX + 1) {
			fail_at(p, at, "integer out of range: '-%" PRIu64 "' (at least %" PRId64 ")",
				mag, INT64_MIN);
			return false;
		}
		v->base = PB_VAL_CONST;
		/* hex and large decimals keep their 64-bit pattern (addresses) */
		v->constant = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		return true;
	}
	describe(p, at, buf, sizeof(buf));
	fail_at(p, at, "expected argN, retval, an integer or *uN(...), found %s", buf);
	return false;
}

/* term := ('*' size '(')^n base offset? (')' offset?)^n ... see the grammar. */
static bool parse_term(struct vparser *p, struct pb_value *v)
{
	uint8_t sizes[PB_MAX_DEREF];
	size_t n = 0, too_deep_at = 0, i;
	char buf[64];

	for (;;) {
		size_t star, at, k;
		int size;

		skip_ws(p);
		if (peek(p) != '*')
			break;
		star = p->pos++;
		skip_ws(p);
		at = p->pos;
		k = ident_len(p, at);
		size = k ? size_of_ident(p, at, k, NULL) : 0;
		if (!size || p->s[at] != 'u') {
			if (n >= PB_MAX_DEREF)
				break; /* still counting levels; report the depth */
			describe(p, at, buf, sizeof(buf));
			fail_at(p, at, "expected a size after '*' (*u8, *u16, *u32 or *u64, e.g. *u64(arg0 + 16)), found %s",
				buf);
			return false;
		}
		p->pos += k;
		skip_ws(p);
		if (peek(p) != '(') {
			if (n >= PB_MAX_DEREF)
				break;
			describe(p, p->pos, buf, sizeof(buf));
			fail_at(p, p->pos, "expected '(' after '*%.*s', found %s", (int)k, p->s + at, buf);
			return false;
		}
		p->pos++;
		if (n < PB_MAX_DEREF) {
			sizes[n] = (uint8_t)size;
		} else if (n == PB_MAX_DEREF) {
			too_deep_at = star;
		}
		n++;
	}
	if (n > PB_MAX_DEREF) {
		fail_at(p, too_deep_at, "at most %d dereference levels, found %s%zu", PB_MAX_DEREF,
			peek(p) == '*' ? "at least " : "", n);
		return false;
	}
	if (!parse_base(p, v))
		return false;
	/* close from the innermost opener outwards: it is applied first */
	for (i = n; i > 0; i--) {
		struct pb_deref *d = &v->deref[n - i];

		if (!parse_offset(p, &d->offset))
			return false;
		skip_ws(p);
		if (peek(p) != ')') {
			describe(p, p->pos, buf, sizeof(buf));
			fail_at(p, p->pos, "expected ')' to close '*u%d(', found %s", sizes[i - 1] * 8,
				buf);
			return false;
		}
		p->pos++;
		d->size = sizes[i - 1];
	}
	v->n_deref = (uint8_t)n;
	return parse_offset(p, &v->final_offset);
}

static void vparser_init(struct vparser *p, const char *s, size_t len, struct pb_errtext *err)
{
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->len = len;
	p->err = err;
	if (err)
		err->msg[0] = '\0';
}

/* value := cast? term, over s[0..len) */
static bool parse_value_span(struct vparser *p, struct pb_value *v)
{
	size_t at, n;
	bool cast = false, sign = false;
	char buf[64];
	int size;

	skip_ws(p);
	if (p->pos >= p->len) {
		fail_at(p, p->pos, "expected a value (argN, retval, an integer or *uN(...)), found nothing");
		return false;
	}
	at = p->pos;
	n = ident_len(p, at);
	size = n ? size_of_ident(p, at, n, &sign) : 0;
	if (size) {
		p->pos += n;
		skip_ws(p);
		if (peek(p) != '(') {
			describe(p, p->pos, buf, sizeof(buf));
			fail_at(p, p->pos, "expected '(' after the cast '%.*s' (e.g. %.*s(retval)), found %s",
				(int)n, p->s + at, (int)n, p->s + at, buf);
			return false;
		}
		p->pos++;
		cast = true;
	}
	if (!parse_term(p, v))
		return false;
	if (cast) {
		skip_ws(p);
		if (peek(p) != ')') {
			describe(p, p->pos, buf, sizeof(buf));
			fail_at(p, p->pos, "expected ')' to close '%.*s(', found %s", (int)n, p->s + at,
				buf);
			return false;
		}
		p->pos++;
		v->cast_size = (uint8_t)size;
		v->cast_signed = sign;
		skip_ws(p);
		if (peek(p) == '+' || peek(p) == '-') {
			fail_at(p, p->pos, "an offset after a cast is not allowed: put it inside, e.g. %.*s(arg0 %c 1)",
				(int)n, p->s + at, peek(p));
			return false;
		}
	}
	return true;
}

/* the text as written, without surrounding blanks, is kept for messages */
static void trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

int pb_value__parse(const char *text, struct pb_value *out, struct pb_errtext *err)
{
	struct vparser p;
	struct pb_value v;
	char buf[64];

	memset(&v, 0, sizeof(v));
	memset(out, 0, sizeof(*out));
	if (err)
		err->col = 0;
	if (!text)
		return -EINVAL;
	vparser_init(&p, text, strlen(text), err);
	if (!parse_value_span(&p, &v))
		goto fail;
	skip_ws(&p);
	if (p.pos < p.len) {
		describe(&p, p.pos, buf, sizeof(buf));
		fail_at(&p, p.pos, "unexpected %s after the value%s", buf,
			strchr("*/%&|^<>=!", p.s[p.pos]) ? " (the only arithmetic is '+ N' or '- N')" : "");
		goto fail;
	}
	{
		const char *s = text;
		size_t len = p.len;

		trim(&s, &len);
		v.text = strndup(s, len);
		if (!v.text)
			return -ENOMEM;
	}
	*out = v;
	return 0;
fail:
	if (err)
		err->col = p.err_col;
	return -EINVAL;
}

void pb_value__free(struct pb_value *v)
{
	if (!v)
		return;
	free(v->text);
	memset(v, 0, sizeof(*v));
}

static int appendf(char *buf, size_t sz, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int appendf(char *buf, size_t sz, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < sz ? buf + *pos : NULL, *pos < sz ? sz - *pos : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	*pos += (size_t)n;
	return 0;
}

static void append_offset(char *buf, size_t sz, size_t *pos, int64_t off)
{
	if (off > 0)
		appendf(buf, sz, pos, " + %" PRId64, off);
	else if (off < 0)
		appendf(buf, sz, pos, " - %" PRIu64, (uint64_t)0 - (uint64_t)off);
}

int pb_value__format(const struct pb_value *v, char *buf, size_t sz)
{
	static const char *const cast_names[2][9] = {
		{ [1] = "u8", [2] = "u16", [4] = "u32", [8] = "u64" },
		{ [1] = "s8", [2] = "s16", [4] = "s32", [8] = "s64" },
	};
	size_t pos = 0;
	int i;

	if (sz)
		buf[0] = '\0';
	if (v->cast_size && v->cast_size <= 8 && cast_names[v->cast_signed][v->cast_size])
		appendf(buf, sz, &pos, "%s(", cast_names[v->cast_signed][v->cast_size]);
	for (i = v->n_deref; i > 0; i--)
		appendf(buf, sz, &pos, "*u%d(", v->deref[i - 1].size * 8);
	switch (v->base) {
	case PB_VAL_ARG:
		appendf(buf, sz, &pos, "arg%u", v->arg);
		break;
	case PB_VAL_RETVAL:
		appendf(buf, sz, &pos, "retval");
		break;
	case PB_VAL_CONST:
		if (v->constant < 0 || v->constant <= 0xffff)
			appendf(buf, sz, &pos, "%" PRId64, v->constant);
		else
			appendf(buf, sz, &pos, "0x%" PRIx64, (uint64_t)v->constant);
		break;
	default:
		appendf(buf, sz, &pos, "(none)");
		break;
	}
	for (i = 0; i < v->n_deref && i < PB_MAX_DEREF; i++) {
		append_offset(buf, sz, &pos, v->deref[i].offset);
		appendf(buf, sz, &pos, ")");
	}
	append_offset(buf, sz, &pos, v->final_offset);
	if (v->cast_size && v->cast_size <= 8 && cast_names[v->cast_signed][v->cast_size])
		appendf(buf, sz, &pos, ")");
	if (pos >= sz)
		return -ENOSPC;
	return (int)pos;
}

bool pb_value__uses_retval(const struct pb_value *v)
{
	return v && v->base == PB_VAL_RETVAL;
}

bool pb_value__const(const struct pb_value *v, int64_t *out)
{
	uint64_t x;

	if (!v || v->base != PB_VAL_CONST || v->n_deref)
		return false;
	x = (uint64_t)v->constant + (uint64_t)v->final_offset;
	if (v->cast_size && v->cast_size < 8) {
		unsigned bits = v->cast_size * 8;
		uint64_t mask = (1ULL << bits) - 1;

		x &= mask;
		if (v->cast_signed && (x >> (bits - 1)) & 1)
			x |= ~mask;
	}
	if (out)
		*out = (int64_t)x;
	return true;
}

/* ---- guards: <value> <op> <integer> -------------------------------------- */

static const char *const cmp_ops[] = {
	[PB_CMP_EQ] = "==", [PB_CMP_NE] = "!=", [PB_CMP_LT] = "<",
	[PB_CMP_LE] = "<=", [PB_CMP_GT] = ">",  [PB_CMP_GE] = ">=",
};

const char *pb_cmp_op_str(enum pb_cmp_op op)
{
	return (unsigned)op < sizeof(cmp_ops) / sizeof(cmp_ops[0]) ? cmp_ops[op] : "?";
}

/* A guard with no comparison character: say what is missing, after the
 * value's own error when the value itself is wrong (more precise). */
static void fail_no_operator(struct vparser *p, struct pb_value *lhs)
{
	char buf[64];

	skip_ws(p);
	if (p->pos == p->len) {
		fail_at(p, p->pos, "expected a guard '<value> <op> <integer>' (e.g. s32(retval) == 0), found nothing");
		return;
	}
	if (!parse_value_span(p, lhs))
		return;
	skip_ws(p);
	if (p->pos < p->len) {
		describe(p, p->pos, buf, sizeof(buf));
		fail_at(p, p->pos, "expected a comparison operator (==, !=, <, <=, > or >=), found %s",
			buf);
	} else {
		fail_at(p, p->pos, "expected a comparison after the value ('<value> <op> <integer>', op one of == != < <= > >=, e.g. retval != 0), found end of guard");
	}
}

/* the comparison operator at text[op_at]; p->pos moves past it */
static bool parse_cmp_op(struct vparser *p, const char *text, size_t op_at, enum pb_cmp_op *op)
{
	static const struct {
		const char *s;
		enum pb_cmp_op op;
	} two[] = {
		{ "==", PB_CMP_EQ }, { "!=", PB_CMP_NE }, { "<=", PB_CMP_LE }, { ">=", PB_CMP_GE },
	};
	size_t i, n;

	p->pos = op_at;
	for (i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		if (!strncmp(text + op_at, two[i].s, 2)) {
			*op = two[i].op;
			p->pos += 2;
			return true;
		}
	if (text[op_at] == '<' && text[op_at + 1] != '<' && text[op_at + 1] != '>') {
		*op = PB_CMP_LT;
		p->pos += 1;
		return true;
	}
	if (text[op_at] == '>' && text[op_at + 1] != '>' && text[op_at + 1] != '<') {
		*op = PB_CMP_GT;
		p->pos += 1;
		return true;
	}
	n = strspn(text + op_at, "=!<>");
	fail_at(p, op_at, "expected a comparison operator (==, !=, <, <=, > or >=), found '%.*s'",
		(int)(n > 8 ? 8 : n), text + op_at);
	return false;
}

/* the integer after the operator, and nothing after it */
static bool parse_guard_rhs(struct vparser *p, size_t op_at, int64_t *rhs)
{
	bool neg = false;
	uint64_t mag;
	char buf[64];

	skip_ws(p);
	if (peek(p) == '-') {
		neg = true;
		p->pos++;
		skip_ws(p);
	}
	if (!parse_uint(p, &mag, "an integer after the comparison"))
		return false;
	if (neg && mag > (uint64_t)INT64_MAX + 1) {
		fail_at(p, op_at + 1, "integer out of range: '-%" PRIu64 "'", mag);
		return false;
	}
	*rhs = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	skip_ws(p);
	if (p->pos < p->len) {
		describe(p, p->pos, buf, sizeof(buf));
		fail_at(p, p->pos, "unexpected %s after the guard (one comparison '<value> <op> <integer>' only)",
			buf);
		return false;
	}
	return true;
}

/* the guard's and its value's text as written, without surrounding blanks */
static int guard_texts(const char *text, size_t len, size_t op_at, struct pb_guard *g)
{
	const char *s = text;
	size_t tl = len;

	trim(&s, &tl);
	g->text = strndup(s, tl);
	s = text;
	tl = op_at;
	trim(&s, &tl);
	g->lhs.text = strndup(s, tl);
	return g->text && g->lhs.text ? 0 : -ENOMEM;
}

int pb_guard__parse(const char *text, struct pb_guard *out, struct pb_errtext *err)
{
	struct pb_guard g;
	struct vparser p;
	size_t op_at, len;
	char buf[64];
	int e;

	memset(&g, 0, sizeof(g));
	memset(out, 0, sizeof(*out));
	if (err)
		err->col = 0;
	if (!text)
		return -EINVAL;
	len = strlen(text);
	/* no comparison character can appear inside a value, so the first one
	 * splits the guard */
	op_at = strcspn(text, "=!<>");
	vparser_init(&p, text, op_at, err);
	if (op_at == len) {
		fail_no_operator(&p, &g.lhs);
		goto fail;
	}
	if (!parse_value_span(&p, &g.lhs))
		goto fail;
	skip_ws(&p);
	if (p.pos < p.len) {
		describe(&p, p.pos, buf, sizeof(buf));
		fail_at(&p, p.pos, "expected a comparison operator (==, !=, <, <=, > or >=), found %s", buf);
		goto fail;
	}
	p.len = len;
	if (!parse_cmp_op(&p, text, op_at, &g.op) || !parse_guard_rhs(&p, op_at, &g.rhs))
		goto fail;
	e = guard_texts(text, len, op_at, &g);
	if (e) {
		pb_guard__free(&g);
		return e;
	}
	g.present = true;
	*out = g;
	return 0;
fail:
	if (err)
		err->col = p.err_col;
	pb_value__free(&g.lhs);
	return -EINVAL;
}

int pb_guard__format(const struct pb_guard *g, char *buf, size_t sz)
{
	int n, m;

	if (sz)
		buf[0] = '\0';
	if (!g->present)
		return 0;
	n = pb_value__format(&g->lhs, buf, sz);
	if (n < 0)
		return n;
	m = snprintf(buf + n, sz - n, " %s %" PRId64, pb_cmp_op_str(g->op), g->rhs);
	if (m < 0 || (size_t)(n + m) >= sz)
		return -ENOSPC;
	return n + m;
}

void pb_guard__free(struct pb_guard *g)
{
	if (!g)
		return;
	pb_value__free(&g->lhs);
	free(g->text);
	memset(g, 0, sizeof(*g));
}
