/* SPDX-License-Identifier: BSD-2-Clause */
/* rebind_edit.c: edit a manifest's YAML text in place for `manifest
 * rebind` (rebind_int.h). The positions come from libyaml's marks (our
 * yaml_tree), converted from line:column (columns count characters, as
 * libyaml does) to byte offsets; only the build_id, confidence and
 * provenance values are replaced, so every semantic field and every
 * comment keeps its bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "contract/rebind_int.h"
#include "contract/yaml_tree.h"

struct edit {
	size_t start, end;	/* replace buf[start, end) */
	char *text;
};

struct ectx {
	const char *buf;
	size_t len;
	size_t *lines;		/* byte offset of each line's start */
	size_t n_lines, cap_lines;
	struct edit *edits;
	size_t n_edits, cap_edits;
	char *err;
	size_t err_sz;
};

static int fail(struct ectx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct ectx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->err_sz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Length of the line break at i (as libyaml counts them: CRLF, CR, LF,
 * NEL, LS, PS), 0 if none. */
static size_t break_len(const char *b, size_t len, size_t i)
{
	const unsigned char *u = (const unsigned char *)b;

	if (u[i] == '\r')
		return i + 1 < len && u[i + 1] == '\n' ? 2 : 1;
	if (u[i] == '\n')
		return 1;
	if (u[i] == 0xc2 && i + 1 < len && u[i + 1] == 0x85)
		return 2;
	if (u[i] == 0xe2 && i + 2 < len && u[i + 1] == 0x80 && (u[i + 2] == 0xa8 || u[i + 2] == 0xa9))
		return 3;
	return 0;
}

static int index_lines(struct ectx *c)
{
	size_t i = 0, bl;

	if (c->len >= 3 && !memcmp(c->buf, "\xef\xbb\xbf", 3))
		i = 3;	/* libyaml does not count the BOM */
	if (PB_ARRAY_RESERVE_ONE(c->lines, c->n_lines, c->cap_lines))
		return -ENOMEM;
	c->lines[c->n_lines++] = i;
	while (i < c->len) {
		bl = break_len(c->buf, c->len, i);
		if (!bl) {
			i++;
			continue;
		}
		i += bl;
		if (PB_ARRAY_RESERVE_ONE(c->lines, c->n_lines, c->cap_lines))
			return -ENOMEM;
		c->lines[c->n_lines++] = i;
	}
	return 0;
}

/* Byte offset of a 1-based line:column mark (columns in characters). */
static size_t offset_of(const struct ectx *c, struct pb_loc loc)
{
	const unsigned char *u = (const unsigned char *)c->buf;
	size_t off;
	int col;

	if (loc.line < 1 || (size_t)loc.line > c->n_lines)
		return c->len;
	off = c->lines[loc.line - 1];
	for (col = 1; col < loc.col && off < c->len; col++) {
		if (u[off] < 0x80)
			off++;
		else if ((u[off] & 0xe0) == 0xc0)
			off += 2;
		else if ((u[off] & 0xf0) == 0xe0)
			off += 3;
		else
			off += 4;
	}
	return off < c->len ? off : c->len;
}

static bool is_flow(const struct ectx *c, const struct ynode *n)
{
	size_t o = offset_of(c, n->loc);

	return o < c->len && (c->buf[o] == '{' || c->buf[o] == '[');
}

/* Where a node's text ends: a block collection ends with its last item (its
 * own end mark is the next token's start, past comments and blank lines);
 * trailing line breaks of a block scalar are not kept. */
static size_t node_end(const struct ectx *c, const struct ynode *n)
{
	size_t start = offset_of(c, n->loc), end;

	if (n->kind != YNODE_SCALAR && !is_flow(c, n))
		return n->n ? node_end(c, n->items[n->n - 1]) : start;
	end = offset_of(c, n->end);
	while (end > start && strchr(" \t\r\n", c->buf[end - 1]))
		end--;
	return end;
}

static const struct ynode *map_get(const struct ynode *m, const char *key, const struct ynode **k)
{
	size_t i;

	if (!m || m->kind != YNODE_MAP)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (m->keys[i]->kind == YNODE_SCALAR && !strcmp(m->keys[i]->str, key)) {
			if (k)
				*k = m->keys[i];
			return m->items[i];
		}
	return NULL;
}

static int add_edit(struct ectx *c, size_t start, size_t end, char *text)
{
	if (!text)
		return -ENOMEM;
	if (PB_ARRAY_RESERVE_ONE(c->edits, c->n_edits, c->cap_edits)) {
		free(text);
		return -ENOMEM;
	}
	c->edits[c->n_edits++] = (struct edit){ start, end, text };
	return 0;
}

static char *fmt_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fmt_str(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* A YAML double-quoted string. */
static char *quote(const char *s)
{
	size_t i, n = 0, len = strlen(s);
	char *q = malloc(len * 4 + 3);

	if (!q)
		return NULL;
	q[n++] = '"';
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\') {
			q[n++] = '\\';
			q[n++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			n += (size_t)sprintf(q + n, "\\x%02x", ch);
		} else {
			q[n++] = (char)ch;
		}
	}
	q[n++] = '"';
	q[n] = '\0';
	return q;
}

static int edit_build_id(struct ectx *c, const struct ynode *target, size_t ti, const char *hex)
{
	const struct ynode *v = map_get(target, "build_id", NULL);
	const char *q;

	if (!v || v->kind != YNODE_SCALAR)
		return fail(c, "target %zu: no build_id value to replace", ti + 1);
	q = v->style == YSTYLE_SINGLE ? "'" : v->style == YSTYLE_DOUBLE ? "\"" : "";
	return add_edit(c, offset_of(c, v->loc), node_end(c, v), fmt_str("%s%s%s", q, hex, q));
}

/* The provenance mapping's text: block lines at column ind, or flow. */
static char *prov_text(const struct rebind_prov_text *p, bool flow, int ind)
{
	char *ev = quote(p->evidence ? p->evidence : ""), *s;

	if (!ev)
		return NULL;
	if (flow)
		s = fmt_str("{ source: %s, evidence: %s, date: %s }", p->source, ev, p->date);
	else
		s = fmt_str("source: %s\n%*sevidence: %s\n%*sdate: %s", p->source, ind, "", ev,
			    ind, "", p->date);
	free(ev);
	return s;
}

/* The end of the line holding byte off (before its line break). */
static size_t line_end(const struct ectx *c, size_t off)
{
	while (off < c->len && !break_len(c->buf, c->len, off))
		off++;
	return off;
}

/* Insert the missing confidence / provenance fields after the event's last
 * field (block: on new lines at the event's indentation, after any
 * comment that ends the last line; flow: before the closing brace). */
static int insert_fields(struct ectx *c, const struct ynode *ev, const char *conf,
			 const struct rebind_prov_text *p)
{
	bool flow = is_flow(c, ev);
	int ind = ev->n ? ev->keys[0]->loc.col - 1 : 0;
	size_t at = node_end(c, ev->n ? ev->items[ev->n - 1] : ev);
	char *pt = p ? prov_text(p, flow, ind + 2) : NULL;
	char *text;

	if (p && !pt)
		return -ENOMEM;
	if (flow)
		text = fmt_str("%s%s%s%s%s", conf ? ", confidence: " : "", conf ? conf : "",
			       p ? ", provenance: " : "", pt ? pt : "", "");
	else
		text = fmt_str("%s%*s%s%s%s%*s%s%*s%s", conf ? "\n" : "", conf ? ind : 0, "",
			       conf ? "confidence: " : "", conf ? conf : "", p ? "\n" : "",
			       p ? ind : 0, "", p ? "provenance:\n" : "", p ? ind + 2 : 0, "",
			       pt ? pt : "");
	free(pt);
	if (!flow)
		at = line_end(c, at);
	return add_edit(c, at, at, text);
}

static int edit_event(struct ectx *c, const struct ynode *ev, size_t ei, const char *conf,
		      const struct rebind_prov_text *p)
{
	const struct ynode *cv = map_get(ev, "confidence", NULL);
	const struct ynode *pv = map_get(ev, "provenance", NULL);
	int err = 0;

	if (!ev || ev->kind != YNODE_MAP)
		return fail(c, "event %zu is not a mapping", ei + 1);
	if (conf && cv) {
		if (cv->kind != YNODE_SCALAR)
			return fail(c, "event %zu: confidence is not a scalar", ei + 1);
		err = add_edit(c, offset_of(c, cv->loc), node_end(c, cv), strdup(conf));
		conf = NULL;
	}
	if (!err && p && pv) {
		bool flow = pv->kind != YNODE_MAP || is_flow(c, pv);
		size_t start = offset_of(c, pv->loc);

		if (pv->kind != YNODE_MAP || !pv->n)
			return fail(c, "event %zu: provenance is not a mapping", ei + 1);
		err = add_edit(c, start, node_end(c, pv), prov_text(p, flow, pv->loc.col - 1));
		p = NULL;
	}
	if (!err && (conf || p))
		err = insert_fields(c, ev, conf, p);
	return err;
}

static int edit_cmp(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The text with every edit applied (they must not overlap). */
static int splice(struct ectx *c, char **out, size_t *out_len)
{
	size_t i, pos = 0, n = 0, total = c->len + 1;
	char *o;

	qsort(c->edits, c->n_edits, sizeof(*c->edits), edit_cmp);
	for (i = 0; i < c->n_edits; i++) {
		if (c->edits[i].start < pos || c->edits[i].end < c->edits[i].start)
			return fail(c, "overlapping edits at byte %zu", c->edits[i].start);
		pos = c->edits[i].end;
		total += strlen(c->edits[i].text);
	}
	o = malloc(total);
	if (!o)
		return -ENOMEM;
	for (i = 0, pos = 0; i < c->n_edits; i++) {
		size_t tl = strlen(c->edits[i].text);

		memcpy(o + n, c->buf + pos, c->edits[i].start - pos);
		n += c->edits[i].start - pos;
		memcpy(o + n, c->edits[i].text, tl);
		n += tl;
		pos = c->edits[i].end;
	}
	memcpy(o + n, c->buf + pos, c->len - pos);
	n += c->len - pos;
	o[n] = '\0';
	*out = o;
	*out_len = n;
	return 0;
}

static int collect_edits(struct ectx *c, const struct ynode *root, const struct rebind_edit_req *r)
{
	const struct ynode *ts = map_get(root, "targets", NULL);
	const struct ynode *es = map_get(root, "events", NULL);
	size_t i;
	int err = 0;

	if (!ts || ts->kind != YNODE_SEQ || ts->n != r->n_targets)
		return fail(c, "the targets sequence does not match the parsed manifest");
	if (!es || es->kind != YNODE_SEQ || es->n != r->n_events)
		return fail(c, "the events sequence does not match the parsed manifest");
	for (i = 0; !err && i < r->n_targets; i++)
		if (r->build_ids[i])
			err = edit_build_id(c, ts->items[i], i, r->build_ids[i]);
	for (i = 0; !err && i < r->n_events; i++) {
		const struct rebind_prov_text *p = r->prov && r->prov[i].source ? &r->prov[i] : NULL;

		if (r->confidence[i] || p)
			err = edit_event(c, es->items[i], i, r->confidence[i], p);
	}
	return err;
}

int rebind_edit__apply(const char *buf, size_t len, const struct rebind_edit_req *req,
		       char **out, size_t *out_len, char *err, size_t err_sz)
{
	struct ectx c = { .buf = buf, .len = len, .err = err, .err_sz = err_sz };
	struct ytree_error yerr;
	struct ynode *root = NULL;
	size_t i;
	int ret;

	*out = NULL;
	err[0] = '\0';
	ret = ytree__parse(buf, len, &root, &yerr);
	if (ret) {
		if (ret == -EINVAL)
			fail(&c, "line %d:%d: %s", yerr.loc.line, yerr.loc.col, yerr.msg);
		goto out;
	}
	ret = index_lines(&c);
	if (!ret)
		ret = collect_edits(&c, root, req);
	if (!ret)
		ret = splice(&c, out, out_len);
out:
	for (i = 0; i < c.n_edits; i++)
		free(c.edits[i].text);
	free(c.edits);
	free(c.lines);
	ynode__free(root);
	return ret;
}
