/* SPDX-License-Identifier: BSD-2-Clause */
/* canon.c: the canonical JSON encoding receipts are hashed in, exactly
 * RFC 8785 (JCS): object members sorted by the UTF-16 code units of
 * their names, no whitespace, strings escaped only where JSON requires
 * (", \, and U+0000..U+001F as \b \t \n \f \r or \u00xx in lower-case
 * hex; '/' and non-ASCII written as is), numbers as ECMAScript's
 * Number.prototype.toString writes them. Any JCS library recomputes
 * the same bytes (tests/unit/test_receipts.c carries the RFC's vectors;
 * tests/cli/jcs_auditor.sh recomputes generation ids in python3).
 *
 * Receipts hold integers only, within +-2^53 (every JCS library reads
 * them exactly): store__put_json refuses reals and larger integers. Log
 * entries and checkpoints carry nanosecond clocks beyond 2^53:
 * canon__encode writes them as exact decimal integers (CANON_BIG_INTS),
 * as the RFC's Python reference and any big-integer-preserving JCS
 * library do; it refuses reals.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/digest.h"
#include "receipts/receipts_int.h"

#define JCS_MAX_DEPTH 64
#define JCS_SAFE_INT ((json_int_t)1 << 53)

struct jbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void put(struct jbuf *b, const char *s, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *np;

	if (b->err)
		return;
	while (cap < b->len + n + 1)
		cap *= 2;
	if (cap != b->cap) {
		np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct jbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_string(struct jbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;
	char esc[7];

	put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = NULL;

		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\t': e = "\\t"; break;
		case '\n': e = "\\n"; break;
		case '\f': e = "\\f"; break;
		case '\r': e = "\\r"; break;
		default:
			if (c >= 0x20)
				continue;
			snprintf(esc, sizeof(esc), "\\u00%c%c", hex[c >> 4], hex[c & 15]);
			e = esc;
		}
		put(b, s + run, i - run);
		puts_(b, e);
		run = i + 1;
	}
	put(b, s + run, n - run);
	put(b, "\"", 1);
}

/* ECMAScript Number.prototype.toString for a finite double: the
 * shortest digits that read back as v, placed by the spec's rules
 * (plain up to 21 integer digits, "0.000001" down to 1e-6, else
 * d.ddde+-n). */
int canon__format_double(double v, char out[32])
{
	char tmp[40], digits[20], *p = out;
	int prec, k = 0, n, exp10, i;

	if (!isfinite(v))
		return -EINVAL;
	if (v == 0) {
		strcpy(out, "0");
		return 0;
	}
	if (v < 0) {
		*p++ = '-';
		v = -v;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	for (i = 0; tmp[i] && tmp[i] != 'e'; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9')
			digits[k++] = tmp[i];
	exp10 = atoi(tmp + i + 1);
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	n = exp10 + 1;	/* v = 0.digits * 10^n */
	if (k <= n && n <= 21) {
		p += sprintf(p, "%s", digits);
		for (i = k; i < n; i++)
			*p++ = '0';
		*p = '\0';
	} else if (0 < n && n <= 21) {
		p += sprintf(p, "%.*s.%s", n, digits, digits + n);
	} else if (-6 < n && n <= 0) {
		p += sprintf(p, "0.");
		for (i = 0; i < -n; i++)
			*p++ = '0';
		sprintf(p, "%s", digits);
	} else {
		p += sprintf(p, "%c", digits[0]);
		if (k > 1)
			p += sprintf(p, ".%s", digits + 1);
		sprintf(p, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
	}
	return 0;
}

/* Next code point of UTF-8 s[*i..n) (jansson has validated it). */
static unsigned int next_cp(const unsigned char *s, size_t n, size_t *i)
{
	unsigned int c = s[(*i)++], extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;

	c &= extra == 3 ? 0x07 : extra == 2 ? 0x0f : extra == 1 ? 0x1f : 0x7f;
	while (extra-- && *i < n)
		c = (c << 6) | (s[(*i)++] & 0x3f);
	return c;
}

/* The first UTF-16 code unit of code point c. */
static unsigned int first_unit(unsigned int c)
{
	return c < 0x10000 ? c : 0xd800 + ((c - 0x10000) >> 10);
}

struct jkey {
	const char *s;
	size_t n;
	json_t *v;
};

/* Order of member names as UTF-16 code unit strings (RFC 8785 3.2.3). */
static int key_cmp(const void *a, const void *b)
{
	const struct jkey *x = a, *y = b;
	const unsigned char *s = (const unsigned char *)x->s, *t = (const unsigned char *)y->s;
	size_t i = 0, j = 0;

	while (i < x->n && j < y->n) {
		unsigned int c = next_cp(s, x->n, &i), d = next_cp(t, y->n, &j);
		unsigned int uc = first_unit(c), ud = first_unit(d);

		if (uc != ud)
			return uc < ud ? -1 : 1;
		if (c != d)	/* same high surrogate: code point order */
			return c < d ? -1 : 1;
	}
	return (i < x->n) - (j < y->n);
}

static void encode(struct jbuf *b, const json_t *j, unsigned int flags, int depth);

static void encode_object(struct jbuf *b, const json_t *j, unsigned int flags, int depth)
{
	size_t n = json_object_size(j), k = 0, klen;
	struct jkey *keys = calloc(n ? n : 1, sizeof(*keys));
	const char *key;
	json_t *v;

	if (!keys) {
		b->err = -ENOMEM;
		return;
	}
	json_object_keylen_foreach((json_t *)j, key, klen, v)
		keys[k++] = (struct jkey){ key, klen, v };
	qsort(keys, k, sizeof(*keys), key_cmp);
	put(b, "{", 1);
	for (n = 0; n < k && !b->err; n++) {
		if (n)
			put(b, ",", 1);
		put_string(b, keys[n].s, keys[n].n);
		put(b, ":", 1);
		encode(b, keys[n].v, flags, depth + 1);
	}
	put(b, "}", 1);
	free(keys);
}

static void encode_number(struct jbuf *b, const json_t *j, unsigned int flags)
{
	char num[32];

	if (json_is_integer(j)) {
		json_int_t v = json_integer_value(j);

		if (!(flags & CANON_BIG_INTS) && (v > JCS_SAFE_INT || v < -JCS_SAFE_INT)) {
			b->err = -ERANGE;
			return;
		}
		snprintf(num, sizeof(num), "%lld", (long long)v);
	} else if (!(flags & CANON_REALS)) {
		b->err = -EINVAL;
		return;
	} else if ((b->err = canon__format_double(json_real_value(j), num))) {
		return;
	}
	puts_(b, num);
}

static void encode(struct jbuf *b, const json_t *j, unsigned int flags, int depth)
{
	const json_t *v;
	size_t i;

	if (b->err)
		return;
	if (depth > JCS_MAX_DEPTH) {
		b->err = -ELOOP;
		return;
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		encode_object(b, j, flags, depth);
		return;
	case JSON_ARRAY:
		put(b, "[", 1);
		for (i = 0; i < json_array_size(j) && !b->err; i++) {
			v = json_array_get(j, i);
			if (i)
				put(b, ",", 1);
			encode(b, v, flags, depth + 1);
		}
		put(b, "]", 1);
		return;
	case JSON_STRING:
		put_string(b, json_string_value(j), json_string_length(j));
		return;
	case JSON_INTEGER:
	case JSON_REAL:
		encode_number(b, j, flags);
		return;
	case JSON_TRUE:
		puts_(b, "true");
		return;
	case JSON_FALSE:
		puts_(b, "false");
		return;
	default:
		puts_(b, "null");
	}
}

int canon__jcs(const json_t *j, unsigned int flags, char **out, size_t *len)
{
	struct jbuf b = { 0 };

	if (!j)
		return -EINVAL;
	encode(&b, j, flags, 0);
	if (!b.err && !b.p)
		b.err = -ENOMEM;
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*out = b.p;
	if (len)
		*len = b.len;
	return 0;
}

int canon__encode(const json_t *j, char **out, size_t *len)
{
	return canon__jcs(j, CANON_BIG_INTS, out, len);
}

int pb_sha256_hex(const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN])
{
	uint8_t md[PB_SHA256_LEN];
	int err = pb_sha256(buf, len, md);

	if (!err)
		pb_hex(md, sizeof(md), hex);
	return err;
}

int canon__digest(const json_t *j, char hex[PB_DIGEST_HEX_LEN])
{
	char *s;
	size_t len;
	int err = canon__encode(j, &s, &len);

	if (err)
		return err;
	err = pb_sha256_hex(s, len, hex);
	free(s);
	return err;
}

bool pb_is_digest_hex(const char *s)
{
	size_t i;

	if (!s || strlen(s) != 64)
		return false;
	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}
