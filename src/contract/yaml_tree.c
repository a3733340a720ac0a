/* SPDX-License-Identifier: BSD-2-Clause */
/* yaml_tree.c: libyaml event stream -> positioned tree (see yaml_tree.h).
 *
 * Everything the manifest grammar never needs is refused here, where the
 * position is exact: aliases (the billion-laughs expansion), a second
 * document, mappings or sequences used as keys, and nesting deeper than
 * YT_MAX_DEPTH (so freeing the tree can recurse safely).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "contract/yaml_tree.h"

struct builder {
	struct ynode *root;
	struct ynode *stack[YT_MAX_DEPTH];
	struct ynode *pending_key[YT_MAX_DEPTH];	/* map key waiting for its value */
	int depth;
	size_t n_nodes;
	int n_docs;
	struct ytree_error *err;
};

static struct pb_loc mark_loc(yaml_mark_t m)
{
	struct pb_loc l = { (int)m.line + 1, (int)m.column + 1 };

	return l;
}

static int set_err(struct ytree_error *err, struct pb_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct ytree_error *err, struct pb_loc loc, const char *fmt, ...)
{
	va_list ap;

	err->loc = loc;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void ynode__free(struct ynode *n)
{
	size_t i;

	if (!n)
		return;
	/* depth is bounded by YT_MAX_DEPTH, so recursion is safe */
	for (i = 0; i < n->n; i++) {
		if (n->keys)
			ynode__free(n->keys[i]);
		ynode__free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->str);
	free(n);
}

static int append(struct ynode *parent, struct ynode *key, struct ynode *val)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct ynode **items, **keys;

		items = realloc(parent->items, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		parent->items = items;
		if (parent->kind == YNODE_MAP) {
			keys = realloc(parent->keys, cap * sizeof(*keys));
			if (!keys)
				return -ENOMEM;
			parent->keys = keys;
		}
		parent->cap = cap;
	}
	if (parent->kind == YNODE_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = val;
	return 0;
}

/* Attach a finished or just-opened node to the current container. The
 * node is owned by the tree once this returns 0; on error the caller
 * frees it. */
static int attach(struct builder *b, struct ynode *node)
{
	struct ynode *top;
	int err;

	if (b->depth == 0) {
		b->root = node;
		return 0;
	}
	top = b->stack[b->depth - 1];
	if (top->kind == YNODE_SEQ)
		return append(top, NULL, node);
	if (!b->pending_key[b->depth - 1]) {
		if (node->kind != YNODE_SCALAR)
			return set_err(b->err, node->loc,
				       "a %s cannot be a mapping key (keys are plain names such as 'id')",
				       node->kind == YNODE_MAP ? "mapping" : "sequence");
		b->pending_key[b->depth - 1] = node;
		return 0;
	}
	err = append(top, b->pending_key[b->depth - 1], node);
	if (!err)
		b->pending_key[b->depth - 1] = NULL;
	return err;
}

static struct ynode *new_node(struct builder *b, enum ynode_kind kind, const yaml_event_t *ev)
{
	struct ynode *n;

	if (b->n_nodes >= YT_MAX_NODES) {
		set_err(b->err, mark_loc(ev->start_mark),
			"document too large: more than %d YAML nodes", YT_MAX_NODES);
		errno = EINVAL;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	b->n_nodes++;
	n->kind = kind;
	n->loc = mark_loc(ev->start_mark);
	n->end = mark_loc(ev->end_mark);
	return n;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n = new_node(b, YNODE_SCALAR, ev);
	int err;

	if (!n)
		return -errno;
	n->len = ev->data.scalar.length;
	n->str = malloc(n->len + 1);
	if (!n->str) {
		ynode__free(n);
		return -ENOMEM;
	}
	memcpy(n->str, ev->data.scalar.value, n->len);
	n->str[n->len] = '\0';
	switch (ev->data.scalar.style) {
	case YAML_SINGLE_QUOTED_SCALAR_STYLE: n->style = YSTYLE_SINGLE; break;
	case YAML_DOUBLE_QUOTED_SCALAR_STYLE: n->style = YSTYLE_DOUBLE; break;
	case YAML_LITERAL_SCALAR_STYLE:
	case YAML_FOLDED_SCALAR_STYLE: n->style = YSTYLE_BLOCK; break;
	default: n->style = YSTYLE_PLAIN; break;
	}
	err = attach(b, n);
	if (err)
		ynode__free(n);
	return err;
}

static int on_open(struct builder *b, const yaml_event_t *ev, enum ynode_kind kind)
{
	struct ynode *n;
	int err;

	if (b->depth >= YT_MAX_DEPTH)
		return set_err(b->err, mark_loc(ev->start_mark),
			       "nesting deeper than %d levels (a manifest needs at most 6)",
			       YT_MAX_DEPTH);
	n = new_node(b, kind, ev);
	if (!n)
		return -errno;
	err = attach(b, n);
	if (err) {
		ynode__free(n);
		return err;
	}
	b->pending_key[b->depth] = NULL;
	b->stack[b->depth++] = n;
	return 0;
}

static void on_close(struct builder *b, const yaml_event_t *ev)
{
	if (b->depth > 0) {
		b->stack[b->depth - 1]->end = mark_loc(ev->end_mark);
		b->depth--;
	}
}

/* libyaml reader errors carry a byte offset, not a mark */
static struct pb_loc offset_loc(const char *buf, size_t len, size_t off)
{
	struct pb_loc l = { 1, 1 };
	size_t i;

	for (i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			l.line++;
			l.col = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			l.col++;
		}
	}
	return l;
}

static int parser_error(const yaml_parser_t *p, const char *buf, size_t len,
			struct ytree_error *err)
{
	const char *problem = p->problem ? p->problem : "unknown error";
	struct pb_loc loc;
	char ctx[160] = "";

	if (p->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (p->error == YAML_READER_ERROR) {
		loc = offset_loc(buf, len, p->problem_offset);
		if (p->problem_value >= 0)
			return set_err(err, loc, "invalid input: %s (byte 0x%02x)", problem,
				       p->problem_value & 0xff);
		return set_err(err, loc, "invalid input: %s", problem);
	}
	loc = mark_loc(p->problem_mark);
	if (p->context)
		snprintf(ctx, sizeof(ctx), " (%s at %d:%d)", p->context,
			 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	/* the most common cause: an unquoted value expression that starts
	 * with '*' is read by YAML as an alias */
	if (p->context && strstr(p->context, "alias"))
		return set_err(err, loc,
			       "YAML syntax error: %s%s; a value starting with '*' must be quoted, e.g. \"*u64(arg0 + 16)\"",
			       problem, ctx);
	if (p->problem_mark.index < len && buf[p->problem_mark.index] == '\t')
		return set_err(err, loc, "YAML syntax error: %s%s; YAML does not allow tabs for indentation",
			       problem, ctx);
	return set_err(err, loc, "YAML syntax error: %s%s", problem, ctx);
}

int ytree__parse(const char *buf, size_t len, struct ynode **root, struct ytree_error *errp)
{
	struct builder b;
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	int err = 0;

	memset(&b, 0, sizeof(b));
	memset(errp, 0, sizeof(*errp));
	b.err = errp;
	*root = NULL;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && !err) {
		if (!yaml_parser_parse(&parser, &ev)) {
			err = parser_error(&parser, buf, len, errp);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++b.n_docs > 1)
				err = set_err(errp, mark_loc(ev.start_mark),
					      "a second YAML document: a manifest file holds exactly one document (remove the '---' separator and what follows)");
			break;
		case YAML_ALIAS_EVENT:
			err = set_err(errp, mark_loc(ev.start_mark),
				      "YAML alias '*%s' is not allowed (anchors and aliases are refused; a value starting with '*' must be quoted, e.g. \"*u64(arg0 + 16)\")",
				      ev.data.alias.anchor ? (const char *)ev.data.alias.anchor : "");
			break;
		case YAML_SCALAR_EVENT:
			err = on_scalar(&b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			err = on_open(&b, &ev, YNODE_SEQ);
			break;
		case YAML_MAPPING_START_EVENT:
			err = on_open(&b, &ev, YNODE_MAP);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			on_close(&b, &ev);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	/* a key still waiting for its value belongs to no node yet */
	while (b.depth > 0) {
		b.depth--;
		ynode__free(b.pending_key[b.depth]);
	}
	if (err) {
		ynode__free(b.root);
		return err;
	}
	*root = b.root;
	return 0;
}

bool ynode__is_null(const struct ynode *n)
{
	if (!n)
		return true;
	if (n->kind != YNODE_SCALAR || n->style != YSTYLE_PLAIN)
		return false;
	return !strcmp(n->str, "") || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
	       !strcmp(n->str, "Null") || !strcmp(n->str, "NULL");
}

const char *ynode__kind_str(const struct ynode *n)
{
	if (!n || ynode__is_null(n))
		return "nothing";
	switch (n->kind) {
	case YNODE_MAP: return "a mapping";
	case YNODE_SEQ: return "a list";
	default: return "a scalar";
	}
}

void ynode__describe(const struct ynode *n, char *buf, size_t sz)
{
	size_t i, o = 0, max = 48;

	if (!n || ynode__is_null(n) || n->kind != YNODE_SCALAR) {
		snprintf(buf, sz, "%s", ynode__kind_str(n));
		return;
	}
	if (sz < 8) {
		if (sz)
			buf[0] = '\0';
		return;
	}
	/* quote, clip and escape control bytes so a message stays one line */
	buf[o++] = '\'';
	for (i = 0; i < n->len && o + 6 < sz; i++) {
		unsigned char c = (unsigned char)n->str[i];

		if (i == max) {
			o += snprintf(buf + o, sz - o, "...");
			break;
		}
		if (c < 0x20 || c == 0x7f)
			o += snprintf(buf + o, sz - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (o + 2 <= sz) {
		buf[o++] = '\'';
		buf[o] = '\0';
	} else {
		buf[sz - 1] = '\0';
	}
}
